/**
 * The kubelet's HTTP server (kubernetes pkg/kubelet/server): /healthz, /pods,
 * /metrics, /stats/summary and /metrics/resource (stats.ts), and /containerLogs/<namespace>/<pod>/<container> with follow,
 * tailLines, sinceSeconds, limitBytes, previous and timestamps — the endpoint
 * behind the apiserver's pods/log — and /exec and /attach/<namespace>/<pod>/<container>,
 * a WebSocket bridged to the runtime's streaming server (the URL CRI Exec
 * returns), and /portForward/<namespace>/<pod>, a SPDY session forwarding to
 * the pod's ports (portforward.ts). Errors are Status objects like upstream's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createServer as createTlsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { RestClient } from '@kubeling/client';
import {
  bridgeWebSocket,
  isSpdyUpgrade,
  isWebSocketUpgrade,
  serveSpdyRemoteCommand,
  SpdyConnection,
  StreamRefusal,
  upgradeResponse,
} from '@kubeling/client/remotecommand';
import { open, stat } from 'node:fs/promises';
import type { KubeObject } from '@kubeling/api';
import { parseCriLine, type ContainerStatus, type CriRuntime } from '@kubeling/cri';
import type { Registry } from 'prom-client';
import { LABEL_CONTAINER_NAME, LABEL_POD_UID, type PodManager } from './pods.js';
import { servePodPortForward } from './portforward.js';
import { serveStats, type StatsProvider } from './stats.js';

export interface KubeletServerOptions {
  pods: PodManager;
  runtime: CriRuntime;
  metrics: Registry;
  /** Resource usage for /stats/summary and /metrics/resource. */
  stats?: StatsProvider;
  address: string;
  port: number;
  /**
   * HTTPS with x509 client certificates from `clientCA` (upstream's
   * --tls-cert-file, --client-ca-file); without it the server is plain HTTP
   * and open, for tests and hollow nodes.
   */
  tls?: { cert: string; key: string; clientCA: string };
  /** Webhook authorization: each request is a SubjectAccessReview on nodes/<subresource> of this node. */
  authorizer?: { client: RestClient; nodeName: string };
}

/** Upstream's kubelet authorizer attributes: the subresource a path stands for. */
export function subresourceOf(path: string): string {
  for (const [prefix, sub] of [
    ['/stats', 'stats'],
    ['/metrics', 'metrics'],
    ['/logs', 'log'],
    ['/spec', 'spec'],
    ['/checkpoint', 'checkpoint'],
    ['/configz', 'configz'],
    ['/healthz', 'healthz'],
    ['/pods', 'pods'],
  ] as const) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return sub;
  }
  return 'proxy';
}

function status(res: ServerResponse, code: number, reason: string, message: string, headers: Record<string, string> = {}): void {
  res
    .writeHead(code, { ...headers, 'content-type': 'application/json' })
    .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

/**
 * Reads a CRI log file into output: whole lines (partial pieces joined to the
 * line they end in), and a last partial piece that no full line ended, as it is.
 */
function criOutput(text: string, timestamps: boolean, sinceMs?: number): { lines: string[]; rest: string } {
  const lines: string[] = [];
  let partial = '';
  let partialTime = '';
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    const l = parseCriLine(raw);
    if (!l) continue;
    if (sinceMs !== undefined && Date.parse(l.time) < sinceMs) continue;
    if (l.tag === 'P') {
      if (!partial) partialTime = l.time;
      partial += l.content;
      continue;
    }
    const content = partial + l.content;
    const time = partial ? partialTime : l.time;
    partial = '';
    lines.push(timestamps ? `${time} ${content}` : content);
  }
  return { lines, rest: partial && timestamps ? `${partialTime} ${partial}` : partial };
}

/** Reads a CRI log file into plain output lines (partial lines joined; a last unended piece left out). */
export function criToLines(text: string, timestamps: boolean, sinceMs?: number): string[] {
  return criOutput(text, timestamps, sinceMs).lines;
}

/** The output of a CRI log as a reader gets it: each line with its newline, a last unended piece without one (as upstream's ReadLogs). */
export function criToChunks(text: string, timestamps: boolean, sinceMs?: number): string[] {
  const { lines, rest } = criOutput(text, timestamps, sinceMs);
  return [...lines.map((l) => `${l}\n`), ...(rest ? [rest] : [])];
}

export class KubeletServer {
  private server: Server | undefined;
  /** Port-forward and SPDY exec sessions, which outlive the server's own connection tracking once upgraded. */
  private readonly sessions = new Set<SpdyConnection>();

  constructor(private readonly o: KubeletServerOptions) {}

