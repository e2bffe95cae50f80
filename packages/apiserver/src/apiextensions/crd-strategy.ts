/**
 * The CustomResourceDefinition resource's rules
 * (k8s.io/apiextensions-apiserver pkg/registry/customresourcedefinition
 * strategy.go and etcd.go, with pkg/apis/apiextensions/v1 defaults.go):
 * status is written only through /status, the storage version is recorded in
 * `status.storedVersions` from the start, the first DELETE adds the
 * `customresourcecleanup.apiextensions.k8s.io` finalizer and the Terminating
 * condition, and the finalizing controller (crd-controller.ts) removes it once
 * every custom resource is gone.
 */
import type { KubeObject } from '@kubeling/api';
import type { FieldError } from '@kubeling/apimachinery';
import { rfc3339 } from '@kubeling/apimachinery';
import type { Strategy } from '../registry/strategy.js';
import type { CustomResourceDefinition, CustomResourceDefinitionCondition } from './types.js';
import { validateCustomResourceDefinition, validateCustomResourceDefinitionStatus, validateCustomResourceDefinitionUpdate } from './validation.js';
import { celCrdErrors } from './cel-hook.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const asCrd = (o: KubeObject) => o as unknown as CustomResourceDefinition;

/** SetDefaults_CustomResourceDefinition(Spec): singular, listKind, conversion, service ports. */
export function defaultCrd(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec || typeof spec !== 'object') return;
  const names = spec.names;
  if (names && typeof names.kind === 'string') {
    if (!names.singular) names.singular = names.kind.toLowerCase();
    if (!names.listKind) names.listKind = `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  const svc = spec.conversion.webhook?.clientConfig?.service;
  if (svc && svc.port === undefined) svc.port = 443;
  if (spec.preserveUnknownFields === undefined) delete spec.preserveUnknownFields;
}

/** Sets (or replaces) a condition, keeping lastTransitionTime when the status did not change (SetCRDCondition). */
export function setCondition(crd: CustomResourceDefinition, c: CustomResourceDefinitionCondition): void {
  const status = (crd.status ??= {});
  const list = (status.conditions ??= []);
  const i = list.findIndex((x) => x.type === c.type);
  const now = rfc3339(new Date());
  if (i < 0) {
    list.push({ ...c, lastTransitionTime: c.lastTransitionTime ?? now });
    return;
  }
  const old = list[i]!;
  list[i] = { ...c, lastTransitionTime: old.status === c.status ? (old.lastTransitionTime ?? now) : now };
}

export const conditionTrue = (crd: CustomResourceDefinition, type: string) => !!crd.status?.conditions?.some((c) => c.type === type && c.status === 'True');

const storageVersion = (crd: CustomResourceDefinition) => crd.spec?.versions?.find((v) => v.storage)?.name;

export const crdStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  defaults: (obj) => defaultCrd(asCrd(obj)),
  prepareForCreate(obj) {
    const crd = asCrd(obj);
    const sv = storageVersion(crd);
    crd.status = { storedVersions: sv ? [sv] : [] };
  },
  prepareForUpdate(obj, old) {
    // The storage version joins storedVersions when it changes (strategy.go PrepareForUpdate).
    const crd = asCrd(obj);
    const sv = storageVersion(crd);
    const stored = [...(asCrd(old).status?.storedVersions ?? [])];
    if (sv && !stored.includes(sv)) stored.push(sv);
    crd.status = { ...(asCrd(old).status ?? {}), storedVersions: stored };
  },
  // ObjectMeta is the generic store's to validate; the CEL rules are compiled once the schemas are known to be structural.
  validate(obj): FieldError[] {
    const errs = validateCustomResourceDefinition(asCrd(obj), undefined, { objectMeta: false });
    return [...errs, ...celCrdErrors(asCrd(obj), errs)];
  },
  validateUpdate(obj, old): FieldError[] {
    const errs = validateCustomResourceDefinitionUpdate(asCrd(obj), asCrd(old), undefined, { objectMeta: false });
    return [...errs, ...celCrdErrors(asCrd(obj), errs)];
  },
  validateStatusUpdate: (obj): FieldError[] => validateCustomResourceDefinitionStatus(asCrd(obj)),
  deletionFinalizers: () => [CLEANUP_FINALIZER],
  prepareForDelete(obj) {
    setCondition(asCrd(obj), {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
  },
};
