/**
 * Slow-start batches (controller_utils.slowStartBatch): run `fn` `count` times in
 * batches of 1, 2, 4, ... concurrent calls; stop after the first batch with a
 * failure. Returns how many calls succeeded and how many were never made.
 */
export async function slowStartBatch(
  count: number,
  initial: number,
  fn: () => Promise<void>,
): Promise<{ succeeded: number; skipped: number; batches: number[] }> {
  let remaining = count;
  let succeeded = 0;
  const batches: number[] = [];
  for (let size = Math.min(remaining, initial); size > 0; size = Math.min(2 * size, remaining)) {
    batches.push(size);
    const results = await Promise.allSettled(Array.from({ length: size }, fn));
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    succeeded += ok;
    remaining -= size;
    if (ok < size) break;
  }
  return { succeeded, skipped: remaining, batches };
}
