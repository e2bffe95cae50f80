/**
 * The volume binder's writes (upstream binder.go AssumePodVolumes,
 * BindPodVolumes, checkBindings): Reserve assumes the chosen PVs pre-bound to
 * their claims (claimRef, bound-by-controller) and the claims to provision
 * annotated with the selected node; PreBind writes those objects and waits —
 * on informer events and once a second, up to the bind timeout — until the PV
 * controller and the provisioner have fully bound every claim. A claim whose
 * selected-node annotation is taken away (the provisioner gave up), a PV whose
 * claimRef is reset or a pod deleted meanwhile fails the wait.
 */
import type { Pod } from '../../framework/types.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BOUND_BY_CONTROLLER,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimClass,
  claimFullyBound,
  volumeNodeAffinityMatches,
  type Handle,
  type PersistentVolume,
  type PersistentVolumeClaim,
} from '../../framework/storage.js';
import { compareVersions } from './assume-cache.js';
import { volumeBoundToClaim, type Caches, type PodVolumes } from './binder.js';

const claimKey = (pvc: PersistentVolumeClaim) => `${pvc.metadata.namespace}/${pvc.metadata.name}`;
const pvPath = (pv: PersistentVolume) => `/api/v1/persistentvolumes/${encodeURIComponent(pv.metadata.name ?? '')}`;
const pvcPath = (pvc: PersistentVolumeClaim) =>
  `/api/v1/namespaces/${encodeURIComponent(pvc.metadata.namespace ?? '')}/persistentvolumeclaims/${encodeURIComponent(pvc.metadata.name ?? '')}`;

