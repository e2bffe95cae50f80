/**
 * The aggregation layer's proxy (kube-aggregator pkg/apiserver
 * handler_proxy.go): a request for a group-version an APIService hands to an
 * extension server goes, after this server's own authentication,
 * authorization and priority-and-fairness, to one of the Service's endpoints
 * over TLS — verified against the APIService's caBundle for the name
 * `<service>.<namespace>.svc` — presenting the front-proxy client certificate
 * and naming the user in X-Remote-User, X-Remote-Group and
 * X-Remote-Extra-<key> (client-go transport.SetAuthProxyHeaders). Headers of
 * those names a client sent are dropped first. An APIService that is not
 * available, or a backend that cannot be reached, is a plain-text 503, as
 * upstream writes it with http.Error.
 */
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../registry/store.js';
import type { UserInfo } from '../auth/types.js';
import { backendRequestHeaders, clientResponseHeaders } from '../http/proxy-rewrite.js';
import { type APIService, type Backend, type ProxyClient, resolveBackends, tlsFor } from './availability.js';
import { Aggregator } from './controller.js';

const DIAL_TIMEOUT_MS = 30_000;
const UNAUTHENTICATED_ADMIN: UserInfo = { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

/** Headers that carry identity to the backend: never taken from the client. */
const IDENTITY = /^(x-remote-|impersonate-)/i;

function plainError(reply: FastifyReply, code: number, message: string): FastifyReply {
  return reply.code(code).header('content-type', 'text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send(`${message}\n`);
}

/** url.PathEscape of an extra's key, as the header name carries it. */
const escapeKey = (k: string) => encodeURIComponent(k).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

export interface ProxyDeps {
  services: Store;
  endpointSlices: Store;
  client: ProxyClient | undefined;
}

export async function proxyToAPIService(req: FastifyRequest, reply: FastifyReply, a: APIService, deps: ProxyDeps): Promise<FastifyReply> {
  if (!Aggregator.available(a)) return plainError(reply, 503, 'service unavailable');
  // Without authentication (the plain-HTTP development mode) every request is the admin's, as the audit log names it.
  const user = req.user ?? UNAUTHENTICATED_ADMIN;
  const backends = await resolveBackends(a, deps.services, deps.endpointSlices);
  if (!Array.isArray(backends) || !backends.length) return plainError(reply, 503, 'service unavailable');
  const b: Backend = backends[Math.floor(Math.random() * backends.length)]!;
  const headers = backendRequestHeaders(req.headers, req.ip, false);
  for (const k of Object.keys(headers)) if (IDENTITY.test(k)) delete headers[k];
  delete headers.host;
  headers['x-remote-user'] = user.name;
  if (user.groups.length) headers['x-remote-group'] = user.groups;
  for (const [k, vs] of Object.entries(user.extra ?? {})) headers[`x-remote-extra-${escapeKey(k)}`] = vs;
  const body = Buffer.isBuffer(req.body) ? req.body : undefined;
  if (body) headers['content-length'] = body.length;
  else delete headers['content-length'];
  const hostPort = `${b.host.includes(':') ? `[${b.host}]` : b.host}:${b.port}`;
  const out = httpsRequest({
    host: b.host,
    port: b.port,
    method: req.method,
    path: req.url,
    headers,
    agent: false,
    timeout: DIAL_TIMEOUT_MS,
    ...tlsFor(a, deps.client),
  });
  req.raw.on('close', () => {
    if (!reply.sent) out.destroy();
  });
  const res = await new Promise<IncomingMessage | string>((resolve) => {
    out.on('response', resolve);
    out.on('error', (e: NodeJS.ErrnoException) =>
      resolve(`error trying to reach service: ${e.code === 'ECONNREFUSED' ? `dial tcp ${hostPort}: connect: connection refused` : e.message}`),
    );
    out.on('timeout', () => out.destroy(Object.assign(new Error(`dial tcp ${hostPort}: i/o timeout`), { code: 'ETIMEDOUT' })));
    out.end(body);
  });
  if (typeof res === 'string') return plainError(reply, 503, res);
  // Watches and long lists stream for as long as they last.
  res.setTimeout(0);
  out.setTimeout(0);
  reply.code(res.statusCode ?? 502);
  const grouped = new Map<string, string[]>();
  for (const [k, v] of clientResponseHeaders(res.rawHeaders)) grouped.set(k.toLowerCase(), [...(grouped.get(k.toLowerCase()) ?? []), v]);
  for (const [k, vs] of grouped) reply.header(k, vs.length === 1 ? vs[0]! : vs);
  return reply.send(res);
}
