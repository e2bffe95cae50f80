/**
 * The rate limiter sample-controller gives its workqueue:
 * client-go util/workqueue/default_rate_limiters.go DefaultControllerRateLimiter,
 * the larger of
 *  - a per-item exponential backoff (5 ms, doubling, at most 1000 s), reset by
 *    `forget` after a successful sync, and
 *  - an overall token bucket (10 per second, burst 100), so that many failing
 *    keys at once cannot make the operator hammer the apiserver.
 * kubeling's WorkQueue has the first built in (`addRateLimited`); the operator
 * asks this limiter for the delay and hands it to `addAfter` so both apply.
 */
export class ControllerRateLimiter<K> {
  private readonly failures = new Map<K, number>();
  private tokens: number;
  private last: number;

  constructor(
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 1_000_000,
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** The delay before `key` may be retried; counts one more failure for it. */
  when(key: K): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const item = Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
    return Math.max(item, this.reserve());
  }

  /**
   * Takes a token, going into debt when there is none (golang.org/x/time/rate
   * Limiter.Reserve): the debt, in time, is how long this retry must wait.
   */
  private reserve(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}
