/**
 * The scheduling queue (kubernetes pkg/scheduler/backend/queue): activeQ, a heap
 * ordered by priority then age; backoffQ, pods waiting out an exponential
 * backoff after a failed attempt; and the unschedulable pods, parked until a
 * cluster event could make them fit (a node added or changed, a pod removed, a
 * pod added for topology spreading, a claim, volume, class or CSI object added
 * or changed) or until they have waited
 * `maxUnschedulableMs`. A move request that lands while a pod is being
 * scheduled sends that pod to backoff rather than parking it, so the event is
 * not lost.
 */
import { PodInfo, podKey, type Pod } from './framework/types.js';

export interface QueuedPod {
  info: PodInfo;
  /** When the pod was first added (ordering among equal priorities). */
  timestamp: number;
  attempts: number;
  /** When it was last sent to the unschedulable set or backoff. */
  lastFailure: number;
  /** Plugins that rejected it last time (which events can help it). */
  rejectedBy: Set<string>;
  /** When the pod entered the queue for its first attempt (end-to-end latency). */
  initialAttempt: number;
}

export type ClusterEvent =
  | 'NodeAdd'
  | 'NodeUpdate'
  | 'AssignedPodAdd'
  | 'AssignedPodDelete'
  | 'AssignedPodUpdate'
  | 'PvcAdd'
  | 'PvcUpdate'
  | 'PvAdd'
  | 'PvUpdate'
  | 'StorageClassAdd'
  | 'StorageClassUpdate'
  | 'CSINodeAdd'
  | 'CSINodeUpdate'
  | 'CSIDriverUpdate'
  | 'CSIStorageCapacityAdd'
  | 'CSIStorageCapacityUpdate';

const among =
  (...plugins: string[]) =>
  (p: string) =>
    plugins.includes(p);

/**
 * Which plugins' rejections an event can undo: a coarse version of upstream's
 * EventsToRegister and queueing hints.
 */
const HELPS: Record<ClusterEvent, ((plugin: string) => boolean) | undefined> = {
  NodeAdd: () => true,
  NodeUpdate: () => true,
  AssignedPodDelete: among(
    'NodeResourcesFit',
    'NodePorts',
    'PodTopologySpread',
    'InterPodAffinity',
    'DefaultPreemption',
    'VolumeRestrictions',
    'NodeVolumeLimits',
  ),
  AssignedPodAdd: among('PodTopologySpread', 'InterPodAffinity'),
  AssignedPodUpdate: among('NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity'),
  PvcAdd: among('VolumeRestrictions', 'NodeVolumeLimits', 'VolumeBinding', 'VolumeZone'),
  PvcUpdate: among('VolumeBinding', 'VolumeZone'),
  PvAdd: among('VolumeBinding', 'VolumeZone'),
  PvUpdate: among('VolumeBinding', 'VolumeZone'),
  StorageClassAdd: among('VolumeBinding', 'VolumeZone'),
  StorageClassUpdate: among('VolumeBinding'),
  CSINodeAdd: among('VolumeBinding', 'NodeVolumeLimits'),
  CSINodeUpdate: among('VolumeBinding', 'NodeVolumeLimits'),
  CSIDriverUpdate: among('VolumeBinding'),
  CSIStorageCapacityAdd: among('VolumeBinding'),
  CSIStorageCapacityUpdate: among('VolumeBinding'),
};

class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}
  get size(): number {
    return this.items.length;
  }
  peek(): T | undefined {
    return this.items[0];
  }
  push(x: T): void {
    const a = this.items;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): T | undefined {
    const a = this.items;
    if (!a.length) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
  remove(pred: (x: T) => boolean): T | undefined {
    const i = this.items.findIndex(pred);
    if (i < 0) return undefined;
    const x = this.items[i]!;
    const rest = this.items.splice(i, 1);
    void rest;
    // Re-heapify: cheap enough for removals, which are rare.
    const all = this.items.splice(0);
    for (const y of all) this.push(y);
    return x;
  }
}

export interface QueueOptions {
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  maxUnschedulableMs?: number;
  now?: () => number;
}

