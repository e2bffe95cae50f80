/**
 * Watching one object until a condition holds: a GET, then a watch from its
 * resourceVersion (by `metadata.name`), re-opened when the server ends it.
 * Used by `rollout status` and `wait`.
 */
import type { KubeObject } from '@kubeling/api';
import { type Ctx, pathOf, type Target } from '../ctx.js';

/**
 * Calls `check` with the object (undefined once it is gone) until it returns
 * true; resolves true then, or false when `timeoutMs` passes or the signal ends it.
 */
export async function observe(ctx: Ctx, t: Target, name: string, timeoutMs: number, check: (o: KubeObject | undefined) => boolean): Promise<boolean> {
  const stop = new AbortController();
  const outer = ctx.io.signal;
  const onAbort = () => stop.abort();
  outer?.addEventListener('abort', onAbort, { once: true });
  const timer = timeoutMs > 0 && Number.isFinite(timeoutMs) ? setTimeout(() => stop.abort(), timeoutMs) : undefined;
  try {
    const collection = pathOf({ ...t, name: undefined });
    while (!stop.signal.aborted) {
      const live = await ctx.getOrNull(pathOf(t, name));
      if (check(live)) return true;
      let done = false;
      await ctx.client.watch<KubeObject>(
        collection,
        { fieldSelector: `metadata.name=${name}`, ...(live ? { resourceVersion: live.metadata.resourceVersion } : {}), allowWatchBookmarks: 'true' },
        (ev) => {
          if (done || ev.type === 'BOOKMARK' || ev.type === 'ERROR') return;
          if (check(ev.type === 'DELETED' ? undefined : ev.object)) {
            done = true;
            stop.abort();
          }
        },
        stop.signal,
      );
      if (done) return true;
      if (!stop.signal.aborted) await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  } finally {
    if (timer) clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}
