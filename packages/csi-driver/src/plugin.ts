/**
 * One node's CSI plugin as the `kubeling-csi-driver` process runs it: the
 * hostpath.csi.kubeling.io driver served on its unix socket, and beside it, as
 * the sidecar containers of a CSI node plugin pod would be, the
 * node-driver-registrar, the external-provisioner in node-deployment mode
 * with its capacity publisher, the external-attacher and the
 * external-resizer for this node.
 *
 * Start order follows the sidecars': serve the driver, probe it and learn
 * its name, capabilities and node info over the socket (as they do over
 * theirs), start the informers and the controllers, and only then offer the
 * registration socket, so the kubelet registers a driver that is ready.
 * `stop()` closes the registration socket first, then the controllers and
 * informers, then the driver socket (removing both socket files).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import type { Logger } from 'pino';
import { CsiClient, serveCsi, serveRegistration } from '@kubeling/csi';
import { type ClientConfig, EventRecorder, InformerFactory, type RestClient, RestClient as Client } from '@kubeling/client';
import { hostpathServices } from './driver/index.js';
import { Attacher } from './sidecars/attacher.js';
import { CapacityPublisher, managedBy } from './sidecars/capacity.js';
import type { CsiCall, DriverInfo, Recorder } from './sidecars/deps.js';
import { kubeApi } from './sidecars/kube.js';
import { SidecarLoops } from './sidecars/loops.js';
import { Provisioner } from './sidecars/provisioner.js';
import { socketPathOf, startRegistrar } from './sidecars/registrar.js';
import { Resizer } from './sidecars/resizer.js';
import {
  type CSINode,
  type CSIStorageCapacity,
  LABEL_DRIVER_NAME,
  LABEL_MANAGED_BY,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type StorageClass,
  type VolumeAttachment,
} from './sidecars/types.js';
import { errorText } from './sidecars/util.js';

export const DRIVER_NAME = 'hostpath.csi.kubeling.io';

export interface CsiDriverOptions {
  /** The apiserver and this process's identity. */
  client: ClientConfig | RestClient;
  /** The name the driver reports (GetPluginInfo); default hostpath.csi.kubeling.io. */
  driverName?: string;
  /** The node this plugin serves; also the CSI node_id. */
  nodeId: string;
  /** The driver socket this process creates: `unix:///…/csi.sock`. */
  endpoint: string;
  stateDir: string;
  capacityBytes: number;
  maxVolumesPerNode?: number;
  /** The kubelet's plugins_registry; no registrar without it. */
  registrationDir?: string;
  /** Where CSIStorageCapacity objects go (default kube-system). */
  capacityNamespace?: string;
  capacityPollMs?: number;
  /** Immediate binding: the jittered delay before trying to become a claim's owner (default 20 s, doubling to 60 s). */
  ownerBaseDelayMs?: number;
  ownerMaxDelayMs?: number;
  workers?: number;
  /** Every CSI call's deadline (the sidecars' --timeout). */
  timeoutMs?: number;
  log: Logger;
}

export interface RunningCsiDriver {
  driver: DriverInfo;
  /** The registration socket, when a registration dir was given. */
  registrationSocket: string | undefined;
  stop(): Promise<void>;
}

/** Removes a unix socket file a closed server may leave behind. */
function removeSocket(endpoint: string): void {
  const path = socketPathOf(endpoint);
  try {
    if (statSync(path).isSocket()) rmSync(path, { force: true });
  } catch {
    // already gone
  }
}

/** GetPluginInfo, the capabilities and NodeGetInfo, as the sidecars read them at start. */
async function describeDriver(csi: CsiCall, nodeName: string): Promise<DriverInfo> {
  await csi('Identity', 'Probe', {});
  const info = await csi<{ name: string }>('Identity', 'GetPluginInfo', {});
  const plugin = await csi<{ capabilities?: { service?: { type?: string } | null }[] }>('Identity', 'GetPluginCapabilities', {});
  const controller = await csi<{ capabilities?: { rpc?: { type?: string } | null }[] }>('Controller', 'ControllerGetCapabilities', {});
  const node = await csi<{ node_id: string; accessible_topology?: { segments?: Record<string, string> } | null }>('Node', 'NodeGetInfo', {});
  const segments = node.accessible_topology?.segments;
  return {
    name: info.name,
    nodeName,
    nodeId: node.node_id,
    topology: segments && Object.keys(segments).length ? { ...segments } : undefined,
    plugin: new Set((plugin.capabilities ?? []).map((c) => c.service?.type).filter((t): t is string => !!t)),
    controller: new Set((controller.capabilities ?? []).map((c) => c.rpc?.type).filter((t): t is string => !!t)),
  };
}

