/**
 * Commands that make objects: `create -f`, the `create <kind>` generators,
 * `run` (a Pod by default; older kubectl's generators pick a Deployment, Job
 * or CronJob from `--replicas`, `--restart=OnFailure`, `--schedule` or
 * `--generator`), and `expose`. All honour `--dry-run=client|server` and `-o`.
 */
import type { KubeObject, batchv1 } from '@kubeling/api';
import type { Status } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf, dryRunSuffix, kindRef, parseLabels, pathOf } from '../ctx.js';
import { asList, asNumber, asObject, asObjects, asString, asStringMap, nested, type JsonObject } from '../json.js';
import { pathSegment, resourcePath, type Mapping } from '../discovery.js';
import { attachRun } from './exec.js';
import { parseOutput, printObjects } from '../print/printers.js';

/**
 * Sends (or, for a client dry run, only prints) one new object; prints kubectl's line or the `-o` form.
 * The object is JSON as a manifest or a generator made it: a generated one may carry what no
 * stored object has (`creationTimestamp: null`).
 */
export async function emit(ctx: Ctx, obj: JsonObject, verb: string, manager: string, mapping?: Mapping): Promise<JsonObject> {
  const m = mapping ?? (await ctx.mappingFor(obj, verb));
  const meta = asObject(obj.metadata);
  const ns = m.namespaced ? (asString(meta?.namespace) ?? ctx.ns) : undefined;
  let result = obj;
  const dry = ctx.dryRun;
  if (dry !== 'client') result = await ctx.client.post<KubeObject>(resourcePath(m, ns), obj, ctx.writeQuery(manager));
  else if (ns && m.namespaced && ctx.g.namespace) result = { ...obj, metadata: { ...meta, namespace: ns } };
  result = { apiVersion: apiVersionOf(m), kind: m.kind, ...result };
  const out = parseOutput(ctx.g.output, ctx.g.template);
  if (out.t === 'table') ctx.io.out(`${kindRef(m)}/${nested(result, 'metadata', 'name')} ${verb}${dryRunSuffix(dry)}\n`);
  else
    ctx.io.out(
      printObjects(out, [result], true, { showManagedFields: ctx.g.showManagedFields, nameOf: (o) => `${kindRef(m)}/${nested(o, 'metadata', 'name')}` }),
    );
  return result;
}

/** What a client dry run prints for a generated object, as kubectl's generators leave it (an unset time is Go's null). */
function generated(obj: JsonObject, status: unknown = {}): JsonObject {
  return { ...obj, metadata: { creationTimestamp: null, ...asObject(obj.metadata) }, ...(status ? { status } : {}) };
}

export async function createFromFiles(ctx: Ctx): Promise<number> {
  const manifests = await ctx.manifestsToWrite();
  let failed = 0;
  for (const { obj, source } of manifests) {
    const m = await ctx.mappingFor(obj, source);
    try {
      await emit(ctx, obj, 'created', 'kubectl-create', m);
    } catch (e) {
      const s = (e as { status?: Partial<Status> }).status;
      if (!s) throw e;
      ctx.io.err(`Error from server (${s.reason}): error when creating "${source}": ${s.message}\n`);
      failed++;
    }
  }
  return failed ? 1 : 0;
}

