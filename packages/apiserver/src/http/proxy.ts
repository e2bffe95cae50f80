/**
 * The proxy subresources: /api/v1/namespaces/<ns>/pods/<[scheme:]name[:port]>/proxy/<path>,
 * .../services/<[scheme:]name[:port]>/proxy/<path> and /api/v1/nodes/<[scheme:]name[:port]>/proxy/<path>
 * (upstream's ProxyREST and the upgrade-aware proxy handler,
 * k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go and transport.go).
 *
 * Where a request goes is resolved from the API objects only
 * (registry/core/proxy-location.ts). Any method; the response streams back as
 * it comes, with hop-by-hop headers and the backend's CORS headers dropped, a
 * Location pointed back through the proxy and, for HTML, its links too. An
 * upgrade request (a WebSocket, say) is replayed to the backend and joined byte
 * for byte once it answers 101. `.../proxy` without a slash is sent to `.../proxy/`
 * (301), as upstream does. A backend that cannot be reached is 503
 * `error trying to reach service: ...`.
 *
 * The request body is the one the server read (bounded by its body limit);
 * the response is never buffered, except HTML whose links are rewritten.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { posix } from 'node:path';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip, gzip, deflateRaw, inflateRaw } from 'node:zlib';
import { badRequest, serviceUnavailable } from '@kubeling/apimachinery';
import { spliceUpgrade } from '@kubeling/client/remotecommand';
import { nodeLocation, podLocation, serviceLocation, type ProxyLocation } from '../registry/core/proxy-location.js';
import type { HandlerContext } from './context.js';
import { upgrades } from './kubelet-proxy.js';
import { backendRequestHeaders, clientResponseHeaders, rewriteHTML, rewriteURL, type RewriteContext } from './proxy-rewrite.js';

/** HTML larger than this is passed on as it is, links not rewritten. */
const MAX_REWRITTEN_HTML = 16 << 20;
const DIAL_TIMEOUT_MS = 30_000;

/** The raw path split at the proxy subresource: what precedes it (with it) and what follows. */
function splitPath(c: HandlerContext): { prepend: string; rest: string; query: string } {
  const url = c.req.url;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const segs = path.split('/');
  // The parsed request info counts the segments after the subresource.
  const at = segs.length - 1 - c.info.rest.length;
  if (segs[at] !== 'proxy') throw badRequest(`invalid proxy path ${JSON.stringify(path)}`);
  return {
    prepend: segs.slice(0, at + 1).join('/'),
    rest: at + 1 < segs.length ? `/${segs.slice(at + 1).join('/')}` : '',
    query: q < 0 ? '' : url.slice(q),
  };
}

export async function proxySubresource(c: HandlerContext, ns: string | undefined) {
  const store = (key: string) => c.registry.get(key)!;
  let loc: ProxyLocation;
  switch (c.def.resource) {
    case 'pods':
      loc = await podLocation(store('/v1/pods'), ns, c.info.name);
      break;
    case 'services':
      loc = await serviceLocation(
        { services: store('/v1/services'), endpointSlices: store('discovery.k8s.io/v1/endpointslices'), pods: store('/v1/pods') },
        ns,
        c.info.name,
      );
      break;
    case 'nodes':
      loc = await nodeLocation(store('/v1/nodes'), c.info.name, !!c.opts.kubeletClient);
      break;
    default:
      throw badRequest(`${c.def.resource} have no proxy`);
  }
  return proxyTo(c, loc);
}

/** Go's wording for the usual dial failures. */
function dialError(e: NodeJS.ErrnoException, where: string): string {
  if (e.code === 'ECONNREFUSED') return `dial tcp ${where}: connect: connection refused`;
  if (e.code === 'ETIMEDOUT') return `dial tcp ${where}: i/o timeout`;
  if (e.code === 'ECONNRESET') return `read tcp ${where}: read: connection reset by peer`;
  return e.message;
}

