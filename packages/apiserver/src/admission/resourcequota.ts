/**
 * ResourceQuota admission (kubernetes plugin/pkg/admission/resourcequota): a
 * create is charged to every quota of its namespace that tracks it — `pods`,
 * `count/<resource>[.<group>]`, and for pods `requests.cpu|memory`,
 * `limits.cpu|memory` (and plain `cpu`/`memory`, meaning requests). The charge
 * is written to the quota's `status.used` with the resourceVersion it was read
 * at, so concurrent creates retry against each other and never exceed `hard`.
 * Deletions give the usage back. A quota without usage yet is counted from
 * etcd first.
 */
import type { KubeObject, corev1, dsl } from '@kubeling/api';
import { failure, intValue, isConflict, milliValue } from '@kubeling/apimachinery';
import { podRequests } from '@kubeling/component-helpers';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';
import type { ObjectLister, ObjectReader, StatusWriter } from './lookups.js';

type ResourceQuota = dsl.Static<typeof corev1.ResourceQuota>;

const fmt = (r: string, v: number) => (/cpu$/.test(r) ? (v % 1000 === 0 ? String(v / 1000) : `${v}m`) : String(v));
const parse = (r: string, q: string | number) => (/cpu$/.test(r) ? milliValue(q) : intValue(q));

function podLimits(spec: corev1.PodSpec): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of spec.containers ?? [])
    for (const [r, q] of Object.entries(c.resources?.limits ?? {})) out[r] = (out[r] ?? 0) + (r === 'cpu' ? milliValue(q) : intValue(q));
  return out;
}

export class ResourceQuotaAdmission implements ValidatingAdmission {
  readonly name = 'ResourceQuota';

  constructor(
    private readonly quotas: () => ObjectReader & StatusWriter,
    /** The objects of a resource (`group/resource`), to count a quota's usage from. */
    private readonly storeFor: (resource: string) => ObjectLister | undefined,
  ) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && !!a.namespace && a.resource !== '/resourcequotas' && a.resource !== '/events' && a.resource !== 'events.k8s.io/events';
  }

  /** What creating (or, negated, deleting) `obj` adds to each tracked name. */
  private usage(obj: KubeObject, resource: string): Record<string, number> {
    const [group, res] = resource.split('/') as [string, string];
    const u: Record<string, number> = { [`count/${group ? `${res}.${group}` : res}`]: 1 };
    if (resource === '/pods') {
      u.pods = 1;
      const req = podRequests((obj as corev1.Pod).spec ?? {});
      const lim = podLimits((obj as corev1.Pod).spec ?? {});
      for (const r of ['cpu', 'memory']) {
        u[`requests.${r}`] = req[r] ?? 0;
        u[r] = req[r] ?? 0;
        u[`limits.${r}`] = lim[r] ?? 0;
      }
    }
    for (const k of ['configmaps', 'secrets', 'services', 'persistentvolumeclaims', 'replicationcontrollers', 'resourcequotas'])
      if (resource === `/${k}`) u[k] = 1;
    return u;
  }

  /** Counts the tracked names from etcd for a quota that has no usage yet. */
  private async count(ns: string, names: string[]): Promise<Record<string, number>> {
    const used: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    const pods = names.some((n) => n === 'pods' || /^(requests|limits)\.|^(cpu|memory)$/.test(n) || n === 'count/pods');
    for (const n of names) {
      const m = /^count\/([^.]+)(?:\.(.+))?$/.exec(n) ?? (['configmaps', 'secrets', 'services', 'persistentvolumeclaims'].includes(n) ? [n, n, ''] : null);
      if (!m || m[1] === 'pods') continue;
      const store = this.storeFor(`${m[2] ?? ''}/${m[1]}`);
      if (store) used[n] = (await store.list(ns, {})).items.length;
    }
    if (pods) {
      const list = (await this.storeFor('/pods')!.list(ns, {})).items.filter((p) => !['Succeeded', 'Failed'].includes((p as corev1.Pod).status?.phase ?? ''));
      for (const p of list) {
        const u = this.usage(p, '/pods');
        for (const n of names) if (u[n] !== undefined) used[n] = (used[n] ?? 0) + u[n]!;
      }
    }
    return used;
  }

  private async charge(obj: KubeObject, a: AdmissionAttributes, sign: 1 | -1): Promise<void> {
    const ns = a.namespace!;
    // Which quotas exist comes from the watch cache; each charge reads the quota fresh.
    const { items } = await this.quotas().list(ns, { resourceVersion: '0' });
    if (!items.length) return;
    const delta = this.usage(obj, a.resource);
    for (const q of items) {
      const hard = (q as ResourceQuota).spec?.hard ?? {};
      const tracked = Object.keys(hard).filter((n) => delta[n] !== undefined);
      if (!tracked.length) continue;
      for (let attempt = 0; attempt < 20; attempt++) {
        const cur = await this.quotas().get(ns, q.metadata.name!);
        const recorded = (cur as ResourceQuota).status?.used;
        let used: Record<string, number>;
        if (!recorded || tracked.some((n) => recorded[n] === undefined)) used = await this.count(ns, Object.keys(hard));
        else used = Object.fromEntries(Object.entries(recorded).map(([n, v]) => [n, parse(n, v)]));
        const next = { ...used };
        const over: string[] = [];
        for (const n of tracked) {
          next[n] = Math.max(0, (used[n] ?? 0) + sign * delta[n]!);
          if (sign > 0 && next[n]! > parse(n, hard[n]!)) over.push(n);
        }
        if (over.length) {
          const list = (f: (n: string) => string) => over.map(f).join(',');
          throw failure(
            'Forbidden',
            `${a.resource.split('/')[1]} "${obj.metadata.name ?? ''}" is forbidden: exceeded quota: ${q.metadata.name}, requested: ${list((n) => `${n}=${fmt(n, delta[n]!)}`)}, used: ${list((n) => `${n}=${fmt(n, used[n] ?? 0)}`)}, limited: ${list((n) => `${n}=${hard[n]}`)}`,
          );
        }
        const body = structuredClone(cur);
        body.status = { hard, used: Object.fromEntries(Object.entries(next).map(([n, v]) => [n, fmt(n, v)])) };
        try {
          await this.quotas().update(ns, q.metadata.name!, body, 'status', { fieldManager: 'resourcequota-admission' });
          break;
        } catch (e) {
          if (!isConflict(e) || attempt === 19) throw e;
        }
      }
    }
  }

  validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    if (a.dryRun) return Promise.resolve();
    return this.charge(obj, a, 1);
  }

  deleted(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    return this.charge(obj, a, -1);
  }
}