function literals(ctx: Ctx): Record<string, string> {
  const data: Record<string, string> = {};
  for (const kv of ctx.g.fromLiteral) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new UsageError(`error: invalid literal source ${kv}, expected key=value`);
    data[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return data;
}

/** The container name kubectl derives from an image: `docker.io/library/nginx:1.27` → `nginx`. */
export function containerName(image: string): string {
  return image
    .split('/')
    .pop()!
    .split(/[:@]/)[0]!
    .replace(/[^a-z0-9-]/g, '-');
}

function requireImage(ctx: Ctx): string {
  if (!ctx.g.image) throw new UsageError('error: required flag(s) "image" not set');
  return ctx.g.image;
}

function commandContainer(ctx: Ctx, name: string, image: string): JsonObject {
  return { name, image, ...(ctx.dashArgs.length ? { command: ctx.dashArgs } : {}), resources: {} };
}

/** `create namespace|configmap|secret generic|serviceaccount|deployment|job|cronjob|service <type> NAME`. */
export async function createGenerator(ctx: Ctx, rest: string[]): Promise<number> {
  let [kind, name, ...more] = rest;
  let serviceType = '';
  if (kind === 'secret') {
    if (name !== 'generic') throw new UsageError(`error: unknown secret type "${name}" (this kubectl makes generic secrets)`);
    [name, ...more] = more;
  }
  if (kind === 'service' || kind === 'svc') {
    serviceType = name ?? '';
    if (!['clusterip', 'nodeport', 'loadbalancer', 'externalname'].includes(serviceType))
      throw new UsageError('error: Usage: kubectl create service clusterip|nodeport|loadbalancer|externalname NAME [flags]');
    [name, ...more] = more;
  }
  if (!name) throw new UsageError('error: exactly one NAME is required, got 0');
  if (more.length) throw new UsageError(`error: exactly one NAME is required, got ${more.length + 1}`);
  let obj: JsonObject;
  switch (kind) {
    case 'namespace':
    case 'ns':
      obj = { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: {}, status: {} };
      break;
    case 'configmap':
    case 'cm':
      obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: literals(ctx) };
      break;
    case 'secret':
      obj = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
        type: 'Opaque',
        data: Object.fromEntries(Object.entries(literals(ctx)).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      };
      break;
    case 'serviceaccount':
    case 'sa':
      obj = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } };
      break;
    case 'deployment':
    case 'deploy': {
      const image = requireImage(ctx);
      const labels = { app: name };
      const container = { ...commandContainer(ctx, containerName(image), image), ...(ctx.g.port ? { ports: [{ containerPort: Number(ctx.g.port) }] } : {}) };
      obj = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, labels },
        spec: {
          replicas: ctx.g.replicas === undefined ? 1 : Number(ctx.g.replicas),
          selector: { matchLabels: labels },
          strategy: {},
          template: { metadata: { labels }, spec: { containers: [container] } },
        },
        status: {},
      };
      break;
    }
    case 'job': {
      if (ctx.g.from) return createJobFrom(ctx, name, ctx.g.from);
      const image = requireImage(ctx);
      obj = {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name },
        spec: { template: { metadata: {}, spec: { containers: [commandContainer(ctx, name, image)], restartPolicy: 'Never' } } },
        status: {},
      };
      break;
    }
    case 'cronjob':
    case 'cj': {
      const image = requireImage(ctx);
      if (!ctx.g.schedule) throw new UsageError('error: required flag(s) "schedule" not set');
      obj = {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name },
        spec: {
          schedule: ctx.g.schedule,
          jobTemplate: {
            metadata: { name },
            spec: { template: { metadata: {}, spec: { containers: [commandContainer(ctx, name, image)], restartPolicy: ctx.g.restart ?? 'OnFailure' } } },
          },
        },
        status: {},
      };
      break;
    }
    case 'service':
    case 'svc':
      obj = serviceFromFlags(ctx, serviceType, name);
      break;
    default:
      throw new UsageError(
        `error: unknown type "${kind}" for create (namespace, configmap, secret generic, serviceaccount, deployment, job, cronjob, service)`,
      );
  }
  await ctx.validate(obj, 'create');
  await emit(ctx, ctx.dryRun === 'client' ? generated(obj, 'status' in obj ? obj.status : undefined) : stripGenerated(obj), 'created', 'kubectl-create');
  return 0;
}

function stripGenerated(obj: JsonObject): JsonObject {
  const { status: _s, ...rest } = obj;
  return rest;
}

