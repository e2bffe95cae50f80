/**
 * Root CA certificate publisher (kubernetes pkg/controller/certificates/
 * rootcacertpublisher): every active namespace has a `kube-root-ca.crt`
 * ConfigMap holding the cluster CA (`ca.crt`), which ServiceAccount token
 * volumes project next to the token. Nothing to publish without a CA.
 */
import { isAlreadyExists, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

export class RootCACertPublisher extends QueueController {
  readonly name = 'root-ca-cert-publisher';
  private namespaces!: Informer;
  private configmaps!: Informer;

  init(): void {
    this.namespaces = this.ctx.informers.informer({ path: '/api/v1/namespaces' });
    this.configmaps = this.ctx.informers.informer({ path: '/api/v1/configmaps', fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}` });
    enqueueOn(this.namespaces, this.queue, { on: ['add', 'update'], keys: (ns) => ns.metadata.name! });
    enqueueOn(this.configmaps, this.queue, { on: ['update', 'delete'], keys: (cm) => cm.metadata.namespace! });
  }

  async reconcile(ns: string): Promise<void> {
    const ca = this.ctx.client.config.ca?.toString('utf8');
    if (!ca) return;
    const namespace = this.namespaces.store.get(ns);
    if (!namespace || namespace.metadata.deletionTimestamp) return;
    const cur = this.configmaps.store.get(`${ns}/${ROOT_CA_CONFIGMAP}`) as { data?: Record<string, string> } | undefined;
    if (cur?.data?.['ca.crt'] === ca) return;
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: ROOT_CA_CONFIGMAP,
        annotations: {
          'kubernetes.io/description':
            'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
        },
      },
      data: { 'ca.crt': ca },
    };
    try {
      if (cur)
        await this.ctx.client.put(`/api/v1/namespaces/${ns}/configmaps/${ROOT_CA_CONFIGMAP}`, {
          ...body,
          metadata: { ...body.metadata, resourceVersion: (cur as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion },
        });
      else await this.ctx.client.post(`/api/v1/namespaces/${ns}/configmaps`, body);
    } catch (e) {
      if (!isAlreadyExists(e) && !isNotFound(e)) throw e;
    }
  }
}
