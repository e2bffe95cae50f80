/**
 * Validation of apiextensions.k8s.io/v1 CustomResourceDefinitions, as
 * k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation/validation.go
 * does it for v1 objects.
 *
 * Upstream validates the internal form of the CRD, which the v1 conversion
 * produces by hoisting per-version `schema`, `subresources` and
 * `additionalPrinterColumns` to the spec when all versions carry identical
 * values (and `selectableFields` when, in addition, schemas are identical).
 * Paths follow that form as upstream's do: a single-version CRD's schema
 * errors read `spec.validation.openAPIV3Schema...`, a CRD whose versions
 * differ reads `spec.versions[1].schema.openAPIV3Schema...`; the conversion
 * webhook is `spec.conversion.webhookClientConfig` and
 * `spec.conversion.conversionReviewVersions`.
 *
 * Inputs are expected to be defaulted like the v1 API defaults them
 * (`defaultCustomResourceDefinition`). CEL: rules in `x-kubernetes-validations`
 * get their static checks here; compiling them is up to `celErrors`, called
 * per schema node when the schema is structural with valid defaults.
 */
import {
  type FieldError,
  field,
  isDNS1035Label,
  isDNS1123Subdomain,
  nameIsDNSSubdomain,
  validateImmutableField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '@kubeling/apimachinery';
import {
  deprecationWarningErrors,
  hasValidConversionReviewVersionOrEmpty,
  isEstablished,
  validateAPIApproval,
  validateColumn,
  validateConversionReviewVersions,
  validateEnumStrings,
  validateNames,
  validateStoredVersions,
  validateSubresources,
  validateWebhookService,
  validateWebhookURL,
} from './schema/crdparts.js';
import { validateDefaults } from './schema/defaults.js';
import { validateSelectableFields } from './schema/fieldpath.js';
import { goVersions, schemaBadValue } from './schema/gofmt.js';
import {
  type CELErrorsFn,
  openAPISchemaErrors,
  schemaHas,
  schemaHasDefaults,
  schemaHasInvalidMapListKeysMapSet,
  schemaHasInvalidTypes,
  schemaHasKubernetesExtensions,
  schemaHasNonAtomicSetType,
} from './schema/openapi.js';
import { prune } from './schema/prune.js';
import { hasStructuralDefault, isStructural, structuralConversionError, validateStructural } from './schema/structural.js';
import { deepEqual } from './schema/validate.js';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  JSONSchemaProps,
} from './types.js';

export type { CELErrorsFn, CELNodeContext } from './schema/openapi.js';

const { required, invalid, forbidden, internal } = field;

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The CRD with the shapes the validation walks guaranteed, so that a malformed request gets field errors rather than an exception. */
function normalize(crd: CustomResourceDefinition): CustomResourceDefinition {
  const c = (isObj(crd) ? crd : {}) as Partial<CustomResourceDefinition>;
  const spec = (isObj(c.spec) ? c.spec : {}) as Partial<CustomResourceDefinition['spec']>;
  const versions = spec.versions === undefined ? undefined : Array.isArray(spec.versions) ? spec.versions.filter(isObj) : [];
  return {
    ...c,
    metadata: isObj(c.metadata) ? c.metadata : {},
    spec: { ...spec, names: isObj(spec.names) ? spec.names : {}, versions } as CustomResourceDefinition['spec'],
    ...(c.status !== undefined ? { status: isObj(c.status) ? c.status : {} } : {}),
  } as CustomResourceDefinition;
}

/** Runs a validation; an unexpected shape deep inside a schema becomes an internal field error instead of a thrown exception (and a 500). */
function guarded(run: () => FieldError[]): FieldError[] {
  try {
    return run();
  } catch (e) {
    return [internal('spec', e instanceof Error ? e : String(e))];
  }
}

export interface CRDValidationOptions {
  /** Validate `metadata` as ObjectMeta (default true); when false only the `<plural>.<group>` name rule is checked. */
  objectMeta?: boolean;
}

