/**
 * For tests: a loopback proxy in front of a real apiserver that changes only
 * what discovery says — a named group left out (as if the server stopped
 * serving it), a group version whose discovery fails (503 for its legacy
 * document, `Stale` in the aggregated one, as an unavailable aggregated API
 * shows), or the aggregated form refused — and passes everything else
 * through unchanged, watch streams included.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DiscoveryProxy {
  url: string;
  /** Named groups left out of discovery. */
  readonly hidden: Set<string>;
  /** `group/version`s whose discovery fails. */
  readonly failing: Set<string>;
  /** Answer `/api` and `/apis` only in the legacy form. */
  legacyOnly: boolean;
  close(): Promise<void>;
}

interface GroupList {
  kind?: string;
  groups?: { name: string }[];
  items?: { metadata?: { name?: string }; versions?: { version: string; freshness?: string; resources?: unknown[] }[] }[];
}

const unavailable = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server is currently unable to handle the request',
  reason: 'ServiceUnavailable',
  code: 503,
});

export async function startDiscoveryProxy(target: string): Promise<DiscoveryProxy> {
  const upstream = new URL(target);
  const proxy: DiscoveryProxy = { url: '', hidden: new Set(), failing: new Set(), legacyOnly: false, close: async () => undefined };

  const rewrite = (doc: GroupList): GroupList => {
    if (doc.kind === 'APIGroupList') return { ...doc, groups: (doc.groups ?? []).filter((g) => !proxy.hidden.has(g.name)) };
    if (doc.kind !== 'APIGroupDiscoveryList') return doc;
    const items = (doc.items ?? [])
      .filter((g) => !proxy.hidden.has(g.metadata?.name ?? ''))
      .map((g) => {
        const name = g.metadata?.name ?? '';
        const versions = (g.versions ?? []).map((v) =>
          proxy.failing.has(name ? `${name}/${v.version}` : v.version) ? { version: v.version, freshness: 'Stale' } : v,
        );
        return { ...g, versions };
      });
    return { ...doc, items };
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const gv = /^\/apis\/([^/]+)\/([^/]+)$/.exec(path);
    const group = /^\/apis\/([^/]+)/.exec(path)?.[1];
    if (gv && proxy.failing.has(`${gv[1]}/${gv[2]}`)) {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(unavailable);
      return;
    }
    const root = path === '/api' || path === '/apis';
    // The group's own discovery documents go too (its resources stay reachable: only discovery changes).
    if (group && proxy.hidden.has(group) && (path === `/apis/${group}` || gv)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'the server could not find the requested resource',
          reason: 'NotFound',
          code: 404,
        }),
      );
      return;
    }
    const headers = { ...req.headers, host: upstream.host };
    if (root && proxy.legacyOnly) headers.accept = 'application/json';
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (up: IncomingMessage) => {
      if (!root || (up.statusCode ?? 500) >= 300) {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      up.on('data', (c: Buffer) => chunks.push(c));
      up.on('end', () => {
        const body = JSON.stringify(rewrite(JSON.parse(Buffer.concat(chunks).toString('utf8')) as GroupList));
        const { 'content-length': _, 'transfer-encoding': __, ...rest } = up.headers;
        res.writeHead(up.statusCode ?? 200, { ...rest, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return proxy;
}
