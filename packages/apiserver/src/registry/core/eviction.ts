/**
 * The eviction subresource (POST pods/<name>/eviction with a policy/v1
 * Eviction; kubernetes pkg/registry/core/pod/storage/eviction.go): a deletion
 * that honours PodDisruptionBudgets.
 *
 * - A pod that is terminal, Pending or already being deleted is deleted at
 *   once (no budget protects it).
 * - With no budget selecting the pod it is deleted; with more than one the
 *   answer is a Failure Status with code 500 in a 201 response, as upstream.
 * - An unready pod is deleted without using the budget when the policy is
 *   AlwaysAllow, or when the budget is met without it (IfHealthyBudget); the
 *   deletion is then conditional on the pod's resourceVersion, and a pod that
 *   changed meanwhile answers 429.
 * - Otherwise the budget must allow a disruption: `disruptionsAllowed` is
 *   decremented and the pod recorded in `disruptedPods` (a conditional write of
 *   the budget's status, retried on conflict); none allowed, or a budget the
 *   controller has not seen at its generation, answers 429 TooManyRequests.
 *
 * Before the deletion the pod gets the DisruptionTarget condition
 * (EvictionByEvictionAPI). Dry runs check everything and write nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '@kubeling/api';
import { badRequest, conflict, failure, forbidden, isConflict, isPlainObject, rfc3339, timeoutError, type Status } from '@kubeling/apimachinery';
import { isPodReady, pdbsForPod, updateDisruptionAllowedCondition, type PDBLike } from '@kubeling/component-helpers';
import type { AdmissionAttributes } from '../admission.js';
import type { DeleteOptions } from '../delete.js';
import type { Store, WriteContext } from '../store.js';

/** Beyond this many awaited evictions a budget refuses more (the controller is not keeping up). */
export const MAX_DISRUPTED_POD_SIZE = 2000;
/** Conflicts retried (upstream EvictionsRetry: 20 steps). */
const RETRIES = 20;
const RETRY_DELAY_MS = 50;

const PDB_GR = { group: 'policy', resource: 'poddisruptionbudget' };
const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

