/** The controllers this process can run, by name (`--controllers=*,-name`). */
import type { ControllerDescriptor } from '../context.js';
import { BootstrapSigner } from './bootstrap/signer.js';
import { TokenCleaner } from './bootstrap/cleaner.js';
import { CronJobController } from './cronjob/controller.js';
import { DaemonSetController } from './daemonset/controller.js';
import { DeploymentController } from './deployment/controller.js';
import { DisruptionController } from './disruption/controller.js';
import { EndpointsController } from './endpoints/controller.js';
import { EndpointSliceController } from './endpointslice/controller.js';
import { EndpointSliceMirroringController } from './endpointslicemirroring/controller.js';
import { EphemeralVolumeController } from './ephemeralvolume/controller.js';
import { AttachDetachController } from './attachdetach/controller.js';
import { PersistentVolumeBinderController } from './persistentvolume/controller.js';
import { PVCProtectionController } from './pvcprotection/controller.js';
import { PVProtectionController } from './pvprotection/controller.js';
import { GarbageCollector } from './garbagecollector/controller.js';
import { HorizontalPodAutoscalerController } from './podautoscaler/controller.js';
import { JobController } from './job/controller.js';
import { NamespaceController } from './namespace/controller.js';
import { NodeLifecycleController } from './nodelifecycle/controller.js';
import { PODGC_DEFAULTS, PodGCController } from './podgc/controller.js';
import { RESOURCEQUOTA_DEFAULTS, ResourceQuotaController } from './resourcequota/controller.js';
import { REPLICATIONCONTROLLER_FLAVOUR, ReplicaSetController } from './replicaset/controller.js';
import { ServiceAccountController } from './serviceaccount/controller.js';
import { ServiceAccountTokenController } from './serviceaccounttoken/controller.js';
import { StatefulSetController } from './statefulset/controller.js';
import { TTLAfterFinishedController } from './ttlafterfinished/controller.js';
import { RootCACertPublisher } from './rootcacertpublisher/controller.js';
import { CSRApprovingController } from './certificates/approver.js';
import { CSRCLEANER_DEFAULTS, CSRCleanerController } from './certificates/cleaner.js';
import { CSRSigningController } from './certificates/signer.js';

const table: ControllerDescriptor[] = [
  { name: 'attachdetach', create: (ctx) => new AttachDetachController(ctx) },
  { name: 'bootstrapsigner', disabledByDefault: true, create: (ctx) => new BootstrapSigner(ctx) },
  { name: 'tokencleaner', disabledByDefault: true, create: (ctx) => new TokenCleaner(ctx) },
  { name: 'cronjob', create: (ctx) => new CronJobController(ctx) },
  { name: 'daemonset', create: (ctx) => new DaemonSetController(ctx) },
  { name: 'deployment', create: (ctx) => new DeploymentController(ctx) },
  { name: 'disruption', create: (ctx) => new DisruptionController(ctx) },
  { name: 'endpoints', create: (ctx) => new EndpointsController(ctx) },
  { name: 'endpointslice', create: (ctx) => new EndpointSliceController(ctx) },
  { name: 'endpointslicemirroring', create: (ctx) => new EndpointSliceMirroringController(ctx) },
  { name: 'ephemeral-volume', create: (ctx) => new EphemeralVolumeController(ctx) },
  { name: 'garbagecollector', create: (ctx) => new GarbageCollector(ctx) },
  { name: 'horizontalpodautoscaling', create: (ctx) => new HorizontalPodAutoscalerController(ctx, ctx.hpa) },
  { name: 'job', create: (ctx) => new JobController(ctx) },
  { name: 'namespace', create: (ctx) => new NamespaceController(ctx) },
  { name: 'nodelifecycle', create: (ctx) => new NodeLifecycleController(ctx, ctx.nodeMonitorGracePeriodMs, ctx.nodeMonitorPeriodMs) },
  { name: 'persistentvolume-binder', create: (ctx) => new PersistentVolumeBinderController(ctx) },
  { name: 'podgc', create: (ctx) => new PodGCController(ctx, { ...PODGC_DEFAULTS, ...ctx.podGC }) },
  { name: 'pv-protection', create: (ctx) => new PVProtectionController(ctx) },
  { name: 'pvc-protection', create: (ctx) => new PVCProtectionController(ctx) },
  { name: 'replicaset', create: (ctx) => new ReplicaSetController(ctx) },
  { name: 'resourcequota', create: (ctx) => new ResourceQuotaController(ctx, RESOURCEQUOTA_DEFAULTS) },
  { name: 'replicationcontroller', create: (ctx) => new ReplicaSetController(ctx, REPLICATIONCONTROLLER_FLAVOUR) },
  { name: 'serviceaccount', create: (ctx) => new ServiceAccountController(ctx) },
  { name: 'serviceaccount-token', create: (ctx) => new ServiceAccountTokenController(ctx) },
  { name: 'statefulset', create: (ctx) => new StatefulSetController(ctx) },
  { name: 'ttl-after-finished', create: (ctx) => new TTLAfterFinishedController(ctx) },
  { name: 'root-ca-cert-publisher', create: (ctx) => new RootCACertPublisher(ctx) },
  { name: 'csrsigning', create: (ctx) => new CSRSigningController(ctx) },
  { name: 'csrapproving', create: (ctx) => new CSRApprovingController(ctx) },
  { name: 'csrcleaner', create: (ctx) => new CSRCleanerController(ctx, { ...CSRCLEANER_DEFAULTS, ...ctx.csrCleaner }) },
];

const names = new Set<string>();
for (const d of table) {
  if (names.has(d.name)) throw new Error(`controller ${d.name} registered twice`);
  names.add(d.name);
}

export const controllerDescriptors: readonly ControllerDescriptor[] = table;

/** `--controllers` semantics: `*` is every default controller, `name` adds one, `-name` removes one. */
export function selectControllers(spec: string[]): ControllerDescriptor[] {
  const on = new Set<string>();
  const off = new Set<string>();
  let star = false;
  for (const s of spec) {
    if (s === '*') star = true;
    else if (s.startsWith('-')) off.add(s.slice(1));
    else on.add(s);
  }
  for (const n of [...on, ...off]) if (!names.has(n)) throw new Error(`"${n}" is not in the list of known controllers`);
  return table.filter((d) => !off.has(d.name) && (on.has(d.name) || (star && !d.disabledByDefault)));
}
