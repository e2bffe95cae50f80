/**
 * A test fixture, never a server of kubeling: canned API answers on a
 * loopback port, so that the real kubectl and ours can be run against the
 * very same answers and their output compared. It serves /version, the
 * discovery documents (aggregated apidiscovery.k8s.io/v2 when asked for, the
 * legacy APIGroupList / APIResourceList otherwise) built from a short list of
 * groups, and whatever routes a test gives it; anything else is a 404 Status.
 * Every request is recorded (method, path, query, body) for the test to read.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CannedResource {
  resource: string;
  kind: string;
  namespaced: boolean;
  singular?: string;
  shortNames?: string[];
  verbs?: string[];
  categories?: string[];
  /** `scale` answers autoscaling/v1 Scale, as the real server's discovery says. */
  subresources?: string[];
}

export interface CannedGroup {
  /** '' for the core group. */
  group: string;
  /** Preferred first. */
  versions: string[];
  resources: CannedResource[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  accept: string;
  contentType: string;
  /** The body as sent (protobuf bodies are binary). */
  raw: Buffer;
  body: string;
}

/** A route's answer: a body (200), or a status and a body. */
export type Answer = unknown | { status: number; body: unknown };
export type Route = Answer | ((req: RecordedRequest) => Answer);

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function aggregated(groups: CannedGroup[]) {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g.group, creationTimestamp: null },
      versions: g.versions.map((version) => ({
        version,
        freshness: 'Current',
        resources: g.resources.map((r) => ({
          resource: r.resource,
          responseKind: { group: g.group, version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: r.singular ?? r.kind.toLowerCase(),
          verbs: r.verbs ?? VERBS,
          ...(r.shortNames ? { shortNames: r.shortNames } : {}),
          ...(r.categories ? { categories: r.categories } : {}),
          ...(r.subresources
            ? {
                subresources: r.subresources.map((s) => ({
                  subresource: s,
                  responseKind: s === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : { group: g.group, version, kind: r.kind },
                  verbs: ['get', 'patch', 'update'],
                })),
              }
            : {}),
        })),
      })),
    })),
  };
}

function resourceList(g: CannedGroup, version: string) {
  const gv = g.group ? `${g.group}/${version}` : version;
  const resources: unknown[] = [];
  for (const r of g.resources) {
    resources.push({
      name: r.resource,
      singularName: r.singular ?? r.kind.toLowerCase(),
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs ?? VERBS,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      ...(r.categories ? { categories: r.categories } : {}),
    });
    for (const s of r.subresources ?? [])
      resources.push({
        name: `${r.resource}/${s}`,
        singularName: '',
        namespaced: r.namespaced,
        ...(s === 'scale' ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : { kind: r.kind }),
        verbs: ['get', 'patch', 'update'],
      });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources };
}

const isStatusAnswer = (a: unknown): a is { status: number; body: unknown } =>
  typeof a === 'object' && a !== null && typeof (a as { status?: unknown }).status === 'number' && 'body' in a && Object.keys(a).length === 2;

export class CannedServer {
  readonly requests: RecordedRequest[] = [];
  readonly routes = new Map<string, Route>();
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly groups: CannedGroup[],
  ) {}

  /** Starts on 127.0.0.1 with the given groups and routes (`GET /api/v1/nodes` → answer). */
  static async start(groups: CannedGroup[], routes: Record<string, Route> = {}): Promise<CannedServer> {
    let self: CannedServer | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => self!.answer(req, Buffer.concat(chunks), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new CannedServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, groups);
    for (const [k, v] of Object.entries(routes)) self.routes.set(k, v);
    return self;
  }

  private discovery(path: string, accept: string): unknown {
    const agg = accept.includes('apidiscovery.k8s.io');
    const core = this.groups.filter((g) => g.group === '');
    const named = this.groups.filter((g) => g.group !== '');
    if (path === '/version')
      return {
        major: '1',
        minor: '33',
        gitVersion: 'v1.33.1',
        gitCommit: 'canned',
        gitTreeState: 'clean',
        goVersion: 'go1.24.2',
        compiler: 'gc',
        platform: 'linux/amd64',
      };
    if (path === '/api') return agg ? aggregated(core) : { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    if (path === '/apis') {
      if (agg) return aggregated(named);
      return {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: named.map((g) => ({
          name: g.group,
          versions: g.versions.map((v) => ({ groupVersion: `${g.group}/${v}`, version: v })),
          preferredVersion: { groupVersion: `${g.group}/${g.versions[0]}`, version: g.versions[0] },
        })),
      };
    }
    for (const g of this.groups) for (const v of g.versions) if (path === (g.group ? `/apis/${g.group}/${v}` : `/api/${v}`)) return resourceList(g, v);
    return undefined;
  }

  private answer(req: IncomingMessage, raw: Buffer, res: ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://x');
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: u.pathname,
      query: u.searchParams,
      accept: String(req.headers.accept ?? ''),
      contentType: String(req.headers['content-type'] ?? ''),
      raw,
      body: raw.toString('utf8'),
    };
    this.requests.push(rec);
    const send = (status: number, obj: unknown, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(JSON.stringify(obj));
    };
    const disc = rec.method === 'GET' ? this.discovery(rec.path, rec.accept) : undefined;
    if (disc !== undefined) {
      const agg = rec.accept.includes('apidiscovery.k8s.io') && (rec.path === '/api' || rec.path === '/apis');
      return send(200, disc, agg ? 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' : 'application/json');
    }
    const route = this.routes.get(`${rec.method} ${rec.path}`);
    if (route === undefined)
      return send(404, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server could not find the requested resource',
        reason: 'NotFound',
        details: {},
        code: 404,
      });
    const a: Answer = typeof route === 'function' ? (route as (r: RecordedRequest) => Answer)(rec) : route;
    if (isStatusAnswer(a)) return send(a.status, a.body);
    send(200, a);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
