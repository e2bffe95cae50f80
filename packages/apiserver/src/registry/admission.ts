/**
 * What the store knows of admission: one interface it is given at
 * construction and calls at the points upstream's generic store calls its
 * admission functions (after defaulting: mutate; after validation: validate;
 * on delete; when an object is gone for good). The plugins and their order are
 * the admission package's business.
 */
import type { KubeObject } from '@kubeling/api';

/** CONNECT: exec and attach into a pod; the object is the request's options (PodExecOptions, PodAttachOptions). */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

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
  /** Warnings for the response (`Warning` headers), which plugins may add to. */
  warnings?: string[];
  /**
   * The resource's defaulting (upstream's ObjectDefaulter): what a mutating
   * webhook patched is defaulted again, and a custom resource pruned by its
   * schema (upstream prunes it on the way to storage).
   */
  defaults?: (obj: KubeObject) => void;
}

export interface Admission {
  /** Whether any mutating plugin handles a request with these attributes. */
  mutates(a: AdmissionAttributes): boolean;
  /** Mutating admission: may change the object, or refuse it with a Status. */
  admit(obj: KubeObject, a: AdmissionAttributes): Promise<void>;
  /** Whether any validating plugin is registered. */
  validates(): boolean;
  /** Validating admission: may only refuse. */
  validate(obj: KubeObject, a: AdmissionAttributes): Promise<void>;
  /** An object is gone for good (what it held, such as quota usage, returns). */
  deleted(obj: KubeObject, a: AdmissionAttributes): void;
}
