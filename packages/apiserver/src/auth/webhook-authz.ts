/**
 * The Webhook authorizer (k8s.io/apiserver plugin/pkg/authorizer/webhook):
 * each request is described to a remote service as an authorization.k8s.io
 * SubjectAccessReview (v1, or v1beta1 whose groups field is `group`), whose
 * `status` answers: `allowed`, `denied` (final in the union), neither (no
 * opinion), with a `reason`.
 *
 * - matchConditions (CEL over the review's spec) are evaluated first: one
 *   false skips the webhook (no opinion); an error follows the failure policy.
 * - Answers are cached by the whole spec for `authorizedTTL` /
 *   `unauthorizedTTL` (8192 entries, least recently used first out), unless
 *   the requester-controlled attributes are 10000 characters or more.
 * - A call that fails (transport error, non-2xx, an answer that is no
 *   review) is retried with upstream's backoff when transient (connection
 *   reset, 429, 500, 504), then decided by the failure policy: NoOpinion (the
 *   legacy flags' choice) or Deny. The failure is the decision's `error`.
 */
import type { WebhookClient } from './webhook-client.js';
import { type CompiledCondition, evalMatchConditions, type SarSpec } from './cel-authz.js';
import type { Attributes, Authorizer, Decision, RuleSet, UserInfo } from './types.js';

export type FailurePolicy = 'NoOpinion' | 'Deny';

/** wait.Backoff (DefaultAuthWebhookRetryBackoff: 500ms, x1.5, 20% jitter, 5 tries). */
export interface Backoff {
  durationMs: number;
  factor: number;
  jitter: number;
  steps: number;
}
export const DEFAULT_BACKOFF: Backoff = { durationMs: 500, factor: 1.5, jitter: 0.2, steps: 5 };

export interface WebhookAuthorizerOptions {
  /** The authorizer's name in the AuthorizationConfiguration (`default` for the legacy flags). */
  name: string;
  client: WebhookClient;
  /** subjectAccessReviewVersion. */
  version: 'v1' | 'v1beta1';
  /** How long answers are cached; 0: not cached. */
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  failurePolicy: FailurePolicy;
  matchConditions?: readonly CompiledCondition[];
  backoff?: Backoff;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface ReviewStatus {
  allowed?: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

const CACHE_SIZE = 8192;
const MAX_CONTROLLED_ATTR_CACHE_SIZE = 10000;
const RETRIED_STATUS = new Set([429, 500, 504]);

/** The review's spec (upstream fills it from the attributes; Go's omitempty drops empty fields). */
export function specOf(a: Attributes): SarSpec {
  const u = a.user;
  const spec: SarSpec = {};
  if (a.isResourceRequest) {
    const ra: Record<string, string> = {};
    const put = (k: string, v: string | undefined) => {
      if (v) ra[k] = v;
    };
    put('namespace', a.namespace);
    put('verb', a.verb);
    put('group', a.apiGroup);
    put('version', a.apiVersion);
    put('resource', a.resource);
    put('subresource', a.subresource);
    put('name', a.name);
    spec.resourceAttributes = ra;
  } else {
    spec.nonResourceAttributes = { ...(a.path ? { path: a.path } : {}), ...(a.verb ? { verb: a.verb } : {}) };
  }
  if (u.name) spec.user = u.name;
  if (u.groups.length) spec.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) spec.extra = u.extra;
  if (u.uid) spec.uid = u.uid;
  return spec;
}

/** The review as sent: v1beta1 names the groups `group`. */
function reviewBody(spec: SarSpec, version: 'v1' | 'v1beta1') {
  const { groups, ...rest } = spec;
  const wire =
    version === 'v1beta1'
      ? {
          ...(rest.resourceAttributes ? { resourceAttributes: rest.resourceAttributes } : {}),
          ...(rest.nonResourceAttributes ? { nonResourceAttributes: rest.nonResourceAttributes } : {}),
          ...(rest.user ? { user: rest.user } : {}),
          ...(groups ? { group: groups } : {}),
          ...(rest.extra ? { extra: rest.extra } : {}),
          ...(rest.uid ? { uid: rest.uid } : {}),
        }
      : spec;
  return {
    kind: 'SubjectAccessReview',
    apiVersion: `authorization.k8s.io/${version}`,
    metadata: { creationTimestamp: null },
    spec: wire,
    status: { allowed: false },
  };
}

/** shouldCache: huge requester-controlled attributes could flood the cache. */
function shouldCache(a: Attributes): boolean {
  const size = [a.namespace, a.verb, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.name, a.path].reduce((n, s) => n + (s?.length ?? 0), 0);
  return size < MAX_CONTROLLED_ATTR_CACHE_SIZE;
}

class CallError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new Map<string, { status: ReviewStatus; expires: number }>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly o: WebhookAuthorizerOptions) {
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  private onError(error: string): Decision {
    return this.o.failurePolicy === 'Deny' ? { allowed: false, reason: '', denied: true, error } : { allowed: false, reason: '', error };
  }

