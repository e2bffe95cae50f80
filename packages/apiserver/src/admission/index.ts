/**
 * Mutating admission (kubernetes/apiserver pkg/admission): plugins that see an
 * object after decoding and defaulting and before validation, and may change it
 * or refuse it with a Status. The store runs the plugins registered for its
 * resource in order.
 */
import type { KubeObject } from '@kubeling/api';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: Operation;
  /** `group/resource`, e.g. `/pods` or `apps/deployments`. */
  resource: string;
  namespace: string | undefined;
  /** The object's name (from the URL; a create's from its body). */
  name?: string;
  /** status, scale, binding, ... for subresource writes. */
  subresource?: string;
  old?: KubeObject;
  dryRun?: boolean;
  /** Who asked (webhooks see it). */
  user?: { name: string; groups: string[] };
}

export interface MutatingAdmission {
  readonly name: string;
  handles(a: AdmissionAttributes): boolean;
  admit(obj: KubeObject, a: AdmissionAttributes): Promise<void>;
}

/** Validating admission: sees the final object after validation; may only refuse. */
export interface ValidatingAdmission {
  readonly name: string;
  handles(a: AdmissionAttributes): boolean;
  validate(obj: KubeObject, a: AdmissionAttributes): Promise<void>;
  /** Told when an object it admitted is gone for good (quota usage). */
  deleted?(obj: KubeObject, a: AdmissionAttributes): Promise<void>;
}

export async function validate(plugins: readonly ValidatingAdmission[], obj: KubeObject, a: AdmissionAttributes): Promise<void> {
  for (const p of plugins) if (p.handles(a)) await p.validate(obj, a);
}

/** Runs the plugins that handle the request, in order. */
export async function admit(plugins: readonly MutatingAdmission[], obj: KubeObject, a: AdmissionAttributes): Promise<void> {
  for (const p of plugins) if (p.handles(a)) await p.admit(obj, a);
}
