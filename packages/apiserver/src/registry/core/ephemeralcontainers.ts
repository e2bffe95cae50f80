/**
 * The pods/ephemeralcontainers subresource (kubernetes
 * pkg/registry/core/pod/strategy.go podEphemeralContainersStrategy, storage.go
 * EphemeralContainersREST): GET answers the Pod; PUT and PATCH take only
 * `spec.ephemeralContainers` from the body — the rest of the pod, its status
 * and its metadata stay as stored — then default the new containers and
 * validate the result as a pod whose existing ephemeral containers are
 * unchanged. Never creates a pod. The main resource refuses any change to
 * ephemeral containers (pods.ts validateUpdate), so this is the only way to
 * add one.
 */
import { defaultContainer, validatePodEphemeralContainersUpdate, type KubeObject } from '@kubeling/api';
import { invalidObject } from '../rest.js';

type Obj = Record<string, unknown>;

const POD_KIND = { group: '', kind: 'Pod' };

/** The stored pod with the body's ephemeral containers, defaulted; throws 422 Invalid as upstream words it. */
export function updateEphemeralContainers(obj: KubeObject, old: KubeObject): KubeObject {
  const next = structuredClone(old);
  const spec = (next.spec ??= {}) as Obj;
  const wanted = ((obj.spec ?? {}) as Obj).ephemeralContainers;
  if (Array.isArray(wanted) && wanted.length) spec.ephemeralContainers = structuredClone(wanted);
  else delete spec.ephemeralContainers;
  // SetDefaults_EphemeralContainer is SetDefaults_Container on the common fields.
  for (const c of (spec.ephemeralContainers ?? []) as unknown[]) if (c && typeof c === 'object' && !Array.isArray(c)) defaultContainer(c as Obj);
  const errs = validatePodEphemeralContainersUpdate(spec, old.spec, old.metadata.annotations);
  if (errs.length) throw invalidObject(POD_KIND, old.metadata.name ?? '', errs);
  return next;
}
