/**
 * The catalogue of served resources: one line per resource, naming its group,
 * version, kind, plural and singular names, scope, short names, categories,
 * subresources and schema. Discovery, OpenAPI, REST mapping in clients and the
 * apiserver's routing all read this table; nothing else lists resources.
 */
import type { TObject } from '@sinclair/typebox';
import * as core from './kinds/core-v1.js';
import * as apps from './kinds/apps-v1.js';
import * as batch from './kinds/batch-v1.js';
import * as coordination from './kinds/coordination-v1.js';
import * as discovery from './kinds/discovery-v1.js';
import * as eventsV1 from './kinds/events-v1.js';
import * as scheduling from './kinds/scheduling-v1.js';
import * as admissionregistration from './kinds/admissionregistration-v1.js';
import * as autoscaling from './kinds/autoscaling-v1.js';
import * as autoscalingV2 from './kinds/autoscaling-v2.js';
import * as policy from './kinds/policy-v1.js';
import * as authz from './kinds/authorization-v1.js';
import * as authn from './kinds/authentication-v1.js';
import * as rbac from './kinds/rbac-v1.js';
import * as flowcontrol from './kinds/flowcontrol-v1.js';
import * as networking from './kinds/networking-v1.js';
import * as node from './kinds/node-v1.js';
import * as certificates from './kinds/certificates-v1.js';
import * as apiextensions from './kinds/apiextensions-v1.js';
import * as apiregistration from './kinds/apiregistration-v1.js';
import * as storage from './kinds/storage-v1.js';

export const STANDARD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;
export const SUBRESOURCE_VERBS = ['get', 'patch', 'update'] as const;

export interface SubresourceDef {
  /** What the subresource answers with, when it is not the parent kind. */
  kind?: { group: string; version: string; kind: string };
  verbs: readonly string[];
}

export interface ResourceDef {
  group: string;
  version: string;
  kind: string;
  /** Plural, lower case: the URL segment. */
  resource: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly string[];
  subresources: Readonly<Record<string, SubresourceDef>>;
  schema: TObject;
  /**
   * Objects that are only ever created and answered (reviews, bindings): nothing
   * is stored under their own key.
   */
  virtual?: boolean;
  /** Where the objects live when another resource's storage is shared. */
  storage?: { group: string; resource: string };
  /** The release since which the kind is deprecated: every request gets a deprecation warning, as upstream. */
  deprecatedSince?: string;
  /** The kind of its lists, when not `<Kind>List` (a CRD's `names.listKind`). */
  listKind?: string;
  /** Served in JSON and YAML only: kubeling has no protobuf wire table for the kind yet. */
  protobuf?: false;
}

type Opts = Partial<Pick<ResourceDef, 'shortNames' | 'categories' | 'verbs' | 'virtual' | 'storage' | 'deprecatedSince' | 'protobuf'>> & {
  subresources?: Record<string, SubresourceDef>;
};

function def(group: string, version: string, kind: string, resource: string, namespaced: boolean, schemaOf: object, o: Opts = {}): ResourceDef {
  // Typed loosely here: checking every kind's static type against TObject is needlessly deep for tsc.
  const schema = schemaOf as TObject;
  return {
    group,
    version,
    kind,
    resource,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: o.shortNames ?? [],
    categories: o.categories ?? [],
    verbs: o.verbs ?? STANDARD_VERBS,
    subresources: o.subresources ?? {},
    schema,
    ...(o.virtual ? { virtual: true } : {}),
    ...(o.storage ? { storage: o.storage } : {}),
    ...(o.deprecatedSince ? { deprecatedSince: o.deprecatedSince } : {}),
    ...(o.protobuf === false ? { protobuf: false as const } : {}),
  };
}

const status = { status: { verbs: SUBRESOURCE_VERBS } };
const scale = { scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: SUBRESOURCE_VERBS } };
const ALL = ['all'];
const CREATE_ONLY = ['create'];

