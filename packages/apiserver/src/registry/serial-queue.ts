/**
 * The work queue of the controllers that run inside the apiserver (the CRD
 * controller, the admission-policy type checker): keys marked dirty are
 * reconciled one at a time, a key marked again while waiting is reconciled
 * once, and `later` marks a key again after a delay.
 */
export class SerialQueue {
  private readonly dirty = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly reconcile: (key: string) => Promise<void>,
    /** What to do when a reconcile throws (log, `later`, or nothing). */
    private readonly onError: (key: string, err: unknown) => void,
    private readonly retryMs = 1000,
  ) {}

  add(key: string): void {
    this.dirty.add(key);
    void this.drain();
  }

  later(key: string): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.add(key);
    }, this.retryMs);
    t.unref();
    this.timers.add(t);
  }

  /** Stops taking work; resolves once the reconcile in flight, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.running;
  }

  private drain(): Promise<void> {
    this.running ??= (async () => {
      try {
        while (this.dirty.size && !this.stopped) {
          const key = this.dirty.values().next().value as string;
          this.dirty.delete(key);
          try {
            await this.reconcile(key);
          } catch (err) {
            this.onError(key, err);
          }
        }
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}
