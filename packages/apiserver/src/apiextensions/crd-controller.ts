/**
 * The apiextensions controllers that run inside the apiserver, over the CRD
 * store's watch cache: naming and establishing (status.acceptedNames, the
 * NamesAccepted and Established conditions: naming.ts), serving (each
 * Established CRD's versions become resources of the catalogue with a store
 * of their own over one watch cache of `/registry/<group>/<plural>/`), and
 * finalizing (pkg/controller/finalizer/crd_finalizer.go: a deleted CRD's
 * custom resources are deleted, then its cleanup finalizer is removed and the
 * CRD goes).
 */
import { apiVersionOf, type KubeObject, type ResourceDef } from '@kubeling/api';
import { jsonEqual, StatusError } from '@kubeling/apimachinery';
import type { Logger } from 'pino';
import type { Cacher } from '../storage/cacher.js';
import type { Store } from '../registry/store.js';
import type { Strategy } from '../registry/strategy.js';
import { SerialQueue } from '../registry/serial-queue.js';
import type { ResourceCatalog } from './catalog.js';
import { CLEANUP_FINALIZER, conditionTrue, setCondition } from './crd-strategy.js';
import { customResourceStrategy } from './cr-strategy.js';
import { servedDefs } from './defs.js';
import { computeNames } from './naming.js';
import { type ServiceAddress, WebhookConverter } from './conversion.js';
import type { CustomResourceDefinition } from './types.js';

export interface CrdControllerDeps {
  crds: Store;
  catalog: ResourceCatalog;
  registry: Map<string, Store>;
  /** The server's watch caches by key prefix (custom resources' are added and dropped here). */
  cachers: Map<string, Cacher>;
  /** The watch cache of a key prefix, made (and registered in `cachers`) on first use. */
  newCacher(prefix: string): Cacher;
  /** A store with the server's admission plugins attached. */
  newStore(def: ResourceDef, strategy: Strategy, cacher: Cacher): Store;
  logger?: Logger;
}

const asCrd = (o: KubeObject) => o as unknown as CustomResourceDefinition;

