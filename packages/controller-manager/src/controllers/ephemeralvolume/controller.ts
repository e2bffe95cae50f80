/**
 * Ephemeral volume controller (pkg/controller/volume/ephemeral): for each
 * generic ephemeral volume of a pod (`volumes[].ephemeral.volumeClaimTemplate`)
 * a PersistentVolumeClaim `<pod>-<volume>` is created from the template, owned
 * by the pod (so it goes with it). A claim of that name the pod does not own is
 * left alone, with a warning Event on the pod, as upstream: the pod cannot
 * start until it is gone.
 */
import { isAlreadyExists, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { KubeObject } from '@kubeling/api';
import { enqueueOn } from '../handlers.js';
import type { Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';

interface ClaimTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}
type Volume = { name: string; ephemeral?: { volumeClaimTemplate?: ClaimTemplate } };

/** The claims a pod's ephemeral volumes need: name → template. */
export function ephemeralClaims(pod: Pod): { name: string; template: ClaimTemplate }[] {
  const vols = ((pod.spec as { volumes?: Volume[] } | undefined)?.volumes ?? []).filter((v) => v.ephemeral?.volumeClaimTemplate);
  return vols.map((v) => ({ name: `${pod.metadata.name}-${v.name}`, template: v.ephemeral!.volumeClaimTemplate! }));
}

export class EphemeralVolumeController extends QueueController {
  readonly name = 'ephemeral-volume';
  private pods!: Informer<Pod>;
  private claims!: Informer;

  init(): void {
    this.pods = this.ctx.informers.informer<Pod>({ path: '/api/v1/pods' });
    this.claims = this.ctx.informers.informer({ path: '/api/v1/persistentvolumeclaims' });
    enqueueOn(this.pods, this.queue, { on: ['add', 'update'] });
    // A claim deleted while its pod lives is made again (the pod owns it: its key is the owner's).
    enqueueOn(this.claims, this.queue, {
      on: ['delete'],
      keys: (c) => {
        const ref = (c.metadata.ownerReferences ?? []).find((r) => r.controller && r.kind === 'Pod');
        return ref ? `${c.metadata.namespace}/${ref.name}` : undefined;
      },
    });
  }

  async reconcile(key: string): Promise<void> {
    const pod = this.pods.store.get(key);
    if (!pod || pod.metadata.deletionTimestamp) return;
    const ns = pod.metadata.namespace!;
    for (const { name, template } of ephemeralClaims(pod)) {
      const cur = this.claims.store.get(`${ns}/${name}`) as KubeObject | undefined;
      if (cur) {
        if (!(cur.metadata.ownerReferences ?? []).some((r) => r.uid === pod.metadata.uid)) {
          void this.ctx
            .recorder('ephemeral_volume')
            .event(pod, 'Warning', 'FailedBinding', `PVC ${ns}/${name} was not created for pod ${ns}/${pod.metadata.name} (pod is not owner)`);
        }
        continue;
      }
      const claim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
          ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name!, uid: pod.metadata.uid!, controller: true, blockOwnerDeletion: true }],
        },
        spec: template.spec ?? {},
      };
      try {
        await this.ctx.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim);
      } catch (e) {
        if (!isAlreadyExists(e) && !isNotFound(e)) throw e;
      }
    }
  }
}