interface Opts {
  requireRecognizedConversionReviewVersion: boolean;
  requireImmutableNames: boolean;
  requireOpenAPISchema: boolean;
  requireValidPropertyType: boolean;
  requireStructuralSchema: boolean;
  requirePrunedDefaults: boolean;
  requireAtomicSetType: boolean;
  requireMapListKeysMapSetValidation: boolean;
  celErrors?: CELErrorsFn | undefined;
}

type Validation = { openAPIV3Schema?: JSONSchemaProps } | undefined;
interface InternalVersion {
  v: CustomResourceDefinitionVersion;
  schema: Validation;
  subresources: CustomResourceSubresources | undefined;
  columns: CustomResourceColumnDefinition[] | undefined;
  selectableFields: { jsonPath: string }[] | undefined;
}
interface Internal {
  validation: Validation;
  subresources: CustomResourceSubresources | undefined;
  columns: CustomResourceColumnDefinition[] | undefined;
  selectableFields: { jsonPath: string }[] | undefined;
  versions: InternalVersion[];
  hoisted: { schema: boolean; subresources: boolean; columns: boolean };
}

/** apiequality.Semantic.DeepEqual for these shapes: nil and empty lists are equal. */
const semanticEqual = (a: unknown, b: unknown): boolean =>
  (Array.isArray(a) && a.length === 0 && b === undefined) || (Array.isArray(b) && b.length === 0 && a === undefined) || deepEqual(a, b);

/** Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec's hoisting. */
function toInternal(crd: CustomResourceDefinition): Internal {
  const versions = crd.spec.versions ?? [];
  const first = versions[0];
  const same = (get: (v: CustomResourceDefinitionVersion) => unknown): boolean => !!first && versions.every((v) => semanticEqual(get(v), get(first)));
  const schema = same((v) => v.schema);
  const subresources = same((v) => v.subresources);
  const columns = same((v) => v.additionalPrinterColumns);
  const selectable = schema && same((v) => v.selectableFields);
  return {
    validation: schema ? first?.schema : undefined,
    subresources: subresources ? first?.subresources : undefined,
    columns: columns ? first?.additionalPrinterColumns : undefined,
    selectableFields: selectable ? first?.selectableFields : undefined,
    versions: versions.map((v) => ({
      v,
      schema: schema ? undefined : v.schema,
      subresources: subresources ? undefined : v.subresources,
      columns: columns ? undefined : v.additionalPrinterColumns,
      selectableFields: selectable ? undefined : v.selectableFields,
    })),
    hoisted: { schema, subresources, columns },
  };
}

// Go struct field order of JSONSchemaProps, for the root check when the status subresource is enabled.
const ROOT_FIELDS: [keyof JSONSchemaProps, string][] = (
  'id ID,$schema Schema,$ref Ref,description Description,type Type,nullable Nullable,format Format,title Title,default Default,maximum Maximum,' +
  'exclusiveMaximum ExclusiveMaximum,minimum Minimum,exclusiveMinimum ExclusiveMinimum,maxLength MaxLength,minLength MinLength,pattern Pattern,' +
  'maxItems MaxItems,minItems MinItems,uniqueItems UniqueItems,multipleOf MultipleOf,enum Enum,maxProperties MaxProperties,minProperties MinProperties,' +
  'required Required,items Items,allOf AllOf,oneOf OneOf,anyOf AnyOf,not Not,properties Properties,additionalProperties AdditionalProperties,' +
  'patternProperties PatternProperties,dependencies Dependencies,additionalItems AdditionalItems,definitions Definitions,externalDocs ExternalDocs,' +
  'example Example,x-kubernetes-preserve-unknown-fields XPreserveUnknownFields,x-kubernetes-embedded-resource XEmbeddedResource,' +
  'x-kubernetes-int-or-string XIntOrString,x-kubernetes-list-map-keys XListMapKeys,x-kubernetes-list-type XListType,x-kubernetes-map-type XMapType,' +
  'x-kubernetes-validations XValidations'
)
  .split(',')
  .map((pair) => pair.split(' ') as [keyof JSONSchemaProps, string]);
