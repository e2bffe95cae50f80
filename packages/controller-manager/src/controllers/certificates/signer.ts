/**
 * The CSR signing controller, `csrsigning` (kubernetes pkg/controller/
 * certificates/signer): approved, not failed, not yet issued requests for
 * kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet and
 * kubelet-serving get a certificate from the cluster CA, written to
 * `/status`. A request its signer's rules refuse gets a Failed condition
 * (reason SignerValidationFailure) instead.
 *
 * Validity (authority/policies.go PermissiveSigningPolicy): the signer's
 * duration, or the requested expirationSeconds when shorter (10 minutes at
 * least); NotBefore is backdated 5 minutes, and so is NotAfter for
 * certificates of 8 hours or more; never past the CA's own NotAfter.
 *
 * Without a CA (no --cluster-signing-cert-file/-key-file) it does nothing, as
 * upstream does not start it.
 */
import { rfc3339 } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { loadSigningCA, parseCSR, signCSR, type SigningCA } from '@kubeling/pki';
import type { ControllerContext, CSRSigningSettings } from '../../context.js';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';
import { CSR_PATH, hasCondition, isApproved, pemOf, SIGNER_RULES, type CSR } from './common.js';

const MINUTE = 60_000;
const BACKDATE = 5 * MINUTE;
const SHORT = 8 * 60 * MINUTE;
const MIN_DURATION = 10 * MINUTE;
export const DEFAULT_SIGNING_DURATION = 365 * 24 * 60 * MINUTE;

/** signer.duration: the requested validity within [10 min, the signer's duration]. */
export function certificateTTL(expirationSeconds: number | null | undefined, maxMs: number): number {
  if (expirationSeconds === undefined || expirationSeconds === null) return maxMs;
  const requested = expirationSeconds * 1000;
  if (requested > maxMs) return maxMs;
  return Math.max(requested, MIN_DURATION);
}

/** PermissiveSigningPolicy's NotBefore/NotAfter for a TTL at `now`, within the CA's lifetime. */
export function validity(now: number, ttlMs: number, caNotAfter: number): { notBefore: Date; notAfter: Date } {
  const notBefore = now - BACKDATE;
  let notAfter = ttlMs < SHORT ? now + ttlMs : now + ttlMs - BACKDATE;
  if (notAfter >= caNotAfter) notAfter = caNotAfter;
  if (notBefore >= caNotAfter) throw new Error(`the signer has expired: NotAfter=${new Date(caNotAfter).toISOString()}`);
  if (now >= caNotAfter) throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${new Date(caNotAfter).toISOString()}`);
  return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) };
}

export class CSRSigningController extends QueueController {
  readonly name = 'csrsigning';
  private csrs!: Informer<CSR>;
  private ca: Promise<SigningCA> | undefined;

  constructor(
    ctx: ControllerContext,
    private readonly settings: CSRSigningSettings | undefined = ctx.csrSigning,
  ) {
    super(ctx);
  }

  init(): void {
    if (!this.settings) return;
    this.csrs = this.ctx.informers.informer<CSR>({ path: CSR_PATH });
    enqueueOn(this.csrs, this.queue, { on: ['add', 'update'] });
  }

  override async run(signal: AbortSignal): Promise<void> {
    if (!this.settings) {
      this.ctx.log.info({ controller: this.name }, 'skipping CSR signer controller because no csr cert/key was specified');
      return;
    }
    return super.run(signal);
  }

  private signer(): Promise<SigningCA> {
    this.ca ??= loadSigningCA(this.settings!.certPem, this.settings!.keyPem);
    return this.ca;
  }

  async reconcile(name: string): Promise<void> {
    const cur = this.csrs.store.get(name);
    if (!cur || cur.status?.certificate) return;
    if (!isApproved(cur) || hasCondition(cur, 'Failed')) return;
    const rules = SIGNER_RULES[cur.spec?.signerName ?? ''];
    if (!rules) return;
    const csr = structuredClone(cur);
    let refusal: string | undefined;
    let req: ReturnType<typeof parseCSR>;
    try {
      req = parseCSR(pemOf(csr.spec.request));
      refusal = rules(req, csr.spec.usages ?? []);
    } catch (e) {
      throw new Error(`unable to parse csr "${name}": ${(e as Error).message}`);
    }
    const status = (csr.status ??= {});
    if (refusal) {
      (status.conditions ??= []).push({ type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: refusal, lastUpdateTime: rfc3339() });
    } else {
      const ca = await this.signer();
      const ttl = certificateTTL(csr.spec.expirationSeconds, this.settings!.durationMs ?? DEFAULT_SIGNING_DURATION);
      const pem = await signCSR(ca, req, { usages: csr.spec.usages ?? [], ...validity(Date.now(), ttl, ca.cert.notAfter.getTime()) });
      status.certificate = Buffer.from(pem).toString('base64');
    }
    // A conflict (the request changed meanwhile) throws: the key is requeued and read again.
    await this.ctx.client.put(`${CSR_PATH}/${encodeURIComponent(name)}/status`, csr);
  }
}
