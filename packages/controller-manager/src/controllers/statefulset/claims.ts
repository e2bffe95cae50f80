/**
 * A StatefulSet's claims (pkg/controller/statefulset stateful_set_utils.go):
 * each pod `<set>-<n>` has a claim `<template>-<set>-<n>` per volumeClaimTemplate
 * — a copy of the template with the set's selector labels added — that
 * outlives the pod. Who owns a claim follows
 * `persistentVolumeClaimRetentionPolicy` (both Retain unless set):
 *
 * - whenDeleted: Delete → the set is the claim's controller, so the garbage
 *   collector removes the claim with the set;
 * - whenScaled: Delete → the claim of a condemned pod (an ordinal beyond the
 *   replicas) is owned by that pod instead, and goes with it.
 *
 * Retain leaves no reference of the set or pod on the claim. A claim that
 * names an older incarnation of the set or pod (a stale reference) is left
 * alone, and under whenScaled: Delete blocks the pod's creation until the
 * garbage collector has removed it. A claim another controller controls keeps
 * that controller, without the set's or pod's references.
 */
import type { OwnerReference } from '@kubeling/api';
import type { PersistentVolumeClaim as ClaimToCreate, StatefulSet } from '../kinds.js';
import type { PersistentVolumeClaim } from '../storage.js';

export interface RetentionPolicy {
  whenDeleted: string;
  whenScaled: string;
}

/** The pod a claim belongs to: its name and, once it exists, its UID. */
export interface PodRef {
  name: string;
  uid?: string | undefined;
}

const SET = { apiVersion: 'apps/v1', kind: 'StatefulSet' };
const POD = { apiVersion: 'v1', kind: 'Pod' };

/** getPersistentVolumeClaimRetentionPolicy: Retain for what is not set. */
export function retentionPolicy(set: StatefulSet): RetentionPolicy {
  const p = set.spec?.persistentVolumeClaimRetentionPolicy;
  return { whenDeleted: p?.whenDeleted || 'Retain', whenScaled: p?.whenScaled || 'Retain' };
}

/** podInOrdinalRange: the ordinal is one of the set's replicas. */
export function inOrdinalRange(set: StatefulSet, ordinal: number): boolean {
  const start = set.spec?.ordinals?.start ?? 0;
  return ordinal >= start && ordinal < start + (set.spec?.replicas ?? 1);
}

/** getPersistentVolumeClaims: the claims of pod `podName`, from the templates, by template name. */
export function claimsForPod(set: StatefulSet, podName: string): Map<string, ClaimToCreate> {
  const out = new Map<string, ClaimToCreate>();
  const selectorLabels = set.spec?.selector?.matchLabels ?? {};
  for (const t of set.spec?.volumeClaimTemplates ?? []) {
    const tpl = structuredClone(t);
    const template = tpl.metadata?.name ?? '';
    out.set(template, {
      ...tpl,
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        ...(tpl.metadata ?? {}),
        name: `${template}-${podName}`,
        namespace: set.metadata.namespace!,
        labels: { ...(tpl.metadata?.labels ?? {}), ...selectorLabels },
      },
    });
  }
  return out;
}

const matches = (ref: OwnerReference, gvk: { apiVersion: string; kind: string }, name: string) =>
  ref.apiVersion === gvk.apiVersion && ref.kind === gvk.kind && ref.name === name;
const hasOwner = (c: PersistentVolumeClaim, uid: string | undefined) => (c.metadata.ownerReferences ?? []).some((r) => r.uid === (uid ?? ''));

/** hasStaleOwnerRef: a reference to the object's name whose UID is not the object's. */
function hasStaleRef(c: PersistentVolumeClaim, gvk: { apiVersion: string; kind: string }, name: string, uid: string | undefined): boolean {
  const ref = (c.metadata.ownerReferences ?? []).find((r) => matches(r, gvk, name));
  return !!ref && ref.uid !== (uid ?? '');
}