const ALLOWED_AT_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];
const BOOL_FIELDS = new Set([
  'nullable',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'uniqueItems',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
]);
const isGoZero = (k: string, v: unknown): boolean => v === undefined || v === null || v === '' || (v === false && BOOL_FIELDS.has(k));

/** The status subresource takes `properties[status]` out of the root, so the root may only restrict what that keeps meaningful. */
function statusRootErrors(schema: JSONSchemaProps, p: string): FieldError[] {
  for (const [k, name] of ROOT_FIELDS) {
    if (isGoZero(k, schema[k])) continue;
    if (name === 'Type') {
      if (schema.type !== 'object')
        return [
          invalid(
            `${p}.openAPIV3Schema.type`,
            schema.type,
            'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
          ),
        ];
      continue;
    }
    if (!ALLOWED_AT_ROOT.includes(name))
      return [
        invalid(
          `${p}.openAPIV3Schema`,
          schemaBadValue(schema),
          `only [${ALLOWED_AT_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
        ),
      ];
  }
  return [];
}

/** validateCustomResourceDefinitionValidation. */
function validateValidation(cv: Validation, statusEnabled: boolean, opts: Opts, p: string): FieldError[] {
  const schema = cv?.openAPIV3Schema;
  if (!schema) return [];
  const errs: FieldError[] = statusEnabled ? statusRootErrors(schema, p) : [];
  if (schema.nullable) errs.push(forbidden(`${p}.openAPIV3Schema.nullable`, 'nullable cannot be true at the root'));
  const sp = `${p}.openAPIV3Schema`;
  const initErrs: FieldError[] = [];
  let celOK = false;
  if (opts.requireStructuralSchema) {
    const conv = structuralConversionError(schema);
    const structural = conv ? [] : validateStructural(schema, sp);
    const defaults = conv || structural.length ? [] : validateDefaults(schema, sp, { isResourceRoot: true, requirePrunedDefaults: opts.requirePrunedDefaults });
    if (conv) initErrs.push(invalid(sp, '', conv));
    else if (structural.length) errs.push(...structural);
    else if (defaults.length) errs.push(...defaults);
    else celOK = true;
  }
  errs.push(
    ...openAPISchemaErrors(schema, sp, {
      allowDefaults: true,
      requireValidPropertyType: opts.requireValidPropertyType,
      requireAtomicSetType: opts.requireAtomicSetType,
      requireMapListKeysMapSetValidation: opts.requireMapListKeysMapSetValidation,
      celErrors: celOK ? opts.celErrors : undefined,
    }),
  );
  if (errs.length === 0) errs.push(...initErrs);
  return errs;
}

function selectableFieldErrors(fields: { jsonPath: string }[] | undefined, cv: Validation, p: string, missing: string): FieldError[] {
  if (!fields || fields.length === 0) return [];
  if (!cv) return [invalid(`${p}.selectableFields`, '', missing)];
  const schema = cv.openAPIV3Schema;
  const conv = schema ? structuralConversionError(schema) : '';
  return [...(conv ? [invalid(`${p}.schema.openAPIV3Schema`, '', conv)] : []), ...validateSelectableFields(fields, schema, `${p}.selectableFields`)];
}

function validateConversion(crd: CustomResourceDefinition, opts: Opts, p: string): FieldError[] {
  const c = crd.spec.conversion;
  if (!c) return [];
  const errs = validateEnumStrings(`${p}.strategy`, c.strategy, ['None', 'Webhook']);
  const cc = c.webhook?.clientConfig;
  const reviewVersions = c.webhook?.conversionReviewVersions;
  if (c.strategy === 'Webhook') {
    const cp = `${p}.webhookClientConfig`;
    if (!cc) errs.push(required(cp, 'required when strategy is set to Webhook'));
    else if ((cc.url === undefined) === (cc.service === undefined)) errs.push(required(cp, 'exactly one of url or service is required'));
    else if (cc.url !== undefined) errs.push(...validateWebhookURL(`${cp}.url`, cc.url));
    else if (cc.service) errs.push(...validateWebhookService(`${cp}.service`, cc.service));
    errs.push(...validateConversionReviewVersions(reviewVersions, opts.requireRecognizedConversionReviewVersion, `${p}.conversionReviewVersions`));
  } else {
    if (cc) errs.push(forbidden(`${p}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions && reviewVersions.length > 0)
      errs.push(forbidden(`${p}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

const hasStatus = (s: CustomResourceSubresources | undefined): boolean => s?.status !== undefined && s?.status !== null;

/** validateCustomResourceDefinitionSpec. */
function validateSpec(crd: CustomResourceDefinition, opts: Opts): FieldError[] {
  const spec = crd.spec;
  const p = 'spec';
  const errs: FieldError[] = [];
  const internal = toInternal(crd);
  const group = spec.group ?? '';
  if (!group) errs.push(required(`${p}.group`, ''));
  else if (isDNS1123Subdomain(group).length) errs.push(invalid(`${p}.group`, group, isDNS1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2) errs.push(invalid(`${p}.group`, group, 'should be a domain with at least one dot'));
  errs.push(...validateEnumStrings(`${p}.scope`, spec.scope, ['Cluster', 'Namespaced']));

  const pUF = spec.preserveUnknownFields === true;
  const o: Opts = { ...opts };
  if (!pUF) o.requireStructuralSchema = true;
  if (!internal.validation?.openAPIV3Schema) {
    internal.versions.forEach((iv, i) => {
      const missing = !iv.schema?.openAPIV3Schema;
      if (o.requireOpenAPISchema && missing) errs.push(required(`${p}.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
      else if (!o.requireOpenAPISchema && !pUF && iv.v.served && missing)
        errs.push(required(`${p}.versions[${i}].schema.openAPIV3Schema`, 'because otherwise all fields are pruned'));
    });
  }
  const schemas = (spec.versions ?? []).map((v) => v.schema?.openAPIV3Schema);
  if (schemas.some(schemaHasDefaults)) {
    o.requireStructuralSchema = true;
    if (pUF) errs.push(invalid(`${p}.preserveUnknownFields`, true, 'must be false in order to use defaults in the schema'));
  }
  if (schemas.some(schemaHasKubernetesExtensions)) o.requireStructuralSchema = true;

  const perVersionSubresources = internal.versions.some((iv) => iv.subresources !== undefined);
  let storage = 0;
  const seen = new Set<string>();
  let unique = true;
  internal.versions.forEach((iv, i) => {
    const vp = `${p}.versions[${i}]`;
    const v = iv.v;
    if (v.storage) storage++;
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    const ne = isDNS1035Label(v.name ?? '');
    if (ne.length) errs.push(invalid(`${vp}.name`, v.name ?? '', ne.join(',')));
    const statusEnabled = hasStatus(perVersionSubresources ? iv.subresources : internal.subresources);
    errs.push(...deprecationWarningErrors(v, vp));
    errs.push(...validateValidation(iv.schema, statusEnabled, o, `${vp}.schema`));
    errs.push(...validateSubresources(iv.subresources, `${vp}.subresources`));
    (iv.columns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `${vp}.additionalPrinterColumns[${j}]`)));
    errs.push(
      ...selectableFieldErrors(iv.selectableFields, iv.schema, vp, 'selectableFields may only be set when version.schema.openAPIV3Schema is not included'),
    );
  });
  const versionsValue = (): unknown => goVersions(spec.versions, internal.hoisted);
  if (!unique) errs.push(invalid(`${p}.versions`, versionsValue(), 'must contain unique version names'));
  if (storage !== 1) errs.push(invalid(`${p}.versions`, versionsValue(), 'must have exactly one version marked as storage version'));
  const first = spec.versions?.[0]?.name;
  const firstErrs = first ? isDNS1035Label(first) : [];
  if (first && firstErrs.length) errs.push(invalid(`${p}.version`, first, firstErrs.join(',')));

  const names = spec.names ?? { plural: '', kind: '' };
  for (const k of ['plural', 'singular', 'kind', 'listKind'] as const) if (!names[k]) errs.push(required(`${p}.names.${k}`, ''));
  errs.push(...validateNames(names, `${p}.names`));
  const anyStatus = hasStatus(internal.subresources) || internal.versions.some((iv) => hasStatus(iv.subresources));
  errs.push(...validateValidation(internal.validation, anyStatus, o, `${p}.validation`));
  errs.push(...validateSubresources(internal.subresources, `${p}.subresources`));
  (internal.columns ?? []).forEach((c, j) => errs.push(...validateColumn(c, `${p}.additionalPrinterColumns[${j}]`)));
  errs.push(
    ...selectableFieldErrors(internal.selectableFields, internal.validation, p, 'selectableFields may only be set when validations.schema is included'),
  );
  if (spec.conversion && spec.conversion.strategy !== 'None' && pUF)
    errs.push(invalid(`${p}.conversion.strategy`, spec.conversion.strategy, 'must be None if spec.preserveUnknownFields is true'));
  errs.push(...validateConversion(crd, o, `${p}.conversion`));
  return errs;
}

