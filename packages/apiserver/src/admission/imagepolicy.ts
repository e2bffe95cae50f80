/**
 * ImagePolicyWebhook (kubernetes plugin/pkg/admission/imagepolicy): before a
 * pod is created or updated (or gains ephemeral containers), its images, its
 * `*.image-policy.k8s.io/*` annotations and its namespace are POSTed as an
 * `imagepolicy.k8s.io/v1alpha1` ImageReview to the webhook of a kubeconfig
 * file; `status.allowed: false` is Forbidden, `image policy webhook backend
 * denied one or more images: <reason>`.
 *
 * Answers are cached by review (LRU of 1024) for `allowTTL` (default 5 min)
 * or `denyTTL` (30 s). Transient failures (a reset connection, 429, 500, 504)
 * are retried with exponential backoff from `retryBackoff` (500 ms), 5 tries.
 * When the webhook cannot be reached or answers badly, `defaultAllow` decides:
 * allowed (the pod annotated `alpha.image-policy.k8s.io/failed-open: "true"`)
 * or Forbidden with the failure.
 *
 * Configuration (the AdmissionConfiguration's, optionally with apiVersion
 * and kind): `imagePolicy: {kubeConfigFile, allowTTL (s), denyTTL (s),
 * retryBackoff (ms), defaultAllow}`; 0 means the default, -1 disables a TTL.
 */
import type { KubeObject } from '@kubeling/api';
import { webhookFromKubeconfig, type WebhookClient } from '../auth/webhook-client.js';
import { admissionForbidden } from './attributes.js';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';

export const FAILED_OPEN_ANNOTATION = 'alpha.image-policy.k8s.io/failed-open';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export interface ImagePolicyConfig {
  kubeConfigFile: string;
  /** Milliseconds; 0 caches nothing. */
  allowTTL: number;
  denyTTL: number;
  retryBackoff: number;
  defaultAllow: boolean;
}

/** Go's time.Duration String() for whole milliseconds and up (the range messages). */
function goDuration(ms: number): string {
  if (ms < SECOND) return `${ms}ms`;
  const h = Math.floor(ms / (60 * MINUTE));
  const m = Math.floor((ms % (60 * MINUTE)) / MINUTE);
  const s = (ms % MINUTE) / SECOND;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

/** normalizeConfigDuration: -1 disables, 0 is the default, else within (min, max]. */
function normalize(name: string, scale: number, value: unknown, min: number, max: number, dflt: number): number {
  if (value === undefined || value === null || value === 0) return dflt;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`image policy webhook ${name}: must be an integer`);
  if (value === -1) return 0;
  const v = value * scale;
  if (v <= min || v > max) throw new Error(`valid value is between ${goDuration(min)} and ${goDuration(max)}, got ${goDuration(v)}`);
  return v;
}

/** The plugin's configuration; throws as upstream's NewImagePolicyWebhook (at start). */
export function parseImagePolicyConfig(cfg: Record<string, unknown> | undefined): ImagePolicyConfig {
  if (!cfg) throw new Error('no config specified');
  const c = (cfg.imagePolicy ?? {}) as Record<string, unknown>;
  if (typeof c.kubeConfigFile !== 'string' || !c.kubeConfigFile) throw new Error('imagePolicy.kubeConfigFile: a kubeconfig file is required');
  return {
    kubeConfigFile: c.kubeConfigFile,
    // The minimum backoff is 1ns upstream: any whole number of milliseconds passes.
    retryBackoff: normalize('backoff', 1, c.retryBackoff, 0, 5 * MINUTE, 500),
    allowTTL: normalize('allow cache', SECOND, c.allowTTL, SECOND, 30 * MINUTE, 5 * MINUTE),
    denyTTL: normalize('deny cache', SECOND, c.denyTTL, SECOND, 30 * MINUTE, 30 * SECOND),
    defaultAllow: c.defaultAllow === true,
  };
}

interface ReviewStatus {
  allowed?: boolean;
  reason?: string;
}

/** An LRU of answers that expire (k8s.io/apimachinery util/cache LRUExpireCache). */
class ExpiringCache {
  private readonly entries = new Map<string, { status: ReviewStatus; expires: number }>();
  constructor(
    private readonly size: number,
    private readonly now: () => number,
  ) {}

