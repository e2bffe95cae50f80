/** `version`, `api-resources`, `api-versions`, `cluster-info` and `logs` (and the pod lookup `exec` shares). */
import type { KubeList, KubeObject, corev1 } from '@kubeling/api';
import { UsageError } from '../flags.js';
import { type Ctx, pathOf } from '../ctx.js';
import { asObjects, asStringMap, nested, type JsonObject } from '../json.js';
import { pathSegment } from '../discovery.js';
import { columns, parseOutput, printObjects } from '../print/printers.js';

export const CLIENT_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-kubeling',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

export async function version(ctx: Ctx): Promise<number> {
  const server = await ctx.client.get<JsonObject>('/version');
  const out = parseOutput(ctx.g.output, ctx.g.template);
  if (out.t === 'table') ctx.io.out(`Client Version: ${CLIENT_VERSION.gitVersion}\nServer Version: ${server.gitVersion}\n`);
  else ctx.io.out(printObjects(out, [{ clientVersion: CLIENT_VERSION, serverVersion: server }], true, { nameOf: () => 'version' }));
  return 0;
}

export async function apiVersions(ctx: Ctx): Promise<number> {
  const set = new Set((await ctx.discovery.all(true)).map((m) => (m.group ? `${m.group}/${m.version}` : m.version)));
  ctx.io.out([...set].sort().join('\n') + '\n');
  return 0;
}

export async function apiResources(ctx: Ctx): Promise<number> {
  const g = ctx.g;
  let list = (await ctx.discovery.all(true)).filter((x) => !x.resource.includes('/'));
  if (g.namespaced !== undefined) list = list.filter((m) => m.namespaced === g.namespaced);
  if (g.apiGroup !== undefined) list = list.filter((m) => m.group === g.apiGroup);
  if (g.verbs.length) list = list.filter((m) => g.verbs.flatMap((v) => v.split(',')).every((v) => m.verbs.includes(v)));
  if (g.output === 'name') {
    ctx.io.out(list.map((m) => (m.group ? `${m.resource}.${m.group}` : m.resource) + '\n').join(''));
    return 0;
  }
  const wide = g.output === 'wide';
  const rows = [['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND', ...(wide ? ['VERBS', 'CATEGORIES'] : [])]];
  for (const m of list)
    rows.push([
      m.resource,
      m.shortNames.join(','),
      m.group ? `${m.group}/${m.version}` : m.version,
      String(m.namespaced),
      m.kind,
      ...(wide ? [`[${m.verbs.join(' ')}]`, m.categories.join(',')] : []),
    ]);
  ctx.io.out(columns(g.noHeaders ? rows.slice(1) : rows));
  return 0;
}

export async function clusterInfo(ctx: Ctx, args: string[]): Promise<number> {
  if (args[0] === 'dump') throw new UsageError('error: cluster-info dump is not part of this kubectl');
  // Reaching the server is part of the answer, as in kubectl.
  await ctx.client.get('/version');
  const server = ctx.config.server;
  let text = `\x1b[0;32mKubernetes control plane\x1b[0m is running at \x1b[0;33m${server}\x1b[0m\n`;
  try {
    const svcs =
      (await ctx.client.get<KubeList>('/api/v1/namespaces/kube-system/services', { labelSelector: 'kubernetes.io/cluster-service=true' })).items ?? [];
    for (const s of svcs) {
      const name = s.metadata.labels?.['kubernetes.io/name'] ?? s.metadata.name;
      const port = asObjects(nested(s.spec, 'ports'))[0];
      text += `\x1b[0;32m${name}\x1b[0m is running at \x1b[0;33m${server}/api/v1/namespaces/kube-system/services/${port?.name ? `${s.metadata.name}:${port.name}` : s.metadata.name}/proxy\x1b[0m\n`;
    }
  } catch {
    // No rights to list kube-system services: the control plane line is still true.
  }
  ctx.io.out(`${text}\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n`);
  return 0;
}

