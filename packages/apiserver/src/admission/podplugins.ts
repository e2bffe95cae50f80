/**
 * Pod admission plugins (kubernetes plugin/pkg/admission):
 *
 * - DefaultTolerationSeconds: pods tolerate `not-ready` and `unreachable`
 *   NoExecute taints for 300 s unless they say otherwise.
 * - LimitRanger: a namespace's LimitRanges of type Container fill missing
 *   limits (`default`) and requests (`defaultRequest`, else the limit), and
 *   refuse containers (and, for type Pod, pods) outside `min`/`max`.
 */
import type { KubeObject } from '@kubeling/api';
import { failure } from '@kubeling/apimachinery';
import { intValue, milliValue } from '@kubeling/apimachinery';
import type { Store } from '../registry/store.js';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';

type Obj = Record<string, any>;

export class DefaultTolerationSeconds implements MutatingAdmission {
  readonly name = 'DefaultTolerationSeconds';
  constructor(private readonly seconds = 300) {}
  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }
  async admit(pod: KubeObject): Promise<void> {
    const spec = (pod.spec ??= {}) as Obj;
    const tol = (spec.tolerations ??= []) as Obj[];
    for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
      const covered = tol.some((t) => (t.operator === 'Exists' && !t.key && (!t.effect || t.effect === 'NoExecute')) || (t.key === key && (!t.effect || t.effect === 'NoExecute')));
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

const value = (r: string, q: string | number) => (r === 'cpu' ? milliValue(q) : intValue(q));

function containers(pod: KubeObject): Obj[] {
  const spec = (pod.spec ?? {}) as Obj;
  return [...((spec.initContainers ?? []) as Obj[]), ...((spec.containers ?? []) as Obj[])];
}

export class LimitRanger implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'LimitRanger';
  constructor(private readonly limitRanges: () => Store) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }

  private async ranges(ns: string | undefined): Promise<Obj[]> {
    if (!ns) return [];
    const { items } = await this.limitRanges().list(ns, { resourceVersion: '0' });
    return items.flatMap((lr) => (((lr.spec ?? {}) as Obj).limits ?? []) as Obj[]);
  }

  async admit(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const limits = (await this.ranges(a.namespace)).filter((l) => l.type === 'Container');
    if (!limits.length) return;
    const set: string[] = [];
    for (const c of containers(pod)) {
      const res = (c.resources ??= {}) as Obj;
      for (const l of limits) {
        for (const [r, q] of Object.entries((l.default ?? {}) as Record<string, string>)) {
          if ((res.limits ?? {})[r] === undefined) {
            (res.limits ??= {})[r] = q;
            set.push(`${r} limit for container ${c.name}`);
          }
        }
        for (const [r, q] of Object.entries((l.defaultRequest ?? {}) as Record<string, string>)) {
          if ((res.requests ?? {})[r] === undefined) {
            (res.requests ??= {})[r] = q;
            set.push(`${r} request for container ${c.name}`);
          }
        }
      }
      for (const [r, q] of Object.entries((res.limits ?? {}) as Record<string, string>)) if ((res.requests ?? {})[r] === undefined && limits.some((l) => l.default?.[r] !== undefined)) (res.requests ??= {})[r] = q;
    }
    if (set.length) pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), 'kubernetes.io/limit-ranger': `LimitRanger plugin set: ${set.join('; ')}` };
  }

  async validate(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const ranges = await this.ranges(a.namespace);
    if (!ranges.length) return;
    const errs: string[] = [];
    const check = (scope: 'Container' | 'Pod', req: Record<string, string | number>, lim: Record<string, string | number>) => {
      for (const l of ranges.filter((x) => x.type === scope)) {
        for (const [r, q] of Object.entries((l.min ?? {}) as Record<string, string>)) {
          const have = req[r] ?? lim[r];
          if (have === undefined) errs.push(`minimum ${r} usage per ${scope} is ${q}.  No request is specified`);
          else if (value(r, have) < value(r, q)) errs.push(`minimum ${r} usage per ${scope} is ${q}, but request is ${have}`);
        }
        for (const [r, q] of Object.entries((l.max ?? {}) as Record<string, string>)) {
          const have = lim[r];
          if (have === undefined) errs.push(`maximum ${r} usage per ${scope} is ${q}.  No limit is specified`);
          else if (value(r, have) > value(r, q)) errs.push(`maximum ${r} usage per ${scope} is ${q}, but limit is ${have}`);
        }
      }
    };
    const podReq: Record<string, number> = {};
    const podLim: Record<string, number> = {};
    for (const c of ((pod.spec as Obj)?.containers ?? []) as Obj[]) {
      const req = (c.resources?.requests ?? {}) as Record<string, string>;
      const lim = (c.resources?.limits ?? {}) as Record<string, string>;
      check('Container', req, lim);
      for (const [r, q] of Object.entries(req)) podReq[r] = (podReq[r] ?? 0) + value(r, q);
      for (const [r, q] of Object.entries(lim)) podLim[r] = (podLim[r] ?? 0) + value(r, q);
    }
    if (ranges.some((l) => l.type === 'Pod')) {
      const fmt = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).map(([r, v]) => [r, r === 'cpu' ? `${v}m` : v]));
      check('Pod', fmt(podReq), fmt(podLim));
    }
    if (errs.length) throw failure('Forbidden', `pods "${pod.metadata.name ?? ''}" is forbidden: [${errs.join(', ')}]`, { name: pod.metadata.name ?? '', kind: 'pods' });
  }
}
