/**
 * Bootstrap signer (pkg/controller/bootstrap/bootstrapsigner.go): keeps in
 * kube-public/cluster-info one detached JWS of its `kubeconfig` per bootstrap
 * token allowed for signing (`usage-bootstrap-signing: true`, not expired), as
 * `jws-kubeconfig-<id>`, so a joining node holding a token can check the
 * cluster-info it reads anonymously. Signatures of tokens gone are removed.
 * Disabled by default, as upstream (kubeadm enables it).
 */
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { KubeObject } from '@kubeling/api';
import { QueueController } from '../queue-controller.js';
import { CLUSTER_INFO, dataOf, detachedSignature, expiresAt, tokenOf, type Secret } from './tokens.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** The signatures cluster-info should carry: token id → detached JWS. */
export async function wantedSignatures(kubeconfig: string, secrets: readonly Secret[], now: number): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const s of secrets) {
    const t = tokenOf(s);
    if (!t || s.metadata.deletionTimestamp || dataOf(s, 'usage-bootstrap-signing') !== 'true') continue;
    const exp = expiresAt(s);
    if (exp !== undefined && !(exp > now)) continue;
    out[t.id] = await detachedSignature(kubeconfig, t.id, t.token);
  }
  return out;
}

const KEY = `${CLUSTER_INFO.namespace}/${CLUSTER_INFO.name}`;

export class BootstrapSigner extends QueueController {
  readonly name = 'bootstrapsigner';
  private configmaps!: Informer<ConfigMap>;
  private secrets!: Informer<Secret>;

  init(): void {
    this.configmaps = this.ctx.informers.informer<ConfigMap>({
      path: `/api/v1/namespaces/${CLUSTER_INFO.namespace}/configmaps`,
      fieldSelector: `metadata.name=${CLUSTER_INFO.name}`,
    });
    this.secrets = this.ctx.informers.informer<Secret>({ path: '/api/v1/namespaces/kube-system/secrets', fieldSelector: 'type=bootstrap.kubernetes.io/token' });
    // Everything converges on the one ConfigMap.
    const one = { add: () => this.queue.add(KEY), update: () => this.queue.add(KEY), delete: () => this.queue.add(KEY) };
    this.configmaps.addEventHandler(one);
    this.secrets.addEventHandler(one);
  }

  async reconcile(): Promise<{ requeueAfterMs?: number } | void> {
    const cm = this.configmaps.store.get(KEY);
    const kubeconfig = cm?.data?.[CLUSTER_INFO.kubeconfigKey];
    if (!cm || kubeconfig === undefined) return;
    const secrets = this.secrets.store.list();
    const now = Date.now();
    const want = await wantedSignatures(kubeconfig, secrets, now);
    const data: Record<string, string> = {};
    for (const [k, v] of Object.entries(cm.data ?? {})) if (!k.startsWith(CLUSTER_INFO.jwsPrefix)) data[k] = v;
    for (const [id, sig] of Object.entries(want)) data[CLUSTER_INFO.jwsPrefix + id] = sig;
    // A token's expiry changes the answer with no event: look again then.
    const next = secrets.map(expiresAt).filter((t): t is number => t !== undefined && t > now);
    const requeue = next.length ? { requeueAfterMs: Math.min(...next) - now + 1000 } : undefined;
    if (JSON.stringify(data) === JSON.stringify(cm.data ?? {})) return requeue;
    try {
      await this.ctx.client.put(`/api/v1/namespaces/${CLUSTER_INFO.namespace}/configmaps/${CLUSTER_INFO.name}`, { ...cm, data });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
    return requeue;
  }
}
