/**
 * Ephemeral volume controller (pkg/controller/volume/ephemeral): for each
 * generic ephemeral volume of a pod (`volumes[].ephemeral.volumeClaimTemplate`)
 * a PersistentVolumeClaim `<pod>-<volume>` is created from the template, owned
 * by the pod (so it goes with it), with the template's labels, annotations and
 * spec. A claim of that name the pod does not control is left alone, with a
 * FailedBinding event on the pod and the pod tried again with backoff, as
 * upstream: the pod cannot start until that claim is gone. A claim deleted
 * while its pod lives is made again.
 */
import { isAlreadyExists } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import type { KubeObject } from '@kubeling/api';
import { enqueueOn } from '../handlers.js';
import type { Pod } from '../kinds.js';
import { QueueController } from '../queue-controller.js';
import { isClaimForPod } from '../storage.js';

interface ClaimTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}
type Volume = { name: string; ephemeral?: { volumeClaimTemplate?: ClaimTemplate } };

/** The claims a pod's ephemeral volumes need: volume, claim name and template. */
export function ephemeralClaims(pod: Pod): { volume: string; name: string; template: ClaimTemplate }[] {
  const vols = ((pod.spec as { volumes?: Volume[] } | undefined)?.volumes ?? []).filter((v) => v.ephemeral?.volumeClaimTemplate);
  return vols.map((v) => ({ volume: v.name, name: `${pod.metadata.name}-${v.name}`, template: v.ephemeral!.volumeClaimTemplate! }));
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
    for (const { volume, name, template } of ephemeralClaims(pod)) {
      try {
        await this.handleVolume(pod, name, template);
      } catch (e) {
        // As upstream's syncHandler: an event on the pod, and the pod again later with backoff.
        const message = `ephemeral volume ${volume}: ${(e as Error).message}`;
        void this.ctx.recorder('ephemeral_volume').event({ ...pod, apiVersion: 'v1', kind: 'Pod' }, 'Warning', 'FailedBinding', message);
        throw new Error(`pod ${key}, ${message}`);
      }
    }
  }

  /** handleVolume: nothing when the pod's claim exists, an error when someone else's does, else the claim from the template. */
  private async handleVolume(pod: Pod, name: string, template: ClaimTemplate): Promise<void> {
    const ns = pod.metadata.namespace!;
    const cur = this.claims.store.get(`${ns}/${name}`) as KubeObject | undefined;
    if (cur) {
      if (!isClaimForPod(pod, cur)) throw new Error(`PVC ${ns}/${name} was not created for pod ${ns}/${pod.metadata.name} (pod is not owner)`);
      return;
    }
    const claim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name!, uid: pod.metadata.uid!, controller: true, blockOwnerDeletion: true }],
        ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
      },
      spec: template.spec ?? {},
    };
    try {
      await this.ctx.client.post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, claim);
    } catch (e) {
      // Made meanwhile (a stale cache): the next sync checks who owns it.
      if (isAlreadyExists(e)) return;
      throw new Error(`create PVC ${name}: ${(e as Error).message}`);
    }
  }
}
