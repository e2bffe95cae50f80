/**
 * `describe`: kubectl's describers for Pods, Deployments, ReplicaSets,
 * Services, Nodes and Namespaces, a generic one for the rest, and the Events
 * that name the object — written with tabs and aligned by a Go-style tabwriter.
 * The Pod and Node describers are in describe-pod.ts.
 */
import type { KubeList, KubeObject } from '@kubeling/api';
import { humanDuration } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf, pathOf, type Target } from '../ctx.js';
import { asList, asNumber, asObject, asObjects, nested } from '../json.js';
import { describeHpaV1, describeHpaV2, hpaV2 } from './describe-hpa.js';
import { describeNode, describePod } from './describe-pod.js';
import { Lines, annotationsShown, header, selectorText } from './describe-text.js';
import { podTemplateText } from './rollout.js';

async function describeDeployment(ctx: Ctx, d: Lines, o: KubeObject): Promise<void> {
  header(d, o, true, true);
  const spec = asObject(o.spec) ?? {};
  const st = asObject(o.status) ?? {};
  d.kv(0, 'Selector', selectorText(spec.selector));
  d.kv(
    0,
    'Replicas',
    `${spec.replicas ?? 1} desired | ${st.updatedReplicas ?? 0} updated | ${st.replicas ?? 0} total | ${st.availableReplicas ?? 0} available | ${st.unavailableReplicas ?? 0} unavailable`,
  );
  const strategy = asObject(spec.strategy) ?? {};
  d.kv(0, 'StrategyType', strategy.type ?? 'RollingUpdate');
  d.kv(0, 'MinReadySeconds', spec.minReadySeconds ?? 0);
  if ((strategy.type ?? 'RollingUpdate') === 'RollingUpdate')
    d.kv(
      0,
      'RollingUpdateStrategy',
      `${nested(strategy.rollingUpdate, 'maxUnavailable') ?? '25%'} max unavailable, ${nested(strategy.rollingUpdate, 'maxSurge') ?? '25%'} max surge`,
    );
  for (const line of podTemplateText(spec.template ?? {}).split('\n')) d.add(line);
  const conds = asObjects(st.conditions);
  if (conds.length) {
    d.add('Conditions:').add('  Type\tStatus\tReason').add('  ----\t------\t------');
    for (const c of conds) d.add(`  ${c.type} \t${c.status}\t${c.reason ?? ''}`);
  }
  const rss = (await ctx.client.get<KubeList>(`/apis/apps/v1/namespaces/${o.metadata.namespace}/replicasets`)).items.filter((rs) =>
    (rs.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === o.metadata.uid),
  );
  const rev = o.metadata.annotations?.['deployment.kubernetes.io/revision'];
  const isNew = (rs: KubeObject) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === rev;
  const fmt = (rs: KubeObject) => `${rs.metadata.name} (${nested(rs.status, 'replicas') ?? 0}/${nested(rs.spec, 'replicas') ?? 0} replicas created)`;
  const olds = rss.filter((rs) => !isNew(rs) && (asNumber(nested(rs.spec, 'replicas')) ?? 0) > 0);
  d.kv(0, 'OldReplicaSets', olds.map(fmt).join(', ') || '<none>');
  const nrs = rss.find(isNew);
  d.kv(0, 'NewReplicaSet', nrs ? fmt(nrs) : '<none>');
}

