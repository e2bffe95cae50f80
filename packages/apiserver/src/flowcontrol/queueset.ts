/**
 * The queues of one priority level and their fair dispatching (k8s.io/apiserver
 * pkg/util/flowcontrol/fairqueuing/queueset): "Fair Queuing for Server
 * Requests".
 *
 * - A request of flow F is put into the queue, among the `handSize` queues
 *   shuffle sharding deals F, holding the least work; it is refused
 *   ("queue-full") when every seat is taken and that queue already holds
 *   `queueLengthLimit` requests.
 * - Virtual time R (seat-seconds) runs at min(seats wanted, concurrency limit)
 *   divided by the number of non-empty queues; each queue keeps the R at which
 *   its next request is due (`nextDispatchR`, advanced by a request's
 *   estimated work when dispatched and corrected by its actual service time at
 *   the end). Whenever a seat is free, the head of the queue with the smallest
 *   virtual finish time (`nextDispatchR` + its work) goes, queues visited round
 *   robin so ties rotate. A queue never gets credit for time it sat idle (the
 *   anti-windup bound: `nextDispatchR` >= its head's arrival R).
 * - A request that waits longer than its wait limit, or whose client goes away,
 *   is taken out of its queue ("time-out" / "cancelled").
 * - `desiredNumQueues` 0 is a Reject level: no queues, refused at once when
 *   full ("concurrency-limit"); -1 is the exempt level: never held back.
 *
 * Simplified from upstream: every request occupies one seat for its execution
 * only (no work estimation, so no wide LIST requests and no lingering seats
 * after mutations); R is a float of seat-seconds (with upstream's epoch wind-back
 * to keep its precision). JavaScript runs this single-threaded, so there are no
 * locks: every entry point first brings R up to date, then changes state.
 */
import { Dealer } from './shufflesharding.js';