export const resources: readonly ResourceDef[] = [
  // core/v1
  def('', 'v1', 'Namespace', 'namespaces', false, core.Namespace, {
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: { ...status, finalize: { verbs: ['update'] } },
  }),
  def('', 'v1', 'Node', 'nodes', false, core.Node, {
    shortNames: ['no'],
    subresources: { ...status, proxy: { kind: { group: '', version: 'v1', kind: 'NodeProxyOptions' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] } },
  }),
  def('', 'v1', 'Pod', 'pods', true, core.Pod, {
    shortNames: ['po'],
    categories: ALL,
    subresources: {
      ...status,
      binding: { kind: { group: '', version: 'v1', kind: 'Binding' }, verbs: ['create'] },
      log: { kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get'] },
      exec: { kind: { group: '', version: 'v1', kind: 'PodExecOptions' }, verbs: ['create', 'get'] },
      attach: { kind: { group: '', version: 'v1', kind: 'PodAttachOptions' }, verbs: ['create', 'get'] },
      portforward: { kind: { group: '', version: 'v1', kind: 'PodPortForwardOptions' }, verbs: ['create', 'get'] },
      proxy: { kind: { group: '', version: 'v1', kind: 'PodProxyOptions' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] },
      eviction: { kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
      ephemeralcontainers: { kind: { group: '', version: 'v1', kind: 'Pod' }, verbs: SUBRESOURCE_VERBS },
    },
  }),
  def('', 'v1', 'Binding', 'bindings', true, core.Binding, { verbs: CREATE_ONLY, virtual: true }),
  def('', 'v1', 'PodTemplate', 'podtemplates', true, core.PodTemplate),
  def('', 'v1', 'Service', 'services', true, core.Service, {
    shortNames: ['svc'],
    categories: ALL,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: {
      ...status,
      proxy: { kind: { group: '', version: 'v1', kind: 'ServiceProxyOptions' }, verbs: ['create', 'delete', 'get', 'patch', 'update'] },
    },
  }),
  def('', 'v1', 'Endpoints', 'endpoints', true, core.Endpoints, { shortNames: ['ep'] }),
  def('', 'v1', 'ConfigMap', 'configmaps', true, core.ConfigMap, { shortNames: ['cm'] }),
  def('', 'v1', 'Secret', 'secrets', true, core.Secret),
  def('', 'v1', 'ServiceAccount', 'serviceaccounts', true, core.ServiceAccount, {
    shortNames: ['sa'],
    subresources: { token: { kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] } },
  }),
  def('', 'v1', 'Event', 'events', true, core.Event, { shortNames: ['ev'] }),
  def('', 'v1', 'LimitRange', 'limitranges', true, core.LimitRange, { shortNames: ['limits'] }),
  def('', 'v1', 'ResourceQuota', 'resourcequotas', true, core.ResourceQuota, { shortNames: ['quota'], subresources: status }),
  def('', 'v1', 'ReplicationController', 'replicationcontrollers', true, core.ReplicationController, {
    shortNames: ['rc'],
    categories: ALL,
    subresources: { ...scale, ...status },
  }),
  def('', 'v1', 'ComponentStatus', 'componentstatuses', false, core.ComponentStatus, {
    shortNames: ['cs'],
    verbs: ['get', 'list'],
    virtual: true,
    deprecatedSince: '1.19',
  }),
  def('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, core.PersistentVolumeClaim, { shortNames: ['pvc'], subresources: status }),
  def('', 'v1', 'PersistentVolume', 'persistentvolumes', false, core.PersistentVolume, { shortNames: ['pv'], subresources: status }),

  // apps/v1
  def('apps', 'v1', 'Deployment', 'deployments', true, apps.Deployment, { shortNames: ['deploy'], categories: ALL, subresources: { ...scale, ...status } }),
  def('apps', 'v1', 'ReplicaSet', 'replicasets', true, apps.ReplicaSet, { shortNames: ['rs'], categories: ALL, subresources: { ...scale, ...status } }),
  def('apps', 'v1', 'DaemonSet', 'daemonsets', true, apps.DaemonSet, { shortNames: ['ds'], categories: ALL, subresources: status }),
  def('apps', 'v1', 'StatefulSet', 'statefulsets', true, apps.StatefulSet, { shortNames: ['sts'], categories: ALL, subresources: { ...scale, ...status } }),
  def('apps', 'v1', 'ControllerRevision', 'controllerrevisions', true, apps.ControllerRevision),

  // events.k8s.io/v1 shares the storage of core/v1 events
  def('events.k8s.io', 'v1', 'Event', 'events', true, eventsV1.Event, { shortNames: ['ev'], storage: { group: '', resource: 'events' } }),

  // authentication.k8s.io/v1
  def('authentication.k8s.io', 'v1', 'TokenReview', 'tokenreviews', false, authn.TokenReview, { verbs: CREATE_ONLY, virtual: true }),
  def('authentication.k8s.io', 'v1', 'SelfSubjectReview', 'selfsubjectreviews', false, authn.SelfSubjectReview, { verbs: CREATE_ONLY, virtual: true }),

  // authorization.k8s.io/v1
  def('authorization.k8s.io', 'v1', 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true, authz.LocalSubjectAccessReview, {
    verbs: CREATE_ONLY,
    virtual: true,
  }),
  def('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', false, authz.SelfSubjectAccessReview, {
    verbs: CREATE_ONLY,
    virtual: true,
  }),
  def('authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', false, authz.SelfSubjectRulesReview, {
    verbs: CREATE_ONLY,
    virtual: true,
  }),
  def('authorization.k8s.io', 'v1', 'SubjectAccessReview', 'subjectaccessreviews', false, authz.SubjectAccessReview, { verbs: CREATE_ONLY, virtual: true }),

  // autoscaling/v1
  def('autoscaling', 'v1', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, autoscaling.HorizontalPodAutoscaler, {
    shortNames: ['hpa'],
    categories: ALL,
    subresources: status,
  }),
  // autoscaling/v2: the storage version; v1 is a conversion of the same stored objects (registry/autoscaling).
  def('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', true, autoscalingV2.HorizontalPodAutoscaler, {
    shortNames: ['hpa'],
    categories: ALL,
    subresources: status,
  }),

  // batch/v1
  def('batch', 'v1', 'CronJob', 'cronjobs', true, batch.CronJob, { shortNames: ['cj'], categories: ALL, subresources: status }),
  def('batch', 'v1', 'Job', 'jobs', true, batch.Job, { categories: ALL, subresources: status }),

  // certificates.k8s.io/v1
  def('certificates.k8s.io', 'v1', 'CertificateSigningRequest', 'certificatesigningrequests', false, certificates.CertificateSigningRequest, {
    shortNames: ['csr'],
    subresources: { approval: { verbs: SUBRESOURCE_VERBS }, ...status },
  }),

  // networking.k8s.io/v1
  def('networking.k8s.io', 'v1', 'IngressClass', 'ingressclasses', false, networking.IngressClass),
  def('networking.k8s.io', 'v1', 'Ingress', 'ingresses', true, networking.Ingress, { shortNames: ['ing'], subresources: status }),
  def('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', true, networking.NetworkPolicy, { shortNames: ['netpol'] }),
  def('networking.k8s.io', 'v1', 'ServiceCIDR', 'servicecidrs', false, networking.ServiceCIDR, { subresources: status }),
  def('networking.k8s.io', 'v1', 'IPAddress', 'ipaddresses', false, networking.IPAddress, { shortNames: ['ip'] }),

  // storage.k8s.io/v1
  def('storage.k8s.io', 'v1', 'CSIDriver', 'csidrivers', false, storage.CSIDriver),
  def('storage.k8s.io', 'v1', 'CSINode', 'csinodes', false, storage.CSINode),
  def('storage.k8s.io', 'v1', 'CSIStorageCapacity', 'csistoragecapacities', true, storage.CSIStorageCapacity),
  def('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false, storage.StorageClass, { shortNames: ['sc'] }),
  def('storage.k8s.io', 'v1', 'VolumeAttachment', 'volumeattachments', false, storage.VolumeAttachment, { subresources: status }),

  // policy/v1
  def('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, policy.PodDisruptionBudget, { shortNames: ['pdb'], subresources: status }),

  // rbac.authorization.k8s.io/v1
  def('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false, rbac.ClusterRoleBinding),
  def('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false, rbac.ClusterRole),
  def('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings', true, rbac.RoleBinding),
  def('rbac.authorization.k8s.io', 'v1', 'Role', 'roles', true, rbac.Role),

  // admissionregistration.k8s.io/v1
  def(
    'admissionregistration.k8s.io',
    'v1',
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfigurations',
    false,
    admissionregistration.MutatingWebhookConfiguration,
    { categories: ['api-extensions'] },
  ),
  def(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    false,
    admissionregistration.ValidatingWebhookConfiguration,
    { categories: ['api-extensions'] },
  ),
  def(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingAdmissionPolicy',
    'validatingadmissionpolicies',
    false,
    admissionregistration.ValidatingAdmissionPolicy,
    { categories: ['api-extensions'], subresources: status },
  ),
  def(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingAdmissionPolicyBinding',
    'validatingadmissionpolicybindings',
    false,
    admissionregistration.ValidatingAdmissionPolicyBinding,
    { categories: ['api-extensions'] },
  ),
  // apiextensions.k8s.io/v1
  def('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, apiextensions.CustomResourceDefinition, {
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    subresources: status,
    // Its OpenAPI schema type (JSONSchemaProps) marshals itself by hand in Go; kubeling's wire tables do not describe it yet.
    protobuf: false,
  }),
  // apiregistration.k8s.io/v1
  def('apiregistration.k8s.io', 'v1', 'APIService', 'apiservices', false, apiregistration.APIService, {
    categories: ['api-extensions'],
    subresources: status,
    // A kube-aggregator type: the wire tables are generated from k8s.io/api only.
    protobuf: false,
  }),
  // scheduling.k8s.io/v1
  def('scheduling.k8s.io', 'v1', 'PriorityClass', 'priorityclasses', false, scheduling.PriorityClass, { shortNames: ['pc'] }),

  // coordination.k8s.io/v1
  def('coordination.k8s.io', 'v1', 'Lease', 'leases', true, coordination.Lease),
  // node.k8s.io/v1
  def('node.k8s.io', 'v1', 'RuntimeClass', 'runtimeclasses', false, node.RuntimeClass),
  // discovery.k8s.io/v1
  def('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', true, discovery.EndpointSlice),
  // flowcontrol.apiserver.k8s.io/v1
  def('flowcontrol.apiserver.k8s.io', 'v1', 'FlowSchema', 'flowschemas', false, flowcontrol.FlowSchema, { subresources: status }),
  def('flowcontrol.apiserver.k8s.io', 'v1', 'PriorityLevelConfiguration', 'prioritylevelconfigurations', false, flowcontrol.PriorityLevelConfiguration, {
    subresources: status,
  }),
];

/** Group order as the upstream apiserver lists them (discovery priority). */
export const GROUP_ORDER = [
  '',
  // The aggregator lists its own group first (kube-aggregator handler_apis.go).
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
];

export interface GroupVersion {
  group: string;
  version: string;
}

/**
 * Kubernetes' version order (k8s.io/apimachinery/pkg/version CompareKubeAwareVersionStrings):
 * GA before beta before alpha, higher numbers first, then anything else alphabetically.
 * A group's first version in this order is its preferred version (autoscaling: v2, then v1).
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return { major: Number(m[1]), stage: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, minor: m[3] ? Number(m[3]) : 0 };
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && pb) return pb.stage - pa.stage || pb.major - pa.major || pb.minor - pa.minor;
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Served group-versions in discovery order: groups in GROUP_ORDER, each group's versions in Kubernetes' order. */
export function groupVersions(): GroupVersion[] {
  const out: GroupVersion[] = [];
  for (const g of GROUP_ORDER) {
    const versions = [...new Set(resources.filter((r) => r.group === g).map((r) => r.version))].sort(compareKubeAwareVersions);
    for (const v of versions) out.push({ group: g, version: v });
  }
  return out;
}

export function findResource(group: string, version: string, resource: string): ResourceDef | undefined {
  return resources.find((r) => r.group === group && r.version === version && r.resource === resource);
}

export function findByKind(group: string, version: string, kind: string): ResourceDef | undefined {
  return resources.find((r) => r.group === group && r.version === version && r.kind === kind);
}

/** The kind of a resource's lists. */
export const listKindOf = (r: ResourceDef): string => r.listKind ?? `${r.kind}List`;

/** Storage identity: shared storage (events.k8s.io events) resolves to the owner. */
export function storageOf(r: ResourceDef): { group: string; resource: string } {
  return r.storage ?? { group: r.group, resource: r.resource };
}