  start(): Promise<number> {
    const tls = this.o.tls;
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.guard(req, res)
        .then((ok) => (ok ? this.handle(req, res) : undefined))
        .catch((e) => {
          if (!res.headersSent) status(res, 500, 'InternalError', (e as Error).message);
          else res.end();
        });
    };
    this.server = tls
      ? createTlsServer({ cert: tls.cert, key: tls.key, ca: tls.clientCA, requestCert: true, rejectUnauthorized: false }, handler)
      : createServer(handler);
    // Upgrades get a response on their socket, so refusals are ordinary HTTP answers.
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const res = upgradeResponse(req, socket);
      this.guard(req, res)
        .then((ok) => (ok ? this.upgrade(req, res, socket, head) : undefined))
        .catch((e) => {
          if (!res.headersSent) status(res, 500, 'InternalError', (e as Error).message);
          else socket.destroy();
        });
    });
    return new Promise((resolve) =>
      this.server!.listen(this.o.port, this.o.address, () => {
        const a = this.server!.address();
        resolve(typeof a === 'object' && a ? a.port : this.o.port);
      }),
    );
  }

  stop(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    this.sessions.clear();
    return new Promise((r) => {
      this.server?.closeAllConnections();
      this.server ? this.server.close(() => r()) : r();
    });
  }

  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();

  /**
   * Authentication (a client certificate the CA signed: CN user, O groups) and
   * authorization (a SubjectAccessReview, cached as upstream: 5 min allowed,
   * 30 s denied). /healthz stays open, as on upstream's healthz port.
   */
  private async guard(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    if (!this.o.tls) return true;
    const path = new URL(req.url ?? '/', 'https://kubelet').pathname;
    if (path === '/healthz') return true;
    const sock = req.socket as TLSSocket;
    const cert = sock.authorized ? sock.getPeerCertificate() : undefined;
    if (!cert?.subject?.CN) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized');
      return false;
    }
    const user = cert.subject.CN;
    const o = cert.subject.O as string | string[] | undefined;
    const groups = [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'];
    const az = this.o.authorizer;
    if (!az) return true;
    const verb =
      ({ GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[req.method ?? 'GET'] ?? 'get';
    const subresource = subresourceOf(path);
    const key = `${user}\u0000${groups.join(',')}\u0000${verb}\u0000${subresource}`;
    let d = this.decisions.get(key);
    if (!d || d.until < Date.now()) {
      const review = await az.client.post<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user, groups, resourceAttributes: { verb, resource: 'nodes', subresource, name: az.nodeName } },
      });
      const allowed = !!review.status?.allowed;
      d = { allowed, until: Date.now() + (allowed ? 300_000 : 30_000) };
      this.decisions.set(key, d);
    }
    if (!d.allowed) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`Forbidden (user=${user}, verb=${verb}, resource=nodes, subresource(s)=[${subresource}])`);
      return false;
    }
    return true;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kubelet');
    if (url.pathname === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (url.pathname === '/metrics') {
      res.writeHead(200, { 'content-type': this.o.metrics.contentType }).end(await this.o.metrics.metrics());
      return;
    }
    if (this.o.stats && (url.pathname === '/stats/summary' || url.pathname === '/metrics/resource')) return serveStats(this.o.stats, url, res);
    if (url.pathname === '/pods' || url.pathname === '/pods/') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: this.o.pods.allPods() }));
      return;
    }
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    if (m) return this.logs(req, res, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), decodeURIComponent(m[3]!), url.searchParams);
    status(res, 404, 'NotFound', 'the server could not find the requested resource');
  }

  private async upgrade(req: IncomingMessage, res: ServerResponse, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kubelet');
    const pf = /^\/portForward\/([^/]+)\/([^/]+)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (pf) {
      const [ns, name] = [decodeURIComponent(pf[1]!), decodeURIComponent(pf[2]!)];
      const refused = await servePodPortForward(this.o.runtime, this.o.pods.podByName(ns, name), pf[3] && decodeURIComponent(pf[3]), req, socket, head, (c) => {
        this.sessions.add(c);
        c.on('close', () => this.sessions.delete(c));
      });
      if (refused) return status(res, refused.code, refused.reason, refused.message, refused.headers);
      res.detachSocket(socket as never);
      return;
    }
    const m = /^\/(exec|attach)\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    if (!m) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
    // WebSocket (v5 and v4 channel protocols) as kubectl speaks; SPDY/3.1 as client-go's SPDY executor does.
    const spdy = isSpdyUpgrade(req.headers);
    if (!isWebSocketUpgrade(req.headers) && !spdy)
      return status(res, 400, 'BadRequest', 'only WebSocket (v5.channel.k8s.io, v4.channel.k8s.io) and SPDY/3.1 upgrades are served');
    const kind = m[1] as 'exec' | 'attach';
    const [ns, podName, container] = [m[2]!, m[3]!, m[4]!].map(decodeURIComponent) as [string, string, string];
    const q = url.searchParams;
    const pod = this.o.pods.podByName(ns, podName);
    if (!pod) return status(res, 404, 'NotFound', `pod ${podName} not found`);
    const running = (await this.containerInstances(pod, container)).find((c) => c.state === 'CONTAINER_RUNNING');
    if (!running) return status(res, 404, 'NotFound', `container not found ("${container}")`);
    const streams = {
      container_id: running.id,
      tty: q.get('tty') === '1',
      stdin: q.get('input') === '1',
      stdout: q.get('output') === '1',
      stderr: q.get('error') === '1',
    };
    let exec: { url: string };
    try {
      exec = kind === 'exec' ? await this.o.runtime.exec({ ...streams, cmd: q.getAll('command') }) : await this.o.runtime.attach(streams);
    } catch (e) {
      return status(res, 500, 'InternalError', `error ${kind === 'exec' ? 'executing command in' : 'attaching to'} container: ${(e as Error).message}`);
    }
    if (spdy) {
      const conn = await serveSpdyRemoteCommand(req, socket, head, exec.url, streams);
      if (!(conn instanceof SpdyConnection)) return status(res, conn.code, conn.code === 403 ? 'Forbidden' : 'InternalError', conn.message, conn.headers);
      this.sessions.add(conn);
      conn.on('close', () => this.sessions.delete(conn));
      res.detachSocket(socket as never);
      return;
    }
    try {
      await bridgeWebSocket(req, socket, head, exec.url);
      res.detachSocket(socket as never);
    } catch (e) {
      const code = e instanceof StreamRefusal ? e.code : 500;
      return status(res, code, code === 404 ? 'NotFound' : code === 400 ? 'BadRequest' : 'InternalError', (e as Error).message);
    }
  }

  private async containerInstances(pod: KubeObject, name: string): Promise<ContainerStatus[]> {
    const list = await this.o.runtime.listContainers({ label_selector: { [LABEL_POD_UID]: pod.metadata.uid!, [LABEL_CONTAINER_NAME]: name } });
    const out: ContainerStatus[] = [];
    for (const c of list) {
      const s = await this.o.runtime.containerStatus(c.id).catch(() => undefined);
      if (s) out.push(s);
    }
    return out.sort((a, b) => b.metadata.attempt - a.metadata.attempt);
  }

  private async logs(req: IncomingMessage, res: ServerResponse, ns: string, podName: string, container: string, q: URLSearchParams): Promise<void> {
    const pod = this.o.pods.podByName(ns, podName);
    if (!pod) return status(res, 404, 'NotFound', `pods "${podName}" not found`);
    const spec = pod.spec as { containers?: { name: string }[]; initContainers?: { name: string }[]; ephemeralContainers?: { name: string }[] };
    const known = [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].map((c) => c.name);
    if (!known.includes(container)) return status(res, 400, 'BadRequest', `container ${container} is not valid for pod ${podName}`);
    const previous = q.get('previous') === 'true';
    const instances = await this.containerInstances(pod, container);
    const inst = previous ? instances[1] : instances[0];
    if (!inst) {
      if (previous) return status(res, 400, 'BadRequest', `previous terminated container "${container}" in pod "${podName}" not found`);
      return status(res, 400, 'BadRequest', `container "${container}" in pod "${podName}" is waiting to start: ContainerCreating`);
    }
    const timestamps = q.get('timestamps') === 'true';
    const tail = q.has('tailLines') ? Number(q.get('tailLines')) : undefined;
    const since = q.has('sinceSeconds') ? Date.now() - Number(q.get('sinceSeconds')) * 1000 : q.has('sinceTime') ? Date.parse(q.get('sinceTime')!) : undefined;
    const limit = q.has('limitBytes') ? Number(q.get('limitBytes')) : undefined;
    const follow = q.get('follow') === 'true' && !previous;
    res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
    let sent = 0;
    const write = (chunks: string[]) => {
      for (let chunk of chunks) {
        if (limit !== undefined) {
          if (sent >= limit) return false;
          if (sent + chunk.length > limit) chunk = chunk.slice(0, limit - sent);
        }
        sent += chunk.length;
        res.write(chunk);
      }
      return true;
    };
    let offset = 0;
    const readNew = async (): Promise<string> => {
      const st = await stat(inst.log_path).catch(() => undefined);
      if (!st || st.size <= offset) return '';
      const fh = await open(inst.log_path, 'r');
      try {
        const buf = Buffer.alloc(st.size - offset);
        await fh.read(buf, 0, buf.length, offset);
        // Only whole lines; the rest waits for the next read.
        const text = buf.toString('utf8');
        const end = text.lastIndexOf('\n');
        if (end < 0) return '';
        offset += Buffer.byteLength(text.slice(0, end + 1));
        return text.slice(0, end + 1);
      } finally {
        await fh.close();
      }
    };
    let lines = criToChunks(await readNew(), timestamps, since);
    if (tail !== undefined && tail >= 0) lines = lines.slice(Math.max(0, lines.length - tail));
    if (!write(lines) || !follow) {
      res.end();
      return;
    }
    let closed = false;
    req.on('close', () => (closed = true));
    while (!closed) {
      await new Promise((r) => setTimeout(r, 200));
      const more = criToChunks(await readNew(), timestamps);
      if (!write(more)) break;
      const cur = await this.o.runtime.containerStatus(inst.id).catch(() => undefined);
      if (!cur || cur.state === 'CONTAINER_EXITED') {
        write(criToChunks(await readNew(), timestamps));
        break;
      }
    }
    res.end();
  }
}