export class CrdController {
  private readonly latest = new Map<string, CustomResourceDefinition>();
  /** What each CRD serves now: a signature of what the definitions were built from, and their registry keys. */
  private readonly serving = new Map<string, { signature: string; keys: string[]; prefix: string }>();
  private readonly queue = new SerialQueue(
    (name) => this.reconcile(name),
    (name, err) => {
      if (!(err instanceof StatusError && (err.status.reason === 'NotFound' || err.status.reason === 'Conflict'))) {
        this.deps.logger?.warn({ err, crd: name }, 'reconciling CustomResourceDefinition failed');
      }
      this.queue.later(name);
    },
  );
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: CrdControllerDeps) {}

  private cacher(prefix: string): Cacher {
    const c = this.deps.newCacher(prefix);
    void c.ready().catch(() => undefined);
    return c;
  }

  private async dropCacher(prefix: string): Promise<void> {
    const c = this.deps.cachers.get(prefix);
    this.deps.cachers.delete(prefix);
    await c?.stop();
  }

  /** The cluster IP of a Service (conversion webhooks named by service). */
  private readonly serviceAddress: ServiceAddress = async (namespace, name) => {
    const svc = await this.deps.registry
      .get('/v1/services')
      ?.get(namespace, name)
      .catch(() => undefined);
    const ip = (svc?.spec as { clusterIP?: string } | undefined)?.clusterIP;
    return ip && ip !== 'None' ? ip : undefined;
  };

  start(): void {
    this.unsubscribe = this.deps.crds.subscribe((type, obj) => {
      const name = obj.metadata.name!;
      if (type === 'DELETED') this.latest.delete(name);
      else this.latest.set(name, asCrd(obj));
      // A CRD's names free or take names of the others in its group.
      const group = asCrd(obj).spec?.group;
      for (const [n, c] of this.latest) if (c.spec?.group === group) this.queue.add(n);
      this.queue.add(name);
    });
  }

  async stop(): Promise<void> {
    await this.queue.stop();
    this.unsubscribe?.();
    for (const name of [...this.serving.keys()]) await this.unserve(name);
  }

  /** Whether the CRD behind a custom resource is being deleted (creates are refused then). */
  terminating(crdName: string): boolean {
    return !!this.latest.get(crdName)?.metadata.deletionTimestamp;
  }

  private async reconcile(name: string): Promise<void> {
    const crd = this.latest.get(name);
    if (!crd) {
      await this.unserve(name);
      return;
    }
    if (await this.updateStatus(crd)) return; // the write comes back as an event
    if (conditionTrue(crd, 'Established')) this.serve(crd);
    else await this.unserve(name);
    if (crd.metadata.deletionTimestamp && crd.metadata.finalizers?.includes(CLEANUP_FINALIZER)) await this.finalize(crd);
  }

  /** Names and conditions; answers whether a status was written. */
  private async updateStatus(crd: CustomResourceDefinition): Promise<boolean> {
    const next = structuredClone(crd);
    if (!crd.metadata.deletionTimestamp) {
      const r = computeNames(crd, [...this.latest.values()]);
      next.status = { ...(next.status ?? {}), acceptedNames: r.acceptedNames };
      setCondition(next, r.namesAccepted);
      if (r.established) setCondition(next, r.established);
    }
    if (jsonEqual(next.status, crd.status)) return false;
    await this.deps.crds.guaranteedUpdate(
      undefined,
      crd.metadata.name!,
      (cur) => {
        if (cur.metadata.uid !== crd.metadata.uid) return cur;
        return { ...cur, status: next.status } as KubeObject;
      },
      { subresource: 'status' },
    );
    return true;
  }

  private serve(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name!;
    const signature = JSON.stringify([crd.metadata.uid, crd.spec, crd.status?.acceptedNames]);
    const current = this.serving.get(name);
    if (current?.signature === signature) return;
    const defs = servedDefs(crd);
    if (!defs.length) {
      void this.unserve(name);
      return;
    }
    const storageDef = defs[0]!;
    const prefix = `/registry/${storageDef.storage!.resource}/`;
    if (current && current.prefix !== prefix) void this.dropCacher(current.prefix);
    for (const k of current?.keys ?? []) this.deps.registry.delete(k);
    const cacher = this.cacher(prefix);
    const storageApiVersion = apiVersionOf(crd.spec.group, storageDef.crd.storageVersion);
    const keys: string[] = [];
    const webhook = crd.spec.conversion?.strategy === 'Webhook' ? new WebhookConverter(crd.spec.conversion, storageDef.kind, this.serviceAddress) : undefined;
    const storageServing = crd.spec.versions.find((v) => v.storage);
    for (const def of defs) {
      const apiVersion = apiVersionOf(def.group, def.version);
      let strategy: Strategy;
      if (webhook && apiVersion !== storageApiVersion) {
        // Objects are converted by the webhook on the way in and out; inside, they are in the storage version and follow its schema.
        const storage = { ...def.crd, schema: storageServing?.schema?.openAPIV3Schema };
        strategy = customResourceStrategy(storage, storageApiVersion, def.kind, storageApiVersion);
        delete strategy.toExternal;
        strategy.convert = {
          fromStorage: (objs) => webhook.convert(objs, apiVersion),
          toStorage: async (o) => (await webhook.convert([{ ...o, apiVersion, kind: def.kind }], storageApiVersion))[0]!,
        };
      } else {
        strategy = customResourceStrategy(def.crd, apiVersion, def.kind, storageApiVersion);
        // Objects stored before the storage version moved here are still in their old version: the webhook converts them on the way out.
        if (webhook) strategy.convert = { fromStorage: (objs) => webhook.convert(objs, apiVersion), toStorage: async (o) => o };
      }
      const key = `${def.group}/${def.version}/${def.resource}`;
      this.deps.registry.set(key, this.deps.newStore(def, strategy, cacher));
      keys.push(key);
    }
    this.serving.set(name, { signature, keys, prefix });
    this.deps.catalog.setCustom(name, defs);
  }

  private async unserve(name: string): Promise<void> {
    const current = this.serving.get(name);
    if (!current) return;
    this.serving.delete(name);
    for (const k of current.keys) this.deps.registry.delete(k);
    this.deps.catalog.removeCustom(name);
    if (![...this.serving.values()].some((s) => s.prefix === current.prefix)) await this.dropCacher(current.prefix);
  }

  /** Deletes every custom resource of a deleted CRD, then lets the CRD go (crd_finalizer.go). */
  private async finalize(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata.name!;
    const setTerminating = async (reason: string, message: string) => {
      await this.deps.crds.guaranteedUpdate(
        undefined,
        name,
        (cur) => {
          const c = structuredClone(asCrd(cur));
          setCondition(c, { type: 'Terminating', status: 'True', reason, message });
          return c as unknown as KubeObject;
        },
        { subresource: 'status' },
      );
    };
    const key = this.serving.get(name)?.keys[0];
    const store = key ? this.deps.registry.get(key) : undefined;
    if (store) {
      const cond = crd.status?.conditions?.find((c) => c.type === 'Terminating');
      if (cond?.reason !== 'InstanceDeletionInProgress') {
        await setTerminating('InstanceDeletionInProgress', 'CustomResource deletion is in progress');
        return;
      }
      const list = await store.list(undefined, {});
      for (const item of list.items) {
        try {
          await store.delete(item.metadata.namespace, item.metadata.name!, {});
        } catch (e) {
          if (!(e instanceof StatusError && e.status.reason === 'NotFound')) throw e;
        }
      }
      const left = await store.list(undefined, { limit: 1 });
      if (left.items.length) {
        // Instances held by finalizers of their own: wait for them.
        this.queue.later(name);
        return;
      }
    }
    await this.deps.crds.guaranteedUpdate(undefined, name, (cur) => {
      const c = structuredClone(cur);
      c.metadata.finalizers = (c.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
      return c;
    });
  }
}
