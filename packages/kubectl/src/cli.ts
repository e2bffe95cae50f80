/**
 * kubeling's kubectl: the client side of the seeds' story. Kubeconfig
 * resolution in kubectl's order with --kubeconfig/--context/--cluster/--user/
 * --token/--server/-n/--as, discovery cached under --cache-dir, server-side
 * Tables for `get`, and errors printed the kubectl way. This first slice has
 * `version`, `api-resources`, `api-versions`, `get`, `create -f`, `apply -f`
 * (client-side three-way merge, or `--server-side`) and `delete`.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { isStatusError } from '@kubeling/apimachinery';
import { RestClient, loadKubeConfig, resolveClientConfig, type ClientConfig } from '@kubeling/client';
import { Discovery, resourcePath, type Mapping } from './discovery.js';
import { LAST_APPLIED, threeWayMergePatch, withAnnotation } from './apply.js';

type Obj = Record<string, any>;

export interface IO {
  out(s: string): void;
  err(s: string): void;
  env: Record<string, string | undefined>;
  /** Ends long-running commands (logs -f). */
  signal?: AbortSignal;
}

export class UsageError extends Error {}

interface Global {
  kubeconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  token?: string;
  server?: string;
  namespace?: string;
  as?: string;
  cacheDir?: string;
  allNamespaces: boolean;
  output?: string;
  selector?: string;
  fieldSelector?: string;
  filenames: string[];
  showLabels: boolean;
  showManagedFields: boolean;
  serverSide: boolean;
  forceConflicts: boolean;
  replicas?: string;
  image?: string;
  restart?: string;
  port?: string;
  env?: string[];
  labels?: string;
  fromLiteral?: string[];
  tail?: string;
  container?: string;
  overwrite?: boolean;
  command?: boolean;
  follow?: boolean;
  previous?: boolean;
  multi?: boolean;
  printedTable?: boolean;
}

const GLOBAL_VALUE = new Map([
  ['--kubeconfig', 'kubeconfig'],
  ['--context', 'context'],
  ['--cluster', 'cluster'],
  ['--user', 'user'],
  ['--token', 'token'],
  ['--server', 'server'],
  ['-s', 'server'],
  ['--namespace', 'namespace'],
  ['-n', 'namespace'],
  ['--as', 'as'],
  ['--cache-dir', 'cacheDir'],
  ['--output', 'output'],
  ['-o', 'output'],
  ['--selector', 'selector'],
  ['-l', 'selector'],
  ['--field-selector', 'fieldSelector'],
  ['--filename', 'filenames'],
  ['-f', 'filenames'],
  ['--replicas', 'replicas'],
  ['--image', 'image'],
  ['--restart', 'restart'],
  ['--port', 'port'],
  ['--env', 'env'],
  ['--labels', 'labels'],
  ['--from-literal', 'fromLiteral'],
  ['--tail', 'tail'],
  ['--container', 'container'],
  ['-c', 'container'],
]);

const MULTI = new Set(['filenames', 'env', 'fromLiteral']);

/** Splits argv into flags and positional arguments (`--flag=v`, `--flag v`, `-n v`). */
export function parseArgs(argv: string[]): { g: Global; args: string[] } {
  const g: Global = { allNamespaces: false, filenames: [], showLabels: false, showManagedFields: false, serverSide: false, forceConflicts: false };
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    // `logs -f` follows; everywhere else -f names a file.
    if ((flag === '-f' || flag === '--follow') && args[0] === 'logs' && eq < 0) {
      g.follow = true;
      continue;
    }
    const key = GLOBAL_VALUE.get(flag);
    if (key) {
      const v = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (v === undefined) throw new UsageError(`flag needs an argument: ${flag}`);
      if (MULTI.has(key)) ((g as unknown as Record<string, string[]>)[key] ??= []).push(v);
      else (g as unknown as Record<string, string>)[key] = v;
    } else if (a === '-A' || a === '--all-namespaces') g.allNamespaces = true;
    else if (a === '--show-labels') g.showLabels = true;
    else if (a === '--show-managed-fields') g.showManagedFields = true;
    else if (a === '--server-side') g.serverSide = true;
    else if (a === '--overwrite') g.overwrite = true;
    else if (a === '--command') g.command = true;
    else if (a === '--follow' || a === '-f=true') g.follow = true;
    else if (a === '--previous' || a === '-p') g.previous = true;
    else if (a === '--force-conflicts') g.forceConflicts = true;
    else if (a.startsWith('-')) throw new UsageError(`unknown flag: ${flag}`);
    else args.push(a);
  }
  return { g, args };
}

