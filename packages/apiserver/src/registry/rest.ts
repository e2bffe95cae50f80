/**
 * The create and update rules every resource goes through, with its strategy
 * plugged in (kubernetes/apiserver pkg/registry/rest create.go BeforeCreate,
 * update.go BeforeUpdate).
 *
 * Order on create: namespace and generated name, system fields,
 * `prepareForCreate`, `defaults` — then the store runs mutating admission — then
 * `validateCreate`. On update, `beforeUpdate` does it all: optimistic-lock
 * checks (409), name match (400), system fields carried over, status or
 * subresource rules, defaults, generation, validation (422).
 */
import type { KubeObject } from '@kubeling/api';
import {
  type FieldError,
  type GroupResource,
  type StatusError,
  aggregateMessage,
  badRequest,
  conflict,
  fieldErrorBody,
  invalid,
  jsonEqual,
  nameIsDNSSubdomain,
  OPTIMISTIC_LOCK_MESSAGE,
  randomSuffix,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '@kubeling/apimachinery';
import { fillSystemFields, keepSystemMeta, specOf } from './meta.js';
import type { Strategy } from './strategy.js';
import type { WriteContext } from './store.js';

/** What the create and update rules need to know of a resource (a Store is one). */
export interface RestScope {
  readonly gr: GroupResource;
  readonly gk: { group: string; kind: string };
  readonly def: { readonly namespaced: boolean };
  readonly strategy: Strategy;
}

/** 422 `<kind> "<name>" is invalid: ...` with one cause per field error. */
export function invalidObject(gk: { group: string; kind: string }, name: string, errs: FieldError[]): StatusError {
  return invalid(
    gk,
    name,
    errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
    aggregateMessage(errs),
  );
}

/** Prepares a new object for mutating admission: the steps of BeforeCreate before validation. */
export function beforeCreate(scope: RestScope, obj: KubeObject, namespace: string | undefined, user?: WriteContext['user']): void {
  const meta = obj.metadata;
  if (!scope.def.namespaced) delete meta.namespace;
  else if (namespace !== undefined) meta.namespace = namespace;
  if (!meta.name && meta.generateName) meta.name = meta.generateName + randomSuffix();
  // System fields are the server's (rest.FillObjectMetaSystemFields).
  fillSystemFields(obj, !!scope.strategy.generation);
  scope.strategy.prepareForCreate?.(obj, user);
  scope.strategy.defaults?.(obj);
}

/** Validates a new object (after mutating admission); throws 422. */
export function validateCreate(scope: RestScope, obj: KubeObject): void {
  const errs: FieldError[] = [
    ...validateObjectMeta(obj.metadata, { namespaced: scope.def.namespaced, nameFn: scope.strategy.nameValidation ?? nameIsDNSSubdomain }),
    ...(scope.strategy.validate ? scope.strategy.validate(obj) : []),
  ];
  if (errs.length) throw invalidObject(scope.gk, obj.metadata.name ?? '', errs);
}

/** Applies the strategy's update rules to `proposed` (not changed); throws 409/422 as upstream does. */
export function beforeUpdate(
  scope: RestScope,
  proposed: KubeObject,
  old: KubeObject,
  subresource: string | undefined,
  preconditionRV: string | undefined,
): KubeObject {
  const { strategy } = scope;
  const obj = structuredClone(proposed);
  const name = old.metadata.name!;
  const rv = obj.metadata.resourceVersion;
  if (rv && rv !== old.metadata.resourceVersion) throw conflict(scope.gr, name, OPTIMISTIC_LOCK_MESSAGE);
  if (preconditionRV && preconditionRV !== old.metadata.resourceVersion) throw conflict(scope.gr, name, OPTIMISTIC_LOCK_MESSAGE);
  if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
  }
  obj.metadata.name = name;
  if (scope.def.namespaced && old.metadata.namespace !== undefined) obj.metadata.namespace ??= old.metadata.namespace;
  let errs: FieldError[];
  if (subresource && subresource !== 'status') {
    const hook = strategy.subresourceUpdate?.[subresource];
    const next = hook ? hook(obj, old) : obj;
    keepSystemMeta(next, old);
    return next;
  }
  if (subresource === 'status') {
    // The status and the object's metadata are taken; the rest stays (upstream status strategies reset the spec).
    const next = structuredClone(old);
    next.status = obj.status;
    next.metadata = obj.metadata;
    if (strategy.prepareForStatusUpdate) strategy.prepareForStatusUpdate(next, old);
    keepSystemMeta(next, old);
    errs = [
      ...validateObjectMeta(next.metadata, { namespaced: scope.def.namespaced, nameFn: strategy.nameValidation ?? nameIsDNSSubdomain }),
      ...validateObjectMetaUpdate(next.metadata, old.metadata),
      ...(strategy.validateStatusUpdate ? strategy.validateStatusUpdate(next, old) : []),
    ];
    if (errs.length) throw invalidObject(scope.gk, name, errs);
    return next;
  }
  keepSystemMeta(obj, old);
  if (strategy.statusSubresource) {
    if (old.status === undefined) delete obj.status;
    else obj.status = structuredClone(old.status);
  }
  strategy.defaults?.(obj);
  strategy.prepareForUpdate?.(obj, old);
  if (strategy.generation) {
    obj.metadata.generation = old.metadata.generation ?? 1;
    if (!jsonEqual(specOf(obj), specOf(old))) obj.metadata.generation += 1;
  }
  // Finalizers may only shrink to empty on a deleting object; the store finishes deletion then.
  errs = [
    ...validateObjectMeta(obj.metadata, { namespaced: scope.def.namespaced, nameFn: strategy.nameValidation ?? nameIsDNSSubdomain }),
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...(strategy.validate ? strategy.validate(obj) : []),
    ...(strategy.validateUpdate ? strategy.validateUpdate(obj, old) : []),
  ];
  if (errs.length) throw invalidObject(scope.gk, name, errs);
  return obj;
}