function nameErrors(crd: CustomResourceDefinition, withObjectMeta: boolean): FieldError[] {
  const requiredName = `${crd.spec?.names?.plural ?? ''}.${crd.spec?.group ?? ''}`;
  const nameFn = (name: string, prefix: boolean): string[] => [
    ...nameIsDNSSubdomain(name, prefix),
    ...(name !== requiredName ? ['must be spec.names.plural+"."+spec.group'] : []),
  ];
  if (withObjectMeta) return validateObjectMeta(crd.metadata ?? {}, { namespaced: false, nameFn }, 'metadata');
  const errs: FieldError[] = [];
  const m = crd.metadata ?? {};
  if (m.name && m.name !== requiredName) errs.push(invalid('metadata.name', m.name, 'must be spec.names.plural+"."+spec.group'));
  return errs;
}

function validatePreserveUnknownFields(crd: CustomResourceDefinition, old?: CustomResourceDefinition): FieldError[] {
  if (old?.spec.preserveUnknownFields === true) return [];
  if (crd.spec.preserveUnknownFields !== true) return [];
  return [
    invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'),
  ];
}

const CREATE_OPTS: Opts = {
  requireRecognizedConversionReviewVersion: true,
  requireImmutableNames: false,
  requireOpenAPISchema: true,
  requireValidPropertyType: true,
  requireStructuralSchema: true,
  requirePrunedDefaults: true,
  requireAtomicSetType: true,
  requireMapListKeysMapSetValidation: true,
};