function clientConfig(g: Global, env: IO['env']): ClientConfig {
  const kc = loadKubeConfig({ explicitPath: g.kubeconfig, env });
  return resolveClientConfig(kc, { context: g.context, cluster: g.cluster, user: g.user, server: g.server, token: g.token, namespace: g.namespace, as: g.as });
}

/** Column layout like kubectl's tabwriter: each column as wide as its widest cell, three spaces apart. */
export function columns(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('').trimEnd()).join('\n') + '\n';
}

function readManifests(files: string[]): Obj[] {
  const out: Obj[] = [];
  for (const f of files) {
    const text = f === '-' ? readFileSync(0, 'utf8') : readFileSync(f, 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length) throw new UsageError(`error parsing ${f}: ${doc.errors[0]!.message}`);
      const obj = doc.toJS() as Obj | null;
      if (!obj) continue;
      if (obj.kind === 'List' && Array.isArray(obj.items)) out.push(...obj.items);
      else out.push(obj);
    }
  }
  return out;
}

/** Client-side checks that fail before any request, as kubectl's validation does. */
export function validateManifest(obj: Obj, source: string): void {
  if (!obj.apiVersion) throw new UsageError(`error validating "${source}": error validating data: apiVersion not set`);
  if (!obj.kind) throw new UsageError(`error validating "${source}": error validating data: kind not set`);
  const name = obj.metadata?.name ?? '';
  if (!name && !obj.metadata?.generateName) throw new UsageError(`error when creating "${source}": resource name may not be empty`);
  if (name && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) throw new UsageError(`error validating "${source}": metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`);
  const replicas = obj.spec?.replicas;
  if (typeof replicas === 'number' && replicas < 0) throw new UsageError(`error validating "${source}": spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`);
}

