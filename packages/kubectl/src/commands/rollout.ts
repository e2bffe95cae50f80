/**
 * `rollout status|history|undo|restart|pause|resume` for Deployments (and
 * `status`/`restart`/`history`/`undo` for DaemonSets and StatefulSets), with upstream's messages. `status`
 * prints each new state as the watch reports it, until the rollout is done.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeList, KubeObject, appsv1 } from '@kubeling/api';
import { UsageError } from '../flags.js';
import { type Ctx, kindRef, pathOf, resourceRef, type Target } from '../ctx.js';
import { asList, asObject, asObjects, asStringMap, nested, type JsonObject } from '../json.js';
import { observe } from './observe.js';

const REVISION = 'deployment.kubernetes.io/revision';
const CHANGE_CAUSE = 'kubernetes.io/change-cause';
const HASH_LABEL = 'pod-template-hash';

/**
 * Upstream's DeploymentStatusViewer / DaemonSetStatusViewer / StatefulSetStatusViewer: [message, done].
 * The object is the server's, so an object of one of these kinds has its kind's shape.
 */
export function rolloutStatus(o: KubeObject): [string, boolean] {
  const name = o.metadata.name;
  if (o.kind === 'StatefulSet') {
    const { spec, status } = o as appsv1.StatefulSet;
    const st: Partial<appsv1.StatefulSetStatus> = status ?? {};
    const strategy: appsv1.StatefulSetUpdateStrategy = spec?.updateStrategy ?? {};
    if (strategy.type && strategy.type !== 'RollingUpdate') throw new UsageError('error: rollout status is only available for RollingUpdate strategy type');
    if (!st.observedGeneration || (o.metadata.generation ?? 0) > st.observedGeneration)
      return ['Waiting for statefulset spec update to be observed...\n', false];
    const replicas = spec?.replicas ?? 1;
    if ((st.readyReplicas ?? 0) < replicas) return [`Waiting for ${replicas - (st.readyReplicas ?? 0)} pods to be ready...\n`, false];
    const partition = strategy.rollingUpdate?.partition;
    if (strategy.rollingUpdate) {
      if (partition !== undefined && (st.updatedReplicas ?? 0) < replicas - partition)
        return [`Waiting for partitioned roll out to finish: ${st.updatedReplicas ?? 0} out of ${replicas - partition} new pods have been updated...\n`, false];
      return [`partitioned roll out complete: ${st.updatedReplicas ?? 0} new pods have been updated...\n`, true];
    }
    if (st.updateRevision !== st.currentRevision)
      return [`waiting for statefulset rolling update to complete ${st.updatedReplicas ?? 0} pods at revision ${st.updateRevision}...\n`, false];
    return [`statefulset rolling update complete ${st.currentReplicas ?? 0} pods at revision ${st.currentRevision}...\n`, true];
  }
  if (o.kind === 'DaemonSet') {
    const st: Partial<appsv1.DaemonSetStatus> = (o as appsv1.DaemonSet).status ?? {};
    if ((o.metadata.generation ?? 0) > (st.observedGeneration ?? 0)) return ['Waiting for daemon set spec update to be observed...\n', false];
    const desired = st.desiredNumberScheduled ?? 0;
    if ((st.updatedNumberScheduled ?? 0) < desired)
      return [`Waiting for daemon set "${name}" rollout to finish: ${st.updatedNumberScheduled ?? 0} out of ${desired} new pods have been updated...\n`, false];
    if ((st.numberAvailable ?? 0) < desired)
      return [`Waiting for daemon set "${name}" rollout to finish: ${st.numberAvailable ?? 0} of ${desired} updated pods are available...\n`, false];
    return [`daemon set "${name}" successfully rolled out\n`, true];
  }
  const { spec, status } = o as appsv1.Deployment;
  const st: appsv1.DeploymentStatus = status ?? {};
  if ((o.metadata.generation ?? 0) > (st.observedGeneration ?? 0)) return ['Waiting for deployment spec update to be observed...\n', false];
  const progressing = (st.conditions ?? []).find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') throw new UsageError(`error: deployment "${name}" exceeded its progress deadline`);
  const replicas = spec?.replicas ?? 1;
  const updated = st.updatedReplicas ?? 0;
  if (updated < replicas)
    return [`Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...\n`, false];
  if ((st.replicas ?? 0) > updated)
    return [`Waiting for deployment "${name}" rollout to finish: ${(st.replicas ?? 0) - updated} old replicas are pending termination...\n`, false];
  if ((st.availableReplicas ?? 0) < updated)
    return [`Waiting for deployment "${name}" rollout to finish: ${st.availableReplicas ?? 0} of ${updated} updated replicas are available...\n`, false];
  return [`deployment "${name}" successfully rolled out\n`, true];
}

