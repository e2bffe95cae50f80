/**
 * Remote command streaming (exec) as Kubernetes speaks it over WebSocket
 * (k8s.io/apimachinery/pkg/util/remotecommand, apiserver wsstream): each binary
 * message starts with a channel byte — 0 stdin, 1 stdout, 2 stderr, 3 the
 * error channel carrying a final `Status`, 4 terminal resize — and from
 * v5.channel.k8s.io a message `[255, channel]` closes that channel (stdin EOF).
 *
 * Also here: the upgrade-aware proxy hop the apiserver (to the kubelet) and the
 * kubelet (to the runtime's streaming server) both make — the client's upgrade
 * request is replayed to the target and, once it answers 101, the two
 * connections are joined byte for byte — and the bridge the kubelet puts
 * between a client and a runtime's streaming server, which relays messages and
 * speaks v5 to the client when the runtime only has v4 (containerd).
 */
import { request as httpRequest, ServerResponse, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';

// Port forwarding speaks SPDY (spdy*.ts); the streaming hops import it from here.
export * from './spdy.js';
export * from './spdy-connection.js';
export * from './spdy-portforward.js';
export * from './spdy-tunnel.js';
export * from './spdy-remotecommand.js';

export const STREAM_PROTOCOL_V5 = 'v5.channel.k8s.io';
export const STREAM_PROTOCOL_V4 = 'v4.channel.k8s.io';
/** What the streaming servers here speak, best first (v1–v3 have no exit codes). */
export const STREAM_PROTOCOLS = [STREAM_PROTOCOL_V5, STREAM_PROTOCOL_V4] as const;

export const CHANNEL_STDIN = 0;
export const CHANNEL_STDOUT = 1;
export const CHANNEL_STDERR = 2;
export const CHANNEL_ERROR = 3;
export const CHANNEL_RESIZE = 4;
export const CHANNEL_CLOSE = 255;

/** The channel protocols before v4, which have no exit codes: served through v4 by `bridgeWebSocket`. */
export const LEGACY_STREAM_PROTOCOLS = ['v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;

/** A v4 Status's message when it is a failure; empty on success (what the error channel of v1-v3 carries). */
function statusMessage(status: Buffer): string {
  try {
    const s = JSON.parse(status.toString('utf8')) as { status?: string; message?: string };
    return s.status === 'Success' ? '' : (s.message ?? 'error');
  } catch {
    return status.toString('utf8');
  }
}

/** The first protocol the client offers that is served (upstream's negotiation order). */
export function negotiateProtocol(offered: Iterable<string>): string | undefined {
  for (const p of offered) if ((STREAM_PROTOCOLS as readonly string[]).includes(p)) return p;
  return undefined;
}

/** The error channel's final message: success, or upstream's NonZeroExitCode Status. */
export function exitStatus(code: number, cmd: string[]): Record<string, unknown> {
  if (code === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${cmd.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** The exit code a client reads from the error channel's Status (undefined when it is not one). */
export function exitCodeOf(status: { status?: string; reason?: string; details?: { causes?: { reason?: string; message?: string }[] } }): number | undefined {
  if (status.status === 'Success') return 0;
  if (status.reason !== 'NonZeroExitCode') return undefined;
  const c = status.details?.causes?.find((x) => x.reason === 'ExitCode');
  const n = Number(c?.message);
  return Number.isInteger(n) ? n : undefined;
}

/** True when the request asks to become a WebSocket. */
export function isWebSocketUpgrade(headers: IncomingHttpHeaders): boolean {
  return String(headers.upgrade ?? '').toLowerCase() === 'websocket' && /\bupgrade\b/i.test(String(headers.connection ?? ''));
}

/**
 * A response bound to an upgrade request's socket, so a server can refuse an
 * upgrade with an ordinary HTTP answer (the socket ends after it); detach it
 * (`detachSocket`) once the connection is handed over.
 */
export function upgradeResponse(req: IncomingMessage, socket: Duplex): ServerResponse {
  const res = new ServerResponse(req);
  // The socket ends after the answer: say so, or a client would pool it.
  res.shouldKeepAlive = false;
  res.assignSocket(socket as never);
  res.on('finish', () => socket.end());
  socket.on('error', () => socket.destroy());
  return res;
}

/** The request headers a WebSocket or SPDY upgrade carries through a proxy hop (no credentials). */
const UPGRADE_HEADERS = [
  'upgrade',
  'connection',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'x-stream-protocol-version',
  'user-agent',
];

export interface UpgradeTarget {
  url: URL;
  /** GET unless told (a SPDY upgrade is a POST). */
  method?: string;
  cert?: string;
  key?: string;
  ca?: string;
  /** Without a CA the target's certificate is not checked. */
  timeoutMs?: number;
}

export type UpgradeResult = { upgraded: true; res: IncomingMessage; socket: Duplex; head: Buffer } | { upgraded: false; res: IncomingMessage };

/** Replays an upgrade request to `target`: the joined socket on 101, else the target's plain response. */
export function dialUpgrade(headers: IncomingHttpHeaders, target: UpgradeTarget): Promise<UpgradeResult> {
  const h: Record<string, string> = {};
  for (const k of UPGRADE_HEADERS) {
    const v = headers[k];
    if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const tls = target.url.protocol === 'https:';
  const common = {
    host: target.url.hostname,
    port: target.url.port,
    path: target.url.pathname + target.url.search,
    method: target.method ?? 'GET',
    headers: h,
    timeout: target.timeoutMs ?? 10_000,
    agent: false as const,
  };
  return new Promise((resolve, reject) => {
    const req = tls
      ? httpsRequest({
          ...common,
          ...(target.cert ? { cert: target.cert, key: target.key } : {}),
          ...(target.ca ? { ca: target.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }),
        })
      : httpRequest(common);
    req.on('upgrade', (res, socket, head) => {
      socket.setTimeout(0);
      resolve({ upgraded: true, res, socket, head });
    });
    req.on('response', (res) => resolve({ upgraded: false, res }));
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** Answers the client with the target's 101 and joins the two connections. */
export function spliceUpgrade(client: Duplex, clientHead: Buffer, up: { res: IncomingMessage; socket: Duplex; head: Buffer }): void {
  const lines = [`HTTP/1.1 101 ${up.res.statusMessage || 'Switching Protocols'}`];
  const raw = up.res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) lines.push(`${raw[i]}: ${raw[i + 1]}`);
  client.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (up.head.length) client.write(up.head);
  if (clientHead.length) up.socket.write(clientHead);
  client.pipe(up.socket);
  up.socket.pipe(client);
  const end = () => {
    client.destroy();
    up.socket.destroy();
  };
  client.on('error', end).on('close', end);
  up.socket.on('error', end).on('close', end);
}

/** Reads a plain (non-101) response body as text. */
export function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    res.on('data', (d: Buffer) => (b += d.toString()));
    res.on('end', () => resolve(b));
    res.on('error', () => resolve(b));
  });
}

/** A refusal on the way to a streaming server, as an HTTP status and message. */
export class StreamRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Accepts the client's WebSocket and joins it to the streaming server at
 * `target` message by message. The server is offered what the client offered,
 * plus v4 when the client speaks v5; when the server settles on v4 the client
 * still gets v5, and its stream-close messages (which v4 lacks) are dropped.
 * A client of the older channel protocols (v3, v2, channel.k8s.io, as the
 * conformance suite's websocket exec test speaks) is served through v4: the
 * error channel then carries only a failure's message, nothing on success.
 */
export async function bridgeWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, target: string): Promise<void> {
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const ask = offered.filter((p) => (STREAM_PROTOCOLS as readonly string[]).includes(p));
  if (ask.includes(STREAM_PROTOCOL_V5) && !ask.includes(STREAM_PROTOCOL_V4)) ask.push(STREAM_PROTOCOL_V4);
  const legacy = ask.length ? undefined : offered.find((p) => (LEGACY_STREAM_PROTOCOLS as readonly string[]).includes(p));
  if (legacy) ask.push(STREAM_PROTOCOL_V4);
  if (!ask.length) throw new StreamRefusal(400, `none of the offered protocols [${offered.join(', ')}] is served; use ${STREAM_PROTOCOLS.join(' or ')}`);
  const upstream = new WebSocket(target, ask, { perMessageDeflate: false });
  // What the server says before the client is connected waits for it.
  const early: [Buffer, boolean][] = [];
  let upstreamClosed = false;
  let forward = (d: Buffer, binary: boolean) => void early.push([d, binary]);
  upstream.on('message', (d: Buffer, binary) => forward(d, binary));
  upstream.once('close', () => (upstreamClosed = true));
  await new Promise<void>((resolve, reject) => {
    upstream.once('open', () => resolve());
    upstream.once('unexpected-response', (_q, res) => {
      void readText(res).then((t) =>
        reject(new StreamRefusal(res.statusCode === 404 ? 404 : 400, t.trim() || `the streaming server answered ${res.statusCode}`)),
      );
    });
    upstream.once('error', (e) => reject(new StreamRefusal(500, `error reaching the streaming server: ${e.message}`)));
  });
  const chosen = upstream.protocol;
  const toClient = legacy ?? (offered.includes(chosen) ? chosen : STREAM_PROTOCOL_V5);
  const dropClose = toClient === STREAM_PROTOCOL_V5 && chosen !== STREAM_PROTOCOL_V5;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => toClient });
  wss.handleUpgrade(req, socket, head, (client) => {
    const send = (d: Buffer, binary: boolean) => void (client.readyState === client.OPEN && client.send(d, { binary }));
    if (legacy) {
      // The v4 Status on the error channel becomes the older protocols' plain failure message.
      forward = (d, binary) => {
        if (d[0] !== CHANNEL_ERROR) return send(d, binary);
        const message = statusMessage(d.subarray(1));
        if (message) send(Buffer.concat([Buffer.from([CHANNEL_ERROR]), Buffer.from(message)]), binary);
      };
    } else forward = send;
    for (const [d, binary] of early.splice(0)) forward(d, binary);
    client.on('message', (d: Buffer, binary) => {
      if (dropClose && d[0] === CHANNEL_CLOSE) return;
      if (upstream.readyState === upstream.OPEN) upstream.send(d, { binary });
    });
    const closeBoth = () => {
      if (client.readyState === client.OPEN) client.close(1000);
      if (upstream.readyState === upstream.OPEN) upstream.close(1000);
    };
    const terminateBoth = () => {
      client.terminate();
      upstream.terminate();
    };
    client.on('close', closeBoth).on('error', terminateBoth);
    upstream.on('close', closeBoth).on('error', terminateBoth);
    if (upstreamClosed) closeBoth();
  });
}

/**
 * Serves a byte stream over a WebSocket, as the apiserver's wsstream Reader
 * does for a GET that asks to upgrade (pods/log): binary messages under
 * `binary.k8s.io` (or no protocol), base64 text under
 * `base64.binary.k8s.io`; the socket closes when the stream ends.
 */
export function serveWebSocketStream(req: IncomingMessage, socket: Duplex, head: Buffer, stream: NodeJS.ReadableStream & { destroy?(): void }): void {
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const protocol = offered.find((p) => p === 'binary.k8s.io' || p === 'base64.binary.k8s.io');
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => protocol ?? false });
  wss.handleUpgrade(req, socket, head, (ws) => {
    const base64 = protocol === 'base64.binary.k8s.io';
    stream.on('data', (d: Buffer | string) => {
      const b = Buffer.isBuffer(d) ? d : Buffer.from(d);
      if (ws.readyState === ws.OPEN) ws.send(base64 ? b.toString('base64') : b, { binary: !base64 });
    });
    stream.on('end', () => ws.close(1000));
    stream.on('error', () => ws.close(1011));
    ws.on('close', () => stream.destroy?.());
    ws.on('error', () => stream.destroy?.());
  });
}
