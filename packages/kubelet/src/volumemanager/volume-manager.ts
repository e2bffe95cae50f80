/**
 * The kubelet's volume manager for persistent volumes (kubernetes
 * pkg/kubelet/volumemanager: WaitForAttachAndMount, the desired and actual
 * states of the world, the reconciler and its reconstruction, GetVolumesInUse).
 * A pod's claim volumes (`persistentVolumeClaim`, generic `ephemeral`) are set
 * up before its sandbox: the claim resolved to its PV, then a CSI volume
 * attached (VolumeAttachment), staged and published, a `local` or `hostPath`
 * volume checked. Until every one is ready the pod waits (its containers
 * ContainerCreating) and its worker is run again: soon while a volume waits on
 * its attachment, after upstream's exponential back-off (500 ms doubling to
 * 2 min 2 s) after a failed operation, whose FailedMount event carries the
 * operation's error; a claim that cannot be used is reported at once as
 * "Unable to attach or mount volumes: …", and a pod still waiting after
 * 2 min 3 s as timed out.
 *
 * Teardown unpublishes the pod's volumes, and unstages a volume once no pod of
 * the node publishes it. What is published and staged is read back from disk
 * (vol_data.json), so a restarted kubelet tears down the volumes of pods
 * deleted while it was down. The volumes attached for this node (in use by a
 * pod being set up, published or staged) are reported in the Node's
 * `status.volumesInUse`, and an attachable volume is only used once the node
 * has reported it, so the attach/detach controller never detaches it under a
 * pod. Mounted CSI volumes whose claim asks for it are expanded online.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DriverRegistry } from '../csi/drivers.js';
import type { Pod } from '../kinds.js';
import { MountError, Pending, setUpCsiVolume, unpublishCsiVolume, unstageCsiVolume, type CsiApi } from './csi-volume.js';
import { expandOnNode, type ExpandApi } from './expand.js';
import { checkHostPathType, checkLocalPath, claimVolumes, readOnlyVolume, resolveClaim, type ClaimApi, type Resolved } from './resolve.js';
import { stagingPath, uniqueVolumeName, type ClaimVolume, type PersistentVolume } from './types.js';
import { allPodVolumeRecords, podDirUids, podVolumeRecords, stagedRecords, type PodVolumeRecord } from './vol-data.js';

export type VolumeApi = ClaimApi & CsiApi & ExpandApi;

export interface VolumeManagerOptions {
  nodeName: string;
  rootDir: string;
  drivers: DriverRegistry;
  api: VolumeApi;
  log: Logger;
  /** Runs a pod's worker again, after `delayMs`. */
  trigger(uid: string, delayMs: number): void;
  /** The volumes the node last reported in `status.volumesInUse`. */
  reportedInUse(): ReadonlySet<string>;
  /** Asks for the node status (and so volumesInUse) to be written soon. */
  requestStatusUpdate(): void;
  /** podAttachAndMountTimeout (2 min 3 s). */
  mountTimeoutMs?: number;
  /** How often mounted CSI volumes' claims are checked for a pending expansion. */
  resizeCheckMs?: number;
}

/** A claim volume set up for a pod. */
interface Mounted {
  path: string;
  readOnly: boolean;
  pv: PersistentVolume;
  claimNamespace: string;
  claimName: string;
  /** CSI only: */
  unique?: string;
  stagingPath?: string;
}

interface PodVolumes {
  pod: Pod;
  mounted: Map<string, Mounted>;
  /** Attachable volumes the pod wants: reported in use before they are used. */
  desired: Set<string>;
  /** Every CSI volume the pod has begun to set up. */
  uses: Set<string>;
  waitingSince?: number | undefined;
}

/** The host paths of a pod's claim volumes, and which must be mounted read-only. */
export interface ClaimPaths {
  paths: Map<string, string>;
  readOnly: Set<string>;
}

const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 122_000;
const ERROR_RETRY_MS = 2000;

const list = (xs: Iterable<string>): string => `[${[...new Set(xs)].sort().join(' ')}]`;

export class VolumeManager {
  private readonly pods = new Map<string, PodVolumes>();
  /** Volumes attached for this node as the kubelet knows them (ASW), by unique name: whether attachable. */
  private readonly devices = new Map<string, boolean>();
  private readonly backoffs = new Map<string, { delay: number; until: number }>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private resizeTimer: NodeJS.Timeout | undefined;
  private offDrivers: (() => void) | undefined;

  constructor(private readonly o: VolumeManagerOptions) {}

