/**
 * Pod admission plugins (kubernetes plugin/pkg/admission):
 *
 * - DefaultTolerationSeconds: pods tolerate `not-ready` and `unreachable`
 *   NoExecute taints for 300 s unless they say otherwise.
 * - LimitRanger: a namespace's LimitRanges of type Container fill missing
 *   limits (`default`) and requests (`defaultRequest`, else the limit), and
 *   refuse containers (and, for type Pod, pods) outside `min`/`max`.
 */
import type { KubeObject, corev1, dsl } from '@kubeling/api';
import { failure } from '@kubeling/apimachinery';
import { intValue, milliValue } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectLister } from './lookups.js';

type LimitRange = dsl.Static<typeof corev1.LimitRange>;
type LimitRangeItem = dsl.Static<typeof corev1.LimitRangeItem>;
type Quantity = string | number;

export class DefaultTolerationSeconds implements MutatingAdmission {
  readonly name = 'DefaultTolerationSeconds';
  constructor(private readonly seconds = 300) {}
  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }
  async admit(pod: KubeObject): Promise<void> {
    const spec = ((pod as corev1.Pod).spec ??= {});
    const tol = (spec.tolerations ??= []);
    for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
      const covered = tol.some(
        (t) => (t.operator === 'Exists' && !t.key && (!t.effect || t.effect === 'NoExecute')) || (t.key === key && (!t.effect || t.effect === 'NoExecute')),
      );
      if (!covered) tol.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.seconds });
    }
  }
}

/** AlwaysPullImages: every container pulls (off unless enabled). */
export class AlwaysPullImages implements MutatingAdmission {
  readonly name = 'AlwaysPullImages';
  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }
  async admit(pod: KubeObject): Promise<void> {
    for (const c of containers(pod)) c.imagePullPolicy = 'Always';
  }
}

const value = (r: string, q: Quantity) => (r === 'cpu' ? milliValue(q) : intValue(q));

function containers(pod: KubeObject): corev1.Container[] {
  const spec = (pod as corev1.Pod).spec ?? {};
  return [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
}

export class LimitRanger implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'LimitRanger';
  constructor(private readonly limitRanges: () => ObjectLister) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }

  private async ranges(ns: string | undefined): Promise<LimitRangeItem[]> {
    if (!ns) return [];
    const { items } = await this.limitRanges().list(ns, { resourceVersion: '0' });
    return items.flatMap((lr) => (lr as LimitRange).spec?.limits ?? []);
  }

  async admit(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const limits = (await this.ranges(a.namespace)).filter((l) => l.type === 'Container');
    if (!limits.length) return;
    const set: string[] = [];
    for (const c of containers(pod)) {
      const res = (c.resources ??= {});
      for (const l of limits) {
        for (const [r, q] of Object.entries(l.default ?? {})) {
          if (res.limits?.[r] === undefined) {
            (res.limits ??= {})[r] = q;
            set.push(`${r} limit for container ${c.name}`);
          }
        }
        for (const [r, q] of Object.entries(l.defaultRequest ?? {})) {
          if (res.requests?.[r] === undefined) {
            (res.requests ??= {})[r] = q;
            set.push(`${r} request for container ${c.name}`);
          }
        }
      }
      for (const [r, q] of Object.entries(res.limits ?? {}))
        if (res.requests?.[r] === undefined && limits.some((l) => l.default?.[r] !== undefined)) (res.requests ??= {})[r] = q;
    }
    if (set.length)
      pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), 'kubernetes.io/limit-ranger': `LimitRanger plugin set: ${set.join('; ')}` };
  }

  async validate(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const ranges = await this.ranges(a.namespace);
    if (!ranges.length) return;
    const errs: string[] = [];
    const check = (scope: 'Container' | 'Pod', req: Record<string, Quantity>, lim: Record<string, Quantity>) => {
      for (const l of ranges.filter((x) => x.type === scope)) {
        for (const [r, q] of Object.entries(l.min ?? {})) {
          const have = req[r] ?? lim[r];
          if (have === undefined) errs.push(`minimum ${r} usage per ${scope} is ${q}.  No request is specified`);
          else if (value(r, have) < value(r, q)) errs.push(`minimum ${r} usage per ${scope} is ${q}, but request is ${have}`);
        }
        for (const [r, q] of Object.entries(l.max ?? {})) {
          const have = lim[r];
          if (have === undefined) errs.push(`maximum ${r} usage per ${scope} is ${q}.  No limit is specified`);
          else if (value(r, have) > value(r, q)) errs.push(`maximum ${r} usage per ${scope} is ${q}, but limit is ${have}`);
        }
      }
    };
    const podReq: Record<string, number> = {};
    const podLim: Record<string, number> = {};
    for (const c of (pod as corev1.Pod).spec?.containers ?? []) {
      const req = c.resources?.requests ?? {};
      const lim = c.resources?.limits ?? {};
      check('Container', req, lim);
      for (const [r, q] of Object.entries(req)) podReq[r] = (podReq[r] ?? 0) + value(r, q);
      for (const [r, q] of Object.entries(lim)) podLim[r] = (podLim[r] ?? 0) + value(r, q);
    }
    if (ranges.some((l) => l.type === 'Pod')) {
      const fmt = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([r, v]) => [r, r === 'cpu' ? `${v}m` : v]));
      check('Pod', fmt(podReq), fmt(podLim));
    }
    if (errs.length)
      throw failure('Forbidden', `pods "${pod.metadata.name ?? ''}" is forbidden: [${errs.join(', ')}]`, { name: pod.metadata.name ?? '', kind: 'pods' });
  }
}