function serviceFromFlags(ctx: Ctx, type: string, name: string): JsonObject {
  const typeName = { clusterip: 'ClusterIP', nodeport: 'NodePort', loadbalancer: 'LoadBalancer', externalname: 'ExternalName' }[type]!;
  if (type === 'externalname') {
    if (!ctx.g.externalName) throw new UsageError('error: required flag(s) "external-name" not set');
    return {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, labels: { app: name } },
      spec: { type: typeName, externalName: ctx.g.externalName, selector: { app: name } },
      status: { loadBalancer: {} },
    };
  }
  if (!ctx.g.tcp.length) throw new UsageError('error: at least one tcp port specifier must be provided');
  const ports = ctx.g.tcp.map((spec) => {
    const [p, t] = spec.split(':');
    if (!p || !/^\d+$/.test(p) || (t !== undefined && !/^\d+$/.test(t))) throw new UsageError(`error: invalid port spec ${spec}, expected port[:targetPort]`);
    return { name: `${p}-${t ?? p}`, port: Number(p), protocol: 'TCP', targetPort: Number(t ?? p) };
  });
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels: { app: name } },
    spec: { ports, selector: { app: name }, type: typeName },
    status: { loadBalancer: {} },
  };
}

async function createJobFrom(ctx: Ctx, name: string, from: string): Promise<number> {
  const [t, n] = from.split('/');
  if (!n || !['cronjob', 'cronjobs', 'cj', 'cronjob.batch', 'cronjobs.batch'].includes(t!))
    throw new UsageError(`error: from must be an existing cronjob: cronjob/NAME`);
  const cj = await ctx.client.get<batchv1.CronJob>(`/apis/batch/v1/namespaces/${ctx.ns}/cronjobs/${n}`);
  const tpl: batchv1.JobTemplateSpec = cj.spec?.jobTemplate ?? {};
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      labels: tpl.metadata?.labels ?? {},
      annotations: { 'cronjob.kubernetes.io/instantiate': 'manual', ...(tpl.metadata?.annotations ?? {}) },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata?.name, uid: cj.metadata?.uid, controller: true }],
    },
    spec: tpl.spec,
  };
  await emit(ctx, job, 'created', 'kubectl-create');
  return 0;
}

const GENERATORS = ['run-pod/v1', 'deployment/apps.v1', 'job/v1', 'cronjob/v1'] as const;
type Generator = (typeof GENERATORS)[number];

/** Which generator `run` uses: `--generator`, else the workload flags as older kubectl read them. */
export function pickGenerator(g: { generator?: string; schedule?: string; replicas?: string; restart?: string }): Generator {
  if (g.generator !== undefined) {
    const aliases: Record<string, Generator> = {
      'cronjob/v1beta1': 'cronjob/v1',
      'cronjob/v2alpha1': 'cronjob/v1',
      'deployment/v1beta1': 'deployment/apps.v1',
      'run/v1': 'deployment/apps.v1',
    };
    const gen = (GENERATORS as readonly string[]).includes(g.generator) ? (g.generator as Generator) : aliases[g.generator];
    if (!gen) throw new UsageError(`error: generator "${g.generator}" not found`);
    return gen;
  }
  if (g.schedule) return 'cronjob/v1';
  if (g.replicas !== undefined) return 'deployment/apps.v1';
  if (g.restart === 'OnFailure') return 'job/v1';
  return 'run-pod/v1';
}