  /** Reconstructs what is staged and published from disk, and starts the expansion checks. */
  start(): void {
    for (const r of stagedRecords(this.o.rootDir)) this.devices.set(uniqueVolumeName(r.data.driverName, r.data.volumeHandle), true);
    for (const r of allPodVolumeRecords(this.o.rootDir)) this.devices.set(uniqueVolumeName(r.data.driverName, r.data.volumeHandle), true);
    // A driver registering lets the pods waiting on it go on at once.
    this.offDrivers = this.o.drivers.onChange((_name, registered) => {
      if (!registered) return;
      for (const k of [...this.backoffs.keys()]) this.backoffs.delete(k);
      for (const [uid, st] of this.pods) if (st.waitingSince !== undefined) this.o.trigger(uid, 0);
    });
    const period = this.o.resizeCheckMs ?? 5000;
    const tick = () => {
      void this.checkExpansions().finally(() => {
        if (this.resizeTimer) this.resizeTimer = setTimeout(tick, period).unref();
      });
    };
    this.resizeTimer = setTimeout(tick, period).unref();
  }

  stop(): void {
    if (this.resizeTimer) clearTimeout(this.resizeTimer);
    this.resizeTimer = undefined;
    this.offDrivers?.();
  }

  /** GetVolumesInUse: the attachable volumes desired by pods or attached for the node, sorted. */
  volumesInUse(): string[] {
    const out = new Set<string>();
    for (const st of this.pods.values()) for (const u of st.desired) out.add(u);
    for (const [u, attachable] of this.devices) if (attachable) out.add(u);
    return [...out].sort();
  }

  /**
   * WaitForAttachAndMount, one step: sets up what it can of the pod's claim
   * volumes; returns their paths when all are ready, else undefined (the
   * worker has been asked to run again). `started` says the pod already runs
   * (a kubelet restarted under it): what it published then is used as it is.
   */
  async waitForAttachAndMount(pod: Pod, started = false): Promise<ClaimPaths | undefined> {
    const uid = pod.metadata.uid!;
    const vols = claimVolumes(pod);
    if (!vols.length) return { paths: new Map(), readOnly: new Set() };
    const st = this.podState(pod);
    const errors = new Set<string>();
    const notProcessed: string[] = [];
    const unmounted: string[] = [];
    const unattached: string[] = [];
    let retry = Number.POSITIVE_INFINITY;
    for (const v of vols) {
      if (st.mounted.has(v.name)) continue;
      const r = await this.trySetUp(st, v, started);
      if (r === 'ready') continue;
      unmounted.push(v.name);
      if (r.error) {
        errors.add(r.error);
        notProcessed.push(v.name);
      }
      if (r.unattached) unattached.push(v.name);
      if (r.retryMs !== undefined) retry = Math.min(retry, r.retryMs);
    }
    if (!unmounted.length) {
      st.waitingSince = undefined;
      const paths = new Map<string, string>();
      const readOnly = new Set<string>();
      for (const v of vols) {
        const m = st.mounted.get(v.name)!;
        paths.set(v.name, m.path);
        if (m.readOnly) readOnly.add(v.name);
      }
      return { paths, readOnly };
    }
    const now = Date.now();
    st.waitingSince ??= now;
    const what = `unmounted volumes=${list(unmounted)}, unattached volumes=${list(unattached)}, failed to process volumes=${list(notProcessed)}`;
    if (errors.size) {
      this.o.api.event(pod, 'Warning', 'FailedMount', `Unable to attach or mount volumes: ${what}: ${[...errors].sort().join('; ')}`);
    } else if (now - st.waitingSince >= (this.o.mountTimeoutMs ?? 123_000)) {
      this.o.api.event(pod, 'Warning', 'FailedMount', `Unable to attach or mount volumes: ${what}: timed out waiting for the condition`);
      st.waitingSince = now;
    }
    this.o.trigger(uid, Math.max(100, Math.min(retry, ERROR_RETRY_MS * 5)));
    return undefined;
  }

  private podState(pod: Pod): PodVolumes {
    const uid = pod.metadata.uid!;
    let st = this.pods.get(uid);
    if (!st) this.pods.set(uid, (st = { pod, mounted: new Map(), desired: new Set(), uses: new Set() }));
    st.pod = pod;
    return st;
  }