function describeReplicaSet(d: Lines, o: KubeObject, pods: KubeObject[]): void {
  const spec = asObject(o.spec) ?? {};
  d.kv(0, 'Name', o.metadata.name).kv(0, 'Namespace', o.metadata.namespace);
  d.kv(0, 'Selector', selectorText(spec.selector));
  d.map(0, 'Labels', o.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
  const owner = (o.metadata.ownerReferences ?? []).find((r) => r.controller);
  if (owner) d.kv(0, 'Controlled By', `${owner.kind}/${owner.name}`);
  d.kv(0, 'Replicas', `${nested(o.status, 'replicas') ?? 0} current / ${spec.replicas ?? 1} desired`);
  const count = (phase: string) => pods.filter((p) => nested(p.status, 'phase') === phase).length;
  d.kv(0, 'Pods Status', `${count('Running')} Running / ${count('Pending')} Waiting / ${count('Succeeded')} Succeeded / ${count('Failed')} Failed`);
  for (const line of podTemplateText(spec.template ?? {}).split('\n')) d.add(line);
}

/** A port's endpoints as kubectl lists them from EndpointSlices: ready ones, `ip:port`, three and a count of the rest. */
function sliceEndpoints(slices: KubeObject[], portName: unknown): string {
  if (!slices.length) return '<none>';
  const list: unknown[] = [];
  let count = 0;
  const add = (v: unknown) => {
    if (list.length < 3) list.push(v);
    count++;
  };
  for (const sl of slices) {
    const ready = asObjects(sl.endpoints).filter((e) => nested(e.conditions, 'ready') !== false);
    const ports = asObjects(sl.ports);
    if (!ports.length) for (const e of ready) add(asList(e.addresses)[0]);
    for (const p of ports) {
      if ((p.name ?? '') !== portName) continue;
      for (const e of ready) {
        const address = asList(e.addresses)[0];
        add(`${String(address).includes(':') ? `[${address}]` : address}:${p.port}`);
      }
    }
  }
  return count > 3 ? `${list.join(',')} + ${count - 3} more...` : list.join(',');
}

function describeService(d: Lines, s: KubeObject, slices: KubeObject[]): void {
  header(d, s);
  const spec = asObject(s.spec) ?? {};
  d.kv(
    0,
    'Selector',
    Object.entries(asObject(spec.selector) ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',') || '<none>',
  );
  d.kv(0, 'Type', spec.type ?? 'ClusterIP');
  d.kv(0, 'IP Family Policy', spec.ipFamilyPolicy ?? 'SingleStack');
  d.kv(0, 'IP Families', asList(spec.ipFamilies ?? ['IPv4']).join(','));
  d.kv(0, 'IP', spec.clusterIP ?? '');
  d.kv(
    0,
    'IPs',
    asList(spec.clusterIPs ?? [spec.clusterIP])
      .filter(Boolean)
      .join(','),
  );
  for (const p of asObjects(spec.ports)) {
    d.kv(0, 'Port', `${p.name ?? '<unset>'}  ${p.port}/${p.protocol ?? 'TCP'}`);
    d.kv(0, 'TargetPort', `${p.targetPort ?? p.port}/${p.protocol ?? 'TCP'}`);
    if (p.nodePort) d.kv(0, 'NodePort', `${p.name ?? '<unset>'}  ${p.nodePort}/${p.protocol ?? 'TCP'}`);
    d.kv(0, 'Endpoints', sliceEndpoints(slices, p.name ?? ''));
  }
  d.kv(0, 'Session Affinity', spec.sessionAffinity ?? 'None');
  if (spec.internalTrafficPolicy) d.kv(0, 'Internal Traffic Policy', spec.internalTrafficPolicy);
}

/** ConfigMaps and Secrets as kubectl describes them: each key, a Secret's only by size. */
function describeData(d: Lines, o: KubeObject): void {
  header(d, o);
  d.add('');
  const data = asObject(o.data) ?? {};
  if (o.kind === 'Secret') {
    d.kv(0, 'Type', o.type ?? 'Opaque')
      .add('')
      .add('Data')
      .add('====');
    for (const k of Object.keys(data).sort()) d.add(`${k}:\t${Buffer.from(String(data[k]), 'base64').length} bytes`);
    return;
  }
  d.add('Data').add('====');
  for (const k of Object.keys(data).sort()) d.add(`${k}:`).add('----').add(String(data[k])).add('');
  d.add('').add('BinaryData').add('====');
  const binaryData = asObject(o.binaryData) ?? {};
  for (const k of Object.keys(binaryData).sort()) d.add(`${k}: ${Buffer.from(String(binaryData[k]), 'base64').length} bytes`);
  d.add('');
}

const titleCase = (k: string) => k.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());

/** The members of an object or the items of a list, as `Object.entries` gives them. */
const entriesOf = (o: object): [string, unknown][] => Object.entries(o);

/** kubectl's generic describer: the object's fields, nested, keys in Title Case. */
function describeGeneric(d: Lines, o: KubeObject): void {
  header(d, o, !!o.metadata.namespace);
  const walk = (v: unknown, level: number, key: string) => {
    const pad = '  '.repeat(level);
    if (Array.isArray(v)) {
      d.add(`${pad}${titleCase(key)}:`);
      for (const x of v as unknown[]) {
        if (x && typeof x === 'object') {
          const entries = entriesOf(x);
          entries.forEach(([k, y], i) =>
            y && typeof y === 'object' ? walk(y, level + 1, k) : d.add(`${pad}${i === 0 ? '  ' : '  '}${titleCase(k)}:\t${String(y)}`),
          );
        } else d.add(`${pad}  ${String(x)}`);
      }
    } else if (v && typeof v === 'object') {
      d.add(`${pad}${titleCase(key)}:`);
      for (const [k, y] of entriesOf(v)) walk(y, level + 1, k);
    } else d.add(`${pad}${titleCase(key)}:\t${String(v)}`);
  };
  for (const [k, v] of Object.entries(o)) if (!['apiVersion', 'kind', 'metadata'].includes(k)) walk(v, 0, k);
}

