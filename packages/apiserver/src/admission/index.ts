/**
 * Mutating admission (kubernetes/apiserver pkg/admission): plugins that see an
 * object after decoding and defaulting and before validation, and may change it
 * or refuse it with a Status. The store runs the plugins registered for its
 * resource in order.
 */
import type { KubeObject } from '@kubeling/api';

import type { Admission, AdmissionAttributes } from '../registry/admission.js';

export type { AdmissionAttributes, Operation } from '../registry/admission.js';

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

/**
 * The plugins of one resource, in the order they run: what a store is given
 * as its Admission.
 */
export class AdmissionChain implements Admission {
  readonly mutating: MutatingAdmission[] = [];
  readonly validating: ValidatingAdmission[] = [];

  mutates(a: AdmissionAttributes): boolean {
    return this.mutating.some((p) => p.handles(a));
  }

  admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    return admit(this.mutating, obj, a);
  }

  validates(): boolean {
    return this.validating.length > 0;
  }

  validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    return validate(this.validating, obj, a);
  }

  deleted(obj: KubeObject, a: AdmissionAttributes): void {
    for (const p of this.validating) if (p.deleted && p.handles({ ...a, operation: 'CREATE' })) void p.deleted(obj, a).catch(() => undefined);
  }
}
