/**
 * What a resource adds to the generic store: defaulting, field resets, validation,
 * selectable fields and deletion rules (kubernetes/apiserver pkg/registry/rest
 * create.go / update.go / delete.go). A resource adds a strategy and a line in
 * `strategies/index.ts`, never a new store.
 */
import type { KubeObject } from '@kubeling/api';
import type { FieldError, NameValidator } from '@kubeling/apimachinery';
import type { EtcdStorage } from '../storage/etcd.js';
import type { WriteContext } from './store.js';

export interface DeleteDecision {
  /** Seconds of graceful deletion; 0 or undefined deletes at once (finalizers permitting). */
  gracePeriodSeconds?: number;
}

export interface Strategy {
  /** How names are checked (NameValidator); DNS subdomain when absent. */
  nameValidation?: NameValidator;
  /** Whether `metadata.generation` is kept: 1 on create, +1 on each spec change. */
  generation?: boolean;
  /** Whether `.status` is written only through the status subresource. */
  statusSubresource?: boolean;
  /** Fills defaults (SetDefaults_*); runs on create and on update bodies. */
  defaults?(obj: KubeObject): void;
  /**
   * Resets what a client may not set on create (status, system fields). `user` is who creates it
   * (CertificateSigningRequests record it, as upstream's PrepareForCreate reads it from the context).
   */
  prepareForCreate?(obj: KubeObject, user?: WriteContext['user']): void;
  /** Carries over what a client may not change on update. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  validate?(obj: KubeObject): FieldError[];
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Status subresource: which parts of the new object are taken. */
  prepareForStatusUpdate?(obj: KubeObject, old: KubeObject): void;
  validateStatusUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Extra selectable fields beyond metadata.name / metadata.namespace. */
  fields?(obj: KubeObject): Record<string, string>;
  /** Graceful deletion (pods): the grace period to apply, given the requested one. */
  gracePeriod?(obj: KubeObject, requested: number | undefined): number;
  /** Whether the object must wait for something beyond metadata.finalizers (namespaces' spec.finalizers). */
  blocksDeletion?(obj: KubeObject): boolean;
  /** Finalizers the first DELETE adds (a CRD's customresourcecleanup, as its REST Delete adds it). */
  deletionFinalizers?(obj: KubeObject): string[];
  /** Changes made when deletion starts (namespaces become Terminating). */
  prepareForDelete?(obj: KubeObject): void;
  /** Updates through other subresources (namespaces' finalize): what is taken from the body. */
  subresourceUpdate?: Record<string, (obj: KubeObject, old: KubeObject) => KubeObject>;
  /** Whether DELETE answers with the object rather than a Success Status. */
  returnDeletedObject?: boolean;
  /** Whether PUT may create a missing object. */
  allowCreateOnUpdate?: boolean;
  /**
   * Takes what a new object needs from a shared pool (a Service's cluster IP)
   * just before it is stored; the store gives it back through `release` when
   * the create fails or the object is finally gone. A dry run only checks.
   * Answers what makes the object invalid (an IP taken or out of range).
   */
  allocate?(obj: KubeObject, storage: EtcdStorage, dryRun: boolean): Promise<FieldError[]>;
  release?(obj: KubeObject, storage: EtcdStorage): Promise<void>;
  /**
   * An update's allocations (a Service's new node ports), taken before the
   * write: `commit` gives back what the old object held and the new one does
   * not, after the write; `abort` gives back what was taken, when it fails.
   */
  allocateUpdate?(
    obj: KubeObject,
    old: KubeObject,
    storage: EtcdStorage,
    dryRun: boolean,
  ): Promise<{ errors: FieldError[]; commit(): Promise<void>; abort(): Promise<void> }>;
  /**
   * Conversion that needs a round trip (a CRD's conversion webhook): objects
   * read are converted from the storage version, objects written to it.
   */
  convert?: {
    fromStorage(objs: KubeObject[]): Promise<KubeObject[]>;
    toStorage(obj: KubeObject): Promise<KubeObject>;
  };
  /** Converts the stored form to this resource's version (shared storage). */
  toExternal?(stored: KubeObject): KubeObject;
  fromExternal?(obj: KubeObject): KubeObject;
}