async function one(ctx: Ctx, args: string[]): Promise<{ t: Target; name: string; obj: KubeObject }[]> {
  const targets = await ctx.targets(args, { allowList: !!ctx.g.selector || ctx.g.all });
  const out: { t: Target; name: string; obj: KubeObject }[] = [];
  for (const t of targets) {
    if (!['Deployment', 'DaemonSet', 'StatefulSet'].includes(t.mapping.kind))
      throw new UsageError(`error: no status viewer has been implemented for ${t.mapping.kind}`);
    if (t.name) out.push({ t, name: t.name, obj: { kind: t.mapping.kind, ...(await ctx.client.get<KubeObject>(pathOf(t))) } });
    else for (const o of await ctx.list(t)) out.push({ t, name: o.metadata.name ?? '', obj: o });
  }
  return out;
}

/** The ReplicaSets a Deployment controls, by revision. */
async function replicaSets(ctx: Ctx, d: KubeObject): Promise<KubeObject[]> {
  const list = await ctx.client.get<KubeList>(`/apis/apps/v1/namespaces/${d.metadata.namespace}/replicasets`);
  return (list.items ?? [])
    .filter((rs) => (rs.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === d.metadata.uid))
    .sort((a, b) => revision(a) - revision(b));
}

const revision = (rs: KubeObject): number => Number(rs.metadata.annotations?.[REVISION] ?? 0);

/** The ControllerRevisions of a StatefulSet or DaemonSet, oldest first, with the pod template each holds. */
async function controllerRevisions(
  ctx: Ctx,
  s: KubeObject,
): Promise<{ revision: number; changeCause?: string | undefined; template: JsonObject; data: JsonObject }[]> {
  const list = await ctx.client.get<KubeList>(`/apis/apps/v1/namespaces/${s.metadata.namespace}/controllerrevisions`);
  return (list.items ?? [])
    .filter((cr) => (cr.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === s.metadata.uid))
    .map((cr) => {
      // The revision's data is the strategic merge patch that restores it: its pod template carries `$patch: replace`.
      const template = structuredClone(asObject(nested(cr.data, 'spec', 'template')) ?? {});
      delete template.$patch;
      return { revision: Number(cr.revision ?? 0), changeCause: cr.metadata.annotations?.[CHANGE_CAUSE], template, data: asObject(cr.data) ?? {} };
    })
    .sort((a, b) => a.revision - b.revision);
}

function templateWithoutHash(tpl: unknown): unknown {
  const t = structuredClone(tpl ?? {});
  const labels = asObject(nested(t, 'metadata', 'labels'));
  if (labels) {
    delete labels[HASH_LABEL];
  }
  return t;
}

/** Upstream's StatefulSetRollbacker and DaemonSetRollbacker: the revision's data as a strategic merge patch. */
async function undoByRevision(ctx: Ctx, t: Target, name: string, obj: KubeObject): Promise<void> {
  const revs = await controllerRevisions(ctx, obj);
  const to = ctx.g.toRevision && ctx.g.toRevision !== '0' ? Number(ctx.g.toRevision) : undefined;
  // Without --to-revision: the one before the newest.
  const want = to !== undefined ? revs.find((r) => r.revision === to) : revs.length > 1 ? revs[revs.length - 2] : undefined;
  if (!want) throw new UsageError(to !== undefined ? `error: unable to find specified revision ${to} in history` : 'error: no last revision to roll back to');
  if (isDeepStrictEqual(nested(obj.spec, 'template') ?? {}, want.template)) {
    ctx.io.out(`${kindRef(t.mapping)}/${name} skipped rollback (current template already matches revision ${want.revision})\n`);
    return;
  }
  if (ctx.dryRun !== 'client')
    await ctx.client.patch(pathOf(t, name), want.data, 'application/strategic-merge-patch+json', ctx.dryRun === 'server' ? { dryRun: 'All' } : undefined);
  ctx.io.out(`${kindRef(t.mapping)}/${name} rolled back\n`);
}

