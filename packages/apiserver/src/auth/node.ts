/**
 * The Node authorizer (kubernetes plugin/pkg/auth/authorizer/node): a kubelet
 * (`system:node:<name>` in `system:nodes`) reads only the Secrets, ConfigMaps
 * and PersistentVolumeClaims that pods bound to its node use, requests tokens
 * only for their ServiceAccounts, writes only its own Node and the status of
 * its own pods, and otherwise gets the node rules (the system:node role). It
 * keeps pods indexed by node from the watch cache. Which Node, pods and Lease a
 * kubelet may change is NodeRestriction's to decide (admission), as upstream.
 */
import type { KubeObject, corev1 } from '@kubeling/api';
import { ruleAllows, type PolicyRule } from './rbac.js';
import type { Attributes, Authorizer, Decision } from './types.js';

const NO = { allowed: false as const, reason: '' };

/** A volume with the sources that name other objects (the api describes a Volume by its name only). */
type PodVolume = {
  name: string;
  secret?: { secretName?: string };
  configMap?: { name?: string };
  persistentVolumeClaim?: { claimName?: string };
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

export class NodeAuthorizer implements Authorizer {
  /** node → pod key (ns/name) → pod */
  private readonly byNode = new Map<string, Map<string, KubeObject>>();
  private readonly nodeOf = new Map<string, string>();

  constructor(private readonly nodeRules: PolicyRule[]) {}

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

  private podsOn(node: string, namespace: string | undefined): KubeObject[] {
    return [...(this.byNode.get(node)?.values() ?? [])].filter((p) => !namespace || p.metadata.namespace === namespace);
  }

  authorize(a: Attributes): Decision {
    const m = /^system:node:(.+)$/.exec(a.user.name);
    if (!m || !a.user.groups.includes('system:nodes')) return NO;
    const node = m[1]!;
    const denied = (why: string): Decision => ({ allowed: false, reason: why, denied: true });
    if (!a.isResourceRequest) return this.nodeRules.some((r) => ruleAllows(a, r)) ? { allowed: true, reason: 'node rules' } : NO;
    const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    if ((a.apiGroup ?? '') === '') {
      if (res === 'secrets' || res === 'configmaps' || res === 'persistentvolumeclaims') {
        if (a.verb !== 'get' || !a.name) return denied(`can only get individual ${res}`);
        const kind = res === 'secrets' ? 'secrets' : res === 'configmaps' ? 'configmaps' : 'pvcs';
        const used = this.podsOn(node, a.namespace).some((p) => references(p)[kind].has(a.name!));
        return used
          ? { allowed: true, reason: `${res} used by a pod on node ${node}` }
          : denied(`no relationship found between node '${node}' and this object`);
      }
      if (res === 'serviceaccounts/token') {
        const used = a.verb === 'create' && this.podsOn(node, a.namespace).some((p) => ((p as corev1.Pod).spec?.serviceAccountName ?? 'default') === a.name);
        return used
          ? { allowed: true, reason: 'service account used by a pod on this node' }
          : denied(`no relationship found between node '${node}' and this object`);
      }
      if ((res === 'pods/status' || (res === 'pods' && a.verb === 'delete')) && a.name) {
        const bound = this.nodeOf.get(`${a.namespace}/${a.name}`);
        if (bound !== undefined && bound !== node) return denied(`node "${node}" can only update pods bound to it`);
      }
    }
    if (a.apiGroup === 'coordination.k8s.io' && a.resource === 'leases') {
      if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return denied('can only get, create, update, patch, or delete a node lease');
      if (a.namespace !== 'kube-node-lease') return denied('can only access leases in the "kube-node-lease" system namespace');
      if (a.verb !== 'create' && a.name !== node) return denied('can only access node lease with the same name as the requesting node');
      return { allowed: true, reason: "the node's own lease" };
    }
    return this.nodeRules.some((r) => ruleAllows(a, r)) ? { allowed: true, reason: 'node rules' } : NO;
  }
}