/** ValidateCustomResourceDefinition (create). */
export function validateCustomResourceDefinition(input: CustomResourceDefinition, celErrors?: CELErrorsFn, options: CRDValidationOptions = {}): FieldError[] {
  const crd = normalize(input);
  return guarded(() => [
    ...nameErrors(crd, options.objectMeta !== false),
    ...validateSpec(crd, { ...CREATE_OPTS, celErrors }),
    ...validateCustomResourceDefinitionStatus(crd),
    ...validateStoredVersions(crd.status?.storedVersions, crd.spec.versions ?? [], 'status.storedVersions'),
    ...validateAPIApproval(crd),
    ...validatePreserveUnknownFields(crd),
  ]);
}

const oldSchemas = (old: CustomResourceDefinition): (JSONSchemaProps | undefined)[] => (old.spec.versions ?? []).map((v) => v.schema?.openAPIV3Schema);

/** A default that PruneDefaults would change (a field the schema does not specify). */
function hasUnprunedDefaults(s: JSONSchemaProps | undefined): boolean {
  if (!s || !schemaHasDefaults(s) || !isStructural(s)) return false;
  return schemaHas(s, (x) => {
    if (!hasStructuralDefault(x)) return false;
    const copy = structuredClone(x.default);
    prune(copy, x, { isResourceRoot: x['x-kubernetes-embedded-resource'] === true });
    return !deepEqual(copy, x.default);
  });
}