export async function rollout(ctx: Ctx, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const g = ctx.g;
  switch (sub) {
    case 'status': {
      const timeout = ctx.duration(g.timeout, 0);
      for (const { t, name } of await one(ctx, rest)) {
        let done = false;
        // Like kubectl, a line per observed state (repeats included).
        const ok = await observe(ctx, t, name, timeout, (o) => {
          if (!o) throw new UsageError(`error: ${kindRef(t.mapping)} "${name}" not found`);
          const [msg, finished] = rolloutStatus({ kind: t.mapping.kind, ...o });
          ctx.io.out(msg);
          done = finished;
          return finished || g.watch === false;
        });
        if (!ok && !done) {
          ctx.io.err('error: timed out waiting for the condition\n');
          return 1;
        }
      }
      return 0;
    }
    case 'history': {
      for (const { t, name, obj } of await one(ctx, rest)) {
        if (!['Deployment', 'StatefulSet', 'DaemonSet'].includes(t.mapping.kind))
          throw new UsageError(`error: no history viewer has been implemented for ${t.mapping.kind}`);
        const entries =
          t.mapping.kind !== 'Deployment'
            ? await controllerRevisions(ctx, obj)
            : (await replicaSets(ctx, obj)).map((r) => ({
                revision: revision(r),
                changeCause: r.metadata.annotations?.[CHANGE_CAUSE],
                template: nested(r.spec, 'template'),
              }));
        if (g.revision) {
          const e = entries.find((r) => r.revision === Number(g.revision));
          if (!e) throw new UsageError(`error: unable to find the specified revision`);
          ctx.io.out(`${kindRef(t.mapping)}/${name} with revision #${g.revision}\n${podTemplateText(e.template)}\n\n`);
          continue;
        }
        const rows = [['REVISION', 'CHANGE-CAUSE'], ...entries.filter((r) => r.revision > 0).map((r) => [String(r.revision), r.changeCause ?? '<none>'])];
        const w = Math.max(...rows.map((r) => r[0]!.length)) + 2;
        ctx.io.out(`${kindRef(t.mapping)}/${name} \n${rows.map((r) => `${r[0]!.padEnd(w)}${r[1]}`).join('\n')}\n\n`);
      }
      return 0;
    }
    case 'undo': {
      for (const { t, name, obj } of await one(ctx, rest)) {
        if (t.mapping.kind === 'StatefulSet' || t.mapping.kind === 'DaemonSet') {
          await undoByRevision(ctx, t, name, obj);
          continue;
        }
        if (t.mapping.kind !== 'Deployment') throw new UsageError(`error: no rollbacker has been implemented for ${t.mapping.kind}`);
        if (nested(obj.spec, 'paused'))
          throw new UsageError(`error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again`);
        const rss = (await replicaSets(ctx, obj)).filter((r) => revision(r) > 0);
        const current = Number(obj.metadata.annotations?.[REVISION] ?? 0);
        const want =
          g.toRevision && g.toRevision !== '0'
            ? rss.find((r) => revision(r) === Number(g.toRevision))
            : [...rss].reverse().find((r) => revision(r) !== current);
        if (!want)
          throw new UsageError(
            g.toRevision && g.toRevision !== '0'
              ? `error: unable to find specified revision ${g.toRevision} in history`
              : 'error: no rollout history found for deployment "' + name + '"',
          );
        const tpl = templateWithoutHash(nested(want.spec, 'template'));
        if (JSON.stringify(templateWithoutHash(nested(obj.spec, 'template'))) === JSON.stringify(tpl)) {
          ctx.io.out(`${kindRef(t.mapping)}/${name} skipped rollback (current template already matches revision ${revision(want)})\n`);
          continue;
        }
        const annotations: Record<string, string> = {};
        for (const [k, v] of Object.entries(want.metadata.annotations ?? {})) if (k === CHANGE_CAUSE) annotations[k] = v;
        const ops: JsonObject[] = [
          { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
          { op: 'replace', path: '/spec/template', value: tpl },
          ...(Object.keys(annotations).length
            ? [{ op: 'add', path: '/metadata/annotations', value: { ...(obj.metadata.annotations ?? {}), ...annotations } }]
            : []),
        ];
        // Upstream's rollbacker names no field manager: the server takes it from the user agent.
        if (ctx.dryRun !== 'client')
          await ctx.client.patch(pathOf(t, name), ops, 'application/json-patch+json', ctx.dryRun === 'server' ? { dryRun: 'All' } : undefined);
        ctx.io.out(`${kindRef(t.mapping)}/${name} rolled back\n`);
      }
      return 0;
    }
    case 'restart': {
      for (const { t, name, obj } of await one(ctx, rest)) {
        if (nested(obj.spec, 'paused')) throw new UsageError(`error: deployments "${name}" can't restart paused deployment (run rollout resume first)`);
        const patch = {
          spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString().replace(/\.\d+Z$/, 'Z') } } } },
        };
        if (ctx.dryRun !== 'client')
          await ctx.client.patch(pathOf(t, name), patch, 'application/strategic-merge-patch+json', ctx.writeQuery('kubectl-rollout'));
        ctx.io.out(`${kindRef(t.mapping)}/${name} restarted\n`);
      }
      return 0;
    }
    case 'pause':
    case 'resume': {
      const pause = sub === 'pause';
      let failed = 0;
      for (const { t, name, obj } of await one(ctx, rest)) {
        if (t.mapping.kind !== 'Deployment')
          throw new UsageError(`error: ${resourceRef(t.mapping)} "${name}" ${pause ? 'pausing' : 'resuming'} is not supported`);
        if (!!nested(obj.spec, 'paused') === pause) {
          ctx.io.err(`error: ${resourceRef(t.mapping)} "${name}" is ${pause ? 'already paused' : 'not paused'}\n`);
          failed++;
          continue;
        }
        if (ctx.dryRun !== 'client')
          await ctx.client.patch(pathOf(t, name), { spec: { paused: pause ? true : null } }, 'application/merge-patch+json', ctx.writeQuery('kubectl-rollout'));
        ctx.io.out(`${kindRef(t.mapping)}/${name} ${pause ? 'paused' : 'resumed'}\n`);
      }
      return failed ? 1 : 0;
    }
    default:
      throw new UsageError(`error: unknown command "${sub ?? ''}" for "kubectl rollout"\nAvailable Commands: history, pause, restart, resume, status, undo`);
  }
}