  /** Resolves and sets up one volume, unless a failure's back-off is still running. */
  private async trySetUp(st: PodVolumes, v: ClaimVolume, started: boolean): Promise<'ready' | { error?: string; unattached?: boolean; retryMs?: number }> {
    const pod = st.pod;
    const key = `${pod.metadata.uid}/${v.name}`;
    const b = this.backoffs.get(key);
    if (b && b.until > Date.now()) return { retryMs: b.until - Date.now() };
    let resolved: Resolved;
    try {
      resolved = await resolveClaim(this.o.api, pod, v, !started);
    } catch (e) {
      return { error: (e as Error).message, retryMs: ERROR_RETRY_MS };
    }
    const claimNamespace = resolved.claim.metadata.namespace ?? pod.metadata.namespace!;
    const again = started ? this.reconstruct(pod, v, resolved.pv, claimNamespace) : undefined;
    if (again) {
      st.mounted.set(v.name, again);
      return 'ready';
    }
    try {
      st.mounted.set(v.name, await this.setUp(st, v, resolved.pv, claimNamespace));
      this.backoffs.delete(key);
      return 'ready';
    } catch (e) {
      if (e instanceof Pending) return { unattached: e.unattached, retryMs: e.retryMs };
      const delay = Math.min(b ? b.delay * 2 : BACKOFF_INITIAL_MS, BACKOFF_MAX_MS);
      this.backoffs.set(key, { delay, until: Date.now() + delay });
      const message = e instanceof MountError ? e.message : `MountVolume.SetUp failed for volume "${v.name}" : ${(e as Error).message}`;
      this.o.log.warn({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, volume: v.name, err: message }, 'volume set-up failed');
      this.o.api.event(pod, 'Warning', 'FailedMount', message);
      return { unattached: e instanceof MountError && e.unattached, retryMs: delay };
    }
  }

  /** A CSI volume a running pod published before the kubelet restarted, as it is on disk. */
  private reconstruct(pod: Pod, v: ClaimVolume, pv: PersistentVolume, claimNamespace: string): Mounted | undefined {
    const src = pv.spec.csi;
    if (!src) return undefined;
    const rec = podVolumeRecords(this.o.rootDir, pod.metadata.uid!).find((r) => r.pvName === pv.metadata.name && r.data.volumeHandle === src.volumeHandle);
    if (!rec) return undefined;
    const unique = uniqueVolumeName(src.driver, src.volumeHandle);
    if (!this.devices.has(unique)) this.devices.set(unique, true);
    const staging = stagingPath(this.o.rootDir, src.driver, src.volumeHandle);
    return {
      path: rec.targetPath,
      readOnly: readOnlyVolume(v, pv),
      pv,
      claimNamespace,
      claimName: v.claimName,
      unique,
      stagingPath: existsSync(staging) ? staging : '',
    };
  }

  private async setUp(st: PodVolumes, v: ClaimVolume, pv: PersistentVolume, claimNamespace: string): Promise<Mounted> {
    const readOnly = readOnlyVolume(v, pv);
    const base = { readOnly, pv, claimNamespace, claimName: v.claimName };
    if (pv.spec.local) {
      try {
        checkLocalPath(pv.spec.local.path);
      } catch (e) {
        throw new MountError('NewMounter initialization', pv.metadata.name, (e as Error).message);
      }
      return { ...base, path: pv.spec.local.path };
    }
    if (pv.spec.hostPath) {
      try {
        checkHostPathType(pv.spec.hostPath.path, pv.spec.hostPath.type);
      } catch (e) {
        throw new MountError('SetUp', pv.metadata.name, (e as Error).message);
      }
      return { ...base, path: pv.spec.hostPath.path };
    }
    const src = pv.spec.csi!;
    const unique = uniqueVolumeName(src.driver, src.volumeHandle);
    st.uses.add(unique);
    const ctx = { rootDir: this.o.rootDir, nodeName: this.o.nodeName, drivers: this.o.drivers, api: this.o.api };
    const r = await this.withLock(unique, () =>
      setUpCsiVolume(ctx, st.pod, pv, readOnly, {
        beforeAttach: () => {
          if (!st.desired.has(unique)) {
            st.desired.add(unique);
            this.o.requestStatusUpdate();
          }
          if (!this.o.reportedInUse().has(unique)) {
            this.o.requestStatusUpdate();
            throw new Pending(`volume ${pv.metadata.name} has not been added to the list of VolumesInUse in the node's volume status`, true, 200);
          }
        },
        attachVerified: (attachable) => {
          if (!attachable) st.desired.delete(unique);
          const was = this.devices.get(unique);
          this.devices.set(unique, attachable);
          if (was !== attachable) this.o.requestStatusUpdate();
        },
      }),
    );
    return { ...base, path: r.targetPath, unique, stagingPath: r.stagingPath };
  }