  private cached(key: string): ReviewStatus | undefined {
    const e = this.cache.get(key);
    if (!e) return undefined;
    this.cache.delete(key);
    if (e.expires <= this.now()) return undefined;
    this.cache.set(key, e);
    return e.status;
  }

  private remember(key: string, status: ReviewStatus, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.cache.delete(key);
    this.cache.set(key, { status, expires: this.now() + ttlMs });
    while (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
  }

  /** One POST: the review's status, or a CallError saying whether trying again may help. */
  private async call(body: unknown): Promise<ReviewStatus> {
    let reply: Awaited<ReturnType<WebhookClient['post']>>;
    try {
      reply = await this.o.client.post<{ status?: ReviewStatus }>(body);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new CallError(`Post "${this.o.client.url}": ${err.message}`, err.code === 'ECONNRESET');
    }
    if (reply.status < 200 || reply.status > 299)
      throw new CallError(
        `the server responded with the status code ${reply.status} but did not return more information (post subjectaccessreviews.authorization.k8s.io)`,
        RETRIED_STATUS.has(reply.status),
      );
    const b = reply.body as { status?: ReviewStatus } | undefined;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new CallError('the webhook answered with no SubjectAccessReview', false);
    const st = b.status;
    return typeof st === 'object' && st !== null && !Array.isArray(st) ? st : {};
  }

  /** WithExponentialBackoff over DefaultShouldRetry. */
  private async callWithRetry(body: unknown): Promise<ReviewStatus> {
    const b = this.o.backoff ?? DEFAULT_BACKOFF;
    let delay = b.durationMs;
    for (let step = 1; ; step++) {
      try {
        return await this.call(body);
      } catch (e) {
        if (!(e instanceof CallError) || !e.retry || step >= b.steps) throw e;
      }
      await this.sleep(delay + (b.jitter > 0 ? Math.random() * b.jitter * delay : 0));
      delay *= b.factor;
    }
  }

  async authorize(a: Attributes): Promise<Decision> {
    const spec = specOf(a);
    if (this.o.matchConditions?.length) {
      const m = evalMatchConditions(this.o.matchConditions, spec);
      if (m.error) return this.onError(m.error);
      if (!m.matches) return { allowed: false, reason: '' };
    }
    const key = JSON.stringify(spec);
    let status = this.cached(key);
    if (!status) {
      try {
        status = await this.callWithRetry(reviewBody(spec, this.o.version));
      } catch (e) {
        return this.onError((e as Error).message);
      }
      if (shouldCache(a)) this.remember(key, status, status.allowed ? this.o.authorizedTTLMs : this.o.unauthorizedTTLMs);
    }
    const reason = typeof status.reason === 'string' ? status.reason : '';
    // Only a JSON true counts: a string or number is no answer.
    const allowed = status.allowed === true;
    const denied = status.denied === true;
    if (denied && allowed) return { allowed: false, reason, denied: true, error: 'webhook subject access review returned both allow and deny response' };
    if (denied) return { allowed: false, reason, denied: true };
    if (allowed) return { allowed: true, reason };
    return { allowed: false, reason };
  }

  resolveRules(_user: UserInfo, _namespace: string): RuleSet {
    return { resourceRules: [], nonResourceRules: [], incomplete: true, error: 'webhook authorizer does not support user rule resolution' };
  }
}
