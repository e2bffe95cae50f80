/**
 * The Node authorizer (kubernetes plugin/pkg/auth/authorizer/node): a kubelet
 * (`system:node:<name>` in `system:nodes`) reaches only what the graph of its
 * pods leads to — the Secrets, ConfigMaps and PersistentVolumeClaims its pods
 * use (generic ephemeral volumes' claims `<pod>-<volume>` included), the
 * PersistentVolumes whose `claimRef` names one of those claims and the
 * Secrets their sources name for the node (VisitPVSecretNames with
 * kubeletVisible: CSI node stage/publish/expand), the VolumeAttachments for its
 * node, its own CSINode and Lease, tokens of its pods' ServiceAccounts, the
 * status of those claims — and otherwise gets the node rules (the
 * system:node role). Refusals are "no opinion" with upstream's reason, so a
 * later authorizer may still allow.
 *
 * The graph follows pods, volumes and attachments from the watch cache
 * (`follow`). A volume joins a claim only through its `claimRef`, which the
 * binder or an admin sets (graph.go AddPV): a claim's `spec.volumeName`,
 * which its creator chooses, leads nowhere. Which Node, pods, Lease, claim
 * status and CSINode a kubelet may change is NodeRestriction's to decide
 * (admission), as upstream.
 */
import type { KubeObject, corev1 } from '@kubeling/api';
import { ruleAllows, type PolicyRule } from './rbac.js';
import type { Attributes, Authorizer, Decision } from './types.js';

const NO = { allowed: false as const, reason: '' };
const noOpinion = (reason: string): Decision => ({ allowed: false, reason });
const allow = (reason: string): Decision => ({ allowed: true, reason });

/** A secret a volume source names for the kubelet. */
type SecretRef = { name?: string; namespace?: string };
/** A volume with the sources that name other objects (the api describes a Volume by its name only). */
type PodVolume = {
  name: string;
  secret?: { secretName?: string };
  configMap?: { name?: string };
  persistentVolumeClaim?: { claimName?: string };
  ephemeral?: object;
  projected?: { sources?: { secret?: { name?: string }; configMap?: { name?: string } }[] };
};

/** A pod spec with its volumes' sources. */
type NodePodSpec = Omit<corev1.PodSpec, 'volumes'> & { volumes?: PodVolume[] };

/** Names of the Secrets, ConfigMaps, PVCs a pod refers to. */
function references(pod: KubeObject): { secrets: Set<string>; configmaps: Set<string>; pvcs: Set<string> } {
  const spec: NodePodSpec = (pod.spec as NodePodSpec | undefined) ?? {};
  const secrets = new Set<string>();
  const configmaps = new Set<string>();
  const pvcs = new Set<string>();
  for (const s of spec.imagePullSecrets ?? []) if (s.name) secrets.add(s.name);
  for (const v of spec.volumes ?? []) {
    if (v.secret?.secretName) secrets.add(v.secret.secretName);
    if (v.configMap?.name) configmaps.add(v.configMap.name);
    if (v.persistentVolumeClaim?.claimName) pvcs.add(v.persistentVolumeClaim.claimName);
    // A generic ephemeral volume's claim is named after the pod and the volume.
    if (v.ephemeral) pvcs.add(`${pod.metadata.name}-${v.name}`);
    for (const src of v.projected?.sources ?? []) {
      if (src.secret?.name) secrets.add(src.secret.name);
      if (src.configMap?.name) configmaps.add(src.configMap.name);
    }
  }
  // Ephemeral containers (undescribed by the api) have a container's env and envFrom.
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...((spec.ephemeralContainers ?? []) as corev1.Container[])]) {
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
      if (e.valueFrom?.configMapKeyRef?.name) configmaps.add(e.valueFrom.configMapKeyRef.name);
    }
    for (const f of c.envFrom ?? []) {
      if (f.secretRef?.name) secrets.add(f.secretRef.name);
      if (f.configMapRef?.name) configmaps.add(f.configMapRef.name);
    }
  }
  return { secrets, configmaps, pvcs };
}

/** Sources whose `secretRef` namespace defaults to the claimRef's (VisitPVSecretNames). */
const CLAIM_NS_SOURCES = ['cephfs', 'flexVolume', 'rbd', 'scaleIO', 'iscsi'] as const;
/** Sources whose `secretRef` is read in its own namespace only. */
const OWN_NS_SOURCES = ['cinder', 'storageos'] as const;
/** The CSI secrets the kubelet passes to the driver (the controller ones are not kubelet-visible). */
const CSI_NODE_SECRETS = ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef'] as const;

/**
 * `namespace/name` of the Secrets a PersistentVolume names for the node
 * (pkg/api/v1/persistentvolume VisitPVSecretNames, kubeletVisible only); a
 * reference without a name or a namespace is skipped.
 */
