/**
 * NodeRestriction (kubernetes plugin/pkg/admission/noderestriction): what a
 * kubelet — a user `system:node:<name>` in `system:nodes` — may write, beyond
 * what the Node authorizer lets it reach:
 *
 * - pods: create only mirror pods (annotation `kubernetes.io/config.mirror`)
 *   bound to itself, owned by its own Node, that reference no ServiceAccount,
 *   Secret, ConfigMap, ClusterTrustBundle, PVC or resource claim; delete only
 *   pods bound to itself; never update them; update the status only of pods
 *   bound to itself, without touching labels or resource claim statuses; evict
 *   only pods bound to itself; no other pod subresource (ephemeralcontainers
 *   in particular: a kubelet never adds a container to a pod).
 * - nodes: only its own; no configSource, no change of taints, and no label
 *   under `node-restriction.kubernetes.io/` or the `kubernetes.io`/`k8s.io`
 *   namespaces other than the kubelet's own labels.
 * - persistentvolumeclaims: only the status' capacity, conditions and
 *   allocated resources.
 * - serviceaccounts/token: only tokens bound to a pod on itself (by UID), for
 *   an audience that pod's volumes use.
 * - leases: only its own, in `kube-node-lease`; csinodes: only its own.
 *
 * Every refusal is 403 Forbidden in upstream's words. Other users pass.
 * It runs as mutating admission (before validation, as upstream's Admit) for
 * creates and updates, and as validating admission for deletes.
 */
import type { KubeObject, authenticationv1, corev1 } from '@kubeling/api';
import { failure, forbidden, jsonEqual, type GroupResource } from '@kubeling/apimachinery';
import type { Attributes, Decision } from '../auth/types.js';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';

/** A volume source that may name a Secret for its credentials. */
type SecretRefSource = { secretRef?: unknown; nodePublishSecretRef?: unknown };
const SECRET_REF_SOURCES = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'iscsi', 'scaleIO', 'storageos', 'csi'] as const;

/** A volume with the sources that refer to other objects (the api describes a Volume by its name only). */
type PodVolume = { [S in (typeof SECRET_REF_SOURCES)[number]]?: SecretRefSource } & {
  name: string;
  secret?: object;
  configMap?: object;
  persistentVolumeClaim?: object;
  azureFile?: { secretName?: string };
  projected?: { sources?: { secret?: object; configMap?: object; clusterTrustBundle?: object; serviceAccountToken?: { audience?: string } }[] };
};

type PodStatus = NonNullable<corev1.Pod['status']>;

/** A pod with the fields this plugin reads that the api does not describe yet. */
type RestrictedPod = Omit<corev1.Pod, 'spec' | 'status'> & {
  spec?: Omit<corev1.PodSpec, 'volumes'> & { volumes?: PodVolume[]; resourceClaims?: unknown[] };
  status?: PodStatus & { resourceClaimStatuses?: { name: string; resourceClaimName?: string | null }[] };
};

/** A node's spec with the (deprecated) configSource a kubelet may not set. */
type RestrictedNodeSpec = NonNullable<corev1.Node['spec']> & { configSource?: unknown };

type TokenRequest = authenticationv1.TokenRequest;
type PersistentVolumeClaim = corev1.PersistentVolumeClaim;

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export interface NodeRestrictionLookups {
  pod(namespace: string, name: string): Promise<KubeObject | undefined>;
  node(name: string): Promise<KubeObject | undefined>;
  /** For token audiences no volume of the pod names. */
  authorize(a: Attributes): Decision | Promise<Decision>;
}

/** The node a user is, if it is one: `system:node:<name>` in `system:nodes`. */
export function nodeIdentity(user: { name: string; groups: string[] } | undefined): string | undefined {
  if (!user?.name.startsWith('system:node:') || !user.groups.includes('system:nodes')) return undefined;
  return user.name.slice('system:node:'.length);
}

const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);

const inNamespace = (ns: string, domain: string) => ns === domain || ns.endsWith(`.${domain}`);

/** kubelet's IsKubeletLabel: the well-known labels, and the kubelet.kubernetes.io and node.kubernetes.io namespaces. */
function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
  return inNamespace(ns, 'kubelet.kubernetes.io') || inNamespace(ns, 'node.kubernetes.io');
}