/** Time and timers, injected so that tests can drive them. Times are milliseconds. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): () => void;
}

export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

export interface QueuingConfig {
  name: string;
  /** Queues wanted; 0 for a Reject level, -1 for the exempt level. */
  desiredNumQueues: number;
  queueLengthLimit: number;
  handSize: number;
}

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** What a request is, for dumps and metrics (upstream's descr1/descr2). */
export interface RequestDescr {
  flowSchema: string;
  flowDistinguisher: string;
  user: string;
  verb: string;
  path: string;
  namespace: string;
  name: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
}

/** Callbacks the metrics hang on: counts by flow schema. */
export interface QueueSetObserver {
  inQueue?(flowSchema: string, delta: number): void;
  executing?(flowSchema: string, delta: number): void;
  rejected?(flowSchema: string, reason: RejectReason): void;
  dispatched?(flowSchema: string): void;
  waited?(flowSchema: string, executed: boolean, seconds: number): void;
}

/** A request let in (possibly still waiting). */
export interface Ticket {
  /** true when it may execute; false when it was taken out of its queue (see `reason`). */
  readonly admitted: Promise<boolean>;
  readonly reason: RejectReason | undefined;
  /** The client went away while it waited. */
  cancel(): void;
  /** Its execution is over: the seat is released. Idempotent. */
  finish(): void;
}

/** Estimated service duration of a request (upstream's G): 3 ms. */
const G = 0.003;
/** R is wound back by this much once it passes 1.5 times it. */
const R_DECREMENT = 5e8;

class Req {
  queue: Queue | undefined;
  arrivalR: number;
  startMs: number | undefined;
  state: 'waiting' | 'executing' | 'done' = 'waiting';
  reason: RejectReason | undefined;
  resolve!: (ok: boolean) => void;
  readonly admitted = new Promise<boolean>((r) => {
    this.resolve = r;
  });
  cancelTimer: (() => void) | undefined;
  constructor(
    readonly descr: RequestDescr,
    readonly arrivalMs: number,
    r: number,
  ) {
    this.arrivalR = r;
  }
}

class Queue {
  waiting: Req[] = [];
  readonly executing = new Set<Req>();
  seatsInUse = 0;
  nextDispatchR = 0;
  get idle(): boolean {
    return this.waiting.length === 0 && this.executing.size === 0;
  }
}

export interface RequestDump {
  descr: RequestDescr;
  arrivalMs: number;
  startMs: number | undefined;
}

export interface QueueSetDump {
  queues: { waiting: RequestDump[]; executing: RequestDump[]; seatsInUse: number; nextDispatchR: number }[];
  queueless: RequestDump[];
  waiting: number;
  executing: number;
  dispatched: number;
  rejected: number;
  timedout: number;
  cancelled: number;
}

export class QueueSet {
  private queues: Queue[] = [];
  private dealer: Dealer | undefined;
  private r = 0;
  private lastRealMs: number;
  private robinIndex = -1;
  private enqueues = 0;
  private readonly queueless = new Set<Req>();
  private totWaiting = 0;
  private totExecuting = 0;
  private totSeatsInUse = 0;
  private counts = { dispatched: 0, rejected: 0, timedout: 0, cancelled: 0 };

  constructor(
    private cfg: QueuingConfig,
    private concurrencyLimit: number,
    private readonly clock: Clock = realClock,
    private readonly observer: QueueSetObserver = {},
  ) {
    this.lastRealMs = clock.now();
    this.setConfiguration(cfg, concurrencyLimit);
  }

  get config(): Readonly<QueuingConfig> {
    return this.cfg;
  }
  get limit(): number {
    return this.concurrencyLimit;
  }
  get isIdle(): boolean {
    return this.totWaiting === 0 && this.totExecuting === 0;
  }

  /** New queuing parameters or limit: queues are added at once, surplus ones go when empty. */
  setConfiguration(cfg: QueuingConfig, concurrencyLimit: number): void {
    this.syncTime();
    if (cfg.desiredNumQueues > 0) {
      this.dealer = new Dealer(cfg.desiredNumQueues, cfg.handSize);
      while (this.queues.length < cfg.desiredNumQueues) this.queues.push(new Queue());
    } else this.dealer = undefined;
    this.cfg = cfg;
    this.removeSurplusQueues();
    this.concurrencyLimit = concurrencyLimit;
    this.dispatchAsMuchAsPossible();
  }

  /**
   * Admits a request of the flow `hash`: a Ticket (executing at once, or queued
   * for at most `waitLimitMs`), or the reason it is refused outright.
   */
  start(descr: RequestDescr, hash: bigint, waitLimitMs: number): Ticket | { rejected: RejectReason } {
    this.syncTime();
    const now = this.clock.now();
    const req = new Req(descr, now, this.r);
    const limited = this.cfg.desiredNumQueues >= 0;
    if (this.cfg.desiredNumQueues < 1 || !this.dealer) {
      if (!this.canAccommodate(1)) return this.refuse(req, 'concurrency-limit');
      this.startExecuting(req, undefined);
      if (limited) this.observer.waited?.(descr.flowSchema, true, 0);
      return this.ticket(req);
    }
    const queue = this.queues[this.shuffleShard(hash)]!;
    if (this.totSeatsInUse >= this.concurrencyLimit && queue.waiting.length >= this.cfg.queueLengthLimit) return this.refuse(req, 'queue-full');
    if (queue.idle) queue.nextDispatchR = this.r;
    req.queue = queue;
    queue.waiting.push(req);
    this.totWaiting++;
    this.observer.inQueue?.(descr.flowSchema, 1);
    this.boundNextDispatch(queue);
    this.dispatchAsMuchAsPossible();
    if (req.state === 'waiting') req.cancelTimer = this.clock.setTimer(() => this.eject(req, 'time-out'), Math.max(0, waitLimitMs));
    return this.ticket(req);
  }

  private refuse(req: Req, reason: RejectReason): { rejected: RejectReason } {
    this.counts.rejected++;
    this.observer.rejected?.(req.descr.flowSchema, reason);
    this.observer.waited?.(req.descr.flowSchema, false, 0);
    return { rejected: reason };
  }

  private ticket(req: Req): Ticket {
    return {
      admitted: req.admitted,
      get reason() {
        return req.reason;
      },
      cancel: () => this.eject(req, 'cancelled'),
      finish: () => this.finish(req),
    };
  }

  /** Picks, among the flow's hand, the queue with the least waiting work (starting at a rotating offset). */
  private shuffleShard(hash: bigint): number {
    const hand = this.dealer!.deal(hash);
    const offset = this.enqueues++ % hand.length;
    let best = -1;
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < hand.length; i++) {
      const idx = hand[(offset + i) % hand.length]!;
      const work = this.queues[idx]!.waiting.length * G;
      if (work < least) {
        least = work;
        best = idx;
      }
    }
    return best;
  }

  private canAccommodate(seats: number): boolean {
    if (this.cfg.desiredNumQueues < 0) return true;
    // A request wider than the whole level runs alone.
    if (seats > this.concurrencyLimit) return this.totExecuting === 0;
    return this.totSeatsInUse + seats <= this.concurrencyLimit;
  }

  private startExecuting(req: Req, queue: Queue | undefined): void {
    req.state = 'executing';
    req.startMs = this.clock.now();
    this.totExecuting++;
    this.totSeatsInUse++;
    if (queue) {
      queue.executing.add(req);
      queue.seatsInUse++;
    } else this.queueless.add(req);
    this.counts.dispatched++;
    this.observer.executing?.(req.descr.flowSchema, 1);
    this.observer.dispatched?.(req.descr.flowSchema);
    req.resolve(true);
  }

  private dispatchAsMuchAsPossible(): void {
    while (this.totWaiting > 0 && this.totSeatsInUse < this.concurrencyLimit && this.dispatchOne()) {
      // each round dispatches one request
    }
  }

  /** Dispatches the head of the queue with the earliest virtual finish time, if it fits. */
  private dispatchOne(): boolean {
    let minFinish = Number.POSITIVE_INFINITY;
    let minQueue: Queue | undefined;
    let minIndex = -1;
    const n = this.queues.length;
    for (let i = 0; i < n; i++) {
      this.robinIndex = (this.robinIndex + 1) % n;
      const q = this.queues[this.robinIndex]!;
      if (!q.waiting.length) continue;
      const finish = q.nextDispatchR + G;
      if (finish < minFinish) {
        minFinish = finish;
        minQueue = q;
        minIndex = this.robinIndex;
      }
    }
    if (!minQueue || !this.canAccommodate(1)) return false;
    const req = minQueue.waiting.shift()!;
    this.robinIndex = minIndex;
    this.totWaiting--;
    req.cancelTimer?.();
    this.observer.inQueue?.(req.descr.flowSchema, -1);
    this.observer.waited?.(req.descr.flowSchema, true, (this.clock.now() - req.arrivalMs) / 1000);
    this.startExecuting(req, minQueue);
    minQueue.nextDispatchR += G;
    this.boundNextDispatch(minQueue);
    return true;
  }

  /** Takes a waiting request out of its queue. */
  private eject(req: Req, reason: 'time-out' | 'cancelled'): void {
    if (req.state !== 'waiting') return;
    this.syncTime();
    const queue = req.queue!;
    queue.waiting.splice(queue.waiting.indexOf(req), 1);
    this.boundNextDispatch(queue);
    req.state = 'done';
    req.reason = reason;
    req.cancelTimer?.();
    this.totWaiting--;
    this.counts.rejected++;
    // Upstream counts both kinds as cancelled (a context that ended), labelling the metric by cause.
    this.counts.cancelled++;
    this.observer.inQueue?.(req.descr.flowSchema, -1);
    this.observer.rejected?.(req.descr.flowSchema, reason);
    this.observer.waited?.(req.descr.flowSchema, false, (this.clock.now() - req.arrivalMs) / 1000);
    this.removeSurplusQueues();
    req.resolve(false);
  }

  private finish(req: Req): void {
    if (req.state !== 'executing') return;
    this.syncTime();
    req.state = 'done';
    this.totExecuting--;
    this.totSeatsInUse--;
    this.observer.executing?.(req.descr.flowSchema, -1);
    const queue = req.queue;
    if (queue) {
      queue.executing.delete(req);
      queue.seatsInUse--;
      // The estimate G was charged at dispatch; charge what the service really took.
      const served = (this.clock.now() - (req.startMs ?? req.arrivalMs)) / 1000;
      queue.nextDispatchR -= G - served;
      this.boundNextDispatch(queue);
      this.removeSurplusQueues();
    } else this.queueless.delete(req);
    this.dispatchAsMuchAsPossible();
  }

  /** Anti-windup: dispatch in the virtual world never precedes arrival. */
  private boundNextDispatch(queue: Queue): void {
    const head = queue.waiting[0];
    if (head && queue.nextDispatchR < head.arrivalR) queue.nextDispatchR = head.arrivalR;
  }

  /** Queues beyond the desired number go once empty (upstream removes them as they drain). */
  private removeSurplusQueues(): void {
    const want = Math.max(this.cfg.desiredNumQueues, 0);
    if (this.queues.length <= want) return;
    for (let i = this.queues.length - 1; i >= 0 && this.queues.length > want; i--) {
      if (!this.queues[i]!.idle) continue;
      this.queues.splice(i, 1);
      if (this.robinIndex >= i) this.robinIndex--;
    }
  }

  private virtualTimeRatio(): number {
    let active = 0;
    let seats = 0;
    for (const q of this.queues) {
      seats += q.seatsInUse + q.waiting.length;
      if (!q.idle) active++;
    }
    return active ? Math.min(seats, this.concurrencyLimit) / active : 0;
  }

  /** Advances R to now, as if the queues had been as they are since the last call. */
  private syncTime(): void {
    const now = this.clock.now();
    this.r += (this.virtualTimeRatio() * Math.max(0, now - this.lastRealMs)) / 1000;
    this.lastRealMs = now;
    if (this.r < R_DECREMENT * 1.5) return;
    this.r -= R_DECREMENT;
    for (const q of this.queues) {
      if (q.idle) q.nextDispatchR = 0;
      else q.nextDispatchR -= R_DECREMENT;
      for (const w of q.waiting) w.arrivalR -= R_DECREMENT;
    }
  }

  /** Virtual time now (seat-seconds). */
  currentR(): number {
    this.syncTime();
    return this.r;
  }

  dump(): QueueSetDump {
    const d = (r: Req): RequestDump => ({ descr: r.descr, arrivalMs: r.arrivalMs, startMs: r.startMs });
    return {
      queues: this.queues.map((q) => ({
        waiting: q.waiting.map(d),
        executing: [...q.executing].map(d),
        seatsInUse: q.seatsInUse,
        nextDispatchR: q.nextDispatchR,
      })),
      queueless: [...this.queueless].map(d),
      waiting: this.totWaiting,
      executing: this.totExecuting,
      ...this.counts,
    };
  }
}
