/**
 * The pod subresources served by the pod's kubelet: `log` (streamed from its
 * /containerLogs endpoint), `exec` and `attach` (a WebSocket upgrade replayed
 * to its /exec or /attach endpoint and joined byte for byte once it answers
 * 101, as upstream's upgrade-aware proxy). The kubelet is reached at the node's InternalIP and
 * kubelet port, over HTTPS with the apiserver's kubelet client certificate
 * when one is configured.
 */
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { Duplex } from 'node:stream';
import type { KubeObject } from '@kubeling/api';
import { badRequest, failure, parseBool, serviceUnavailable, type StatusError } from '@kubeling/apimachinery';
import {
  dialUpgrade,
  isSpdyUpgrade,
  isWebSocketUpgrade,
  readText,
  serveWebSocketStream,
  spliceUpgrade,
  STREAM_PROTOCOLS,
} from '@kubeling/client/remotecommand';
import type { Store } from '../registry/store.js';
import { admitConnect } from '../admission/connect.js';
import { forbiddenMessage, type Attributes } from '../auth/types.js';
import { q1, type Query } from './request-info.js';
import type { HandlerContext } from './context.js';

/** Sockets of upgrade requests, which the server routes like any other request. */
export const upgrades = new WeakMap<IncomingMessage, { socket: Duplex; head: Buffer }>();

interface PodSpec {
  nodeName?: string;
  containers?: { name: string }[];
  initContainers?: { name: string }[];
}

/** The container a request names, or the pod's only one (upstream's messages otherwise). */
function containerOf(pod: KubeObject, asked: string | undefined): string {
  const spec = (pod.spec ?? {}) as PodSpec;
  const name = pod.metadata.name;
  const names = (spec.containers ?? []).map((x) => x.name);
  const inits = (spec.initContainers ?? []).map((x) => x.name);
  let container = asked;
  if (!container) {
    if (names.length === 1) container = names[0]!;
    else
      throw badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]${inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''}`,
      );
  }
  // Ephemeral containers are valid too (upstream's podHasContainerWithName visits every container type).
  const ephemeral = ((spec as { ephemeralContainers?: { name: string }[] }).ephemeralContainers ?? []).map((x) => x.name);
  if (!names.includes(container) && !inits.includes(container) && !ephemeral.includes(container))
    throw badRequest(`container ${container} is not valid for pod ${name}`);
  return container;
}

/** The kubelet of the pod's node: its URL for `path`, and the client credentials to use. */
export async function kubeletURL(c: HandlerContext, pod: KubeObject, path: string): Promise<URL> {
  const spec = (pod.spec ?? {}) as PodSpec;
  if (!spec.nodeName) throw badRequest(`pod ${pod.metadata.name} does not have a host assigned`);
  const node = await c.registry
    .get('/v1/nodes')!
    .get(undefined, spec.nodeName)
    .catch(() => undefined);
  const st = (node?.status ?? {}) as { addresses?: { type: string; address: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
  const ip = st.addresses?.find((a) => a.type === 'InternalIP')?.address;
  const port = st.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!ip || !port) throw serviceUnavailable(`no kubelet endpoint is known for node "${spec.nodeName}"`);
  // With a kubelet client certificate the kubelet is spoken to over HTTPS, as upstream's kubelet client does.
  return new URL(`${c.opts.kubeletClient ? 'https' : 'http'}://${ip.includes(':') ? `[${ip}]` : ip}:${port}${path}`);
}

/**
 * A WebSocket upgrade is a GET, which the authorization filter judged as
 * `get`: the pod's streaming subresources also need `create` on it, as
 * upstream requires from 1.35 (AuthorizePodWebsocketUpgradeCreatePermission).
 */
export async function requireCreateForGet(c: HandlerContext, ns: string | undefined, subresource: string): Promise<void> {
  if (c.req.method !== 'GET' || !c.authorizer || !c.req.user) return;
  const attrs: Attributes = {
    user: c.req.user,
    verb: 'create',
    isResourceRequest: true,
    ...(ns ? { namespace: ns } : {}),
    apiGroup: '',
    resource: 'pods',
    subresource,
    name: c.info.name,
  };
  if (!(await c.authorizer.authorize(attrs)).allowed) throw failure('Forbidden', forbiddenMessage(attrs), { kind: 'pods', name: c.info.name });
}

/** A kubelet's error answer as the Status the client gets. */
export async function kubeletError(res: IncomingMessage): Promise<StatusError> {
  const code = res.statusCode ?? 502;
  const text = await readText(res);
  let body: { message?: string } | undefined;
  try {
    body = JSON.parse(text) as { message?: string };
  } catch {
    body = text ? { message: text.trim() } : undefined;
  }
  const msg = body?.message ?? `the kubelet answered ${code}`;
  if (code === 404) return failure('NotFound', msg);
  if (code === 400) return badRequest(msg);
  return serviceUnavailable(msg);
}

const LOG_PARAMS = ['follow', 'previous', 'timestamps', 'tailLines', 'sinceSeconds', 'sinceTime', 'limitBytes'];

