/**
 * The OpenAPI v3 schema machinery of CustomResourceDefinitions, as
 * k8s.io/apiextensions-apiserver implements it: structural-schema checks,
 * validation of custom resources against a schema, pruning of unknown fields,
 * structural defaulting, and the helpers the CRD validation builds on.
 * Pure functions over plain JSON values; no I/O.
 */
export { applyDefaults, defaultValue, pruneNonNullableNullsWithoutDefaults, type ValidateDefaultsOptions, validateDefaults } from './defaults.js';
export { objectMetaDecodeError, validateEmbeddedResources } from './embedded.js';
export { MAX_SELECTABLE_FIELDS, type ResolvedFieldPath, validateSelectableFields, validFieldPath } from './fieldpath.js';
export { isKnownFormat, validatesFormat } from './formats.js';
export { validateListSetsAndMaps } from './listtype.js';
export { type CELErrorsFn, type CELNodeContext, type OpenAPISchemaOptions, openAPISchemaErrors, schemaHas } from './openapi.js';
export { prune } from './prune.js';
export { compileGoRegexp, type GoRegexp, goRegexpError } from './regexp.js';
export { isStructural, structuralConversionError, structuralErrors, validateStructural } from './structural.js';
export { deepEqual, openAPIValidate, type ValidatorOptions, validateCustomResource } from './validate.js';