async function events(ctx: Ctx, o: KubeObject, d: Lines): Promise<void> {
  const ns = o.metadata.namespace ?? 'default';
  const fs = [
    `involvedObject.name=${o.metadata.name}`,
    `involvedObject.uid=${o.metadata.uid}`,
    ...(o.metadata.namespace ? [`involvedObject.namespace=${ns}`] : []),
  ].join(',');
  let items: KubeObject[] = [];
  try {
    items = (await ctx.client.get<KubeList>(o.metadata.namespace ? `/api/v1/namespaces/${ns}/events` : '/api/v1/events', { fieldSelector: fs })).items ?? [];
  } catch {
    // Events are best effort, as in kubectl.
  }
  if (!items.length) {
    d.add('Events:\t<none>');
    return;
  }
  // core/v1 Events: their times are strings, or null where unset (eventTime on most).
  const when = (e: KubeObject) => Date.parse(String(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp));
  items.sort((a, b) => when(a) - when(b));
  d.add('Events:').add('  Type\tReason\tAge\tFrom\tMessage').add('  ----\t------\t----\t----\t-------');
  const now = Date.now();
  for (const e of items) {
    const first = Date.parse(String(e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp));
    const count = asNumber(e.count ?? nested(e.series, 'count')) ?? 1;
    const age = count > 1 ? `${humanDuration(now - when(e))} (x${count} over ${humanDuration(now - first)})` : humanDuration(now - when(e));
    const from = nested(e.source, 'component') ?? e.reportingComponent ?? e.reportingController ?? '';
    d.add(`  ${e.type}\t${e.reason}\t${age}\t${from}\t${String(e.message ?? '').trim()}`);
  }
}

export async function describe(ctx: Ctx, args: string[]): Promise<number> {
  const targets = await ctx.targets(args, { allowList: true });
  const objs: { t: Target; o: KubeObject }[] = [];
  for (const t of targets) {
    if (t.name) {
      const o = await ctx.getOrNull(pathOf(t));
      if (o) objs.push({ t, o: { apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...o } });
      else {
        // `describe pods web` matches names by prefix when no object has the exact name, as kubectl does.
        const matches = (await ctx.list({ ...t, name: undefined })).filter((x) => (x.metadata.name ?? '').startsWith(t.name!));
        if (!matches.length)
          throw new UsageError(
            `Error from server (NotFound): ${t.mapping.group ? `${t.mapping.resource}.${t.mapping.group}` : t.mapping.resource} "${t.name}" not found`,
          );
        for (const x of matches) objs.push({ t, o: x });
      }
      continue;
    }
    for (const o of await ctx.list(t)) objs.push({ t, o });
  }
  if (!objs.length) {
    const t = targets[0];
    ctx.io.err(t?.namespace ? `No resources found in ${t.namespace} namespace.\n` : 'No resources found\n');
    return 0;
  }
  const texts: string[] = [];
  for (const { o } of objs) {
    const d = new Lines();
    switch (o.kind) {
      case 'Pod':
        describePod(d, o);
        break;
      case 'Deployment':
        await describeDeployment(ctx, d, o);
        break;
      case 'ReplicaSet': {
        const pods = (await ctx.client.get<KubeList>(`/api/v1/namespaces/${o.metadata.namespace}/pods`)).items.filter((p) =>
          (p.metadata.ownerReferences ?? []).some((r) => r.uid === o.metadata.uid),
        );
        describeReplicaSet(d, o, pods);
        break;
      }
      case 'Service':
        describeService(
          d,
          o,
          (
            await ctx.client
              .get<KubeList>(`/apis/discovery.k8s.io/v1/namespaces/${o.metadata.namespace}/endpointslices`, {
                labelSelector: `kubernetes.io/service-name=${o.metadata.name}`,
              })
              .catch(() => ({ items: [] }))
          ).items ?? [],
        );
        break;
      case 'Node':
        describeNode(
          d,
          o,
          (await ctx.client.get<KubeList>('/api/v1/pods', { fieldSelector: `spec.nodeName=${o.metadata.name}` })).items ?? [],
          await ctx.getOrNull(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${o.metadata.name}`).catch(() => undefined),
        );
        break;
      case 'HorizontalPodAutoscaler': {
        const v2 = await hpaV2(ctx, o);
        if (v2) describeHpaV2(d, v2);
        else describeHpaV1(d, o);
        break;
      }
      case 'ConfigMap':
      case 'Secret':
        describeData(d, o);
        if (o.kind === 'Secret') {
          texts.push(d.text());
          continue;
        }
        break;
      case 'Namespace':
        d.kv(0, 'Name', o.metadata.name);
        d.map(0, 'Labels', o.metadata.labels);
        d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
        d.kv(0, 'Status', nested(o.status, 'phase') ?? 'Active');
        d.add('').add('No resource quota.').add('').add('No LimitRange resource.');
        texts.push(d.text());
        continue;
      default:
        describeGeneric(d, o);
    }
    await events(ctx, o, d);
    texts.push(d.text());
  }
  ctx.io.out(texts.join('\n\n'));
  return 0;
}