  /** Runs `fn` after every earlier operation on the same volume. */
  private withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  /**
   * Unpublishes every CSI volume of the pod and unstages those no other pod
   * publishes; forgets the pod's volumes. Throws when a volume could not be
   * torn down (its driver is gone, or failed): the caller tries again.
   */
  async tearDownPod(uid: string): Promise<void> {
    const errors: string[] = [];
    for (const rec of podVolumeRecords(this.o.rootDir, uid)) {
      const unique = uniqueVolumeName(rec.data.driverName, rec.data.volumeHandle);
      try {
        await this.withLock(unique, () => this.tearDownVolume(rec));
      } catch (e) {
        errors.push(`UnmountVolume.TearDown failed for volume "${rec.pvName}" (UniqueName: "${unique}") pod "${uid}": ${(e as Error).message}`);
      }
    }
    if (errors.length) throw new Error(errors.join('; '));
    const st = this.pods.get(uid);
    if (st) {
      this.pods.delete(uid);
      this.pruneDevices();
      if (st.desired.size) this.o.requestStatusUpdate();
    }
    for (const k of [...this.backoffs.keys()]) if (k.startsWith(`${uid}/`)) this.backoffs.delete(k);
  }

  /** Forgets attached volumes that no pod uses and nothing on disk holds (a set-up that failed before staging). */
  private pruneDevices(): void {
    const held = new Set<string>();
    for (const r of [...stagedRecords(this.o.rootDir), ...allPodVolumeRecords(this.o.rootDir)])
      held.add(uniqueVolumeName(r.data.driverName, r.data.volumeHandle));
    for (const p of this.pods.values()) for (const u of p.uses) held.add(u);
    let changed = false;
    for (const u of [...this.devices.keys()]) {
      if (held.has(u)) continue;
      changed ||= this.devices.get(u) === true;
      this.devices.delete(u);
    }
    if (changed) this.o.requestStatusUpdate();
  }

  private async tearDownVolume(rec: PodVolumeRecord): Promise<void> {
    const { driverName, volumeHandle } = rec.data;
    await unpublishCsiVolume(this.o.drivers, rec);
    this.o.log.info({ pod: rec.uid, volume: rec.pvName }, 'volume unpublished');
    const others = allPodVolumeRecords(this.o.rootDir).some((r) => r.data.driverName === driverName && r.data.volumeHandle === volumeHandle);
    if (!others) await this.unstage(driverName, volumeHandle);
  }

  private async unstage(driverName: string, handle: string): Promise<void> {
    await unstageCsiVolume({ rootDir: this.o.rootDir, drivers: this.o.drivers }, driverName, handle);
    if (this.devices.delete(uniqueVolumeName(driverName, handle))) this.o.requestStatusUpdate();
  }

  /**
   * The pods directory's leftovers: volumes of pods this kubelet no longer has
   * (`known` says which it has) are torn down and their directories removed;
   * staged volumes no pod publishes are unstaged.
   */
  async cleanupOrphans(known: (uid: string) => boolean): Promise<void> {
    for (const uid of podDirUids(this.o.rootDir)) {
      if (known(uid)) continue;
      try {
        await this.tearDownPod(uid);
        rmSync(join(this.o.rootDir, 'pods', uid), { recursive: true, force: true });
      } catch (e) {
        this.o.log.warn({ pod: uid, err: (e as Error).message }, 'orphaned pod volumes not torn down yet');
      }
    }
    for (const s of stagedRecords(this.o.rootDir)) {
      const { driverName, volumeHandle } = s.data;
      const unique = uniqueVolumeName(driverName, volumeHandle);
      const wanted = [...this.pods.values()].some((p) => p.uses.has(unique));
      if (wanted) continue;
      await this.withLock(unique, async () => {
        const published = allPodVolumeRecords(this.o.rootDir).some((r) => r.data.driverName === driverName && r.data.volumeHandle === volumeHandle);
        if (!published) await this.unstage(driverName, volumeHandle);
      }).catch((e) => this.o.log.warn({ volume: unique, err: (e as Error).message }, 'staged volume not unstaged yet'));
    }
    this.pruneDevices();
  }

  /** Expands mounted CSI volumes whose claim waits on the node. */
  async checkExpansions(): Promise<void> {
    for (const st of [...this.pods.values()]) {
      for (const m of [...st.mounted.values()]) {
        if (!m.unique || m.readOnly) continue;
        try {
          const claim = await this.o.api.claim(m.claimNamespace, m.claimName);
          if (claim.spec?.volumeName !== m.pv.metadata.name) continue;
          const pv = await this.o.api.volume(m.pv.metadata.name);
          await this.withLock(m.unique, () =>
            expandOnNode(this.o.drivers, this.o.api, {
              pod: st.pod,
              claim,
              pv,
              targetPath: m.path,
              stagingPath: m.stagingPath ?? '',
              nodeName: this.o.nodeName,
            }),
          );
        } catch (e) {
          this.o.log.warn({ claim: `${m.claimNamespace}/${m.claimName}`, err: (e as Error).message }, 'volume expansion check failed');
        }
      }
    }
  }
}
