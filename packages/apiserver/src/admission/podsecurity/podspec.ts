/**
 * Where PodSecurity finds a pod to evaluate (k8s.io/pod-security-admission
 * admission/admission.go: DefaultPodSpecExtractor, isSignificantPodUpdate).
 *
 * - The pod template of each workload resource upstream knows; a
 *   replication controller without a template has nothing to evaluate.
 * - A pod update matters only when containers are added or removed, an image
 *   changes, an ephemeral container is added, or a container's seccomp
 *   annotation changes: the other fields the checks read are immutable.
 *   The AppArmor annotations and the pod's seccomp annotation count too:
 *   upstream's pod validation refuses changing them, which is not enforced
 *   here, so they are evaluated rather than let through unchecked.
 */
import type { KubeObject } from '@kubeling/api';
import type { Container, PodMeta, PodSpec } from './pod.js';

export interface PodTemplate {
  metadata: PodMeta;
  spec: PodSpec;
}

type Template = { metadata?: PodMeta | null; spec?: PodSpec | null } | null | undefined;

const fromTemplate = (t: Template, optional = false): PodTemplate | undefined =>
  t == null && optional ? undefined : { metadata: t?.metadata ?? {}, spec: t?.spec ?? {} };

type Spec = { template?: Template; jobTemplate?: { spec?: { template?: Template } | null } | null } | null | undefined;
const specOf = (o: KubeObject) => o.spec as Spec;

/** How to find the pod template of each resource (`group/resource`) upstream evaluates. */
const EXTRACTORS: Record<string, (o: KubeObject) => PodTemplate | undefined> = {
  '/podtemplates': (o) => fromTemplate(o.template as Template),
  '/replicationcontrollers': (o) => fromTemplate(specOf(o)?.template, true),
  'apps/replicasets': (o) => fromTemplate(specOf(o)?.template),
  'apps/deployments': (o) => fromTemplate(specOf(o)?.template),
  'apps/daemonsets': (o) => fromTemplate(specOf(o)?.template),
  'apps/statefulsets': (o) => fromTemplate(specOf(o)?.template),
  'batch/jobs': (o) => fromTemplate(specOf(o)?.template),
  'batch/cronjobs': (o) => fromTemplate(specOf(o)?.jobTemplate?.spec?.template),
};

/** The extractor of a pod-template resource, undefined for any other resource. */
export const podTemplateOf = (resource: string): ((o: KubeObject) => PodTemplate | undefined) | undefined =>
  Object.hasOwn(EXTRACTORS, resource) ? EXTRACTORS[resource] : undefined;

/** The `group/resource` names of the pod-template resources. */
export const POD_TEMPLATE_RESOURCES: readonly string[] = Object.keys(EXTRACTORS);

const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

function significantContainerUpdate(c: Container, old: Container, annotations: Record<string, string>, oldAnnotations: Record<string, string>): boolean {
  if ((c.image ?? '') !== (old.image ?? '')) return true;
  const key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + (c.name ?? '');
  return (annotations[key] ?? '') !== (oldAnnotations[key] ?? '');
}

export function isSignificantPodUpdate(pod: KubeObject, old: KubeObject): boolean {
  const spec = (pod.spec ?? {}) as PodSpec;
  const oldSpec = (old.spec ?? {}) as PodSpec;
  const annotations = (pod.metadata.annotations ?? {}) as Record<string, string>;
  const oldAnnotations = (old.metadata.annotations ?? {}) as Record<string, string>;
  const pairs = (a: Container[] | null | undefined, b: Container[] | null | undefined): boolean => {
    const x = a ?? [];
    const y = b ?? [];
    if (x.length !== y.length) return true;
    return x.some((c, i) => significantContainerUpdate(c, y[i]!, annotations, oldAnnotations));
  };
  if (pairs(spec.containers, oldSpec.containers) || pairs(spec.initContainers, oldSpec.initContainers)) return true;
  const keys = new Set([...Object.keys(annotations), ...Object.keys(oldAnnotations)]);
  for (const k of keys) {
    if ((k.startsWith(APPARMOR_ANNOTATION_PREFIX) || k === SECCOMP_POD_ANNOTATION) && annotations[k] !== oldAnnotations[k]) return true;
  }
  for (const c of spec.ephemeralContainers ?? []) {
    const oldC = (oldSpec.ephemeralContainers ?? []).find((o) => o.name === c.name);
    if (!oldC || significantContainerUpdate(c, oldC, annotations, oldAnnotations)) return true;
  }
  return false;
}