/**
 * The pod a `logs` or `exec` target names: `POD`, `pod/POD`, or `TYPE/NAME`
 * of a workload or Service, whose pods (by selector) give the oldest running one.
 */
export async function podOf(ctx: Ctx, target: string, what: string): Promise<string> {
  const ns = pathSegment(ctx.ns, 'namespace');
  if (!target.includes('/')) return pathSegment(target);
  const [type, name] = target.split('/') as [string, string];
  const m = await ctx.mapping(type);
  if (m.resource === 'pods') return pathSegment(name);
  const owner = await ctx.client.get<KubeObject>(pathOf({ mapping: m, namespace: ns }, name));
  // A Service's selector is the label map itself.
  const sel =
    nested(owner.spec, 'selector', 'matchLabels') ??
    (m.resource === 'services' ? nested(owner.spec, 'selector') : undefined) ??
    nested(owner.spec, 'template', 'metadata', 'labels');
  const labelSelector = Object.entries(asStringMap(sel) ?? {})
    .map(([a, b]) => `${a}=${b}`)
    .join(',');
  if (!labelSelector) throw new UsageError(`error: cannot ${what} ${m.kind}: selector is empty`);
  const pods = (await ctx.client.get<KubeList>(`/api/v1/namespaces/${ns}/pods`, { labelSelector })).items ?? [];
  pods.sort((a, b) => ((a.metadata.creationTimestamp ?? '') < (b.metadata.creationTimestamp ?? '') ? -1 : 1));
  if (!pods.length) throw new UsageError(`error: timed out waiting for the condition`);
  const running = pods.find((p) => nested(p.status, 'phase') === 'Running') ?? pods[0]!;
  if (pods.length > 1) ctx.io.err(`Found ${pods.length} pods, using pod/${running.metadata.name}\n`);
  return pathSegment(running.metadata.name ?? '');
}

/** The container a command uses without -c: the default-container annotation or the first, said when there is a choice. */
export function defaultContainer(ctx: Ctx, pod: corev1.Pod): string {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const chosen = pod.metadata?.annotations?.['kubectl.kubernetes.io/default-container'] ?? names[0]!;
  if (names.length > 1) ctx.io.err(`Defaulted container "${chosen}" out of: ${names.join(', ')}\n`);
  return chosen;
}

export async function logs(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const [target, maybeContainer] = args;
  if (!target)
    throw new UsageError("error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command");
  const ns = pathSegment(ctx.ns, 'namespace');
  const pod = await podOf(ctx, target, 'get the logs from');
  const container = g.container ?? maybeContainer;
  const query: Record<string, string> = {
    ...(g.tail !== undefined && g.tail !== '-1' ? { tailLines: g.tail } : {}),
    ...(g.follow ? { follow: 'true' } : {}),
    ...(g.previous ? { previous: 'true' } : {}),
    ...(g.timestamps ? { timestamps: 'true' } : {}),
    ...(g.since ? { sinceSeconds: String(Math.ceil(ctx.duration(g.since, 0) / 1000)) } : {}),
  };
  const p = await ctx.client.get<corev1.Pod>(`/api/v1/namespaces/${ns}/pods/${pod}`);
  const names = (p.spec?.containers ?? []).map((c) => c.name);
  let containers = container ? [container] : names.slice(0, 1);
  if (g.allContainers) containers = [...(p.spec?.initContainers ?? []).map((c) => c.name), ...names];
  else if (!container && names.length > 1) containers = [defaultContainer(ctx, p)];
  const streamOf = (c: string) =>
    ctx.client.stream(
      `/api/v1/namespaces/${ns}/pods/${pod}/log`,
      { ...query, ...(names.length > 1 || container ? { container: c } : {}) },
      (b) => ctx.io.out(b.toString()),
      ctx.io.signal,
    );
  // Followed streams never end, so several containers are followed at once.
  if (g.follow) await Promise.all(containers.map(streamOf));
  else for (const c of containers) await streamOf(c);
  return 0;
}
