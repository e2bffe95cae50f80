/**
 * Whether an APIService's backend can serve (kube-aggregator
 * pkg/controllers/status available_controller.go): its Service exists and has
 * the port, the port has ready endpoints, and a GET of the group-version's
 * discovery document answers 2xx within the timeout — as
 * `system:kube-aggregator` in `system:masters`, so that the check never fails
 * for want of rights. The answer doubles as the group-version's discovery
 * (handler_discovery.go fetches it the same way).
 */
import { request as httpsRequest } from 'node:https';
import type { apiregistrationv1, KubeObject } from '@kubeling/api';
import { field } from '@kubeling/apimachinery';
import type { Store } from '../registry/store.js';

export type APIService = apiregistrationv1.APIService;

export interface Condition {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export const LOCAL: Condition = { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };

/** The front-proxy client certificate the aggregator presents (--proxy-client-cert-file/--proxy-client-key-file). */
export interface ProxyClient {
  cert: string;
  key: string;
}

export interface Backend {
  host: string;
  port: number;
}

interface ServiceShape {
  spec?: { ports?: { name?: string; port: number; targetPort?: number | string }[] };
}
interface SliceShape {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
  ports?: { name?: string; port?: number }[];
}

const quoteNs = (ns: string) => field.goQuote(ns);

/**
 * The endpoints behind the APIService's Service port (what
 * --enable-aggregator-routing resolves to), or the condition saying why
 * there are none.
 */
export async function resolveBackends(a: APIService, services: Store, slices: Store): Promise<Backend[] | Condition> {
  const ref = a.spec!.service!;
  const ns = ref.namespace ?? '';
  const name = ref.name ?? '';
  const port = ref.port ?? 443;
  const svc = (await services.get(ns, name).catch(() => undefined)) as (KubeObject & ServiceShape) | undefined;
  if (!svc) return { status: 'False', reason: 'ServiceNotFound', message: `service/${name} in ${quoteNs(ns)} is not present` };
  const sp = (svc.spec?.ports ?? []).find((p) => p.port === port);
  if (!sp) return { status: 'False', reason: 'ServicePortError', message: `service/${name} in ${quoteNs(ns)} is not listening on port ${port}` };
  const list = (await slices.list(ns, { labelSelector: `kubernetes.io/service-name=${name}` })).items as (KubeObject & SliceShape)[];
  if (!list.length) return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for service/${name} in ${quoteNs(ns)}` };
  const portName = sp.name ?? '';
  const out: Backend[] = [];
  for (const s of list) {
    if (s.addressType === 'FQDN') continue;
    const p = (s.ports ?? []).find((x) => (x.name ?? '') === portName)?.port;
    if (!p) continue;
    for (const ep of s.endpoints ?? []) {
      // An unset ready condition means ready (discovery/v1 EndpointConditions).
      if (ep.conditions?.ready === false) continue;
      for (const host of ep.addresses ?? []) out.push({ host, port: p });
    }
  }
  if (!out.length)
    return {
      status: 'False',
      reason: 'MissingEndpoints',
      message: `endpoints for service/${name} in ${quoteNs(ns)} have no addresses with port name ${field.goQuote(portName)}`,
    };
  return out;
}

/** TLS options for talking to an APIService's backend (handler_proxy.go updateAPIService). */
export function tlsFor(a: APIService, client: ProxyClient | undefined) {
  const ref = a.spec!.service!;
  return {
    servername: `${ref.name}.${ref.namespace}.svc`,
    ...(a.spec?.caBundle ? { ca: Buffer.from(a.spec.caBundle, 'base64').toString('utf8') } : {}),
    rejectUnauthorized: !a.spec?.insecureSkipTLSVerify,
    ...(client ? { cert: client.cert, key: client.key } : {}),
  };
}

/** Go's wording of a failed GET, as the condition message carries it. */
function goError(url: string, e: NodeJS.ErrnoException, hostPort: string): string {
  const why =
    e.code === 'ECONNREFUSED'
      ? `dial tcp ${hostPort}: connect: connection refused`
      : e.code === 'ETIMEDOUT'
        ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        : e.message;
  return `Get ${JSON.stringify(url)}: ${why}`;
}

const hostPortOf = (b: Backend) => `${b.host.includes(':') ? `[${b.host}]` : b.host}:${b.port}`;

/** GET of the group-version's discovery on one backend: its body, or an error message. */
export function fetchDiscovery(a: APIService, b: Backend, client: ProxyClient | undefined, timeoutMs: number): Promise<{ body: Buffer } | { error: string }> {
  const hostPort = hostPortOf(b);
  const path = a.metadata?.name === 'v1.' ? `/api/${a.spec?.version}` : `/apis/${a.spec?.group}/${a.spec?.version}`;
  const url = `https://${hostPort}${path}`;
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: b.host,
        port: b.port,
        path,
        method: 'GET',
        headers: { accept: 'application/json', 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': 'system:masters' },
        agent: false,
        timeout: timeoutMs,
        ...tlsFor(a, client),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code < 200 || code >= 300) resolve({ error: `bad status from ${url}: ${code}` });
          else resolve({ body: Buffer.concat(chunks) });
        });
        res.on('error', (e) => resolve({ error: `failing or missing response from ${url}: ${goError(url, e, hostPort)}` }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `failing or missing response from ${url}: ${goError(url, e, hostPort)}` }));
    req.end();
  });
}

/** The availability check: the condition, and the discovery document when it passed. */
export async function checkAvailable(
  a: APIService,
  deps: { services: Store; endpointSlices: Store; client: ProxyClient | undefined; timeoutMs: number },
): Promise<{ condition: Condition; discovery?: Buffer }> {
  const backends = await resolveBackends(a, deps.services, deps.endpointSlices);
  if (!Array.isArray(backends)) return { condition: backends };
  let last = '';
  // Any one backend answering is enough (upstream tries five times in parallel).
  for (const b of backends.slice(0, 5)) {
    const r = await fetchDiscovery(a, b, deps.client, deps.timeoutMs);
    if ('body' in r) return { condition: { status: 'True', reason: 'Passed', message: 'all checks passed' }, discovery: r.body };
    last = r.error;
  }
  return { condition: { status: 'False', reason: 'FailedDiscoveryCheck', message: last } };
}
