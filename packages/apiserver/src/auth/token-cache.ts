/**
 * A cache of token authentication results (k8s.io/apiserver
 * pkg/authentication/token/cache cached_token_authenticator.go): answers are
 * kept for `successTtlMs` when the token authenticated, `failureTtlMs` when
 * it did not; errors (the authenticator could not decide) are never kept.
 * Concurrent lookups of one token share a single computation.
 *
 * Keys are an HMAC of the audiences and the token under a key drawn at
 * start, so the cache never holds a token, and its keys are useless outside
 * this process. The cache is bounded: past `max` entries the oldest goes.
 */
import { createHmac, randomBytes } from 'node:crypto';

interface Entry<T> {
  value: T | undefined;
  until: number;
}

export interface TokenCacheOptions {
  successTtlMs: number;
  failureTtlMs: number;
  /** Most entries kept (upstream: 32 stripes of 128). */
  max?: number;
  now?: () => number;
}

export class TokenCache<T> {
  private readonly secret = randomBytes(32);
  private readonly entries = new Map<string, Entry<T>>();
  private readonly inflight = new Map<string, Promise<T | undefined>>();
  private readonly now: () => number;
  private readonly max: number;

  constructor(private readonly o: TokenCacheOptions) {
    this.now = o.now ?? Date.now;
    this.max = o.max ?? 4096;
  }

  get size(): number {
    return this.entries.size;
  }

  private key(token: string, audiences: readonly string[]): string {
    return createHmac('sha256', this.secret).update(JSON.stringify(audiences)).update('|').update(token).digest('base64url');
  }

  /**
   * The cached answer for `token`, else `compute()`'s, kept for the TTL its
   * outcome calls for. A rejection of `compute` reaches every caller waiting
   * on it and is not kept.
   */
  async get(token: string, audiences: readonly string[], compute: () => Promise<T | undefined>): Promise<T | undefined> {
    const key = this.key(token, audiences);
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.until > this.now()) return hit.value;
      this.entries.delete(key);
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const p = compute().then((value) => {
      const ttl = value === undefined ? this.o.failureTtlMs : this.o.successTtlMs;
      if (ttl > 0) {
        if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
        this.entries.set(key, { value, until: this.now() + ttl });
      }
      return value;
    });
    this.inflight.set(key, p);
    try {
      return await p;
    } finally {
      this.inflight.delete(key);
    }
  }
}
