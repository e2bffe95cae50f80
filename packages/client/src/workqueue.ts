/**
 * The controller workqueue (client-go util/workqueue semantics):
 * - fair: keys come out in the order they were added;
 * - stingy: a key is never handed to two workers at once; a key added while it
 *   is being processed is marked dirty and handed out again after `done`;
 * - deduplicating: a key waiting in the queue is queued once;
 * - rate-limited retries: per-item exponential backoff (5 ms doubling to 1000 s),
 *   reset by `forget`; `addAfter` for delayed adds.
 */

export class WorkQueue<K = string> {
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly failures = new Map<K, number>();
  private readonly waiting = new Map<K, NodeJS.Timeout>();
  private readonly getters: ((k: K | undefined) => void)[] = [];
  private shuttingDown = false;

  constructor(
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 1_000_000,
  ) {}

  add(key: K): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    const g = this.getters.shift();
    if (g) {
      this.dirty.delete(key);
      this.processing.add(key);
      g(key);
    } else this.queue.push(key);
  }

  /** Adds `key` after `ms`; while a delayed add of the same key is pending, later ones are dropped. */
  addAfter(key: K, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    if (this.waiting.has(key)) return;
    const t = setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, t);
  }

  /** Re-adds `key` after its exponential backoff and counts the failure. */
  addRateLimited(key: K): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs));
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key, or undefined once shut down. */
  get(): Promise<K | undefined> {
    if (this.queue.length) {
      const k = this.queue.shift()!;
      this.dirty.delete(k);
      this.processing.add(k);
      return Promise.resolve(k);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: K): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) {
      this.dirty.delete(key);
      this.add(key);
    }
  }

  get length(): number {
    return this.queue.length;
  }

  shutdown(): void {
    this.shuttingDown = true;
    for (const t of this.waiting.values()) clearTimeout(t);
    this.waiting.clear();
    for (const g of this.getters.splice(0)) g(undefined);
  }
}

/**
 * Runs `workers` loops that take keys and call `reconcile`. A thrown error requeues
 * the key with backoff; a result with `requeueAfterMs` requeues it after that; a
 * success forgets its failures.
 */
export async function runWorkers<K>(
  queue: WorkQueue<K>,
  workers: number,
  reconcile: (key: K) => Promise<{ requeueAfterMs?: number } | void>,
  onError?: (key: K, err: unknown) => void,
): Promise<void> {
  const loop = async () => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        const res = await reconcile(key);
        queue.forget(key);
        if (res && res.requeueAfterMs !== undefined) queue.addAfter(key, res.requeueAfterMs);
      } catch (e) {
        onError?.(key, e);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, loop));
}