/** GetBindVolumeToClaim: the PV with a claimRef to the claim (and bound-by-controller unless the user pre-bound it). */
export function bindVolumeToClaim(pv: PersistentVolume, pvc: PersistentVolumeClaim): { pv: PersistentVolume; dirty: boolean } {
  const preBound = volumeBoundToClaim(pv, pvc);
  const out = structuredClone(pv);
  out.spec ??= {};
  let dirty = false;
  const ref = pv.spec?.claimRef;
  if (!ref || ref.name !== pvc.metadata.name || ref.namespace !== pvc.metadata.namespace || ref.uid !== pvc.metadata.uid) {
    out.spec.claimRef = {
      kind: 'PersistentVolumeClaim',
      namespace: pvc.metadata.namespace ?? '',
      name: pvc.metadata.name ?? '',
      uid: pvc.metadata.uid ?? '',
      apiVersion: 'v1',
      resourceVersion: pvc.metadata.resourceVersion ?? '',
    };
    dirty = true;
  }
  if (!preBound && !Object.hasOwn(out.metadata.annotations ?? {}, ANN_BOUND_BY_CONTROLLER)) {
    out.metadata.annotations = { ...(out.metadata.annotations ?? {}), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
    dirty = true;
  }
  return { pv: out, dirty };
}

/** The claim as PreBind writes it: the selected node, and the provisioner annotations when the PV controller has not set them yet. */
function annotateForProvisioning(pvc: PersistentVolumeClaim, node: string, h: Handle): PersistentVolumeClaim {
  const out = structuredClone(pvc);
  const ann: Record<string, string> = { ...(out.metadata.annotations ?? {}), [ANN_SELECTED_NODE]: node };
  const provisioner = h.storageClasses.get(claimClass(pvc))?.provisioner;
  if (provisioner && !ann[ANN_STORAGE_PROVISIONER]) {
    ann[ANN_STORAGE_PROVISIONER] = provisioner;
    ann[ANN_BETA_STORAGE_PROVISIONER] ??= provisioner;
  }
  out.metadata.annotations = ann;
  return out;
}

/** AssumePodVolumes: overlays the decisions in the caches; returns what PreBind must write. Throws (having reverted) when an object changed. */
export function assumePodVolumes(c: Caches, node: string, v: PodVolumes): PodVolumes {
  const out: PodVolumes = { staticBindings: [], provisions: [] };
  try {
    for (const b of v.staticBindings) {
      const { pv, dirty } = bindVolumeToClaim(b.pv, b.pvc);
      if (dirty) c.pvs.assume(pv);
      out.staticBindings.push({ pv, pvc: b.pvc });
    }
    for (const pvc of v.provisions) {
      const annotated = annotateForProvisioning(pvc, node, c.handle());
      c.pvcs.assume(annotated);
      out.provisions.push(annotated);
    }
  } catch (e) {
    revertAssumed(c, out);
    throw e;
  }
  return out;
}

export function revertAssumed(c: Caches, v: PodVolumes): void {
  for (const b of v.staticBindings) c.pvs.restore(b.pv.metadata.name ?? '');
  for (const pvc of v.provisions) c.pvcs.restore(claimKey(pvc));
}

/** bindAPIUpdate: writes the pre-bound PVs, then the annotated claims; what was not written is reverted on failure. */
async function bindAPIUpdate(c: Caches, v: PodVolumes): Promise<void> {
  const api = c.handle().api;
  let bindings = 0;
  let provisions = 0;
  try {
    for (const b of v.staticBindings) {
      b.pv = await api.put<PersistentVolume>(pvPath(b.pv), b.pv);
      bindings++;
    }
    for (let i = 0; i < v.provisions.length; i++) {
      v.provisions[i] = await api.put<PersistentVolumeClaim>(pvcPath(v.provisions[i]!), v.provisions[i]);
      provisions++;
    }
  } catch (e) {
    revertAssumed(c, { staticBindings: v.staticBindings.slice(bindings), provisions: v.provisions.slice(provisions) });
    throw e;
  }
}

const affinityError = (pv: PersistentVolume, node: string) =>
  new Error(`pv "${pv.metadata.name}" node affinity doesn't match node "${node}": no matching NodeSelectorTerms`);

/** checkBindings: true once every claim is fully bound (read from the informers); throws when binding must be retried. */
export function checkBindings(c: Caches, pod: Pod, node: string, v: PodVolumes): boolean {
  const h = c.handle();
  const n = h.node(node);
  if (!n) throw new Error(`failed to get node "${node}": node "${node}" not found`);
  const labels = n.metadata.labels ?? {};
  if (!h.pod(`${pod.metadata.namespace}/${pod.metadata.name}`)) throw new Error(`pod does not exist any more: pods "${pod.metadata.name}" not found`);
  for (const b of v.staticBindings) {
    const pv = c.pvs.getAPI(b.pv.metadata.name ?? '');
    if (!pv) throw new Error(`failed to check binding: persistentvolume "${b.pv.metadata.name}" not found`);
    const pvc = c.pvcs.getAPI(claimKey(b.pvc));
    if (!pvc) throw new Error(`failed to check binding: persistentvolumeclaim "${b.pvc.metadata.name}" not found`);
    if (compareVersions(b.pv, pv) > 0) return false;
    if (!volumeNodeAffinityMatches(pv, labels)) throw affinityError(pv, node);
    if (!pv.spec?.claimRef?.uid) throw new Error(`ClaimRef got reset for pv "${pv.metadata.name}"`);
    if (!claimFullyBound(pvc)) return false;
  }
  for (const claim of v.provisions) {
    const pvc = c.pvcs.getAPI(claimKey(claim));
    if (!pvc) throw new Error(`failed to check provisioning pvc: persistentvolumeclaim "${claim.metadata.name}" not found`);
    if (compareVersions(claim, pvc) > 0) return false;
    if (!pvc.metadata.annotations) throw new Error(`selectedNode annotation reset for PVC "${pvc.metadata.name}"`);
    if (pvc.metadata.annotations[ANN_SELECTED_NODE] !== node) throw new Error(`provisioning failed for PVC "${pvc.metadata.name}"`);
    const pvName = pvc.spec?.volumeName;
    if (pvName) {
      const pv = c.pvs.getAPI(pvName);
      if (!pv) return false;
      if (!volumeNodeAffinityMatches(pv, labels)) throw affinityError(pv, node);
    }
    if (!claimFullyBound(pvc)) return false;
  }
  return true;
}

/** Re-checks on every claim or volume event and every second until `check` is true or throws, the timeout passes or `signal` aborts. */
function waitUntil(h: Handle, check: () => boolean, timeoutMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearInterval(poll);
      clearTimeout(deadline);
      off();
      signal.removeEventListener('abort', aborted);
      if (err) reject(err);
      else resolve();
    };
    const tick = () => {
      if (done) return;
      try {
        if (check()) finish();
      } catch (e) {
        finish(e as Error);
      }
    };
    const aborted = () => finish(new Error('the scheduler is stopping'));
    const poll = setInterval(tick, 1000);
    const deadline = setTimeout(() => finish(new Error('timed out waiting for the condition')), timeoutMs);
    const off = h.onVolumeEvent(tick);
    signal.addEventListener('abort', aborted);
    if (signal.aborted) aborted();
    else tick();
  });
}

/** BindPodVolumes: the API writes, then the wait; errors read as upstream's (`binding volumes: ...`). */
export async function bindPodVolumes(c: Caches, pod: Pod, node: string, v: PodVolumes, timeoutMs: number, signal: AbortSignal): Promise<void> {
  await bindAPIUpdate(c, v);
  try {
    await waitUntil(c.handle(), () => checkBindings(c, pod, node, v), timeoutMs, signal);
  } catch (e) {
    throw new Error(`binding volumes: ${(e as Error).message}`);
  }
}
