/**
 * The HTTPS request path of the metrics server, as k8s.io/apiserver's
 * default handler chain runs it for an aggregated server: health endpoints
 * open to anyone; otherwise authentication (auth.ts; nobody → 401),
 * authorization by SubjectAccessReview (denied → 403 with upstream's
 * message), then the API (api.ts). Every failure is a `Status`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { failure, forbidden, isStatusError, methodNotAllowed, type Status } from '@kubeling/apimachinery';
import { type Listers, read, resourceAttributes, route, tableWanted, toTable } from './api.js';
import { type Authenticator, type Authorizer, forbiddenMessage, isResourceRequest, type RequestAttributes } from './auth.js';
import type { MetricsStorage } from './storage.js';

export interface HealthCheck {
  name: string;
  /** undefined when healthy, else why not (logged, not returned). */
  check(): string | undefined;
}

export interface HandlerDeps {
  authn: Authenticator;
  authz: Authorizer;
  listers: Listers;
  storage: MetricsStorage;
  /** Checks of /livez and /healthz, and the extra ones of /readyz. */
  live: HealthCheck[];
  ready: HealthCheck[];
  log: Logger;
}

const HEALTH = new Set(['/healthz', '/livez', '/readyz']);

function sendJSON(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

const sendStatus = (res: ServerResponse, s: Status) => sendJSON(res, s.code, s);

/** healthz's answer: "ok", or each check's line and "<name> check failed" with 500 (healthz.go handleRootHealth). */
function health(path: string, checks: HealthCheck[], res: ServerResponse, log: Logger): void {
  const kind = path.slice(1);
  const results = [{ name: 'ping', why: undefined as string | undefined }, ...checks.map((c) => ({ name: c.name, why: c.check() }))];
  const failed = results.filter((r) => r.why !== undefined);
  if (!failed.length) {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end('ok');
    return;
  }
  for (const f of failed) log.info({ check: f.name, why: f.why }, `${kind} check failed`);
  const lines = results.map((r) => (r.why === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end(`${lines.join('\n')}\n${kind} check failed\n`);
}

export function createHandler(d: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(d, req, res).catch((e) => {
      d.log.error({ err: (e as Error).message }, 'request failed');
      if (!res.headersSent) sendStatus(res, failure('InternalError', 'an error on the server ("unknown") has prevented the request from succeeding').status);
      else res.end();
    });
  };
}

async function handle(d: HandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://metrics-server');
  const path = url.pathname;
  if (HEALTH.has(path) && (req.method === 'GET' || req.method === 'HEAD')) {
    health(path, path === '/readyz' ? [...d.live, ...d.ready] : d.live, res, d.log);
    return;
  }
  const authn = await d.authn.authenticate(req);
  if (!('user' in authn)) {
    if ('error' in authn) d.log.debug({ path, err: authn.error }, 'unable to authenticate the request');
    sendStatus(res, failure('Unauthorized', 'Unauthorized').status);
    return;
  }
  const user = authn.user;
  const r = route(path);
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  const attrs: RequestAttributes = r.kind === 'resource' ? resourceAttributes(r, watch) : { verb: (req.method ?? 'GET').toLowerCase(), path };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendStatus(res, methodNotAllowed().status);
    return;
  }
  let decision: { allowed: boolean; reason: string };
  try {
    decision = await d.authz.authorize(user, attrs);
  } catch (e) {
    d.log.error({ user: user.name, path, err: (e as Error).message }, 'authorization failed');
    sendStatus(res, failure('InternalError', 'an error on the server ("unknown") has prevented the request from succeeding').status);
    return;
  }
  if (!decision.allowed) {
    const why = forbiddenMessage(user.name, attrs) + (decision.reason ? `: ${decision.reason}` : '');
    const s = isResourceRequest(attrs)
      ? forbidden({ group: attrs.group, resource: attrs.resource }, attrs.name, why)
      : failure('Forbidden', `forbidden: ${why}`);
    sendStatus(res, s.status);
    return;
  }
  if (r.kind === 'discovery') return sendJSON(res, 200, r.body);
  if (r.kind === 'notFound') return sendStatus(res, failure('NotFound', 'the server could not find the requested resource').status);
  try {
    const body = read(r, url.searchParams, d.listers, d.storage);
    const table = tableWanted(req.headers.accept);
    sendJSON(res, 200, table ? toTable(body, table, url.searchParams.get('includeObject')) : body);
  } catch (e) {
    if (!isStatusError(e)) throw e;
    sendStatus(res, e.status);
  }
  d.log.debug({ verb: attrs.verb, resource: r.resource, namespace: r.namespace, name: r.name, user: user.name }, 'served');
}