/** Label keys a node may not set on itself. */
export function forbiddenNodeLabels(keys: Iterable<string>): string[] {
  const out: string[] = [];
  for (const key of keys) {
    const ns = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    if (inNamespace(ns, 'node-restriction.kubernetes.io')) out.push(key);
    else if ((inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io')) && !isKubeletLabel(key)) out.push(key);
  }
  return out.sort();
}

const HANDLED = new Set(['/pods', '/nodes', '/persistentvolumeclaims', '/serviceaccounts', 'coordination.k8s.io/leases', 'storage.k8s.io/csinodes']);

function groupResource(a: AdmissionAttributes): GroupResource {
  const i = a.resource.indexOf('/');
  return { group: a.resource.slice(0, i), resource: a.resource.slice(i + 1) };
}

export class NodeRestriction implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'NodeRestriction';
  constructor(private readonly lookups: NodeRestrictionLookups) {}

  handles(a: AdmissionAttributes): boolean {
    return HANDLED.has(a.resource) && nodeIdentity(a.user) !== undefined;
  }

  /** Creates and updates. */
  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'DELETE') await this.check(obj, a);
  }

  /** Deletes (the store runs only validating admission on DELETE). */
  async validate(_obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    if (a.operation === 'DELETE') await this.check(undefined, a);
  }

  private async check(obj: KubeObject | undefined, a: AdmissionAttributes): Promise<void> {
    const node = nodeIdentity(a.user)!;
    const name = a.name ?? obj?.metadata.name ?? a.old?.metadata.name ?? obj?.metadata.generateName ?? 'Unknown';
    const deny = (why: string) => forbidden(groupResource(a), name || 'Unknown', why);
    if (!node) throw deny(`could not determine node from user "${a.user!.name}"`);
    switch (a.resource) {
      case '/pods':
        if (!a.subresource) return this.pod(obj, a, node, deny);
        if (a.subresource === 'status') return podStatus(obj!, a, node, deny);
        if (a.subresource === 'eviction') return this.eviction(obj, a, node, name, deny);
        throw deny(`unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
      case '/nodes':
        return nodeChange(obj, a, node, deny);
      case '/persistentvolumeclaims':
        if (a.subresource !== 'status') throw deny('may only update PVC status');
        return pvcStatus(obj!, a, node, deny);
      case '/serviceaccounts':
        if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
        return this.token(obj!, a, node, deny);
      case 'coordination.k8s.io/leases':
        if (a.namespace !== 'kube-node-lease') throw deny('can only access leases in the "kube-node-lease" system namespace');
        if ((a.operation === 'CREATE' ? obj?.metadata.name : (a.name ?? a.old?.metadata.name)) !== node)
          throw deny('can only access node lease with the same name as the requesting node');
        return;
      case 'storage.k8s.io/csinodes':
        if ((a.operation === 'CREATE' ? obj?.metadata.name : (a.name ?? a.old?.metadata.name)) !== node)
          throw deny('can only access CSINode with the same name as the requesting node');
        return;
    }
  }

  private async pod(obj: KubeObject | undefined, a: AdmissionAttributes, node: string, deny: (why: string) => Error): Promise<void> {
    if (a.operation === 'DELETE') {
      if ((a.old as RestrictedPod | undefined)?.spec?.nodeName !== node) throw deny(`node "${node}" can only delete pods with spec.nodeName set to itself`);
      return;
    }
    if (a.operation !== 'CREATE') throw deny(`unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    const pod = obj!;
    if (!Object.hasOwn(pod.metadata.annotations ?? {}, MIRROR_POD_ANNOTATION)) {
      throw deny(`pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    }
    const spec: NonNullable<RestrictedPod['spec']> = (pod as RestrictedPod).spec ?? {};
    if (spec.nodeName !== node) throw deny(`node "${node}" can only create pods with spec.nodeName set to itself`);
    const refs = pod.metadata.ownerReferences ?? [];
    if (refs.length > 1) throw deny(`node "${node}" can only create pods with a single owner reference set to itself`);
    if (refs.length === 0) throw deny(`node "${node}" can only create pods with an owner reference set to itself`);
    const ref = refs[0]!;
    if (ref.apiVersion !== 'v1' || ref.kind !== 'Node' || ref.name !== node)
      throw deny(`node "${node}" can only create pods with an owner reference set to itself`);
    if (ref.controller !== true) throw deny(`node "${node}" can only create pods with a controller owner reference set to itself`);
    if (ref.blockOwnerDeletion === true) throw deny(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const self = await this.lookups.node(node);
    if (!self) throw notFoundAs('node', node);
    if (ref.uid !== self.metadata.uid) throw deny(`node ${node} UID mismatch: expected ${ref.uid} got ${self.metadata.uid}`);
    const what = referencedObjects(pod);
    if (spec.serviceAccountName) throw deny(`node "${node}" can not create pods that reference a service account`);
    if (what.secrets) throw deny(`node "${node}" can not create pods that reference secrets`);
    if (what.configmaps) throw deny(`node "${node}" can not create pods that reference configmaps`);
    if (what.clustertrustbundles) throw deny(`node "${node}" can not create pods that reference clustertrustbundles`);
    if (what.pvcs) throw deny(`node "${node}" can not create pods that reference persistentvolumeclaims`);
    if ((spec.resourceClaims ?? []).length) throw deny(`node "${node}" can not create pods that reference resourceclaims`);
  }

  private async eviction(obj: KubeObject | undefined, a: AdmissionAttributes, node: string, name: string, deny: (why: string) => Error): Promise<void> {
    if (a.operation !== 'CREATE') throw deny(`unexpected operation ${a.operation}`);
    const podName = a.name || obj?.metadata.name;
    if (!podName) throw deny('could not determine pod from request data');
    const pod = await this.lookups.pod(a.namespace ?? '', podName);
    if (!pod) throw notFoundAs('pod', name);
    if ((pod as RestrictedPod).spec?.nodeName !== node) throw deny(`node ${node} can only evict pods with spec.nodeName set to itself`);
  }

  private async token(tr: KubeObject, a: AdmissionAttributes, node: string, deny: (why: string) => Error): Promise<void> {
    const spec = (tr as TokenRequest).spec;
    const ref = spec?.boundObjectRef;
    if (ref?.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw deny('node requested token not bound to a pod');
    if (!ref.uid) throw deny('node requested token with a pod binding without a uid');
    const pod = await this.lookups.pod(a.namespace ?? '', ref.name);
    if (!pod) throw notFoundAs('pod', ref.name);
    if (ref.uid !== pod.metadata.uid)
      throw deny(`the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    if ((pod as RestrictedPod).spec?.nodeName !== node) throw deny('node requested token bound to a pod scheduled on a different node');
    // ServiceAccountNodeAudienceRestriction: only an audience the pod's volumes ask for.
    const audiences = spec?.audiences ?? [];
    if (audiences.length > 1) throw deny('node may only request 0 or 1 audiences');
    const aud = audiences[0] ?? '';
    const volumes = (pod as RestrictedPod).spec?.volumes ?? [];
    const used = volumes.some((v) => (v.projected?.sources ?? []).some((s) => s.serviceAccountToken && (s.serviceAccountToken.audience ?? '') === aud));
    if (used) return;
    const d = await this.lookups.authorize({
      user: { name: a.user!.name, groups: a.user!.groups },
      verb: 'request-serviceaccounts-token-audience',
      isResourceRequest: true,
      ...(a.namespace ? { namespace: a.namespace } : {}),
      apiGroup: '',
      resource: aud,
      ...(a.name ? { name: a.name } : {}),
    });
    if (!d.allowed) throw deny(`audience "${aud}" not found in pod spec volume, ${a.user!.name} is not authorized to request tokens for this audience`);
  }
}

function podStatus(pod: KubeObject, a: AdmissionAttributes, node: string, deny: (why: string) => Error): void {
  if (a.operation !== 'UPDATE') throw deny(`unexpected operation "${a.operation}"`);
  const old = a.old!;
  if ((old as RestrictedPod).spec?.nodeName !== node) throw deny(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
  if (!jsonEqual(old.metadata.labels ?? {}, pod.metadata.labels ?? {})) throw deny(`node "${node}" cannot update labels through pod status`);
  const claims = (o: KubeObject) => (o as RestrictedPod).status?.resourceClaimStatuses ?? [];
  const before = claims(old);
  const after = claims(pod);
  const same =
    before.length === after.length &&
    before.every((c, i) => c.name === after[i]!.name && (c.resourceClaimName ?? null) === (after[i]!.resourceClaimName ?? null));
  if (!same) throw deny(`node "${node}" cannot update resource claim statues`);
}

function nodeChange(obj: KubeObject | undefined, a: AdmissionAttributes, node: string, deny: (why: string) => Error): void {
  const requested = a.operation === 'CREATE' ? obj?.metadata.name : (a.name ?? a.old?.metadata.name);
  if (requested !== node) throw deny(`node "${node}" is not allowed to modify node "${requested ?? ''}"`);
  if (a.operation === 'CREATE') {
    if ((obj!.spec as RestrictedNodeSpec | undefined)?.configSource != null)
      throw deny(`node "${node}" is not allowed to create pods with a non-nil configSource`);
    const bad = forbiddenNodeLabels(Object.keys(obj!.metadata.labels ?? {}));
    if (bad.length) throw deny(`node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    return;
  }
  if (a.operation !== 'UPDATE') return;
  const spec: RestrictedNodeSpec = (obj!.spec as RestrictedNodeSpec | undefined) ?? {};
  const oldSpec: RestrictedNodeSpec = (a.old!.spec as RestrictedNodeSpec | undefined) ?? {};
  if (spec.configSource != null && !jsonEqual(spec.configSource, oldSpec.configSource))
    throw deny(`node "${node}" is not allowed to update configSource to a new non-nil configSource`);
  if (!jsonEqual(spec.taints ?? [], oldSpec.taints ?? [])) throw deny(`node "${node}" is not allowed to modify taints`);
  const labels = obj!.metadata.labels ?? {};
  const oldLabels = a.old!.metadata.labels ?? {};
  const changed = new Set<string>();
  for (const k of Object.keys(labels)) if (labels[k] !== oldLabels[k]) changed.add(k);
  for (const k of Object.keys(oldLabels)) if (!(k in labels)) changed.add(k);
  const bad = forbiddenNodeLabels(changed);
  if (bad.length) throw deny(`is not allowed to modify labels: ${bad.join(', ')}`);
}

function pvcStatus(pvc: KubeObject, a: AdmissionAttributes, node: string, deny: (why: string) => Error): void {
  if (a.operation !== 'UPDATE') throw deny(`unexpected operation "${a.operation}"`);
  const strip = (o: KubeObject) => {
    const c = structuredClone(o);
    delete c.metadata.resourceVersion;
    delete c.metadata.managedFields;
    const status = (c as PersistentVolumeClaim).status;
    if (status) {
      delete status.capacity;
      delete status.conditions;
      // RecoverVolumeExpansionFailure (on by default since 1.32): the allocated resources too.
      delete status.allocatedResourceStatuses;
      delete status.allocatedResources;
    }
    return c;
  };
  if (!jsonEqual(strip(a.old!), strip(pvc))) throw deny(`node "${node}" is not allowed to update fields other than status.quantity and status.conditions`);
}

/** Which kinds of API objects a pod refers to (podutil's Visit*Names and the volume sources). */
export function referencedObjects(pod: KubeObject): { secrets: boolean; configmaps: boolean; clustertrustbundles: boolean; pvcs: boolean } {
  const spec: NonNullable<RestrictedPod['spec']> = (pod as RestrictedPod).spec ?? {};
  const out = { secrets: false, configmaps: false, clustertrustbundles: false, pvcs: false };
  if ((spec.imagePullSecrets ?? []).some((s) => s.name)) out.secrets = true;
  // Ephemeral containers (undescribed by the api) have a container's env and envFrom.
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...((spec.ephemeralContainers ?? []) as corev1.Container[])]) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef) out.secrets = true;
      if (e.valueFrom?.configMapKeyRef) out.configmaps = true;
    }
    for (const f of c.envFrom ?? []) {
      if (f.secretRef) out.secrets = true;
      if (f.configMapRef) out.configmaps = true;
    }
  }
  for (const v of spec.volumes ?? []) {
    if (v.secret) out.secrets = true;
    if (v.configMap) out.configmaps = true;
    if (v.persistentVolumeClaim) out.pvcs = true;
    for (const src of SECRET_REF_SOURCES) {
      const s = v[src];
      if (s && (s.secretRef || s.nodePublishSecretRef)) out.secrets = true;
    }
    if (v.azureFile?.secretName) out.secrets = true;
    for (const s of v.projected?.sources ?? []) {
      if (s.secret) out.secrets = true;
      if (s.configMap) out.configmaps = true;
      if (s.clusterTrustBundle) out.clustertrustbundles = true;
    }
  }
  return out;
}

/** Upstream's listers answer NotFound with the singular resource: `pod "x" not found`. */
const notFoundAs = (singular: string, name: string) => failure('NotFound', `${singular} "${name}" not found`, { name, kind: singular });