/** ValidateCustomResourceDefinitionUpdate: rules tightened since `old` was stored are only enforced if `old` already met them. */
export function validateCustomResourceDefinitionUpdate(
  input: CustomResourceDefinition,
  oldInput: CustomResourceDefinition,
  celErrors?: CELErrorsFn,
  options: CRDValidationOptions = {},
): FieldError[] {
  return guarded(() => validateUpdate(normalize(input), normalize(oldInput), celErrors, options));
}

function validateUpdate(
  crd: CustomResourceDefinition,
  old: CustomResourceDefinition,
  celErrors: CELErrorsFn | undefined,
  options: CRDValidationOptions,
): FieldError[] {
  const olds = oldSchemas(old);
  const opts: Opts = {
    requireRecognizedConversionReviewVersion:
      !old.spec.conversion || hasValidConversionReviewVersionOrEmpty(old.spec.conversion.webhook?.conversionReviewVersions),
    requireImmutableNames: isEstablished(old),
    requireOpenAPISchema: olds.every((s) => s !== undefined),
    requireValidPropertyType: !olds.some(schemaHasInvalidTypes),
    requireStructuralSchema: !olds.some((s) => s !== undefined && !isStructural(s)),
    requirePrunedDefaults: !olds.some(hasUnprunedDefaults),
    requireAtomicSetType: !olds.some(schemaHasNonAtomicSetType),
    requireMapListKeysMapSetValidation: !olds.some(schemaHasInvalidMapListKeysMapSet),
    celErrors,
  };
  const errs: FieldError[] = options.objectMeta !== false ? validateObjectMetaUpdate(crd.metadata ?? {}, old.metadata ?? {}, 'metadata') : [];
  errs.push(...validateSpec(crd, opts));
  if (opts.requireImmutableNames) {
    errs.push(...validateImmutableField(crd.spec.scope, old.spec.scope, 'spec.scope'));
    errs.push(...validateImmutableField(crd.spec.names?.kind, old.spec.names?.kind, 'spec.names.kind'));
  }
  errs.push(...validateImmutableField(crd.spec.group, old.spec.group, 'spec.group'));
  errs.push(...validateImmutableField(crd.spec.names?.plural, old.spec.names?.plural, 'spec.names.plural'));
  errs.push(...validateCustomResourceDefinitionStatus(crd));
  errs.push(...validateStoredVersions(crd.status?.storedVersions, crd.spec.versions ?? [], 'status.storedVersions'));
  errs.push(...validateAPIApproval(crd, old));
  errs.push(...validatePreserveUnknownFields(crd, old));
  return errs;
}

/** ValidateCustomResourceDefinitionStatus: the accepted names follow the naming rules. */
export function validateCustomResourceDefinitionStatus(crd: CustomResourceDefinition): FieldError[] {
  const names = normalize(crd).status?.acceptedNames;
  return guarded(() => validateNames(isObj(names) ? names : undefined, 'status.acceptedNames'));
}

/**
 * The defaults the v1 API applies (apis/apiextensions/v1/defaults.go):
 * singular from kind, listKind `<Kind>List`, conversion strategy None,
 * webhook service port 443, and status.storedVersions from the storage
 * version. Mutates `crd`.
 */
export function defaultCustomResourceDefinition(crd: CustomResourceDefinition): void {
  if (!isObj(crd?.spec)) return;
  const names = isObj(crd.spec.names) ? crd.spec.names : undefined;
  if (names) {
    if (!names.singular) names.singular = (names.kind ?? '').toLowerCase();
    if (!names.listKind && names.kind) names.listKind = `${names.kind}List`;
  }
  crd.spec.conversion ??= { strategy: 'None' };
  const svc = crd.spec.conversion.webhook?.clientConfig?.service;
  if (svc && svc.port === undefined) svc.port = 443;
  const storage = (Array.isArray(crd.spec.versions) ? crd.spec.versions : []).find((v) => isObj(v) && v.storage);
  if (storage && !(crd.status?.storedVersions ?? []).length) crd.status = { ...(crd.status ?? {}), storedVersions: [storage.name] };
}