export async function run(argv: string[], io: IO): Promise<number> {
  let client: RestClient | undefined;
  try {
    const { g, args } = parseArgs(argv);
    const [cmd, ...rest] = args;
    if (!cmd || cmd === 'help') {
      io.out('kubectl controls the kubeling cluster.\n\nCommands: version, api-resources, api-versions, get, create -f, apply -f [--server-side], delete, run, scale, label, annotate, logs\n');
      return 0;
    }
    // Client-side validation comes before any connection.
    const manifests = (cmd === 'create' || cmd === 'delete' || cmd === 'apply') && g.filenames.length ? readManifests(g.filenames) : [];
    if (cmd === 'create' || cmd === 'apply') for (const m of manifests) validateManifest(m, g.filenames.join(','));
    const config = clientConfig(g, io.env);
    client = new RestClient(config, { userAgent: 'kubectl/v1.32.0 (kubeling)' });
    const discovery = new Discovery(client, g.cacheDir ?? join(io.env.HOME ?? homedir(), '.kube', 'cache'));
    const ns = g.namespace ?? config.namespace ?? 'default';
    switch (cmd) {
      case 'version': {
        const v = await client.get<Obj>('/version');
        io.out(`Client Version: v1.32.0-kubeling\nServer Version: ${v.gitVersion}\n`);
        return 0;
      }
      case 'api-versions': {
        const set = new Set((await discovery.all(true)).map((m) => (m.group ? `${m.group}/${m.version}` : m.version)));
        io.out([...set].sort().join('\n') + '\n');
        return 0;
      }
      case 'api-resources': {
        const rows = [['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']];
        for (const m of (await discovery.all(true)).filter((x) => !x.resource.includes('/'))) rows.push([m.resource, m.shortNames.join(','), m.group ? `${m.group}/${m.version}` : m.version, String(m.namespaced), m.kind]);
        io.out(columns(rows));
        return 0;
      }
      case 'get':
        return await get(client, discovery, g, rest, ns, io);
      case 'create': {
        if (!manifests.length && rest.length) return await createGenerator(client, discovery, g, rest, ns, io);
        if (!manifests.length) throw new UsageError('error: must specify one of -f and -k');
        for (const m of manifests) {
          const mapping = await discovery.forKind(m.apiVersion, m.kind);
          if (!mapping) throw new UsageError(`error: resource mapping not found for name: "${m.metadata?.name}" namespace: "" from "${g.filenames.join(',')}": no matches for kind "${m.kind}" in version "${m.apiVersion}"`);
          const created = await client.post<Obj>(resourcePath(mapping, m.metadata?.namespace ?? ns), m, { fieldManager: 'kubectl-create' });
          io.out(`${kindRef(mapping)}/${created.metadata.name} created\n`);
        }
        return 0;
      }
      case 'apply': {
        if (!manifests.length) throw new UsageError('error: must specify one of -f and -k');
        for (const m of manifests) {
          const mapping = await discovery.forKind(m.apiVersion, m.kind);
          if (!mapping) throw new UsageError(`error: resource mapping not found for name: "${m.metadata?.name}" namespace: "" from "${g.filenames.join(',')}": no matches for kind "${m.kind}" in version "${m.apiVersion}"`);
          const namespace = m.metadata?.namespace ?? ns;
          const name = m.metadata.name as string;
          const path = resourcePath(mapping, namespace, name);
          if (g.serverSide) {
            await client.patch(path, m, 'application/apply-patch+yaml', { fieldManager: 'kubectl', ...(g.forceConflicts ? { force: 'true' } : {}) });
            io.out(`${kindRef(mapping)}/${name} serverside-applied\n`);
            continue;
          }
          let live: Obj | undefined;
          try {
            live = await client.get<Obj>(path);
          } catch (e) {
            if (!isStatusError(e) || e.status.reason !== 'NotFound') throw e;
          }
          const modified = withAnnotation(m);
          if (!live) {
            await client.post(resourcePath(mapping, namespace), modified, { fieldManager: 'kubectl-client-side-apply' });
            io.out(`${kindRef(mapping)}/${name} created\n`);
            continue;
          }
          const prev = live.metadata?.annotations?.[LAST_APPLIED];
          const original = prev ? (JSON.parse(prev) as Obj) : undefined;
          const patch = threeWayMergePatch(original, modified, live);
          if (!Object.keys(patch).length) {
            io.out(`${kindRef(mapping)}/${name} unchanged\n`);
            continue;
          }
          await client.patch(path, patch, 'application/merge-patch+json', { fieldManager: 'kubectl-client-side-apply' });
          io.out(`${kindRef(mapping)}/${name} configured\n`);
        }
        return 0;
      }
      case 'scale': {
        const [type, maybeName] = rest;
        if (!g.replicas || !/^\d+$/.test(g.replicas)) throw new UsageError('error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0');
        const [t, n] = type?.includes('/') ? (type.split('/') as [string, string]) : [type, maybeName];
        const mapping = t ? await discovery.find(t) : undefined;
        if (!mapping || !n) throw new UsageError('error: resource(s) were provided, but no name was specified');
        await client.patch(`${resourcePath(mapping, ns, n)}/scale`, { spec: { replicas: Number(g.replicas) } }, 'application/merge-patch+json');
        io.out(`${kindRef(mapping)}/${n} scaled\n`);
        return 0;
      }
      case 'label':
      case 'annotate': {
        const [type, ...restArgs] = rest;
        const [t, n0] = type?.includes('/') ? (type.split('/') as [string, string]) : [type, undefined];
        const n = n0 ?? restArgs.shift();
        const mapping = t ? await discovery.find(t) : undefined;
        if (!mapping || !n) throw new UsageError('error: one or more resources must be specified as <resource> <name> or <resource>/<name>');
        const changes: Record<string, string | null> = {};
        for (const kv of restArgs) {
          if (kv.endsWith('-')) changes[kv.slice(0, -1)] = null;
          else {
            const i = kv.indexOf('=');
            if (i <= 0) throw new UsageError(`error: invalid ${cmd === 'label' ? 'label' : 'annotation'} spec: ${kv}`);
            changes[kv.slice(0, i)] = kv.slice(i + 1);
          }
        }
        const field = cmd === 'label' ? 'labels' : 'annotations';
        const path = resourcePath(mapping, ns, n);
        if (!g.overwrite) {
          const live = await client.get<Obj>(path);
          for (const [key, v] of Object.entries(changes)) {
            const have = live.metadata?.[field]?.[key];
            if (v !== null && have !== undefined && have !== v) throw new UsageError(`error: '${key}' already has a value (${have}), and --overwrite is false`);
          }
        }
        await client.patch(path, { metadata: { [field]: changes } }, 'application/merge-patch+json');
        io.out(`${kindRef(mapping)}/${n} ${cmd === 'label' ? 'labeled' : 'annotated'}\n`);
        return 0;
      }
      case 'logs': {
        const [target] = rest;
        if (!target) throw new UsageError('error: expected POD or TYPE/NAME is a required argument for the logs command');
        let pod = target;
        if (target.includes('/')) {
          const [t, n] = target.split('/') as [string, string];
          const mapping = await discovery.find(t);
          if (!mapping) throw new UsageError(`error: the server doesn't have a resource type "${t}"`);
          if (mapping.resource === 'pods') pod = n;
          else {
            const owner = await client.get<Obj>(resourcePath(mapping, ns, n));
            const sel = Object.entries((owner.spec?.selector?.matchLabels ?? {}) as Record<string, string>).map(([a, b]) => `${a}=${b}`).join(',');
            const pods = (await client.get<Obj>(`/api/v1/namespaces/${ns}/pods`, { labelSelector: sel })).items as Obj[];
            if (!pods.length) throw new UsageError(`error: no pods found for ${target}`);
            pod = pods[0].metadata.name;
            if (pods.length > 1) io.err(`Found ${pods.length} pods, using pod/${pod}\n`);
          }
        }
        const query: Record<string, string> = { ...(g.container ? { container: g.container } : {}), ...(g.tail ? { tailLines: g.tail } : {}), ...(g.follow ? { follow: 'true' } : {}), ...(g.previous ? { previous: 'true' } : {}) };
        if (!g.container) {
          const p = await client.get<Obj>(`/api/v1/namespaces/${ns}/pods/${pod}`);
          const names = ((p.spec?.containers ?? []) as Obj[]).map((c) => c.name as string);
          if (names.length > 1) {
            query.container = p.metadata?.annotations?.['kubectl.kubernetes.io/default-container'] ?? names[0]!;
            io.err(`Defaulted container "${query.container}" out of: ${names.join(', ')}\n`);
          }
        }
        await client.stream(`/api/v1/namespaces/${ns}/pods/${pod}/log`, query, (b) => io.out(b.toString()), io.signal);
        return 0;
      }
      case 'run': {
        const [name, ...cmdArgs] = rest;
        if (!name) throw new UsageError('error: NAME is required for run');
        if (!g.image) throw new UsageError('error: --image is required');
        const labels: Record<string, string> = { run: name };
        for (const kv of (g.labels ?? '').split(',').filter(Boolean)) {
          const i = kv.indexOf('=');
          if (i <= 0) throw new UsageError(`error: invalid label spec: ${kv}`);
          labels[kv.slice(0, i)] = kv.slice(i + 1);
        }
        if (g.labels) delete labels.run;
        const env = (g.env ?? []).map((kv) => {
          const i = kv.indexOf('=');
          return { name: kv.slice(0, i), value: kv.slice(i + 1) };
        });
        const container: Obj = { name, image: g.image, ...(g.port ? { ports: [{ containerPort: Number(g.port) }] } : {}), ...(env.length ? { env } : {}), resources: {} };
        if (cmdArgs.length) container[g.command ? 'command' : 'args'] = cmdArgs;
        const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [container], restartPolicy: g.restart ?? 'Always', dnsPolicy: 'ClusterFirst' } };
        validateManifest(pod, 'run');
        await client.post(`/api/v1/namespaces/${ns}/pods`, pod, { fieldManager: 'kubectl-run' });
        io.out(`pod/${name} created\n`);
        return 0;
      }
      case 'delete': {
        const targets: [Mapping, string, string | undefined][] = [];
        for (const m of manifests) {
          const mapping = await discovery.forKind(m.apiVersion, m.kind);
          if (mapping) targets.push([mapping, m.metadata.name, m.metadata?.namespace ?? ns]);
        }
        if (!manifests.length) {
          const [type, ...names] = rest;
          if (!type) throw new UsageError('error: You must provide one or more resources by argument or filename.');
          const [t, n] = type.includes('/') ? (type.split('/') as [string, string]) : [type, undefined];
          const mapping = await discovery.find(t);
          if (!mapping) throw new UsageError(`error: the server doesn't have a resource type "${t}"`);
          for (const name of n ? [n, ...names] : names) targets.push([mapping, name, ns]);
        }
        for (const [mapping, name, namespace] of targets) {
          await client.delete(resourcePath(mapping, namespace, name));
          io.out(`${kindRef(mapping)} "${name}" deleted\n`);
        }
        return 0;
      }
      default:
        throw new UsageError(`error: unknown command "${cmd}" for "kubectl"`);
    }
  } catch (e) {
    if (isStatusError(e)) {
      io.err(`Error from server (${e.status.reason}): ${e.status.message}\n`);
      return 1;
    }
    if (e instanceof UsageError) {
      io.err(`${e.message.startsWith('error') ? '' : 'error: '}${e.message}\n`);
      return 1;
    }
    io.err(`error: ${(e as Error).message}\n`);
    return 1;
  } finally {
    client?.close();
  }
}

