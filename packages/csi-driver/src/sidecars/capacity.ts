/**
 * The capacity publisher of external-provisioner (--enable-capacity in
 * node-deployment mode; kubernetes-csi/external-provisioner pkg/capacity):
 * one CSIStorageCapacity per StorageClass of this driver (WaitForFirstConsumer
 * classes, as upstream without --capacity-for-immediate-binding) for this
 * node's fixed topology segment, in the capacity namespace, named by the
 * server from `csisc-`, labelled with the driver and the managing instance
 * (`external-provisioner-<node>`), with the GetCapacity answer as `capacity`
 * and `maximumVolumeSize`. No owner reference: the process is not a pod.
 *
 * `sync()` reconciles everything at once: objects of classes that are gone,
 * duplicates and objects for another segment are deleted; missing ones are
 * created; changed capacities are updated. The process calls it after every
 * provision and delete, on class changes, and periodically.
 */
import type { Logger } from 'pino';
import { isNotFound } from '@kubeling/apimachinery';
import type { CsiCall, DriverInfo, KubeApi, Lister } from './deps.js';
import { type CSIStorageCapacity, LABEL_DRIVER_NAME, LABEL_MANAGED_BY, type StorageClass } from './types.js';
import { bytesToQuantity, errorText, nameWithMaxLength, quantityBytes } from './util.js';

/** The managed-by label value of a node's instance (DNS-1035 label length). */
export const managedBy = (node: string): string => nameWithMaxLength('external-provisioner', node, 63);

export interface CapacityDeps {
  driver: DriverInfo;
  namespace: string;
  csi: CsiCall;
  api: Pick<KubeApi, 'createCapacity' | 'updateCapacity' | 'deleteCapacity'>;
  classes: Lister<StorageClass>;
  /** This instance's objects (listed with its two labels). */
  capacities: Lister<CSIStorageCapacity>;
  log: Logger;
  /** Publish for Immediate classes too (--capacity-for-immediate-binding). */
  immediateBinding?: boolean;
}

const sameSegment = (a: Record<string, string> | undefined, b: Record<string, string>): boolean => {
  const ka = Object.keys(a ?? {}).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a![k] === b[k]);
};

export class CapacityPublisher {
  /** Objects this instance wrote that its informer may not have delivered yet, by name (so a quick second sync does not create twice). */
  private readonly recent = new Map<string, CSIStorageCapacity>();

  constructor(private readonly d: CapacityDeps) {}

  /** The informer's objects, and the ones written since that it has not shown yet. */
  private known(): CSIStorageCapacity[] {
    const listed = this.d.capacities.list();
    const names = new Set(listed.map((c) => c.metadata.name));
    for (const n of [...this.recent.keys()]) if (names.has(n)) this.recent.delete(n);
    return [...listed, ...this.recent.values()];
  }

  get labels(): Record<string, string> {
    return { [LABEL_DRIVER_NAME]: this.d.driver.name, [LABEL_MANAGED_BY]: managedBy(this.d.driver.nodeName) };
  }

  /** The classes to publish for. */
  private classes(): StorageClass[] {
    return this.d.classes
      .list()
      .filter((sc) => sc.provisioner === this.d.driver.name && (sc.volumeBindingMode === 'WaitForFirstConsumer' || this.d.immediateBinding))
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  }

  async sync(): Promise<void> {
    const segment = this.d.driver.topology ?? {};
    const wanted = new Map(this.classes().map((sc) => [sc.metadata.name!, sc]));
    const kept = new Map<string, CSIStorageCapacity>();
    const errors: string[] = [];
    for (const c of this.known()) {
      const keep =
        wanted.has(c.storageClassName) && !kept.has(c.storageClassName) && sameSegment(c.nodeTopology?.matchLabels, segment) && !c.metadata.deletionTimestamp;
      if (keep) {
        kept.set(c.storageClassName, c);
        continue;
      }
      this.recent.delete(c.metadata.name!);
      await this.d.api.deleteCapacity(c.metadata.namespace ?? this.d.namespace, c.metadata.name!).catch((e) => {
        if (!isNotFound(e)) errors.push(`delete CSIStorageCapacity ${c.metadata.name}: ${errorText(e)}`);
      });
    }
    for (const [name, sc] of wanted) {
      try {
        await this.syncClass(sc, segment, kept.get(name));
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (errors.length) throw new Error(errors.join('; '));
  }

  /** syncCapacity for one (class, segment) item. */
  private async syncClass(sc: StorageClass, segment: Record<string, string>, existing: CSIStorageCapacity | undefined): Promise<void> {
    const item = `{segment: ${JSON.stringify(segment)}, storageClassName: ${sc.metadata.name}}`;
    let resp: { available_capacity?: string | number; maximum_volume_size?: { value?: string | number } | null };
    try {
      resp = await this.d.csi('Controller', 'GetCapacity', {
        // The capacity is taken as independent of the capabilities; CSI wants one, so one is given.
        volume_capabilities: [{ mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'UNKNOWN' } }],
        parameters: sc.parameters ?? {},
        ...(Object.keys(segment).length ? { accessible_topology: { segments: segment } } : {}),
      });
    } catch (e) {
      throw new Error(`CSI GetCapacity for ${item}: ${errorText(e)}`);
    }
    const capacity = bytesToQuantity(resp.available_capacity ?? 0);
    const max = resp.maximum_volume_size?.value;
    const maximumVolumeSize = max === undefined ? undefined : bytesToQuantity(max);
    if (!existing) {
      const obj: CSIStorageCapacity = {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'CSIStorageCapacity',
        metadata: { generateName: 'csisc-', labels: this.labels },
        storageClassName: sc.metadata.name!,
        nodeTopology: { matchLabels: { ...segment } },
        capacity,
        ...(maximumVolumeSize ? { maximumVolumeSize } : {}),
      };
      const created = await this.d.api.createCapacity(this.d.namespace, obj).catch((e) => {
        throw new Error(`create CSIStorageCapacity for ${item}: ${errorText(e)}`);
      });
      this.recent.set(created.metadata.name!, created);
      this.d.log.info({ name: created.metadata.name, storageClass: sc.metadata.name, capacity }, 'published storage capacity');
      return;
    }
    const sameMax =
      (existing.maximumVolumeSize === undefined) === (maximumVolumeSize === undefined) &&
      quantityBytes(existing.maximumVolumeSize) === quantityBytes(maximumVolumeSize);
    if (quantityBytes(existing.capacity) === quantityBytes(capacity) && sameMax) return;
    const updated = structuredClone(existing);
    updated.capacity = capacity;
    if (maximumVolumeSize) updated.maximumVolumeSize = maximumVolumeSize;
    else delete updated.maximumVolumeSize;
    const written = await this.d.api.updateCapacity(updated).catch((e) => {
      throw new Error(`update CSIStorageCapacity for ${item}: ${errorText(e)}`);
    });
    if (this.recent.has(written.metadata.name!)) this.recent.set(written.metadata.name!, written);
    this.d.log.debug({ name: existing.metadata.name, storageClass: sc.metadata.name, capacity }, 'updated storage capacity');
  }
}