/** GET pods/<name>/log: streamed from the kubelet of the pod's node (its /containerLogs endpoint). */
export async function podLogs(c: HandlerContext, store: Store, ns: string | undefined) {
  const q = c.req.query as Query;
  const pod = await store.get(ns, c.info.name);
  const container = containerOf(pod, q1(q, 'container'));
  for (const k of ['tailLines', 'sinceSeconds', 'limitBytes']) {
    const v = q1(q, k);
    if (v !== undefined && !/^\d+$/.test(v))
      throw failure('Invalid', `PodLogOptions "" is invalid: ${k}: Invalid value: "${v}": must be a non-negative integer`);
  }
  const params = new URLSearchParams();
  for (const k of LOG_PARAMS) {
    const v = q1(q, k);
    if (v !== undefined) params.set(k, v);
  }
  const url = await kubeletURL(
    c,
    pod,
    `/containerLogs/${encodeURIComponent(ns ?? '')}/${encodeURIComponent(c.info.name)}/${encodeURIComponent(container)}?${params}`,
  );
  const kc = c.opts.kubeletClient;
  let res: IncomingMessage;
  try {
    res = await new Promise<IncomingMessage>((resolve, reject) => {
      const common = { host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'GET', timeout: 10_000 };
      const req = kc
        ? httpsGet({ ...common, cert: kc.cert, key: kc.key, ...(kc.ca ? { ca: kc.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }) }, resolve)
        : httpGet(common, resolve);
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('timeout')));
      c.req.raw.on('close', () => req.destroy());
    });
  } catch (e) {
    throw serviceUnavailable(`the kubelet of node "${(pod.spec as PodSpec).nodeName}" could not be reached: ${(e as Error).message}`);
  }
  res.setTimeout(0);
  if ((res.statusCode ?? 502) >= 300) throw await kubeletError(res);
  // A GET that asks to upgrade gets the log over a WebSocket (wsstream), as the conformance suite reads it.
  const up = upgrades.get(c.req.raw);
  if (up && isWebSocketUpgrade(c.req.headers)) {
    c.reply.hijack();
    c.reply.raw.detachSocket(up.socket as never);
    c.opts.upgraded?.(c.req);
    serveWebSocketStream(c.req.raw, up.socket, up.head, res);
    return;
  }
  c.reply.code(200).type('text/plain');
  return c.reply.send(res);
}

/**
 * GET or POST pods/<name>/exec with `command` (repeated), `container`,
 * `stdin`, `stdout`, `stderr`, `tty` — or pods/<name>/attach, the same without
 * a command, joined to the container's own stdio: a WebSocket
 * (v5.channel.k8s.io or v4.channel.k8s.io) through the pod's kubelet. A GET
 * upgrade also needs `create` on the subresource, as upstream requires from 1.35.
 */
export async function podStream(c: HandlerContext, store: Store, ns: string | undefined, kind: 'exec' | 'attach') {
  const q = c.req.query as Query;
  await requireCreateForGet(c, ns, kind);
  // CONNECT admission first, as upstream's ConnectResource: a refusal never reaches the kubelet.
  const user = c.req.user;
  await admitConnect(store.admission, { subresource: kind, namespace: ns, name: c.info.name, query: q, ...(user ? { user } : {}) });
  const pod = await store.get(ns, c.info.name);
  const container = containerOf(pod, q1(q, 'container'));
  const raw = q.command;
  const command = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (kind === 'exec' && !command.length) throw badRequest('you must specify at least one command for the container');
  const [stdin, stdout, stderr, tty] = ['stdin', 'stdout', 'stderr', 'tty'].map((k) => parseBool(q1(q, k)) === true);
  if (!stdin && !stdout && !stderr) throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Succeeded' || phase === 'Failed')
    throw badRequest(`cannot ${kind === 'exec' ? 'exec into' : 'attach to'} a container in a completed pod; current phase is ${phase}`);
  // Only then the upgrade itself, as upstream (a client falling back to SPDY sees the same refusals).
  const up = upgrades.get(c.req.raw);
  // WebSocket as kubectl speaks it, or SPDY/3.1 as client-go's SPDY executor does: either goes on to the kubelet as it came.
  const spdy = isSpdyUpgrade(c.req.headers);
  if (!up || (!isWebSocketUpgrade(c.req.headers) && !spdy)) {
    if (up && c.req.headers.upgrade)
      throw badRequest(
        `unable to upgrade: only WebSocket (${STREAM_PROTOCOLS.join(', ')}) and SPDY/3.1 upgrades are served for ${kind}, not ${String(c.req.headers.upgrade)}`,
      );
    throw badRequest('Upgrade request required');
  }
  // The kubelet's parameters, as upstream's ExecLocation builds them.
  const params = new URLSearchParams();
  for (const cmd of command) params.append('command', cmd);
  if (stdin) params.set('input', '1');
  if (stdout) params.set('output', '1');
  if (stderr) params.set('error', '1');
  if (tty) params.set('tty', '1');
  const url = await kubeletURL(
    c,
    pod,
    `/${kind}/${encodeURIComponent(ns ?? '')}/${encodeURIComponent(c.info.name)}/${encodeURIComponent(container)}?${params}`,
  );
  const kc = c.opts.kubeletClient;
  const res = await dialUpgrade(c.req.headers, {
    url,
    ...(spdy ? { method: 'POST' } : {}),
    ...(kc ? { cert: kc.cert, key: kc.key, ...(kc.ca ? { ca: kc.ca } : {}) } : {}),
  }).catch((e: Error) => {
    throw serviceUnavailable(`the kubelet of node "${(pod.spec as PodSpec).nodeName}" could not be reached: ${e.message}`);
  });
  if (!res.upgraded) throw await kubeletError(res.res);
  c.reply.hijack();
  c.reply.raw.detachSocket(up.socket as never);
  c.opts.upgraded?.(c.req);
  spliceUpgrade(up.socket, up.head, res);
}
