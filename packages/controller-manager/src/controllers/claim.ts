/**
 * Adopting and releasing pods (ControllerRefManager): a controller takes a
 * matching orphan by adding itself as the controller owner reference, and lets
 * go of an owned pod that stops matching by removing its reference; both patch
 * with the pod's UID as a precondition, and a pod gone or changed meanwhile is
 * left to the next sync.
 */
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { KubeObject } from '@kubeling/api';
import type { RestClient } from '@kubeling/client';
import type { Pod } from './kinds.js';

const podPath = (pod: Pod) => `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`;

/** Makes `owner` the pod's controller; false when the pod is gone or changed. */
export async function adoptPod(client: RestClient, pod: Pod, owner: KubeObject, kind: { apiVersion: string; kind: string }): Promise<boolean> {
  const ref = { ...kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
  try {
    await client.patch(podPath(pod), { metadata: { ownerReferences: [ref], uid: pod.metadata.uid } }, 'application/strategic-merge-patch+json');
    return true;
  } catch (e) {
    if (isNotFound(e) || isConflict(e)) return false;
    throw e;
  }
}

/** Removes the owner's reference from the pod. */
export async function releasePod(client: RestClient, pod: Pod, ownerUid: string): Promise<void> {
  const patch = { metadata: { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: pod.metadata.uid } };
  try {
    await client.patch(podPath(pod), patch, 'application/strategic-merge-patch+json');
  } catch (e) {
    if (!isNotFound(e) && !isConflict(e)) throw e;
  }
}