export async function run(ctx: Ctx, rest: string[]): Promise<number> {
  const g = ctx.g;
  const [name, ...extra] = rest;
  if (!name) throw new UsageError('error: NAME is required for run');
  const gen = pickGenerator(g);
  if (!g.image) throw new UsageError('error: required flag(s) "image" not set');
  const restart =
    g.restart ?? (gen === 'run-pod/v1' || gen === 'deployment/apps.v1' ? 'Always' : gen === 'job/v1' || gen === 'cronjob/v1' ? 'OnFailure' : 'Always');
  if (!['Always', 'OnFailure', 'Never'].includes(restart)) throw new UsageError(`error: invalid restart policy: ${restart}`);
  if ((gen === 'job/v1' || gen === 'cronjob/v1') && restart === 'Always')
    throw new UsageError(`error: RestartPolicy for ${gen === 'job/v1' ? 'Job' : 'CronJob'} must be OnFailure or Never`);
  if (gen === 'deployment/apps.v1' && restart !== 'Always') throw new UsageError('error: --restart=Always is the only policy a Deployment supports');
  if (g.replicas !== undefined && !/^\d+$/.test(g.replicas))
    throw new UsageError(`error: invalid argument "${g.replicas}" for "--replicas" flag: must be a non-negative integer`);
  if (gen === 'cronjob/v1' && !g.schedule) throw new UsageError('error: --schedule is required for the cronjob/v1 generator');
  if (g.rm && !g.stdin) throw new UsageError('error: --rm should only be used for attached containers');
  if (g.stdin && gen !== 'run-pod/v1') throw new UsageError('error: -i attaches to Pods only here; use --restart=Never or leave out --replicas/--schedule');
  if (g.tty && !g.stdin) throw new UsageError('error: -i/--stdin is required for containers with -t/--tty=true');
  const labels = g.labels ? parseLabels(g.labels) : { run: name };
  const env = g.env.map((kv) => {
    const i = kv.indexOf('=');
    if (i <= 0) throw new UsageError(`error: invalid env: ${kv}`);
    return { name: kv.slice(0, i), value: kv.slice(i + 1) };
  });
  const args = [...extra, ...ctx.dashArgs];
  const container: JsonObject = {
    ...(args.length && !g.command ? { args } : {}),
    ...(args.length && g.command ? { command: args } : {}),
    ...(env.length ? { env } : {}),
    image: g.image,
    name,
    ...(g.port ? { ports: [{ containerPort: Number(g.port) }] } : {}),
    resources: {},
    ...(g.stdin ? { stdin: true, stdinOnce: true } : {}),
    ...(g.tty ? { tty: true } : {}),
  };
  const podSpec = { containers: [container], dnsPolicy: 'ClusterFirst', restartPolicy: restart };
  let obj: JsonObject;
  switch (gen) {
    case 'run-pod/v1':
      obj = { apiVersion: 'v1', kind: 'Pod', metadata: { labels, name }, spec: podSpec };
      break;
    case 'deployment/apps.v1':
      obj = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { labels, name },
        spec: { replicas: Number(g.replicas ?? 1), selector: { matchLabels: labels }, strategy: {}, template: { metadata: { labels }, spec: podSpec } },
      };
      break;
    case 'job/v1':
      obj = { apiVersion: 'batch/v1', kind: 'Job', metadata: { labels, name }, spec: { template: { metadata: { labels }, spec: podSpec } } };
      break;
    case 'cronjob/v1':
      obj = {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { labels, name },
        spec: { jobTemplate: { metadata: { name }, spec: { template: { metadata: { labels }, spec: podSpec } } }, schedule: g.schedule },
      };
      break;
  }
  await ctx.validate(obj, 'run');
  if (g.stdin && ctx.dryRun === 'none') {
    // Attached: no "created" line, as kubectl; the pod's output and exit code instead.
    const m = await ctx.mappingFor(obj, 'run');
    const ns = pathSegment(ctx.ns, 'namespace');
    await ctx.client.post<KubeObject>(resourcePath(m, ns), obj, ctx.writeQuery('kubectl-run'));
    return attachRun(ctx, ns, name);
  }
  await emit(ctx, ctx.dryRun === 'client' ? generated(obj) : obj, 'created', 'kubectl-run');
  return 0;
}