export class SchedulingQueue {
  private readonly active = new Heap<QueuedPod>(
    (a, b) => a.info.priority > b.info.priority || (a.info.priority === b.info.priority && a.timestamp < b.timestamp),
  );
  private readonly backoff = new Heap<QueuedPod>((a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
  private readonly unschedulable = new Map<string, QueuedPod>();
  /** Where each pod is: 'active' | 'backoff' | 'unschedulable' | 'inflight'. */
  private readonly where = new Map<string, string>();
  private readonly waiters: ((q: QueuedPod | undefined) => void)[] = [];
  private closed = false;
  private cycle = 0;
  private moveRequestCycle = -1;
  private timer: NodeJS.Timeout | undefined;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxUnschedulableMs: number;
  private readonly now: () => number;

  constructor(o: QueueOptions = {}) {
    this.initialBackoffMs = o.initialBackoffMs ?? 1000;
    this.maxBackoffMs = o.maxBackoffMs ?? 10_000;
    this.maxUnschedulableMs = o.maxUnschedulableMs ?? 5 * 60_000;
    this.now = o.now ?? Date.now;
  }

  /** Starts the periodic flushes (backoff every second, long-parked pods every 30 s). */
  run(): void {
    let ticks = 0;
    this.timer = setInterval(() => {
      this.flushBackoff();
      if (++ticks % 30 === 0) this.flushUnschedulable();
    }, 1000);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  backoffExpiry(q: QueuedPod): number {
    const d = Math.min(this.initialBackoffMs * 2 ** Math.max(0, q.attempts - 1), this.maxBackoffMs);
    return q.lastFailure + d;
  }

  get pending(): { active: number; backoff: number; unschedulable: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size };
  }

  private pushActive(q: QueuedPod): void {
    this.where.set(q.info.key, 'active');
    const w = this.waiters.shift();
    if (w) {
      this.where.set(q.info.key, 'inflight');
      this.cycle++;
      w(q);
    } else this.active.push(q);
  }

  /** A new pending pod. */
  add(pod: Pod): void {
    const key = podKey(pod);
    if (this.where.has(key)) return this.update(pod);
    const now = this.now();
    this.pushActive({ info: new PodInfo(pod), timestamp: now, attempts: 0, lastFailure: 0, rejectedBy: new Set(), initialAttempt: now });
  }

  /** A pending pod changed: refresh it, and give a parked one another try. */
  update(pod: Pod): void {
    const key = podKey(pod);
    const at = this.where.get(key);
    if (!at) return this.add(pod);
    const info = new PodInfo(pod);
    if (at === 'active') {
      const q = this.active.remove((x) => x.info.key === key);
      if (q) this.active.push({ ...q, info });
    } else if (at === 'backoff') {
      const q = this.backoff.remove((x) => x.info.key === key);
      if (q) this.backoff.push({ ...q, info });
    } else if (at === 'unschedulable') {
      const q = this.unschedulable.get(key)!;
      this.unschedulable.delete(key);
      this.requeue({ ...q, info });
    }
    // In flight: the cycle finishing will re-read the pod from the informer.
  }

  delete(pod: Pod): void {
    const key = podKey(pod);
    const at = this.where.get(key);
    this.where.delete(key);
    if (at === 'active') this.active.remove((x) => x.info.key === key);
    else if (at === 'backoff') this.backoff.remove((x) => x.info.key === key);
    else if (at === 'unschedulable') this.unschedulable.delete(key);
  }

  has(key: string): boolean {
    return this.where.has(key);
  }

  /** The next pod to schedule; waits when none is active. Undefined once closed. */
  pop(): Promise<QueuedPod | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const q = this.active.pop();
    if (q) {
      this.where.set(q.info.key, 'inflight');
      this.cycle++;
      return Promise.resolve(q);
    }
    return new Promise((r) => this.waiters.push(r));
  }

  get schedulingCycle(): number {
    return this.cycle;
  }

  /** The attempt failed: park the pod, or back it off if something moved since `cycle`. */
  addUnschedulable(q: QueuedPod, cycle: number, rejectedBy: Iterable<string>): void {
    const key = q.info.key;
    if (this.where.get(key) !== 'inflight') return; // deleted meanwhile
    const next: QueuedPod = { ...q, attempts: q.attempts + 1, lastFailure: this.now(), rejectedBy: new Set(rejectedBy) };
    if (this.moveRequestCycle >= cycle) {
      this.where.set(key, 'backoff');
      this.backoff.push(next);
    } else {
      this.where.set(key, 'unschedulable');
      this.unschedulable.set(key, next);
    }
  }

  /** An error (not a fit failure): retry after backoff. */
  addBackoff(q: QueuedPod): void {
    const key = q.info.key;
    if (this.where.get(key) !== 'inflight') return;
    this.where.set(key, 'backoff');
    this.backoff.push({ ...q, attempts: q.attempts + 1, lastFailure: this.now() });
  }

  /** The pod was bound (or is no longer ours): forget it. */
  done(key: string): void {
    if (this.where.get(key) === 'inflight') this.where.delete(key);
  }

  private requeue(q: QueuedPod): void {
    if (this.backoffExpiry(q) > this.now()) {
      this.where.set(q.info.key, 'backoff');
      this.backoff.push(q);
    } else this.pushActive(q);
  }

  /** A cluster event: parked pods it could help go to backoff or active. */
  moveAllToActiveOrBackoff(event: ClusterEvent): void {
    const helps = HELPS[event];
    for (const [key, q] of this.unschedulable) {
      if (helps && (q.rejectedBy.size === 0 || [...q.rejectedBy].some(helps))) {
        this.unschedulable.delete(key);
        this.requeue(q);
      }
    }
    this.moveRequestCycle = this.cycle;
  }

  flushBackoff(): void {
    const now = this.now();
    for (let q = this.backoff.peek(); q && this.backoffExpiry(q) <= now; q = this.backoff.peek()) {
      this.backoff.pop();
      this.pushActive(q);
    }
  }

  flushUnschedulable(): void {
    const now = this.now();
    for (const [key, q] of this.unschedulable) {
      if (now - q.lastFailure > this.maxUnschedulableMs) {
        this.unschedulable.delete(key);
        this.requeue(q);
      }
    }
  }
}
