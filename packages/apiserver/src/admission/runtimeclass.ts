/**
 * The RuntimeClass admission plugin (kubernetes plugin/pkg/admission/
 * runtimeclass), for new pods that name a `runtimeClassName`:
 *
 * - the class must exist, else the pod is Forbidden
 *   (`pod rejected: RuntimeClass "x" not found`);
 * - mutating: `spec.overhead` becomes the class's `overhead.podFixed` (a pod
 *   that already states a different overhead is Forbidden); the class's
 *   scheduling node selector is merged into the pod's (a conflicting value is
 *   Forbidden) and its tolerations merged with the pod's, dropping those
 *   another one covers (pkg/util/tolerations MergeTolerations);
 * - validating: the pod's overhead must equal the class's, and a pod without
 *   a class with overhead may not state one.
 *
 * Subresources and other resources pass; so do updates (upstream handles
 * CREATE only).
 */
import type { KubeObject, nodev1 } from '@kubeling/api';
import { compareQuantities } from '@kubeling/api';
import { forbidden, isNotFound, jsonEqual } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectGetter } from './lookups.js';

type Toleration = { key?: string; operator?: string; value?: string; effect?: string; tolerationSeconds?: number | null };
type PodSpec = {
  runtimeClassName?: string | null;
  overhead?: Record<string, string | number> | null;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
};

const GR = { group: '', resource: 'pods' };

/** Semantic equality of two resource lists (quantities compared by value). */
function sameResources(a: Record<string, string | number> | null | undefined, b: Record<string, string | number> | null | undefined): boolean {
  if (!a || !b) return !a === !b;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && compareQuantities(a[k], b[k]) === 0);
}

/** Whether `ss` tolerates everything `t` does (isSuperset). */
export function isSuperset(ss: Toleration, t: Toleration): boolean {
  if (jsonEqual(ss, t)) return true;
  if ((t.key ?? '') !== (ss.key ?? '') && (ss.key || ss.operator !== 'Exists')) return false;
  if ((t.effect ?? '') !== (ss.effect ?? '') && ss.effect) return false;
  if (ss.effect === 'NoExecute' && ss.tolerationSeconds !== undefined && ss.tolerationSeconds !== null) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (ss.operator ?? '') {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && (t.value ?? '') === (ss.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** MergeTolerations: both lists, without a toleration another one is a superset of. */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((t, i) => {
    if (merged.some((m) => isSuperset(m, t))) return;
    if (all.slice(i + 1).some((t2) => !jsonEqual(t, t2) && isSuperset(t2, t))) return;
    merged.push(t);
  });
  return merged;
}

export class RuntimeClassAdmission implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'RuntimeClass';

  constructor(private readonly classes: () => ObjectGetter) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods' && !a.subresource;
  }

  /** The class the pod names (undefined when it names none); Forbidden when it does not exist. */
  private async classOf(pod: KubeObject): Promise<nodev1.RuntimeClass | undefined> {
    const name = (pod.spec as PodSpec | undefined)?.runtimeClassName;
    if (!name) return undefined;
    try {
      return (await this.classes().get(undefined, name)) as unknown as nodev1.RuntimeClass;
    } catch (e) {
      if (isNotFound(e)) throw forbidden(GR, pod.metadata.name ?? '', `pod rejected: RuntimeClass "${name}" not found`);
      throw e;
    }
  }

  async admit(pod: KubeObject): Promise<void> {
    const rc = await this.classOf(pod);
    if (!rc) return;
    const spec = (pod.spec ??= {}) as PodSpec;
    const podFixed = rc.overhead?.podFixed;
    if (rc.overhead && podFixed !== undefined) {
      if (spec.overhead && !sameResources(podFixed, spec.overhead))
        throw forbidden(GR, pod.metadata.name ?? '', "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      spec.overhead = structuredClone(podFixed);
    }
    const scheduling = rc.scheduling;
    if (!scheduling) return;
    const selector = scheduling.nodeSelector ?? {};
    if (!spec.nodeSelector) {
      if (scheduling.nodeSelector) spec.nodeSelector = { ...selector };
    } else {
      for (const [k, v] of Object.entries(selector)) {
        const podValue = spec.nodeSelector[k];
        if (podValue !== undefined && podValue !== v)
          throw forbidden(
            GR,
            pod.metadata.name ?? '',
            `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${v}; pod.spec.nodeSelector[${k}] = ${podValue}`,
          );
        spec.nodeSelector[k] = v;
      }
    }
    const merged = mergeTolerations(spec.tolerations ?? [], (scheduling.tolerations ?? []) as Toleration[]);
    if (merged.length || spec.tolerations) spec.tolerations = merged;
  }

  async validate(pod: KubeObject): Promise<void> {
    const rc = await this.classOf(pod);
    const overhead = (pod.spec as PodSpec | undefined)?.overhead;
    if (rc?.overhead && rc.overhead.podFixed !== undefined) {
      if (!sameResources(rc.overhead.podFixed, overhead))
        throw forbidden(GR, pod.metadata.name ?? '', "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    } else if (overhead) {
      throw forbidden(GR, pod.metadata.name ?? '', 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    }
  }
}