/** Objects as kubectl prints them: keys sorted (Go maps), managedFields hidden unless asked. */
function printable(o: unknown, showManaged: boolean, top = true): unknown {
  if (Array.isArray(o)) return o.map((x) => printable(x, showManaged, false));
  if (o && typeof o === 'object') {
    const out: Obj = {};
    for (const k of Object.keys(o).sort()) {
      if (!showManaged && k === 'managedFields') continue;
      out[k] = printable((o as Obj)[k], showManaged, false);
    }
    return out;
  }
  void top;
  return o;
}

const toYaml = (o: unknown) => stringify(o, { indentSeq: false, lineWidth: 0 });

/** `deployment.apps` / `pod`: how kubectl names a kind in its messages. */
function kindRef(m: Mapping): string {
  return m.group ? `${m.kind.toLowerCase()}.${m.group}` : m.kind.toLowerCase();
}

/** `create namespace|configmap|secret generic|serviceaccount|deployment NAME ...`. */
async function createGenerator(client: RestClient, discovery: Discovery, g: Global, rest: string[], ns: string, io: IO): Promise<number> {
  let [kind, name, ...more] = rest;
  if (kind === 'secret') {
    if (name !== 'generic') throw new UsageError(`error: unknown secret type "${name}" (only generic is supported)`);
    [name, ...more] = more;
  }
  void more;
  if (!name) throw new UsageError(`error: exactly one NAME is required, got 0`);
  const literals = () => {
    const data: Record<string, string> = {};
    for (const kv of g.fromLiteral ?? []) {
      const i = kv.indexOf('=');
      if (i <= 0) throw new UsageError(`error: invalid literal source ${kv}, expected key=value`);
      data[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return data;
  };
  let obj: Obj;
  switch (kind) {
    case 'namespace':
    case 'ns':
      obj = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
      break;
    case 'configmap':
    case 'cm':
      obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: literals() };
      break;
    case 'secret':
      obj = { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data: Object.fromEntries(Object.entries(literals()).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
      break;
    case 'serviceaccount':
    case 'sa':
      obj = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } };
      break;
    case 'deployment':
    case 'deploy': {
      if (!g.image) throw new UsageError('error: required flag(s) "image" not set');
      const replicas = g.replicas === undefined ? 1 : Number(g.replicas);
      const labels = { app: name };
      obj = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels }, spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: g.image.split('/').pop()!.split(/[:@]/)[0], image: g.image, ...(g.port ? { ports: [{ containerPort: Number(g.port) }] } : {}), resources: {} }] } }, strategy: {} } };
      break;
    }
    default:
      throw new UsageError(`error: unknown type "${kind}" for create (namespace, configmap, secret generic, serviceaccount, deployment)`);
  }
  validateManifest(obj, 'create');
  const mapping = (await discovery.forKind(obj.apiVersion, obj.kind))!;
  await client.post(resourcePath(mapping, ns), obj, { fieldManager: 'kubectl-create' });
  io.out(`${kindRef(mapping)}/${name} created\n`);
  return 0;
}

