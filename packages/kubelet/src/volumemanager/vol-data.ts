/**
 * What the kubelet keeps on disk about CSI volumes, so that it can tear them
 * down after a restart (kubernetes pkg/volume/csi saveVolumeData /
 * loadVolumeData, removeMountDir, and the reconstruction of
 * pkg/kubelet/volumemanager/reconciler): each pod's published volume has a
 * `vol_data.json` beside its `mount` directory (specVolID, volumeHandle,
 * driverName, nodeName, attachmentID, volumeLifecycleMode), and each staged
 * volume one beside its `globalmount` (volumeHandle, driverName). Removing a
 * mount point never follows it: a symlink is unlinked, a directory only
 * removed when empty, so a volume's data is never deleted by the kubelet.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CSI_PLUGIN_NAME, podCsiDir, VOL_DATA_FILE } from './types.js';

export interface PodVolData {
  specVolID: string;
  volumeHandle: string;
  driverName: string;
  nodeName: string;
  attachmentID: string;
  volumeLifecycleMode: string;
}

export interface StagingVolData {
  volumeHandle: string;
  driverName: string;
}

/** A published volume found under a pod's directory. */
export interface PodVolumeRecord {
  uid: string;
  pvName: string;
  targetPath: string;
  data: PodVolData;
}

/** A staged volume found under the plugins directory. */
export interface StagedRecord {
  dir: string;
  stagingPath: string;
  data: StagingVolData;
}

export function saveVolData(dir: string, data: object): void {
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeFileSync(join(dir, VOL_DATA_FILE), JSON.stringify(data));
}

export function loadVolData<T>(dir: string): T | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, VOL_DATA_FILE), 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function ls(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The pods with a directory under the root directory. */
export const podDirUids = (rootDir: string): string[] => ls(join(rootDir, 'pods'));

/** The CSI volumes published for one pod. */
export function podVolumeRecords(rootDir: string, uid: string): PodVolumeRecord[] {
  const base = podCsiDir(rootDir, uid);
  const out: PodVolumeRecord[] = [];
  for (const pvName of ls(base)) {
    const data = loadVolData<PodVolData>(join(base, pvName));
    if (data?.volumeHandle && data.driverName) out.push({ uid, pvName, targetPath: join(base, pvName, 'mount'), data });
  }
  return out;
}

/** Every pod's published CSI volumes. */
export const allPodVolumeRecords = (rootDir: string): PodVolumeRecord[] => podDirUids(rootDir).flatMap((uid) => podVolumeRecords(rootDir, uid));

/** Every staged CSI volume. */
export function stagedRecords(rootDir: string): StagedRecord[] {
  const base = join(rootDir, 'plugins', CSI_PLUGIN_NAME);
  const out: StagedRecord[] = [];
  // A staged volume sits at <driver>/<volume hash>; walk a few levels down until a vol_data.json.
  const walk = (dir: string, depth: number) => {
    if (depth > 4) return;
    for (const name of ls(dir)) {
      const p = join(dir, name);
      const data = loadVolData<StagingVolData>(p);
      if (data?.volumeHandle && data.driverName) out.push({ dir: p, stagingPath: join(p, 'globalmount'), data });
      else if (isDir(p)) walk(p, depth + 1);
    }
  };
  walk(base, 0);
  return out;
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Removes a mount point without following it: unlinks a link or file, removes a directory only when empty. */
export function removeMountPoint(path: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (st.isDirectory()) rmdirSync(path);
  else unlinkSync(path);
}

/** removeMountDir: the mount point, then the vol_data.json and the directory holding both. */
export function removeMountDir(mountPath: string): void {
  removeMountPoint(mountPath);
  const dir = dirname(mountPath);
  const data = join(dir, VOL_DATA_FILE);
  if (existsSync(data)) unlinkSync(data);
  try {
    rmdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}
