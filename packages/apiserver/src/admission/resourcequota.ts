/**
 * ResourceQuota admission (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota):
 * a write is charged to every quota of its namespace that tracks what it uses,
 * counted by the evaluators the resourcequota controller uses too
 * (@kubeling/component-helpers quota.ts): creates of any namespaced resource
 * (`count/<resource>.<group>`, pods' compute resources, services' node ports
 * and load balancers, claims' storage), and updates of services and claims by
 * what they grow. Subresources are never charged.
 *
 * The charge is written to the quota's `status.used` at the resourceVersion it
 * was read at, so concurrent writes retry against each other and never exceed
 * `hard`; a quota that would be exceeded refuses the write with upstream's
 * 403 message. Dry runs are checked but charge nothing.
 *
 * Two deliberate differences from upstream, both about a quota the controller
 * has not computed yet: limits are read from `spec.hard` (upstream reads
 * `status.hard`, so a new quota restricts nothing until the controller has
 * seen it), and missing usage is counted from storage here instead of refusing
 * with "status unknown for quota". And when an object is gone for good, the
 * quotas that count its resource are recounted from storage (upstream leaves
 * that to the controller's replenishment, which does the same recount).
 */
import type { KubeObject, corev1, dsl } from '@kubeling/api';
import { forbidden, isConflict, isNotFound } from '@kubeling/apimachinery';
import {
  addLists,
  calculateUsage,
  equalLists,
  evaluatorFor,
  exceededNames,
  fromQuantityList,
  maskList,
  prettyPrintList,
  quotaMatches,
  removeZeros,
  subtractNonNegative,
  toQuantityList,
  trackedResources,
  type Evaluator,
  type QuantityList,
  type QuotaSpecLike,
} from '@kubeling/component-helpers';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';
import type { ObjectLister, ObjectReader, StatusWriter } from './lookups.js';

type ResourceQuota = dsl.Static<typeof corev1.ResourceQuota>;

const MAX_ATTEMPTS = 20;
const FIELD_MANAGER = 'resourcequota-admission';

const specOf = (q: KubeObject) => (q as ResourceQuota).spec as QuotaSpecLike | undefined;
const grOf = (resource: string) => {
  const i = resource.indexOf('/');
  return { group: resource.slice(0, i), resource: resource.slice(i + 1) };
};

export class ResourceQuotaAdmission implements ValidatingAdmission {
  readonly name = 'ResourceQuota';

  constructor(
    private readonly quotas: () => ObjectReader & StatusWriter,
    /** The objects of a resource (`group/resource`), to count a quota's usage from; undefined when it is not served. */
    private readonly storeFor: (resource: string) => ObjectLister | undefined,
  ) {}

  handles(a: AdmissionAttributes): boolean {
    if (!a.namespace || a.subresource) return false;
    // Creating a namespace is never charged (it is not namespaced anyway).
    return !!evaluatorFor(a.resource)?.handles(a.operation, undefined);
  }

  /** Upstream's NewForbidden: `<resource> "<name>" is forbidden: <why>`. */
  private forbidden(a: AdmissionAttributes, obj: KubeObject, why: string) {
    return forbidden(grOf(a.resource), a.name ?? obj.metadata.name ?? '', why);
  }

  /** A quota's usage of `names` (of its hard names), from storage: the etcd-backed lists, not the watch cache. */
  private async countFromStorage(ns: string, spec: QuotaSpecLike | undefined, names: readonly string[]): Promise<QuantityList> {
    const lists = new Map<string, KubeObject[]>();
    const served = (r: string) => this.storeFor(r) !== undefined;
    const hard = names.filter((n) => spec?.hard?.[n] !== undefined);
    const only: QuotaSpecLike = { ...spec, hard: Object.fromEntries(hard.map((n) => [n, spec!.hard![n]])) };
    for (const r of trackedResources(hard, served)) {
      const store = this.storeFor(r);
      if (store) lists.set(r, (await store.list(ns, {})).items);
    }
    return calculateUsage(only, (r) => lists.get(r), served, Date.now()).used;
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const e = evaluatorFor(a.resource);
    if (!e || !a.namespace) return;
    const ns = a.namespace;
    // Which quotas exist comes from the watch cache; each charge reads its quota fresh.
    const { items } = await this.quotas().list(ns, { resourceVersion: '0' });
    const matching = items.filter((q) => quotaMatches(e, specOf(q), obj));
    if (!matching.length) return;
    for (const q of matching) {
      const why = e.constraints(e.matchingResources(Object.keys(specOf(q)?.hard ?? {})), obj);
      if (why) throw this.forbidden(a, obj, `failed quota: ${q.metadata.name}: ${why}`);
    }
    const now = Date.now();
    let delta = removeZeros(e.usage(obj, now));
    // An update is charged what it adds (a create on update has no old object).
    if (a.operation === 'UPDATE' && a.old?.metadata.resourceVersion) delta = removeZeros(subtractNonNegative(delta, e.usage(a.old, now)));
    if (!Object.keys(delta).length) return;
    await this.charge(
      e,
      obj,
      a,
      ns,
      matching.map((q) => q.metadata.name!),
      delta,
    );
  }