async function proxyTo(c: HandlerContext, loc: ProxyLocation) {
  const { prepend, rest, query } = splitPath(c);
  const up = upgrades.get(c.req.raw);
  const upgrade = !!up && !!c.req.headers.upgrade;
  if (!rest && !upgrade) return c.reply.code(301).header('Location', `${prepend}/${query}`).send();
  const hostPort = `${loc.host.includes(':') ? `[${loc.host}]` : loc.host}${loc.port ? `:${loc.port}` : ''}`;
  const headers = backendRequestHeaders(c.req.headers, c.req.ip, upgrade);
  if (!upgrade) {
    // transport.go sets it from the proxy prefix and the proxied path.
    let fwd = posix.normalize(`${prepend}/${rest}`);
    if (fwd.length > 1 && fwd.endsWith('/') && !rest.endsWith('/')) fwd = fwd.slice(0, -1);
    headers['x-forwarded-uri'] = fwd;
  }
  const body = Buffer.isBuffer(c.req.body) ? c.req.body : undefined;
  if (body) headers['content-length'] = body.length;
  else delete headers['content-length'];
  const kc = c.opts.kubeletClient;
  const opts: RequestOptions = {
    host: loc.host,
    ...(loc.port ? { port: loc.port } : {}),
    method: c.req.method,
    path: `${rest || '/'}${query}`,
    headers,
    agent: false,
    timeout: DIAL_TIMEOUT_MS,
  };
  const tls =
    loc.kubelet && kc
      ? { cert: kc.cert, key: kc.key, ...(kc.ca ? { ca: kc.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }) }
      : // Pods and endpoints are not checked, as upstream's proxy transport (InsecureSkipVerify) does not.
        { rejectUnauthorized: false };
  const out = loc.scheme === 'https' ? httpsRequest({ ...opts, ...tls }) : httpRequest(opts);
  c.req.raw.on('close', () => {
    if (!c.reply.sent && !upgrade) out.destroy();
  });
  const answer = await new Promise<{ res: IncomingMessage } | { upgraded: { res: IncomingMessage; socket: Duplex; head: Buffer } }>((resolve, reject) => {
    out.on('response', (res) => resolve({ res }));
    out.on('upgrade', (res, socket, head) => {
      // The dial timeout no longer applies to the joined connection.
      socket.setTimeout(0);
      resolve({ upgraded: { res, socket, head } });
    });
    out.on('error', (e: NodeJS.ErrnoException) => reject(serviceUnavailable(`error trying to reach service: ${dialError(e, hostPort)}`)));
    out.on('timeout', () => out.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    out.end(body);
  });
  if ('upgraded' in answer) {
    c.reply.hijack();
    c.reply.raw.detachSocket(up!.socket as never);
    c.opts.upgraded?.(c.req);
    spliceUpgrade(up!.socket, up!.head, answer.upgraded);
    return;
  }
  const res = answer.res;
  res.setTimeout(0);
  out.setTimeout(0);
  const pairs = clientResponseHeaders(res.rawHeaders);
  const ctx: RewriteContext = { pathPrepend: prepend, backendHost: hostPort, requestHost: String(c.req.headers.host ?? '') };
  const location = pairs.find(([k]) => k.toLowerCase() === 'location');
  if (location && !upgrade) location[1] = rewriteURL(location[1], ctx);
  const contentType = (pairs.find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '').split(';')[0]!.trim().toLowerCase();
  let payload: IncomingMessage | Buffer = res;
  if (!location && !upgrade && contentType === 'text/html') {
    const rewritten = await rewriteBody(res, pairs, (u) => rewriteURL(u, ctx));
    if (rewritten) payload = rewritten;
  }
  c.reply.code(res.statusCode ?? 502);
  const grouped = new Map<string, string[]>();
  for (const [k, v] of pairs) grouped.set(k.toLowerCase(), [...(grouped.get(k.toLowerCase()) ?? []), v]);
  for (const [k, vs] of grouped) c.reply.header(k, vs.length === 1 ? vs[0]! : vs);
  if (Buffer.isBuffer(payload)) c.reply.header('content-length', payload.length);
  return c.reply.send(payload);
}

const codecs: Record<string, { decode: (b: Buffer) => Promise<Buffer>; encode: (b: Buffer) => Promise<Buffer> }> = {
  '': { decode: async (b) => b, encode: async (b) => b },
  gzip: { decode: promisify(gunzip), encode: promisify(gzip) },
  deflate: { decode: promisify(inflateRaw), encode: promisify(deflateRaw) },
};

/**
 * The HTML body with its links rewritten (transport.go rewriteResponse), or
 * undefined when it cannot be (an unknown encoding: passed on as it is). A body
 * over the bound is passed on unchanged, what was read first included.
 */
async function rewriteBody(res: IncomingMessage, pairs: [string, string][], rewrite: (u: string) => string): Promise<Buffer | undefined> {
  const encoding = (pairs.find(([k]) => k.toLowerCase() === 'content-encoding')?.[1] ?? '').trim().toLowerCase();
  const codec = codecs[encoding];
  if (!codec) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  const whole = await new Promise<boolean>((resolve) => {
    const onData = (d: Buffer) => {
      chunks.push(d);
      size += d.length;
      if (size <= MAX_REWRITTEN_HTML) return;
      // Too large to hold: what was read goes first, then the rest as it comes.
      res.off('data', onData).off('end', onEnd).off('error', onEnd);
      res.pause();
      res.unshift(Buffer.concat(chunks));
      resolve(false);
    };
    const onEnd = () => resolve(true);
    res.on('data', onData).once('end', onEnd).once('error', onEnd);
  });
  if (!whole) return undefined;
  const raw = Buffer.concat(chunks);
  const html = await codec.decode(raw).catch(() => undefined);
  if (!html) return raw;
  const out = await codec.encode(Buffer.from(rewriteHTML(html.toString('utf8'), rewrite), 'utf8'));
  // The length changes with the links.
  const i = pairs.findIndex(([k]) => k.toLowerCase() === 'content-length');
  if (i >= 0) pairs.splice(i, 1);
  return out;
}