/** `expose TYPE NAME|TYPE/NAME --port --target-port --name --type --protocol`: a Service selecting the object's pods. */
export async function expose(ctx: Ctx, rest: string[]): Promise<number> {
  const g = ctx.g;
  const [t] = await ctx.targets(rest);
  if (!t?.name) throw new UsageError('error: the resource to expose must be named');
  const o = await ctx.client.get<KubeObject>(pathOf(t));
  let selector: Record<string, string> | undefined;
  let ports: number[] = [];
  const kind = t.mapping.kind;
  const podPorts = (spec: unknown) => asObjects(nested(spec, 'containers')).flatMap((c) => asObjects(c.ports).flatMap((p) => asNumber(p.containerPort) ?? []));
  if (kind === 'Pod') {
    selector = o.metadata.labels;
    ports = podPorts(o.spec);
  } else if (kind === 'Service') {
    selector = asStringMap(nested(o.spec, 'selector'));
    ports = asObjects(nested(o.spec, 'ports')).flatMap((p) => asNumber(p.port) ?? []);
  } else if (['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ReplicationController'].includes(kind)) {
    // A ReplicationController's selector is the label map itself.
    const sel = nested(o.spec, 'selector');
    if (asList(nested(sel, 'matchExpressions')).length)
      throw new UsageError(
        `error: couldn't retrieve selectors via --selector flag or introspection: the ${kind} has matchExpressions, which a Service cannot express`,
      );
    selector = asStringMap(nested(sel, 'matchLabels') ?? sel);
    ports = podPorts(nested(o.spec, 'template', 'spec'));
  } else throw new UsageError(`error: cannot expose a ${kind}`);
  if (g.selector) selector = parseLabels(g.selector, 'selector');
  if (!selector || !Object.keys(selector).length)
    throw new UsageError(`error: couldn't retrieve selectors via --selector flag or introspection: the ${kind} has no labels`);
  if (g.port) ports = [Number(g.port)];
  if (!ports.length) throw new UsageError(`error: couldn't find port via --port flag or introspection`);
  const protocol = g.protocol ?? 'TCP';
  const target = (p: number) => (g.targetPort ? (/^\d+$/.test(g.targetPort) ? Number(g.targetPort) : g.targetPort) : p);
  const name = g.name ?? o.metadata.name;
  const svc: JsonObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, ...(o.metadata.labels ? { labels: o.metadata.labels } : {}) },
    spec: {
      ports: ports.map((p, i) => ({ ...(ports.length > 1 ? { name: `port-${i + 1}` } : {}), port: p, protocol, targetPort: target(p) })),
      selector,
      ...(g.type ? { type: g.type } : {}),
    },
  };
  await ctx.validate(svc, 'expose');
  const m = await ctx.mapping('services');
  await emit(ctx, ctx.dryRun === 'client' ? generated(svc, { loadBalancer: {} }) : svc, 'exposed', 'kubectl-expose', m);
  return 0;
}

/** `replace -f`: each object PUT as given (`--force`: deleted, gone, then created again). */
export async function replace(ctx: Ctx, args: string[]): Promise<number> {
  if (args.length) throw new UsageError(`error: Unexpected args: [${args.join(' ')}]`);
  if (!ctx.g.filenames.length) throw new UsageError('error: must specify --filename to replace');
  const manifests = await ctx.manifestsToWrite();
  let failed = 0;
  for (const { obj, source } of manifests) {
    const m = await ctx.mappingFor(obj, source);
    const ns = m.namespaced ? (obj.metadata?.namespace ?? ctx.ns) : undefined;
    const name = obj.metadata.name ?? '';
    const path = resourcePath(m, ns, name);
    try {
      if (ctx.g.force) {
        const live = await ctx.getOrNull(path);
        if (live) {
          await ctx.client.delete(path, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
          ctx.io.out(`${kindRef(m)} "${obj.metadata.name}" deleted\n`);
          const { waitGone } = await import('./delete.js');
          await waitGone(ctx, { mapping: m, namespace: ns }, name, live.metadata?.uid, Date.now() + ctx.duration(ctx.g.timeout, 60_000));
        }
        const { resourceVersion: _rv, uid: _uid, ...meta } = obj.metadata ?? {};
        await emit(ctx, { ...obj, metadata: meta }, 'replaced', 'kubectl-replace', m);
        continue;
      }
      const result = ctx.dryRun === 'client' ? obj : await ctx.client.put<KubeObject>(path, obj, ctx.writeQuery('kubectl-replace'));
      const out = parseOutput(ctx.g.output, ctx.g.template);
      if (out.t === 'table') ctx.io.out(`${kindRef(m)}/${obj.metadata.name} replaced${dryRunSuffix(ctx.dryRun)}\n`);
      else
        ctx.io.out(printObjects(out, [{ apiVersion: apiVersionOf(m), kind: m.kind, ...result }], true, { nameOf: () => `${kindRef(m)}/${obj.metadata.name}` }));
    } catch (e) {
      const s = (e as { status?: Partial<Status> }).status;
      if (!s) throw e;
      ctx.io.err(`Error from server (${s.reason}): error when replacing "${source}": ${s.message}\n`);
      failed++;
    }
  }
  return failed ? 1 : 0;
}