/** A pod template the way `describe` and `rollout history --revision` print it. */
export function podTemplateText(tpl: unknown, indent = ''): string {
  const lines: string[] = ['Pod Template:'];
  const labels = Object.entries(asStringMap(nested(tpl, 'metadata', 'labels')) ?? {}).map(([k, v]) => `${k}=${v}`);
  lines.push(`  Labels:\t${labels.length ? labels.join('\n\t') : '<none>'}`);
  const ann = Object.entries(asStringMap(nested(tpl, 'metadata', 'annotations')) ?? {});
  if (ann.length) lines.push(`  Annotations:\t${ann.map(([k, v]) => `${k}: ${v}`).join('\n\t')}`);
  const spec = asObject(nested(tpl, 'spec')) ?? {};
  if (spec.serviceAccountName) lines.push(`  Service Account:\t${spec.serviceAccountName}`);
  const section = (title: string, cs: JsonObject[]) => {
    if (!cs.length) return;
    lines.push(`  ${title}:`);
    for (const c of cs) {
      lines.push(`   ${c.name}:`);
      lines.push(`    Image:\t${c.image}`);
      const ports = asObjects(c.ports).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`);
      lines.push(`    Port${ports.length > 1 ? 's' : ''}:\t${ports.length ? ports.join(', ') : '<none>'}`);
      const hostPorts = asObjects(c.ports).map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`);
      lines.push(`    Host Port${hostPorts.length > 1 ? 's' : ''}:\t${hostPorts.length ? hostPorts.join(', ') : '<none>'}`);
      if (c.command)
        lines.push(
          `    Command:\n${asList(c.command)
            .map((x) => `      ${x}`)
            .join('\n')}`,
        );
      if (c.args)
        lines.push(
          `    Args:\n${asList(c.args)
            .map((x) => `      ${x}`)
            .join('\n')}`,
        );
      const env = asObjects(c.env).map((e) => `      ${e.name}:\t${e.value ?? '<set from a reference>'}`);
      lines.push(`    Environment:${env.length ? '\n' + env.join('\n') : '\t<none>'}`);
      const mounts = asObjects(c.volumeMounts).map((m) => `      ${m.mountPath} from ${m.name} (${m.readOnly ? 'ro' : 'rw'})`);
      lines.push(`    Mounts:${mounts.length ? '\n' + mounts.join('\n') : '\t<none>'}`);
    }
  };
  section('Init Containers', asObjects(spec.initContainers));
  section('Containers', asObjects(spec.containers));
  const vols = asObjects(spec.volumes);
  lines.push(`  Volumes:\t${vols.length ? vols.map((v) => v.name).join(', ') : '<none>'}`);
  lines.push(
    `  Node-Selectors:\t${
      Object.entries(asStringMap(spec.nodeSelector) ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',') || '<none>'
    }`,
  );
  lines.push(
    `  Tolerations:\t${
      asObjects(spec.tolerations)
        .map((t) => `${t.key ?? ''}${t.value ? `=${t.value}` : ''}${t.effect ? `:${t.effect}` : ''}`)
        .join(', ') || '<none>'
    }`,
  );
  return lines.map((l) => indent + l).join('\n');
}