  get(key: string): ReviewStatus | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (e.expires <= this.now()) return undefined;
    this.entries.set(key, e);
    return e.status;
  }

  add(key: string, status: ReviewStatus, ttl: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { status, expires: this.now() + ttl });
  }
}

interface PodLike {
  spec?: { containers?: { image?: string }[]; initContainers?: { image?: string }[]; ephemeralContainers?: { image?: string }[] };
}

export interface ImagePolicyDeps {
  client: Pick<WebhookClient, 'post'>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const RETRY_STEPS = 5;
const isTransient = (status: number) => status === 429 || status === 500 || status === 504;
const isReset = (e: unknown) => /ECONNRESET|socket hang up/.test(String((e as Error)?.message ?? e));

export class ImagePolicyWebhook implements ValidatingAdmission {
  readonly name = 'ImagePolicyWebhook';
  private readonly cache: ExpiringCache;
  private readonly client: Pick<WebhookClient, 'post'>;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly config: ImagePolicyConfig,
    deps?: ImagePolicyDeps,
  ) {
    this.client = deps?.client ?? webhookFromKubeconfig(config.kubeConfigFile);
    this.cache = new ExpiringCache(1024, deps?.now ?? Date.now);
    this.sleep = deps?.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  handles(a: AdmissionAttributes): boolean {
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.resource === '/pods' && (!a.subresource || a.subresource === 'ephemeralcontainers');
  }

  /** The review's spec: the images (ephemeral ones for that subresource), the policy annotations, the namespace. */
  private spec(pod: KubeObject, a: AdmissionAttributes) {
    const s = (pod as PodLike).spec ?? {};
    const list = a.subresource ? (s.ephemeralContainers ?? []) : [...(s.containers ?? []), ...(s.initContainers ?? [])];
    const annotations = Object.fromEntries(
      Object.entries(pod.metadata.annotations ?? {})
        .filter(([k]) => k.includes('.image-policy.k8s.io/'))
        .sort(([x], [y]) => (x < y ? -1 : 1)),
    );
    return {
      ...(list.length ? { containers: list.map((c) => ({ ...(c.image ? { image: c.image } : {}) })) } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(a.namespace ? { namespace: a.namespace } : {}),
    };
  }

  /** One POST, retried on transient failures; the answer's status, or throws with why the webhook failed. */
  private async review(spec: object): Promise<ReviewStatus> {
    const body = { apiVersion: 'imagepolicy.k8s.io/v1alpha1', kind: 'ImageReview', metadata: {}, spec, status: { allowed: false } };
    let delay = this.config.retryBackoff;
    for (let attempt = 1; ; attempt++) {
      let reply: { status: number; body: { status?: ReviewStatus } | undefined } | undefined;
      let failure: unknown;
      try {
        reply = await this.client.post<{ status?: ReviewStatus }>(body);
      } catch (e) {
        failure = e;
      }
      const retry = reply ? isTransient(reply.status) : isReset(failure);
      if (!retry || attempt >= RETRY_STEPS) {
        if (!reply) throw failure;
        if (reply.status < 200 || reply.status >= 300) throw new Error(`Error contacting webhook: ${reply.status}`);
        if (!reply.body || typeof reply.body !== 'object') throw new Error('the webhook answer is not an ImageReview');
        return { allowed: reply.body.status?.allowed === true, ...(reply.body.status?.reason ? { reason: String(reply.body.status.reason) } : {}) };
      }
      await this.sleep(delay * (1 + Math.random() * 0.2));
      delay *= 1.5;
    }
  }

  async validate(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const spec = this.spec(pod, a);
    const key = JSON.stringify(spec);
    let status = this.cache.get(key);
    if (!status) {
      try {
        status = await this.review(spec);
      } catch (e) {
        if (!this.config.defaultAllow) throw admissionForbidden(a, pod, e as Error);
        pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [FAILED_OPEN_ANNOTATION]: 'true' };
        return;
      }
      this.cache.add(key, status, status.allowed ? this.config.allowTTL : this.config.denyTTL);
    }
    if (status.allowed) return;
    throw admissionForbidden(
      a,
      pod,
      status.reason ? `image policy webhook backend denied one or more images: ${status.reason}` : 'one or more images rejected by webhook backend',
    );
  }
}
