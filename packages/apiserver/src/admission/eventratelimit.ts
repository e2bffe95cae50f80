/**
 * EventRateLimit (kubernetes plugin/pkg/admission/eventratelimit): Event
 * creates and updates draw a token from one bucket per limit of the
 * `eventratelimit.admission.k8s.io/v1alpha1` Configuration — one bucket for
 * the whole server (`Server`), or one per namespace, user, or event source and
 * involved object, those kept in an LRU cache of `cacheSize` (4096) buckets
 * (an evicted key starts again with a full bucket). A request any bucket
 * refuses is 429 TooManyRequests, `Too many requests: ...` around each
 * refusing limit's own `Too many requests: limit reached on type <T> for key
 * <K>`, as upstream words it. Dry runs draw nothing.
 *
 * Buckets are client-go's token bucket (golang.org/x/time/rate): `burst`
 * tokens at first, refilled at `qps` per second up to `burst`.
 */
import type { KubeObject } from '@kubeling/api';
import { failure, field, type FieldError } from '@kubeling/apimachinery';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';

export const EVENT_RATE_LIMIT_API_VERSION = 'eventratelimit.admission.k8s.io/v1alpha1';

const LIMIT_TYPES = ['Server', 'Namespace', 'User', 'SourceAndObject'] as const;
type LimitType = (typeof LIMIT_TYPES)[number];

export interface Limit {
  type: LimitType;
  qps: number;
  burst: number;
  cacheSize?: number;
}

const DEFAULT_CACHE_SIZE = 4096;

/** A token bucket on an injected clock (ms). */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token if one is there (TryAccept). */
  tryAccept(): boolean {
    const t = this.now();
    if (t > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
      this.last = t;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** A least-recently-used map of at most `size` entries; `get` creates what is missing. */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(
    private readonly size: number,
    private readonly create: () => V,
  ) {}

  get(key: string): V {
    let v = this.entries.get(key);
    if (v !== undefined) {
      // Map keeps insertion order: re-inserting makes the key the most recent.
      this.entries.delete(key);
    } else {
      v = this.create();
      if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, v);
    return v;
  }
}

interface EventLike {
  source?: { component?: string; host?: string };
  involvedObject?: { kind?: string; namespace?: string; name?: string; uid?: string; apiVersion?: string };
}

const keyOf: Record<LimitType, (obj: KubeObject, a: AdmissionAttributes) => string> = {
  Server: () => '',
  Namespace: (_obj, a) => a.namespace ?? '',
  User: (_obj, a) => a.user?.name ?? '',
  SourceAndObject: (obj) => {
    const e = obj as unknown as EventLike;
    const o = e.involvedObject ?? {};
    return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion].map((s) => s ?? '').join('');
  },
};

class LimitEnforcer {
  private readonly buckets: LruCache<TokenBucket>;
  constructor(
    private readonly limit: Limit,
    now: () => number,
  ) {
    // The server's single bucket is an LRU of one under the constant key "".
    const size = limit.type === 'Server' ? 1 : limit.cacheSize || DEFAULT_CACHE_SIZE;
    this.buckets = new LruCache(size, () => new TokenBucket(limit.qps, limit.burst, now));
  }

  /** The refusal's message, or undefined when a token was there. */
  accept(obj: KubeObject, a: AdmissionAttributes): string | undefined {
    const key = keyOf[this.limit.type](obj, a);
    if (this.buckets.get(key).tryAccept()) return undefined;
    return `Too many requests: limit reached on type ${this.limit.type} for key ${key}`;
  }
}

/**
 * The plugin's configuration, checked as upstream's LoadConfiguration and
 * ValidateConfiguration; throws with the field errors (at start).
 */
export function parseEventRateLimitConfig(cfg: Record<string, unknown> | undefined): Limit[] {
  if (!cfg) throw new Error('limits: Invalid value: null: must not be empty');
  if (cfg.apiVersion !== EVENT_RATE_LIMIT_API_VERSION || cfg.kind !== 'Configuration')
    throw new Error(`unexpected configuration: want apiVersion ${EVENT_RATE_LIMIT_API_VERSION} and kind Configuration`);
  const limits = cfg.limits;
  const errs: FieldError[] = [];
  if (!Array.isArray(limits) || !limits.length) errs.push(field.invalid('limits', limits ?? null, 'must not be empty'));
  const out: Limit[] = [];
  (Array.isArray(limits) ? limits : []).forEach((raw: unknown, i) => {
    const l = (raw ?? {}) as Record<string, unknown>;
    const p = `limits[${i}]`;
    const num = (k: string) => (typeof l[k] === 'number' && Number.isInteger(l[k]) ? (l[k] as number) : 0);
    if (!LIMIT_TYPES.includes(l.type as LimitType)) errs.push(field.notSupported(`${p}.type`, l.type ?? '', [...LIMIT_TYPES]));
    if (num('burst') <= 0) errs.push(field.invalid(`${p}.burst`, l.burst ?? 0, 'must be positive'));
    if (num('qps') <= 0) errs.push(field.invalid(`${p}.qps`, l.qps ?? 0, 'must be positive'));
    if (l.type !== 'Server' && num('cacheSize') < 0) errs.push(field.invalid(`${p}.cacheSize`, l.cacheSize, 'must not be negative'));
    out.push({ type: l.type as LimitType, qps: num('qps'), burst: num('burst'), cacheSize: num('cacheSize') });
  });
  if (errs.length) throw new Error(field.aggregateMessage(errs));
  return out;
}

export class EventRateLimit implements ValidatingAdmission {
  readonly name = 'EventRateLimit';
  private readonly enforcers: LimitEnforcer[];

  constructor(limits: readonly Limit[], now: () => number = Date.now) {
    this.enforcers = limits.map((l) => new LimitEnforcer(l, now));
  }

  handles(a: AdmissionAttributes): boolean {
    // Core Events only (upstream compares the kind's group), and never a dry run: it writes nothing.
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.resource === '/events' && !a.subresource && !a.dryRun;
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    // Every limit draws, even once one has refused, as upstream's loop does.
    const refused = this.enforcers.map((e) => e.accept(obj, a)).filter((m): m is string => m !== undefined);
    if (refused.length) throw failure('TooManyRequests', `Too many requests: ${field.aggregateStrings(refused)}`);
  }
}
