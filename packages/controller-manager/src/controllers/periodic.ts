/** The shape of controllers that work on a clock rather than a queue (node lifecycle, pod GC). */

/** Runs `tick` now and then every `periodMs` after it ends, until `signal` aborts; a failed tick is reported and the next one runs. */
export async function runEvery(signal: AbortSignal, periodMs: number, tick: () => Promise<void>, onError: (e: unknown) => void): Promise<void> {
  while (!signal.aborted) {
    try {
      await tick();
    } catch (e) {
      onError(e);
    }
    await new Promise<void>((r) => {
      const t = setTimeout(r, periodMs);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          r();
        },
        { once: true },
      );
    });
  }
}