export function volumeSecrets(pv: KubeObject): string[] {
  const spec = (pv.spec ?? {}) as Record<string, { secretRef?: SecretRef } | undefined> & {
    csi?: Record<string, SecretRef | undefined>;
    azureFile?: { secretName?: string; secretNamespace?: string };
    claimRef?: { namespace?: string };
  };
  const claimNs = spec.claimRef?.namespace ?? '';
  const out: string[] = [];
  const add = (namespace: string | undefined, name: string | undefined) => {
    if (namespace && name) out.push(`${namespace}/${name}`);
  };
  if (spec.azureFile) add(spec.azureFile.secretNamespace || claimNs, spec.azureFile.secretName);
  for (const s of CLAIM_NS_SOURCES) {
    const ref = spec[s]?.secretRef;
    if (ref) add(ref.namespace || claimNs, ref.name);
  }
  for (const s of OWN_NS_SOURCES) add(spec[s]?.secretRef?.namespace, spec[s]?.secretRef?.name);
  for (const k of CSI_NODE_SECRETS) add(spec.csi?.[k]?.namespace, spec.csi?.[k]?.name);
  return out;
}

/** `namespace/name` of the claim a volume's `claimRef` names, when it names one. */
function claimRefKey(pv: KubeObject): string | undefined {
  const ref = (pv as corev1.PersistentVolume).spec?.claimRef;
  return ref?.namespace && ref.name ? `${ref.namespace}/${ref.name}` : undefined;
}

/** What the authorizer follows: stores of pods, volumes and attachments (the registry's keys). */
export interface GraphSources {
  get(key: string): { subscribe(handler: (type: string, obj: KubeObject) => void): () => void } | undefined;
}

export class NodeAuthorizer implements Authorizer {
  /** node → pod key (ns/name) → pod */
  private readonly byNode = new Map<string, Map<string, KubeObject>>();
  private readonly nodeOf = new Map<string, string>();
  /** volume name → the claim (ns/name) its claimRef names */
  private readonly volumeClaim = new Map<string, string>();
  /** claim (ns/name) → the volumes whose claimRef names it */
  private readonly claimVolumes = new Map<string, Set<string>>();
  /** volume name → `namespace/name` of the Secrets it names for the node */
  private readonly volumeSecretRefs = new Map<string, string[]>();
  /** VolumeAttachment name → its node */
  private readonly attachmentNode = new Map<string, string>();

  constructor(private readonly nodeRules: PolicyRule[]) {}

  /** Subscribes to the graph's objects; answers the functions that stop. */
  follow(sources: GraphSources): (() => void)[] {
    const feeds: [string, (type: string, obj: KubeObject) => void][] = [
      ['/v1/pods', (t, o) => this.applyPod(t, o)],
      ['/v1/persistentvolumes', (t, o) => this.applyVolume(t, o)],
      ['storage.k8s.io/v1/volumeattachments', (t, o) => this.applyAttachment(t, o)],
    ];
    return feeds.flatMap(([key, fn]) => {
      const st = sources.get(key);
      return st ? [st.subscribe(fn)] : [];
    });
  }

  /** Feeds a pod change from the watch cache. */
  applyPod(type: string, pod: KubeObject): void {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const prev = this.nodeOf.get(key);
    if (prev) this.byNode.get(prev)?.delete(key);
    this.nodeOf.delete(key);
    const node = (pod as corev1.Pod).spec?.nodeName;
    // Mirror pods give their node no path to anything (upstream's graph skips them).
    if (type === 'DELETED' || !node || Object.hasOwn(pod.metadata.annotations ?? {}, 'kubernetes.io/config.mirror')) return;
    let m = this.byNode.get(node);
    if (!m) this.byNode.set(node, (m = new Map()));
    m.set(key, pod);
    this.nodeOf.set(key, node);
  }

  /** Feeds a volume change: the claim its claimRef names and the Secrets it names for the node. */
  applyVolume(type: string, pv: KubeObject): void {
    const name = pv.metadata.name!;
    const prev = this.volumeClaim.get(name);
    if (prev) {
      const vols = this.claimVolumes.get(prev);
      vols?.delete(name);
      if (!vols?.size) this.claimVolumes.delete(prev);
    }
    this.volumeClaim.delete(name);
    this.volumeSecretRefs.delete(name);
    const claim = type === 'DELETED' ? undefined : claimRefKey(pv);
    // Without a claimRef a volume leads no node anywhere (graph.go AddPV).
    if (!claim) return;
    this.volumeClaim.set(name, claim);
    let vols = this.claimVolumes.get(claim);
    if (!vols) this.claimVolumes.set(claim, (vols = new Set()));
    vols.add(name);
    const refs = volumeSecrets(pv);
    if (refs.length) this.volumeSecretRefs.set(name, refs);
  }

