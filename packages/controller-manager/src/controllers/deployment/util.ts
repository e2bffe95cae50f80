/**
 * Deployment helpers: the pod-template-hash (FNV-1a of the template, plus the
 * collision count, in Kubernetes' safe alphabet) and maxSurge / maxUnavailable
 * resolved against the replica count (surge rounds up, unavailable down; both 0
 * means unavailable 1), as upstream's deploymentutil does.
 */

const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** JSON with every object's keys sorted, as Go's json.Marshal writes a map. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function podTemplateHash(template: unknown, collisionCount = 0): string {
  let h = 0x811c9dc5;
  const text = canonical(template) + (collisionCount ? String(collisionCount) : '');
  for (const b of Buffer.from(text, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  let out = '';
  let n = h;
  do {
    out = SAFE[n % SAFE.length] + out;
    n = Math.floor(n / SAFE.length);
  } while (n > 0);
  return out;
}

function resolve(v: unknown, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(String(v));
  if (!m) return Number(v) || 0;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

export function resolveFenceposts(
  strategy: { type?: string; rollingUpdate?: { maxSurge?: unknown; maxUnavailable?: unknown } },
  replicas: number,
): { maxSurge: number; maxUnavailable: number } {
  if (strategy.type === 'Recreate') return { maxSurge: 0, maxUnavailable: replicas };
  const ru = strategy.rollingUpdate ?? {};
  const maxSurge = resolve(ru.maxSurge ?? '25%', replicas, true);
  let maxUnavailable = resolve(ru.maxUnavailable ?? '25%', replicas, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable: Math.min(maxUnavailable, replicas) };
}
