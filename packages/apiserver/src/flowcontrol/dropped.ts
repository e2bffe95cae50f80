/**
 * The Retry-After of rejected requests, per priority level (k8s.io/apiserver
 * pkg/util/flowcontrol dropped_requests_tracker.go). It starts at 1 s and
 * moves like TCP's window, judged at each new second with a drop: doubled (up
 * to 32 s, at most once per current value's worth of seconds) when the level
 * dropped at least 3 × retryAfter requests in the last retryAfter seconds,
 * lowered by one when it dropped fewer than retryAfter.
 */

const MAX_RETRY_AFTER = 32;

class LevelStats {
  private history: { second: number; count: number }[] = [];
  private currentSecond = 0;
  private currentCount = 0;
  retryAfter = 1;
  private lastIncrease = 0;

  record(second: number): void {
    if (second === this.currentSecond) {
      this.currentCount++;
      return;
    }
    this.pushHistory(this.currentSecond, this.currentCount);
    this.currentSecond = second;
    this.currentCount = 1;
    this.adjust(second);
  }

  private pushHistory(second: number, count: number): void {
    this.history.push({ second, count });
    const keep = Math.min(2 * this.retryAfter, MAX_RETRY_AFTER);
    let start = 0;
    while (start < this.history.length && second - this.history[start]!.second > keep) start++;
    if (start) this.history = this.history.slice(start);
  }

  /** Judges the seconds [now - retryAfter, now). */
  private adjust(now: number): void {
    let dropped = 0;
    for (let i = this.history.length - 1; i >= 0; i--) {
      const h = this.history[i]!;
      if (now - h.second > this.retryAfter) break;
      if (h.second < now) dropped += h.count;
    }
    if (now - this.lastIncrease >= this.retryAfter && dropped >= 3 * this.retryAfter) {
      this.retryAfter = Math.min(this.retryAfter * 2, MAX_RETRY_AFTER);
      this.lastIncrease = now;
    } else if (dropped < this.retryAfter && this.retryAfter > 1) this.retryAfter--;
  }
}

export class DroppedRequests {
  private readonly levels = new Map<string, LevelStats>();

  /** `now` in milliseconds. */
  constructor(private readonly now: () => number) {}

  record(priorityLevel: string): void {
    let s = this.levels.get(priorityLevel);
    if (!s) {
      s = new LevelStats();
      this.levels.set(priorityLevel, s);
    }
    s.record(Math.floor(this.now() / 1000));
  }

  /** Seconds a rejected client of this level is told to wait. */
  retryAfter(priorityLevel: string): number {
    return this.levels.get(priorityLevel)?.retryAfter ?? 1;
  }
}
