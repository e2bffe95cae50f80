/**
 * etcd history compaction, as kube-apiserver's compactor does it: every
 * interval, compact to the revision seen at the previous run (so watchers
 * have one interval to catch up), and tell the watch caches.
 */
import type { Cacher } from './storage/cacher.js';
import type { EtcdStorage } from './storage/etcd.js';

export function startCompaction(
  storage: EtcdStorage,
  cachers: () => Iterable<Cacher>,
  intervalMs: number,
  onError: (err: unknown) => void,
): { compactOnce(): Promise<void>; stop(): void } {
  let lastSeenRevision = 0;
  const compactOnce = async () => {
    const current = await storage.currentRevision();
    if (lastSeenRevision > 0) {
      await storage.compact(lastSeenRevision);
      for (const c of cachers()) c.compacted(lastSeenRevision);
    }
    lastSeenRevision = current;
  };
  let timer: NodeJS.Timeout | undefined;
  if (intervalMs > 0) {
    timer = setInterval(() => compactOnce().catch(onError), intervalMs);
    timer.unref();
  }
  return { compactOnce, stop: () => timer && clearInterval(timer) };
}
