/** The shape of controllers that work on a clock rather than a queue (node lifecycle, pod GC). */

/** Runs `tick` now and then every `periodMs` after it ends, until `signal` aborts; a failed tick is reported and the next one runs. */
export async function runEvery(signal: AbortSignal, periodMs: number, tick: () => Promise<void>, onError: (e: unknown) => void): Promise<void> {
  while (!signal.aborted) {
    try {
      await tick();
    } catch (e) {
      onError(e);
    }
    // The abort listener goes with the wait it ends (one per tick would pile up on the long-lived signal).
    await new Promise<void>((r) => {
      const onAbort = () => {
        clearTimeout(t);
        r();
      };
      const t = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        r();
      }, periodMs);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
