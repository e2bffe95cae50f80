/**
 * From a pod's volume to the PersistentVolume behind it (kubernetes
 * pkg/kubelet/volumemanager/populator createVolumeSpec, getPVCExtractPV,
 * getPVSpec; component-helpers/storage/ephemeral): the volumes the containers
 * use that are `persistentVolumeClaim`s or generic `ephemeral` volumes (their
 * claim is `<pod>-<volume>`, and must be owned by the pod); the claim must be
 * Bound to a volume, and not being deleted when the pod first mounts it; the
 * PV must point back at the claim. Errors are upstream's texts, which the pod
 * reports in its FailedMount event. Also the path rules of `local` and
 * `hostPath` volumes (pkg/volume/local, pkg/volume/hostpath checkType).
 */
import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { podVolumes, type Pod } from '../kinds.js';
import type { ClaimVolume, PersistentVolume, PersistentVolumeClaim } from './types.js';

export interface ClaimApi {
  claim(namespace: string, name: string): Promise<PersistentVolumeClaim>;
  volume(name: string): Promise<PersistentVolume>;
}

/** The volumes any container (init, app or ephemeral) mounts or maps (GetPodVolumeNames). */
function usedVolumeNames(pod: Pod): Set<string> {
  const names = new Set<string>();
  const spec = pod.spec as Pod['spec'] & { ephemeralContainers?: { volumeMounts?: { name: string }[]; volumeDevices?: { name: string }[] }[] };
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])]) {
    for (const m of c.volumeMounts ?? []) names.add(m.name);
    for (const d of (c as { volumeDevices?: { name: string }[] }).volumeDevices ?? []) names.add(d.name);
  }
  return names;
}

/** The pod's claim volumes that a container uses. */
export function claimVolumes(pod: Pod): ClaimVolume[] {
  const used = usedVolumeNames(pod);
  const out: ClaimVolume[] = [];
  for (const v of podVolumes(pod) as (ReturnType<typeof podVolumes>[number] & {
    persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
    ephemeral?: { volumeClaimTemplate?: unknown };
  })[]) {
    if (!used.has(v.name)) continue;
    if (v.persistentVolumeClaim)
      out.push({ name: v.name, claimName: v.persistentVolumeClaim.claimName, ephemeral: false, readOnly: !!v.persistentVolumeClaim.readOnly });
    else if (v.ephemeral) out.push({ name: v.name, claimName: `${pod.metadata.name}-${v.name}`, ephemeral: true, readOnly: false });
  }
  return out;
}

/** Whether the pod mounts (rather than maps as a block device) the volume. */
function mounted(pod: Pod, name: string): boolean {
  return [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])].some((c) => (c.volumeMounts ?? []).some((m) => m.name === name));
}

export interface Resolved {
  claim: PersistentVolumeClaim;
  pv: PersistentVolume;
}

/**
 * The claim and volume behind a pod's volume; throws the reason it cannot be
 * used yet. `firstMount` says whether the pod has not mounted it before: only
 * then does a claim being deleted stop it (a running pod keeps its volume).
 */
export async function resolveClaim(api: ClaimApi, pod: Pod, v: ClaimVolume, firstMount: boolean): Promise<Resolved> {
  const ns = pod.metadata.namespace!;
  const wrap = (msg: string) => new Error(`error processing PVC ${ns}/${v.claimName}: ${msg}`);
  let claim: PersistentVolumeClaim;
  try {
    claim = await api.claim(ns, v.claimName);
  } catch (e) {
    throw wrap(`failed to fetch PVC from API server: ${(e as Error).message}`);
  }
  if (firstMount && claim.metadata.deletionTimestamp) throw wrap('PVC is being deleted');
  if (claim.status?.phase !== 'Bound') throw wrap('PVC is not bound');
  const pvName = claim.spec?.volumeName;
  if (!pvName) throw wrap('PVC has empty pvc.Spec.VolumeName');
  if (v.ephemeral) {
    const owned = (claim.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.metadata.uid);
    if (claim.metadata.namespace !== ns || !owned) {
      throw new Error(`PVC ${claim.metadata.namespace}/${claim.metadata.name} was not created for pod ${ns}/${pod.metadata.name} (pod is not owner)`);
    }
  }
  let pv: PersistentVolume;
  try {
    pv = await api.volume(pvName);
  } catch (e) {
    throw wrap(`failed to fetch PV ${pvName} from API server: ${(e as Error).message}`);
  }
  const ref = pv.spec.claimRef;
  if (!ref) throw wrap(`found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`);
  if (ref.uid !== claim.metadata.uid) {
    throw wrap(`found PV object ${pvName} but its pv.Spec.ClaimRef.UID ${ref.uid ?? ''} does not point to claim.UID ${claim.metadata.uid ?? ''}`);
  }
  const mode = pv.spec.volumeMode ?? 'Filesystem';
  if (mounted(pod, v.name) && mode !== 'Filesystem') throw new Error(`volume ${v.name} has volumeMode ${mode}, but is specified in volumeMounts`);
  if (!pv.spec.csi && !pv.spec.local && !pv.spec.hostPath) {
    throw new Error(`failed to get Plugin from volumeSpec for volume "${pvName}" err=no volume plugin matched`);
  }
  return { claim, pv };
}

/**
 * Whether the container mounts of the volume are read-only: the pod's claim
 * says so, the CSI source does, or the volume is only ReadOnlyMany.
 */
export function readOnlyVolume(v: ClaimVolume, pv: PersistentVolume): boolean {
  const modes = pv.spec.accessModes ?? [];
  return v.readOnly || !!pv.spec.csi?.readOnly || (modes.length > 0 && modes.every((m) => m === 'ReadOnlyMany'));
}

/** A local volume's path must exist (the local plugin's NewMounter). */
export function checkLocalPath(path: string): void {
  try {
    statSync(path);
  } catch {
    throw new Error(`path "${path}" does not exist`);
  }
}

/** hostPath checkType: the path is made or checked as its type says. */
export function checkHostPathType(path: string, type: string | undefined): void {
  const st = () => {
    try {
      return statSync(path);
    } catch {
      return undefined;
    }
  };
  switch (type ?? '') {
    case '':
      return;
    case 'DirectoryOrCreate':
    case 'Directory':
      if (type === 'DirectoryOrCreate' && !st()) {
        mkdirSync(path, { recursive: true, mode: 0o755 });
        return;
      }
      if (!st()?.isDirectory()) throw new Error(`hostPath type check failed: ${path} is not a directory`);
      return;
    case 'FileOrCreate':
    case 'File':
      if (type === 'FileOrCreate' && !st()) {
        closeSync(openSync(path, 'a', 0o644));
        return;
      }
      if (!st()?.isFile()) throw new Error(`hostPath type check failed: ${path} is not a file`);
      return;
    case 'Socket':
      if (!st()?.isSocket()) throw new Error(`hostPath type check failed: ${path} is not a socket file`);
      return;
    case 'CharDevice':
      if (!st()?.isCharacterDevice()) throw new Error(`hostPath type check failed: ${path} is not a character device`);
      return;
    case 'BlockDevice':
      if (!st()?.isBlockDevice()) throw new Error(`hostPath type check failed: ${path} is not a block device`);
      return;
    default:
      throw new Error(`${type} is an invalid volume type`);
  }
}