async function get(client: RestClient, discovery: Discovery, g: Global, rest: string[], ns: string, io: IO): Promise<number> {
  const [type, ...names] = rest;
  if (!type) throw new UsageError('You must specify the type of resource to get.');
  // Several kinds at once (`get deploy,po`): each printed in turn, names prefixed.
  if (type.includes(',') && !names.length) {
    const shared: Global = { ...g, multi: true };
    for (const t of type.split(',').filter(Boolean)) await get(client, discovery, shared, [t], ns, io);
    return 0;
  }
  const [t, slashName] = type.includes('/') ? (type.split('/') as [string, string]) : [type, undefined];
  const mapping = await discovery.find(t);
  if (!mapping) throw new UsageError(`error: the server doesn't have a resource type "${t}"`);
  const name = slashName ?? names[0];
  const namespace = g.allNamespaces ? undefined : ns;
  const query = { ...(g.selector ? { labelSelector: g.selector } : {}), ...(g.fieldSelector ? { fieldSelector: g.fieldSelector } : {}) };
  const path = resourcePath(mapping, namespace, name);
  const out = g.output;
  if (out === 'json' || out === 'yaml' || out === 'name') {
    const obj = await client.get<Obj>(path, query);
    if (out === 'name') {
      const items = name ? [obj] : (obj.items as Obj[]);
      io.out(items.map((i) => `${kindRef(mapping)}/${i.metadata.name}\n`).join(''));
    } else if (name) {
      const p = printable(obj, g.showManagedFields);
      io.out(out === 'json' ? JSON.stringify(p, null, 4) + '\n' : toYaml(p));
    } else {
      const list = printable({ apiVersion: 'v1', kind: 'List', items: (obj.items as Obj[]).map((i) => ({ apiVersion: mapping.group ? `${mapping.group}/${mapping.version}` : mapping.version, kind: mapping.kind, ...i })), metadata: { resourceVersion: '' } }, g.showManagedFields);
      io.out(out === 'json' ? JSON.stringify(list, null, 4) + '\n' : toYaml(list));
    }
    return 0;
  }
  if (out && out !== 'wide') throw new UsageError(`error: unable to match a printer suitable for the output format "${out}", allowed formats are: json,name,wide,yaml`);
  const table = await client.request<Obj>({ path, query: { ...query, includeObject: 'Metadata' }, accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
  const defs = (table.columnDefinitions ?? []) as Obj[];
  const show = defs.map((d, i) => ({ d, i })).filter(({ d }) => out === 'wide' || (d.priority ?? 0) === 0);
  const rows = (table.rows ?? []) as Obj[];
  if (!rows.length) {
    io.err(namespace && mapping.namespaced ? `No resources found in ${namespace} namespace.\n` : 'No resources found\n');
    return 0;
  }
  const header = [...(g.allNamespaces && mapping.namespaced ? ['NAMESPACE'] : []), ...show.map(({ d }) => String(d.name).toUpperCase()), ...(g.showLabels ? ['LABELS'] : [])];
  const nameCol = show.findIndex(({ d }) => String(d.name).toUpperCase() === 'NAME') + (g.allNamespaces && mapping.namespaced ? 1 : 0);
  const body = rows.map((r) => {
    const meta = (r.object?.metadata ?? {}) as Obj;
    const labels = Object.entries((meta.labels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',') || '<none>';
    return [...(g.allNamespaces && mapping.namespaced ? [meta.namespace ?? ''] : []), ...show.map(({ i }) => String(r.cells[i] ?? '')), ...(g.showLabels ? [labels] : [])];
  });
  if (g.multi && nameCol >= 0) for (const r of body) r[nameCol] = `${kindRef(mapping)}/${r[nameCol]}`;
  if (g.multi && g.printedTable) io.out('\n');
  io.out(columns([header, ...body]));
  g.printedTable = true;
  return 0;
}