/** The admission plugins that look at eviction requests; the others only judge pods and would misread an Eviction. */
const EVICTION_ADMISSION = new Set(['NodeRestriction', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook']);

interface AdmissionPlugin {
  name: string;
  handles(a: AdmissionAttributes): boolean;
}
interface PluginChain {
  mutating?: (AdmissionPlugin & { admit(o: KubeObject, a: AdmissionAttributes): Promise<void> })[];
  validating?: (AdmissionPlugin & { validate(o: KubeObject, a: AdmissionAttributes): Promise<void> })[];
}

type PodCondition = { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string; lastProbeTime?: string | null };
type PodLike = KubeObject & { status?: { phase?: string; conditions?: PodCondition[] } };

export interface EvictionStores {
  pods: Store;
  /** The PodDisruptionBudgets (policy/v1); undefined when policy is not served. */
  pdbs: Store | undefined;
}

const success = (): Status => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

/** 429 for a budget the controller has not processed yet (createTooManyRequestsError). */
const stillProcessing = (pdb: string) =>
  failure('TooManyRequests', BUDGET_MESSAGE, {
    retryAfterSeconds: 10,
    causes: [{ reason: 'DisruptionBudget', message: `The disruption budget ${pdb} is still being processed by the server.` }],
  });

/** The Eviction's deleteOptions, checked as ValidateDeleteOptions checks a DELETE's. */
function deleteOptionsOf(ev: Record<string, unknown>): DeleteOptions {
  const raw = ev.deleteOptions;
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw badRequest('Eviction in version "v1" cannot be handled as a Eviction: deleteOptions must be an object');
  const o = raw as Record<string, unknown>;
  const out: DeleteOptions = {};
  const bad = (field: string, why: string) =>
    failure('Invalid', `DeleteOptions.meta.k8s.io "" is invalid: ${field}: ${why}`, {
      kind: 'DeleteOptions',
      group: 'meta.k8s.io',
      causes: [{ reason: 'FieldValueInvalid', message: why, field }],
    });
  if (o.gracePeriodSeconds !== undefined && o.gracePeriodSeconds !== null) {
    if (!Number.isSafeInteger(o.gracePeriodSeconds))
      throw badRequest('Eviction in version "v1" cannot be handled as a Eviction: deleteOptions.gracePeriodSeconds must be an integer');
    out.gracePeriodSeconds = o.gracePeriodSeconds as number;
  }
  if (typeof o.propagationPolicy === 'string') {
    if (!['Orphan', 'Background', 'Foreground'].includes(o.propagationPolicy))
      throw bad('propagationPolicy', `Unsupported value: "${o.propagationPolicy}": supported values: "Foreground", "Background", "Orphan", "nil"`);
    out.propagationPolicy = o.propagationPolicy;
  }
  if (typeof o.orphanDependents === 'boolean') {
    if (out.propagationPolicy)
      throw bad('propagationPolicy', `Invalid value: "${out.propagationPolicy}": orphanDependents and deletionPropagation cannot be both set`);
    out.orphanDependents = o.orphanDependents;
  }
  if (isPlainObject(o.preconditions)) out.preconditions = o.preconditions as DeleteOptions['preconditions'];
  if (Array.isArray(o.dryRun) && o.dryRun.length) {
    if (!o.dryRun.every((v) => v === 'All')) throw bad('dryRun', `Unsupported value: ${JSON.stringify(o.dryRun)}: supported values: "All"`);
    out.dryRun = o.dryRun as string[];
  }
  return out;
}

/** canIgnorePDB: terminal, Pending and terminating pods are not protected. */
const canIgnorePDB = (pod: PodLike) => ['Succeeded', 'Failed', 'Pending'].includes(pod.status?.phase ?? '') || !!pod.metadata.deletionTimestamp;
/** shouldEnforceResourceVersion: for a live pod, delete only the version that was judged. */
const shouldEnforceRV = (pod: PodLike) => !['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') && !pod.metadata.deletionTimestamp;
const withRV = (o: DeleteOptions, rv: string | undefined): DeleteOptions => ({
  ...o,
  preconditions: { ...(o.preconditions ?? {}), ...(rv ? { resourceVersion: rv } : {}) },
});

/**
 * What an eviction of a pod that budgets may protect does: `delete` (no
 * budget; or an unhealthy pod the budget can spare, `pinToPod` then makes the
 * deletion conditional on the pod's version), `decrement` the one budget
 * first, or `refuse` with the Status of more than one budget.
 */
export type EvictionPlan =
  | { action: 'delete'; pinToPod: boolean; pdb?: PDBLike }
  | { action: 'decrement'; pdb: PDBLike }
  | { action: 'refuse'; status: Status; pdb?: undefined };

export function planEviction(pod: KubeObject, pdbs: readonly PDBLike[]): EvictionPlan {
  const budgets = pdbsForPod(pdbs, pod, false);
  if (budgets.length > 1) {
    return {
      action: 'refuse',
      status: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      },
    };
  }
  const pdb = budgets[0];
  if (!pdb) return { action: 'delete', pinToPod: false };
  const s = pdb.status ?? {};
  // An unhealthy (unready) pod does not count towards the budget: deleting it disrupts nothing the budget protects.
  if (!isPodReady(pod)) {
    if (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return { action: 'delete', pinToPod: true, pdb };
    if ((s.currentHealthy ?? 0) >= (s.desiredHealthy ?? 0) && (s.desiredHealthy ?? 0) > 0) return { action: 'delete', pinToPod: true, pdb };
  }
  return { action: 'decrement', pdb };
}

/**
 * The budget's status after one more disruption (checkAndDecrement without
 * the write): the pod recorded as awaited at `now`, the DisruptionAllowed
 * condition False when none is left. Throws the 429 or 403 that refuses it.
 */
export function decrementedStatus(pdb: PDBLike, podName: string, now = new Date()): NonNullable<PDBLike['status']> {
  const name = pdb.metadata.name!;
  const status = structuredClone(pdb.status ?? {});
  if ((status.observedGeneration ?? 0) < (pdb.metadata.generation ?? 0)) throw stillProcessing(name);
  const allowed = status.disruptionsAllowed ?? 0;
  if (allowed < 0) throw forbidden(PDB_GR, name, 'pdb disruptions allowed is negative');
  if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_POD_SIZE)
    throw forbidden(PDB_GR, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  if (allowed === 0) {
    throw failure('TooManyRequests', BUDGET_MESSAGE, {
      causes: [
        {
          reason: 'DisruptionBudget',
          message: `The disruption budget ${name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`,
        },
      ],
    });
  }
  status.disruptionsAllowed = allowed - 1;
  if (status.disruptionsAllowed === 0) updateDisruptionAllowedCondition(status, now);
  status.disruptedPods = { ...(status.disruptedPods ?? {}), [podName]: rfc3339(now) };
  return status;
}

/**
 * Evicts `podName`: answers the Status to send with 201 (Success, or the
 * multiple-budgets Failure); throws a StatusError for every refusal.
 */
export async function evictPod(stores: EvictionStores, ns: string, podName: string, body: unknown, ctx: WriteContext): Promise<Status> {
  if (!isPlainObject(body)) throw badRequest('Eviction in version "v1" cannot be handled as a Eviction: the request body must be a JSON object');
  const ev = body as Record<string, unknown> & { metadata?: { name?: string; namespace?: string } };
  if (ev.apiVersion !== undefined && ev.apiVersion !== '' && ev.apiVersion !== 'policy/v1' && ev.apiVersion !== 'policy/v1beta1')
    throw badRequest(`the API version in the data (${String(ev.apiVersion)}) does not match the expected API version (policy/v1)`);
  if (ev.kind !== undefined && ev.kind !== '' && ev.kind !== 'Eviction')
    throw badRequest(`Eviction in version "v1" cannot be handled as a ${String(ev.kind)}: the kind in the body does not match`);
  const meta = isPlainObject(ev.metadata) ? ev.metadata : {};
  if (meta.namespace && meta.namespace !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  if (meta.name !== podName) throw badRequest('name in URL does not match name in Eviction object');
  const options = deleteOptionsOf(ev);
  // propagateDryRun: the request's dryRun applies when the Eviction's deleteOptions name none (both can only say All).
  const dryRun = !!options.dryRun?.length || !!ctx.dryRun;
  if (dryRun) options.dryRun = ['All'];
  const writeCtx: WriteContext = { ...ctx, dryRun };
  await admit(stores.pods, { ...(body as KubeObject), metadata: { ...meta, name: podName, namespace: ns } }, ns, podName, writeCtx);

  // Pods no budget protects are deleted at once; a live one only at the version judged.
  const rvPinned = !!options.preconditions?.resourceVersion;
  let pod = (await stores.pods.get(ns, podName)) as PodLike;
  for (let attempt = 1; canIgnorePDB(pod); attempt++) {
    const opts = shouldEnforceRV(pod) && !rvPinned ? withRV(options, pod.metadata.resourceVersion) : options;
    try {
      await addConditionAndDelete(stores.pods, ns, podName, opts, writeCtx);
      return success();
    } catch (e) {
      if (!isConflict(e) || rvPinned || attempt >= RETRIES) throw e;
    }
    await sleep(RETRY_DELAY_MS);
    pod = (await stores.pods.get(ns, podName)) as PodLike;
  }

  const plan = planEviction(pod, stores.pdbs ? ((await stores.pdbs.list(ns, {})).items as PDBLike[]) : []);
  if (plan.action === 'refuse') return plan.status;
  if (plan.action === 'decrement') await checkAndDecrement(stores.pdbs!, plan.pdb, podName, dryRun);
  const pinToPod = plan.action === 'delete' && plan.pinToPod;
  const opts = pinToPod ? withRV(options, pod.metadata.resourceVersion) : options;
  try {
    await addConditionAndDelete(stores.pods, ns, podName, opts, writeCtx);
  } catch (e) {
    // The pod changed since it was judged unhealthy: the client should look again.
    if (isConflict(e) && pinToPod && !rvPinned) throw stillProcessing(plan.pdb!.metadata.name!);
    throw e;
  }
  return success();
}

/** Runs the admission plugins that judge evictions (NodeRestriction: a node evicts only its own pods; webhooks). */
async function admit(pods: Store, eviction: KubeObject, ns: string, podName: string, ctx: WriteContext): Promise<void> {
  const chain = pods.admission as unknown as PluginChain;
  const a: AdmissionAttributes = {
    operation: 'CREATE',
    resource: '/pods',
    namespace: ns,
    name: podName,
    subresource: 'eviction',
    dryRun: !!ctx.dryRun,
    ...(ctx.user ? { user: ctx.user } : {}),
  };
  for (const p of chain.mutating ?? []) if (EVICTION_ADMISSION.has(p.name) && p.handles(a)) await p.admit(eviction, a);
  for (const p of chain.validating ?? []) if (EVICTION_ADMISSION.has(p.name) && p.handles(a)) await p.validate(eviction, a);
}

/**
 * checkAndDecrement, retried on conflict with the budget read again: takes one
 * disruption from the budget and records the pod as awaited.
 */
async function checkAndDecrement(pdbs: Store, first: PDBLike, podName: string, dryRun: boolean): Promise<void> {
  let pdb = first;
  const ns = pdb.metadata.namespace!;
  const name = pdb.metadata.name!;
  for (let attempt = 0; attempt < RETRIES; attempt++) {
    if (attempt > 0) {
      await sleep(RETRY_DELAY_MS);
      pdb = (await pdbs.get(ns, name)) as PDBLike;
    }
    const status = decrementedStatus(pdb, podName);
    if (dryRun) return;
    try {
      await pdbs.update(ns, name, { ...pdb, status } as KubeObject, 'status', { fieldManager: 'kube-apiserver' });
      return;
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  throw timeoutError(`couldn't update PodDisruptionBudget "${name}" due to conflicts`, 10);
}

/**
 * addConditionAndDeletePod: the DisruptionTarget condition on the latest pod
 * (through the status subresource, its preconditions checked first), then the
 * deletion with the Eviction's options (pinned to the new resourceVersion when
 * they were pinned to the old one).
 */
async function addConditionAndDelete(pods: Store, ns: string, name: string, options: DeleteOptions, ctx: WriteContext): Promise<void> {
  let opts = options;
  if (!ctx.dryRun) {
    const pre = options.preconditions;
    const podGR = { group: '', resource: 'Pod' };
    const { obj } = await pods.guaranteedUpdate(
      ns,
      name,
      (cur) => {
        if (pre?.uid && pre.uid !== cur.metadata.uid)
          throw conflict(
            podGR,
            name,
            `the UID in the precondition (${pre.uid}) does not match the UID in record (${cur.metadata.uid}). The object might have been deleted and then recreated`,
          );
        if (pre?.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion)
          throw conflict(
            podGR,
            name,
            `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${cur.metadata.resourceVersion}). The object might have been modified`,
          );
        const next = structuredClone(cur) as PodLike;
        const status = (next.status ??= {});
        const conditions = (status.conditions ??= []);
        const i = conditions.findIndex((c) => c.type === 'DisruptionTarget');
        const old = i >= 0 ? conditions[i] : undefined;
        const c: PodCondition = {
          type: 'DisruptionTarget',
          status: 'True',
          lastProbeTime: null,
          lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(),
          reason: 'EvictionByEvictionAPI',
          message: 'Eviction API: evicting',
        };
        if (i >= 0) conditions[i] = c;
        else conditions.push(c);
        return next;
      },
      // An internal write of the same request: no user, so that no admission plugin judges it a second time.
      { subresource: 'status', ctx: { ...(ctx.fieldManager ? { fieldManager: ctx.fieldManager } : {}) } },
    );
    if (pre?.resourceVersion) opts = withRV(options, obj.metadata.resourceVersion);
  }
  await pods.delete(ns, name, opts, ctx);
}