/** hasUnexpectedController: under a Delete policy, a stale reference or another controller. */
function hasUnexpectedController(c: PersistentVolumeClaim, set: StatefulSet, pod: PodRef): boolean {
  const p = retentionPolicy(set);
  if (p.whenScaled === 'Retain' && p.whenDeleted === 'Retain') return false;
  for (const ref of c.metadata.ownerReferences ?? []) {
    if (matches(ref, SET, set.metadata.name!)) {
      if (ref.uid !== set.metadata.uid) return true;
      continue;
    }
    if (matches(ref, POD, pod.name)) {
      if (ref.uid !== (pod.uid ?? '')) return true;
      continue;
    }
    if (ref.controller) return true;
  }
  return false;
}

/** The references the policy asks for: which of set and pod should own the claim. */
function wantedOwners(set: StatefulSet, ordinal: number): { set: boolean; pod: boolean } {
  const p = retentionPolicy(set);
  const scaledDown = !inOrdinalRange(set, ordinal);
  if (p.whenScaled === 'Delete') return { set: p.whenDeleted === 'Delete' && !scaledDown, pod: scaledDown };
  return { set: p.whenDeleted === 'Delete', pod: false };
}

/** isClaimOwnerUpToDate: true when the references match the policy, or the claim is not ours to touch. */
export function claimOwnerUpToDate(c: PersistentVolumeClaim, set: StatefulSet, pod: PodRef, ordinal: number): boolean {
  if (hasStaleRef(c, SET, set.metadata.name!, set.metadata.uid) || hasStaleRef(c, POD, pod.name, pod.uid)) return true;
  if (hasUnexpectedController(c, set, pod)) return !hasOwner(c, set.metadata.uid) && !hasOwner(c, pod.uid);
  const ours = (c.metadata.ownerReferences ?? []).filter((r) => r.uid === set.metadata.uid || (pod.uid && r.uid === pod.uid));
  if (ours.some((r) => !r.controller)) return false;
  const want = wantedOwners(set, ordinal);
  return want.set === hasOwner(c, set.metadata.uid) && want.pod === (!!pod.uid && hasOwner(c, pod.uid));
}

/** updateClaimOwnerRefForSetAndPod: the claim's owner references with the set's and pod's as the policy says. */
export function claimOwnerRefs(c: { metadata?: { ownerReferences?: OwnerReference[] } }, set: StatefulSet, pod: PodRef, ordinal: number): OwnerReference[] {
  const claim = c as PersistentVolumeClaim;
  const unexpected = hasUnexpectedController(claim, set, pod);
  const refs = (c.metadata?.ownerReferences ?? []).filter((r) => !matches(r, SET, set.metadata.name!) && !matches(r, POD, pod.name));
  if (unexpected) return refs;
  const want = wantedOwners(set, ordinal);
  if (want.pod && pod.uid) refs.push({ ...POD, name: pod.name, uid: pod.uid, controller: true, blockOwnerDeletion: true });
  if (want.set) refs.push({ ...SET, name: set.metadata.name!, uid: set.metadata.uid!, controller: true, blockOwnerDeletion: true });
  return refs;
}

/**
 * PodClaimIsStale: under whenScaled: Delete, a claim of the pod that still
 * names an earlier pod of that name (or any pod, before this one exists) is
 * waiting for the garbage collector, and the pod must not be made on it.
 */
export function podClaimIsStale(set: StatefulSet, pod: PodRef, existing: ReadonlyMap<string, PersistentVolumeClaim>): boolean {
  if (retentionPolicy(set).whenScaled === 'Retain') return false;
  for (const claim of claimsForPod(set, pod.name).values()) {
    const cur = existing.get(claim.metadata!.name!);
    if (cur && hasStaleRef(cur, POD, pod.name, pod.uid)) return true;
  }
  return false;
}

/** createPersistentVolumeClaims refuses a claim being deleted ("pvc ... is being deleted"): the pod waits for it to go. */
export function podClaimIsDeleting(set: StatefulSet, podName: string, existing: ReadonlyMap<string, PersistentVolumeClaim>): boolean {
  return [...claimsForPod(set, podName).values()].some((c) => !!existing.get(c.metadata!.name!)?.metadata.deletionTimestamp);
}