  /**
   * Checks every quota, then writes each; a quota whose write lost a race is
   * read again and checked again (the others keep their charge).
   */
  private async charge(e: Evaluator, obj: KubeObject, a: AdmissionAttributes, ns: string, names: string[], delta: QuantityList): Promise<void> {
    let pending = names;
    let lastErr: unknown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS && pending.length; attempt++) {
      const writes: { quota: KubeObject; hard: QuantityList; used: QuantityList }[] = [];
      for (const name of pending) {
        let quota: KubeObject;
        try {
          quota = await this.quotas().get(ns, name);
        } catch (err) {
          if (isNotFound(err)) continue;
          throw err;
        }
        const spec = specOf(quota);
        const hard = toQuantityList(spec?.hard);
        const requested = maskList(delta, Object.keys(hard));
        if (!Object.keys(requested).length) continue;
        let used = toQuantityList((quota as ResourceQuota).status?.used);
        const unknown = e.matchingResources(Object.keys(hard)).filter((n) => !(n in used));
        if (unknown.length) used = { ...(await this.countFromStorage(ns, spec, unknown)), ...used };
        const next = addLists(used, requested);
        const over = exceededNames(maskList(next, Object.keys(requested)), hard);
        if (over.length) {
          throw this.forbidden(
            a,
            obj,
            `exceeded quota: ${name}, requested: ${prettyPrintList(maskList(requested, over))}, used: ${prettyPrintList(maskList(used, over))}, limited: ${prettyPrintList(maskList(hard, over))}`,
          );
        }
        writes.push({ quota, hard, used: next });
      }
      if (a.dryRun) return;
      const left: string[] = [];
      for (const w of writes) {
        try {
          await this.writeStatus(ns, w.quota, w.used);
        } catch (err) {
          if (!isConflict(err)) throw err;
          lastErr = err;
          left.push(w.quota.metadata.name!);
        }
      }
      pending = left;
    }
    if (pending.length) throw lastErr;
  }

  private writeStatus(ns: string, quota: KubeObject, used: QuantityList): Promise<unknown> {
    const body = structuredClone(quota) as ResourceQuota & KubeObject;
    body.status = { hard: fromQuantityList(toQuantityList(specOf(quota)?.hard)), used: fromQuantityList(used) };
    return this.quotas().update(ns, quota.metadata.name!, body, 'status', { fieldManager: FIELD_MANAGER });
  }

  /**
   * An object is gone for good: the quotas of its namespace that count its
   * resource (and have usage recorded) are recounted from storage.
   */
  async deleted(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const e = evaluatorFor(a.resource);
    const ns = obj.metadata.namespace;
    if (!e || !ns) return;
    const { items } = await this.quotas().list(ns, { resourceVersion: '0' });
    for (const q of items) {
      const names = e.matchingResources(Object.keys(specOf(q)?.hard ?? {}));
      if (!names.length || !(q as ResourceQuota).status?.used) continue;
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        let quota: KubeObject;
        try {
          quota = await this.quotas().get(ns, q.metadata.name!);
        } catch (err) {
          if (isNotFound(err)) break;
          throw err;
        }
        const counted = await this.countFromStorage(ns, specOf(quota), names);
        const before = toQuantityList((quota as ResourceQuota).status?.used);
        if (equalLists(maskList(before, Object.keys(counted)), counted)) break;
        const used = { ...before, ...counted };
        try {
          await this.writeStatus(ns, quota, used);
          break;
        } catch (err) {
          if (!isConflict(err)) throw err;
        }
      }
    }
  }
}