  /** Feeds a VolumeAttachment change: its node. */
  applyAttachment(type: string, va: KubeObject): void {
    const name = va.metadata.name!;
    const node = (va.spec as { nodeName?: string } | undefined)?.nodeName;
    if (type === 'DELETED' || !node) this.attachmentNode.delete(name);
    else this.attachmentNode.set(name, node);
  }

  private podsOn(node: string, namespace?: string): KubeObject[] {
    return [...(this.byNode.get(node)?.values() ?? [])].filter((p) => !namespace || p.metadata.namespace === namespace);
  }

  /** The volumes whose claimRef names a claim of the node's pods. */
  private volumesOf(node: string): Set<string> {
    const out = new Set<string>();
    for (const p of this.podsOn(node)) {
      for (const c of references(p).pvcs) for (const v of this.claimVolumes.get(`${p.metadata.namespace}/${c}`) ?? []) out.add(v);
    }
    return out;
  }

  private hasPath(node: string, kind: 'secrets' | 'configmaps' | 'pvcs' | 'pvs' | 'volumeattachments', namespace: string | undefined, name: string): boolean {
    if (kind === 'volumeattachments') return this.attachmentNode.get(name) === node;
    if (kind === 'pvs') return this.volumesOf(node).has(name);
    if (this.podsOn(node, namespace).some((p) => references(p)[kind].has(name))) return true;
    if (kind !== 'secrets') return false;
    for (const v of this.volumesOf(node)) if (this.volumeSecretRefs.get(v)?.includes(`${namespace ?? ''}/${name}`)) return true;
    return false;
  }

  /** authorize: a named object the node's graph leads to. */
  private related(node: string, kind: Parameters<NodeAuthorizer['hasPath']>[1], a: Attributes): Decision {
    if (!a.name) return noOpinion('No Object name found');
    return this.hasPath(node, kind, a.namespace, a.name)
      ? allow(`related to node ${node}`)
      : noOpinion(`no relationship found between node '${node}' and this object`);
  }

  /** authorizeGet: one object by name, no subresource. */
  private get(node: string, kind: Parameters<NodeAuthorizer['hasPath']>[1], a: Attributes): Decision {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return this.related(node, kind, a);
  }

  authorize(a: Attributes): Decision {
    const m = /^system:node:(.+)$/.exec(a.user.name);
    if (!m || !a.user.groups.includes('system:nodes')) return NO;
    const node = m[1]!;
    if (!a.isResourceRequest) return this.rules(a);
    const group = a.apiGroup ?? '';
    const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    if (group === '') {
      if (res === 'secrets' || res === 'configmaps') {
        if (a.verb !== 'get' || !a.name) return noOpinion(`can only get individual ${res}`);
        return this.related(node, res, a);
      }
      if (a.resource === 'persistentvolumeclaims') {
        if (a.subresource !== 'status') return this.get(node, 'pvcs', a);
        if (a.verb !== 'update' && a.verb !== 'patch') return noOpinion('can only get/update/patch this type');
        return this.related(node, 'pvcs', a);
      }
      if (a.resource === 'persistentvolumes') return this.get(node, 'pvs', a);
      if (res === 'serviceaccounts/token') {
        const used = a.verb === 'create' && this.podsOn(node, a.namespace).some((p) => ((p as corev1.Pod).spec?.serviceAccountName ?? 'default') === a.name);
        return used ? allow('service account used by a pod on this node') : noOpinion(`no relationship found between node '${node}' and this object`);
      }
      if ((res === 'pods/status' || (res === 'pods' && a.verb === 'delete')) && a.name) {
        const bound = this.nodeOf.get(`${a.namespace}/${a.name}`);
        if (bound !== undefined && bound !== node) return noOpinion(`node "${node}" can only update pods bound to it`);
      }
    }
    if (group === 'storage.k8s.io' && a.resource === 'volumeattachments') return this.get(node, 'volumeattachments', a);
    if (group === 'storage.k8s.io' && a.resource === 'csinodes') return csiNode(node, a);
    if (group === 'coordination.k8s.io' && a.resource === 'leases') {
      if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
      if (a.namespace !== 'kube-node-lease') return noOpinion('can only access leases in the "kube-node-lease" system namespace');
      if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
      return allow("the node's own lease");
    }
    return this.rules(a);
  }

  private rules(a: Attributes): Decision {
    return this.nodeRules.some((r) => ruleAllows(a, r)) ? allow('node rules') : NO;
  }
}

/** authorizeCSINode: the node's own CSINode (any name on create: NodeRestriction checks it). */
function csiNode(node: string, a: Attributes): Decision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a CSINode');
  if (a.subresource) return noOpinion('cannot authorize CSINode subresources');
  if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access CSINode with the same name as the requesting node');
  return allow("the node's own CSINode");
}
