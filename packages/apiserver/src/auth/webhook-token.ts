/**
 * Webhook token authentication (k8s.io/apiserver plugin/pkg/authenticator/token
 * webhook/webhook.go, as kube-apiserver wires it in
 * pkg/kubeapiserver/authenticator/config.go): a bearer token no local
 * authenticator knows is POSTed as an authentication.k8s.io TokenReview to
 * the server the --authentication-token-webhook-config-file kubeconfig names.
 *
 * - `status.authenticated` with `status.user` is the user; not authenticated
 *   with no `status.error` is a refusal, cached like a success for the TTL
 *   (--authentication-token-webhook-cache-ttl, 2m); a `status.error`, a
 *   non-2xx answer or a transport failure is an error: the request is
 *   refused (401), nothing is cached, the next request asks again.
 * - Transient failures (connection reset, 429, 500, 504) are retried with
 *   upstream's backoff (500 ms, ×1.5, 5 attempts); a refused connection is not.
 * - With API audiences, the review asks for them and an answer naming other
 *   audiences only does not authenticate.
 *
 * Tokens are never logged; the cache holds only an HMAC of them.
 */
import type { Logger } from 'pino';
import type { TokenAuthenticator } from './authn.js';
import { TokenCache } from './token-cache.js';
import type { UserInfo } from './types.js';
import { type WebhookClient, webhookFromKubeconfig } from './webhook-client.js';

export interface TokenWebhookOptions {
  /** A kubeconfig file: its current context's cluster is the webhook. */
  configFile: string;
  /** --authentication-token-webhook-cache-ttl (2m); 0 disables the cache. */
  cacheTtlMs?: number;
  /** --authentication-token-webhook-version: v1beta1 (upstream's default) or v1. */
  version?: string;
  /** The retry backoff of transient failures (upstream: 500 ms, 5 steps). */
  retryBackoff?: { initialMs: number; steps: number };
  /** How long one call may take (30 s). */
  timeoutMs?: number;
}

const VERSIONS = ['v1', 'v1beta1'];

/** tokenReviewInterfaceFromKubeconfig's check of --authentication-token-webhook-version. */
export function checkWebhookVersion(version: string): void {
  if (!VERSIONS.includes(version)) throw new Error(`unsupported authentication webhook version "${version}", supported versions are "v1", "v1beta1"`);
}

interface ReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

const TRANSIENT_STATUS = new Set([429, 500, 504]);

class WebhookError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  private readonly cache: TokenCache<UserInfo>;
  private readonly apiVersion: string;

  constructor(
    private readonly client: WebhookClient,
    private readonly o: {
      version?: string;
      cacheTtlMs?: number;
      /** The apiserver's audiences (--api-audiences): asked for, and what an answer without audiences stands for. */
      audiences?: string[];
      retryBackoff?: { initialMs: number; steps: number };
      logger?: Logger;
    } = {},
  ) {
    const version = o.version ?? 'v1beta1';
    checkWebhookVersion(version);
    this.apiVersion = `authentication.k8s.io/${version}`;
    const ttl = o.cacheTtlMs ?? 120_000;
    this.cache = new TokenCache({ successTtlMs: ttl, failureTtlMs: ttl });
  }

  async authenticateToken(token: string): Promise<UserInfo | undefined> {
    const audiences = this.o.audiences ?? [];
    try {
      return await this.cache.get(token, audiences, () => this.review(token, audiences));
    } catch (err) {
      this.o.logger?.warn({ webhook: this.client.url, err: (err as Error).message }, 'token authentication webhook failed');
      return undefined;
    }
  }

  /** One TokenReview (with retries); throws when the webhook could not decide. */
  async review(token: string, audiences: string[]): Promise<UserInfo | undefined> {
    const body = {
      apiVersion: this.apiVersion,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { token, ...(audiences.length ? { audiences } : {}) },
    };
    const status = await this.withRetries(async () => {
      let reply: Awaited<ReturnType<WebhookClient['post']>>;
      try {
        reply = await this.client.post<{ status?: ReviewStatus }>(body);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        throw new WebhookError(`Post "${this.client.url}": ${(e as Error).message}`, code === 'ECONNRESET' || code === 'EPIPE');
      }
      if (reply.status < 200 || reply.status > 299)
        throw new WebhookError(`the server responded with the status code ${reply.status}`, TRANSIENT_STATUS.has(reply.status));
      const s = (reply.body as { status?: ReviewStatus } | undefined)?.status;
      if (!s || typeof s !== 'object') throw new WebhookError('the webhook answered without a TokenReview status', false);
      return s;
    });
    if (audiences.length) {
      const got = strings(status.audiences).length ? strings(status.audiences) : audiences;
      if (!audiences.some((a) => got.includes(a))) return undefined;
    }
    if (status.authenticated !== true) {
      if (typeof status.error === 'string' && status.error) throw new Error(status.error);
      return undefined;
    }
    const u = status.user ?? {};
    // An authenticated answer without a name is a webhook fault, not a user.
    if (typeof u.username !== 'string' || !u.username) throw new Error('the webhook authenticated a token without a username');
    const extra: Record<string, string[]> = {};
    if (u.extra && typeof u.extra === 'object') for (const [k, v] of Object.entries(u.extra)) extra[k] = strings(v);
    return {
      name: u.username,
      ...(typeof u.uid === 'string' && u.uid ? { uid: u.uid } : {}),
      groups: strings(u.groups),
      ...(Object.keys(extra).length ? { extra } : {}),
    };
  }

  /** webhook.WithExponentialBackoff with DefaultShouldRetry: transient failures only. */
  private async withRetries<T>(call: () => Promise<T>): Promise<T> {
    const { initialMs, steps } = this.o.retryBackoff ?? { initialMs: 500, steps: 5 };
    let delay = initialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (e) {
        if (!(e instanceof WebhookError) || !e.transient || attempt >= steps) throw e;
      }
      // Jitter 0.2, as DefaultAuthWebhookRetryBackoff.
      await new Promise((r) => setTimeout(r, delay * (1 + Math.random() * 0.2)));
      delay *= 1.5;
    }
  }
}

/** The authenticator the --authentication-token-webhook-* flags describe. */
export function tokenWebhook(o: TokenWebhookOptions, audiences: string[], logger?: Logger): WebhookTokenAuthenticator {
  return new WebhookTokenAuthenticator(webhookFromKubeconfig(o.configFile, o.timeoutMs ?? 30_000), {
    ...(o.version ? { version: o.version } : {}),
    ...(o.cacheTtlMs !== undefined ? { cacheTtlMs: o.cacheTtlMs } : {}),
    ...(o.retryBackoff ? { retryBackoff: o.retryBackoff } : {}),
    audiences,
    ...(logger ? { logger } : {}),
  });
}