/** Starts the driver and its sidecars; rejects (having undone what it started) when any part cannot start. */
export async function startCsiDriver(o: CsiDriverOptions): Promise<RunningCsiDriver> {
  const log = o.log;
  const cleanups: (() => Promise<void> | void)[] = [];
  const undo = async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => undefined);
  };
  try {
    const server = await serveCsi(
      hostpathServices({
        nodeId: o.nodeId,
        stateDir: o.stateDir,
        capacityBytes: o.capacityBytes,
        driverName: o.driverName ?? DRIVER_NAME,
        ...(o.maxVolumesPerNode !== undefined ? { maxVolumesPerNode: o.maxVolumesPerNode } : {}),
      }),
      o.endpoint,
    );
    cleanups.push(async () => {
      await server.close();
      removeSocket(o.endpoint);
    });
    log.info({ endpoint: o.endpoint }, 'driver serving');
    const csiClient = new CsiClient(o.endpoint);
    cleanups.push(() => csiClient.close());
    const csi: CsiCall = (service, method, req) => csiClient.call(service, method, req, { timeoutMs: o.timeoutMs ?? 60_000 });
    const driver = await describeDriver(csi, o.nodeId);
    log.info({ driver: driver.name, nodeId: driver.nodeId, topology: driver.topology, controller: [...driver.controller] }, 'driver described');

    const client = o.client instanceof Client ? o.client : new Client(o.client, { userAgent: `kubeling-csi-driver/${o.nodeId}` });
    if (!(o.client instanceof Client)) cleanups.push(() => client.close());
    const api = kubeApi(client);
    const recorder = (component: string): Recorder => {
      const r = new EventRecorder(client, { component, host: o.nodeId });
      return (obj, type, reason, message) => void r.event(obj, type, reason, message);
    };
    const factory = new InformerFactory(client, { resyncMs: 10 * 60_000, onError: (e) => log.warn({ err: errorText(e) }, 'list or watch failed; retrying') });
    cleanups.push(() => factory.stop());
    const ns = o.capacityNamespace ?? 'kube-system';
    const inf = {
      claims: factory.informer<PersistentVolumeClaim>({ path: '/api/v1/persistentvolumeclaims' }),
      volumes: factory.informer<PersistentVolume>({ path: '/api/v1/persistentvolumes' }),
      classes: factory.informer<StorageClass>({ path: '/apis/storage.k8s.io/v1/storageclasses' }),
      attachments: factory.informer<VolumeAttachment>({ path: '/apis/storage.k8s.io/v1/volumeattachments' }),
      csiNodes: factory.informer<CSINode>({ path: '/apis/storage.k8s.io/v1/csinodes', fieldSelector: `metadata.name=${o.nodeId}` }),
      capacities: factory.informer<CSIStorageCapacity>({
        path: `/apis/storage.k8s.io/v1/namespaces/${ns}/csistoragecapacities`,
        labelSelector: `${LABEL_DRIVER_NAME}=${driver.name},${LABEL_MANAGED_BY}=${managedBy(o.nodeId)}`,
      }),
    };
    const identity = `${Date.now()}-${randomInt(10_000)}-${driver.name}-${o.nodeId}`;
    const common = { driver, csi, log };
    const loopsRef: { loops?: SidecarLoops } = {};
    const sidecars = {
      provisioner: new Provisioner({
        ...common,
        log: log.child({ sidecar: 'external-provisioner' }),
        identity,
        api,
        claims: inf.claims.store,
        volumes: inf.volumes.store,
        classes: inf.classes.store,
        attachments: inf.attachments.store,
        event: recorder(`${driver.name}_${o.nodeId}_${randomUUID()}`),
        ...(o.ownerBaseDelayMs !== undefined ? { ownerBaseDelayMs: o.ownerBaseDelayMs } : {}),
        ...(o.ownerMaxDelayMs !== undefined ? { ownerMaxDelayMs: o.ownerMaxDelayMs } : {}),
        onCapacityChange: () => loopsRef.loops?.refreshCapacity(),
      }),
      attacher: new Attacher({
        ...common,
        log: log.child({ sidecar: 'external-attacher' }),
        api,
        attachments: inf.attachments.store,
        volumes: inf.volumes.store,
        csiNodes: inf.csiNodes.store,
      }),
      resizer: new Resizer({
        ...common,
        log: log.child({ sidecar: 'external-resizer' }),
        api,
        claims: inf.claims.store,
        volumes: inf.volumes.store,
        classes: inf.classes.store,
        event: recorder(`external-resizer ${driver.name}`),
      }),
      capacity: new CapacityPublisher({
        ...common,
        log: log.child({ sidecar: 'capacity' }),
        namespace: ns,
        api,
        classes: inf.classes.store,
        capacities: inf.capacities.store,
      }),
    };
    const loops = new SidecarLoops(sidecars, inf, log);
    loopsRef.loops = loops;
    loops.wire();
    factory.start();
    await factory.waitForSync();
    loops.run({ ...(o.workers ? { workers: o.workers } : {}), ...(o.capacityPollMs !== undefined ? { capacityPollMs: o.capacityPollMs } : {}) });
    cleanups.push(() => loops.stop());
    log.info({ node: o.nodeId }, 'sidecars started');

    let registrationSocket: string | undefined;
    if (o.registrationDir) {
      const reg = await startRegistrar({
        driverName: driver.name,
        driverSocket: o.endpoint,
        registrationDir: o.registrationDir,
        log: log.child({ sidecar: 'node-driver-registrar' }),
        serve: serveRegistration,
      });
      cleanups.push(async () => {
        await reg.close();
        removeSocket(reg.socketPath);
      });
      registrationSocket = reg.socketPath;
    }
    let stopped: Promise<void> | undefined;
    return {
      driver,
      registrationSocket,
      stop: () => (stopped ??= undo()),
    };
  } catch (e) {
    await undo();
    throw e;
  }
}
