/**
 * The CSR approving controller, `csrapproving` (kubernetes pkg/controller/
 * certificates/approver/sarapprove.go): a pending kubelet client request —
 * signer kubernetes.io/kube-apiserver-client-kubelet, subject
 * `system:node:<name>` in `system:nodes`, client usages, no alternative names
 * — is approved when its requester may, by SubjectAccessReview, `create`
 * `certificatesigningrequests/selfnodeclient` (a node renewing its own
 * certificate: the requester is the request's common name) or
 * `certificatesigningrequests/nodeclient` (any node, as bootstrap tokens
 * may). The Approved condition (reason AutoApproved) goes through
 * `/approval`. A recognised request the reviews do not allow is looked at
 * again a minute later (upstream requeues it with backoff), in case
 * permissions change.
 */
import type { Informer } from '@kubeling/client';
import { parseCSR } from '@kubeling/pki';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';
import { approvalState, CSR_PATH, KUBE_APISERVER_CLIENT_KUBELET, pemOf, validateKubeletClient, type CSR } from './common.js';

interface Recognizer {
  subresource: 'selfnodeclient' | 'nodeclient';
  recognize(csr: CSR, commonName: string, isNodeClient: boolean): boolean;
  message: string;
}

/** In upstream's order: the node's own renewal first. */
const RECOGNIZERS: readonly Recognizer[] = [
  {
    subresource: 'selfnodeclient',
    recognize: (csr, cn, nodeClient) => nodeClient && csr.spec.username === cn,
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
  },
  {
    subresource: 'nodeclient',
    recognize: (_csr, _cn, nodeClient) => nodeClient,
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
  },
];

export const RETRY_UNAPPROVED_MS = 60_000;

export class CSRApprovingController extends QueueController {
  readonly name = 'csrapproving';
  private csrs!: Informer<CSR>;

  init(): void {
    this.csrs = this.ctx.informers.informer<CSR>({ path: CSR_PATH });
    enqueueOn(this.csrs, this.queue, { on: ['add', 'update'] });
  }

  /** Whether the requester may do what the recognizer stands for. */
  private async authorized(csr: CSR, subresource: string): Promise<boolean> {
    const review = await this.ctx.client.post<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: csr.spec.username,
        ...(csr.spec.uid ? { uid: csr.spec.uid } : {}),
        groups: csr.spec.groups ?? [],
        ...(csr.spec.extra ? { extra: csr.spec.extra } : {}),
        resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource, version: '*' },
      },
    });
    return review.status?.allowed === true;
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number } | void> {
    const cur = this.csrs.store.get(name);
    if (!cur || cur.status?.certificate) return;
    const { approved, denied } = approvalState(cur);
    if (approved || denied) return;
    let req: ReturnType<typeof parseCSR>;
    try {
      req = parseCSR(pemOf(cur.spec.request));
    } catch (e) {
      throw new Error(`unable to parse csr "${name}": ${(e as Error).message}`);
    }
    const nodeClient = cur.spec.signerName === KUBE_APISERVER_CLIENT_KUBELET && validateKubeletClient(req, cur.spec.usages ?? []) === undefined;
    let tried = false;
    for (const r of RECOGNIZERS) {
      if (!r.recognize(cur, req.commonName, nodeClient)) continue;
      tried = true;
      if (!(await this.authorized(cur, r.subresource))) continue;
      const csr = structuredClone(cur);
      ((csr.status ??= {}).conditions ??= []).push({ type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message });
      await this.ctx.client.put(`${CSR_PATH}/${encodeURIComponent(name)}/approval`, csr);
      return;
    }
    if (tried) {
      this.ctx.log.debug({ controller: this.name, key: name }, 'recognized csr but subject access review was not approved');
      return { requeueAfterMs: RETRY_UNAPPROVED_MS };
    }
  }
}
