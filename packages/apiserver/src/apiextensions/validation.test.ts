import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import type { CustomResourceDefinition, CustomResourceDefinitionVersion, JSONSchemaProps } from './types.js';
import {
  defaultCustomResourceDefinition,
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionStatus,
  validateCustomResourceDefinitionUpdate,
} from './validation.js';

const SCHEMA: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: { type: 'object', properties: { replicas: { type: 'integer', default: 1 }, color: { type: 'string' } } },
    status: { type: 'object', properties: { replicas: { type: 'integer' } } },
  },
};
const version = (name: string, o: Partial<CustomResourceDefinitionVersion> = {}): CustomResourceDefinitionVersion => ({
  name,
  served: true,
  storage: true,
  schema: { openAPIV3Schema: structuredClone(SCHEMA) },
  ...o,
});
function crd(mutate: (c: CustomResourceDefinition) => void = () => {}): CustomResourceDefinition {
  const c: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'foos.example.com' },
    spec: { group: 'example.com', names: { plural: 'foos', kind: 'Foo' }, scope: 'Namespaced', versions: [version('v1')] },
  };
  mutate(c);
  defaultCustomResourceDefinition(c);
  return c;
}
const errs = (c: CustomResourceDefinition): string[] => validateCustomResourceDefinition(c).map(fieldErrorMessage);

test('a valid CRD, defaulted as the v1 API does', () => {
  const c = crd();
  assert.deepEqual(c.spec.names, { plural: 'foos', kind: 'Foo', singular: 'foo', listKind: 'FooList' });
  assert.deepEqual(c.spec.conversion, { strategy: 'None' });
  assert.deepEqual(c.status?.storedVersions, ['v1']);
  assert.deepEqual(errs(c), []);
});

test('the name must be <plural>.<group>; group, scope and names', () => {
  assert.deepEqual(
    errs(
      crd((c) => {
        c.metadata.name = 'bars.example.com';
        c.spec.group = 'example';
        c.spec.scope = 'Global' as 'Cluster';
        c.spec.names = { plural: 'Foos', kind: 'Foo', listKind: 'Foo', shortNames: ['f_o'], categories: ['all'] };
      }),
    ),
    [
      'metadata.name: Invalid value: "bars.example.com": must be spec.names.plural+"."+spec.group',
      'spec.group: Invalid value: "example": should be a domain with at least one dot',
      'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
      "spec.names.plural: Invalid value: \"Foos\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      "spec.names.shortNames[0]: Invalid value: \"f_o\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.names.listKind: Invalid value: "Foo": kind and listKind may not be the same',
    ],
  );
  assert.deepEqual(errs(crd((c) => (c.spec.group = ''))), [
    'metadata.name: Invalid value: "foos.example.com": must be spec.names.plural+"."+spec.group',
    'spec.group: Required value',
  ]);
});

test('versions: exactly one storage version, unique DNS-1035 names', () => {
  const two = errs(crd((c) => (c.spec.versions = [version('v1'), version('v2')])));
  assert.equal(two.length, 2);
  assert.equal(
    two[0],
    'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{' +
      ['v1', 'v2']
        .map(
          (n) =>
            `apiextensions.CustomResourceDefinitionVersion{Name:"${n}", Served:true, Storage:true, Deprecated:false, DeprecationWarning:(*string)(nil), ` +
            'Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), ' +
            'AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}',
        )
        .join(', ') +
      '}: must have exactly one version marked as storage version',
  );
  // The defaulted storedVersions only hold the first storage version.
  assert.equal(two[1], 'status.storedVersions: Invalid value: []string{"v1"}: must have the storage version v2');
  const dup = errs(crd((c) => (c.spec.versions = [version('v1'), version('v1', { storage: false })])));
  assert.deepEqual(
    dup.map((m) => m.replace(/: Invalid value: .*: /, ': … : ')),
    ['spec.versions: … : must contain unique version names'],
  );
  // Upstream reports a bad first version name twice: as the version and as the internal spec.version.
  const dns1035 =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
  assert.deepEqual(errs(crd((c) => (c.spec.versions = [version('V1')]))), [
    `spec.versions[0].name: Invalid value: "V1": ${dns1035}`,
    `spec.version: Invalid value: "V1": ${dns1035}`,
  ]);
  assert.deepEqual(errs(crd((c) => (c.spec.versions = []))), [
    'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{}: must have exactly one version marked as storage version',
    'status.storedVersions: Invalid value: []string(nil): must have at least one stored version',
  ]);
});

test('schemas are required and must be structural; paths follow the hoisted internal form', () => {
  assert.deepEqual(errs(crd((c) => delete c.spec.versions[0]!.schema)), ['spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required']);
  const bad = (s: JSONSchemaProps): JSONSchemaProps => ({ ...s, properties: { ...s.properties, foo: {} } });
  // One version (or identical schemas): upstream reports them under spec.validation.
  assert.deepEqual(errs(crd((c) => (c.spec.versions[0]!.schema!.openAPIV3Schema = bad(SCHEMA)))), [
    'spec.validation.openAPIV3Schema.properties[foo].type: Required value: must not be empty for specified object fields',
  ]);
  // Different schemas stay per version.
  assert.deepEqual(errs(crd((c) => (c.spec.versions = [version('v1', { storage: false }), version('v2', { schema: { openAPIV3Schema: bad(SCHEMA) } })]))), [
    'spec.versions[1].schema.openAPIV3Schema.properties[foo].type: Required value: must not be empty for specified object fields',
  ]);
});

test('defaults must validate and be pruned; nullable root and status-subresource root restrictions', () => {
  assert.deepEqual(errs(crd((c) => (c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!.properties!.replicas!.default = 'x'))), [
    'spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"',
  ]);
  const withStatus = crd((c) => {
    c.spec.versions[0]!.subresources = { status: {} };
    c.spec.versions[0]!.schema!.openAPIV3Schema!.nullable = true;
    c.spec.versions[0]!.schema!.openAPIV3Schema!.minProperties = 1;
  });
  const got = errs(withStatus);
  assert.equal(got.length, 2);
  assert.match(
    got[0]!,
    /^spec\.validation\.openAPIV3Schema: Invalid value: apiextensions\.JSONSchemaProps\{ID:"", Schema:"", Ref:\(\*string\)\(nil\), Description:"", Type:"object", Nullable:true,/,
  );
  assert.match(
    got[0]!,
    /: only \[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations\] fields are allowed at the root of the schema if the status subresource is enabled$/,
  );
  assert.equal(got[1], 'spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root');
});

test('preserveUnknownFields may not be true', () => {
  assert.deepEqual(errs(crd((c) => (c.spec.preserveUnknownFields = true))), [
    'spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema',
    'spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
  ]);
});

test('subresources, printer columns, selectable fields, deprecation warnings', () => {
  const c = crd((x) => {
    x.spec.versions[0]!.subresources = {
      scale: { specReplicasPath: 'spec.replicas', statusReplicasPath: '.spec.replicas', labelSelectorPath: '.metadata.labels' },
    };
    x.spec.versions[0]!.additionalPrinterColumns = [
      { name: '', type: 'float', format: 'uuid', jsonPath: '' },
      { name: 'Age', type: 'date', jsonPath: 'metadata.creationTimestamp' },
    ];
    x.spec.versions[0]!.selectableFields = [{ jsonPath: '.spec.color' }, { jsonPath: '.spec.nope' }];
    x.spec.versions[0]!.deprecationWarning = 'old';
  });
  assert.deepEqual(errs(c), [
    'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions',
    // One version: subresources, columns and selectable fields are hoisted to the spec, as upstream reports them.
    'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must be a simple json path starting with .',
    'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.replicas": should be a json path under .status',
    'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status',
    'spec.additionalPrinterColumns[0].name: Required value',
    'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of boolean,date,integer,number,string',
    'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of byte,date,date-time,double,float,int32,int64,password',
    'spec.additionalPrinterColumns[0].JSONPath: Required value',
    'spec.additionalPrinterColumns[1].JSONPath: Invalid value: "metadata.creationTimestamp": must be a simple json path starting with .',
    'spec.selectableFields[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field',
  ]);
});

test('conversion webhooks', () => {
  const webhook = (w: NonNullable<CustomResourceDefinition['spec']['conversion']>['webhook']) =>
    errs(crd((c) => (c.spec.conversion = { strategy: 'Webhook', ...(w ? { webhook: w } : {}) })));
  assert.deepEqual(webhook(undefined), [
    'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
    'spec.conversion.conversionReviewVersions: Required value',
  ]);
  assert.deepEqual(webhook({ clientConfig: { url: 'http://u:p@example.com/convert?x=1#f' }, conversionReviewVersions: ['v2', 'v2'] }), [
    'spec.conversion.webhookClientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]',
    'spec.conversion.webhookClientConfig.url: Invalid value: "u:p": user information is not permitted in the URL',
    'spec.conversion.webhookClientConfig.url: Invalid value: "f": fragments are not permitted in the URL',
    'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
    'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
    'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of v1, v1beta1',
  ]);
  assert.deepEqual(webhook({ clientConfig: { service: { namespace: '', name: 'svc', path: 'x//y' } }, conversionReviewVersions: ['v1'] }), [
    'spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
    'spec.conversion.webhookClientConfig.service.path: Invalid value: "x//y": must start with a \'/\'',
    // As upstream, the first character is dropped before splitting, whatever it is.
    'spec.conversion.webhookClientConfig.service.path: Invalid value: "x//y": segment[0] may not be empty',
    'spec.conversion.webhookClientConfig.service.path: Invalid value: "x//y": segment[1] may not be empty',
  ]);
  assert.deepEqual(webhook({ clientConfig: { url: 'https://example.com/convert' }, conversionReviewVersions: ['v1'] }), []);
  assert.deepEqual(
    errs(crd((c) => (c.spec.conversion = { strategy: 'None', webhook: { clientConfig: { url: 'https://x' }, conversionReviewVersions: ['v1'] } }))),
    [
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ],
  );
});

test('protected groups need the API approval annotation', () => {
  const k8s = (annotations?: Record<string, string>) =>
    errs(
      crd((c) => {
        c.metadata.name = 'foos.samplecontroller.k8s.io';
        c.spec.group = 'samplecontroller.k8s.io';
        if (annotations) c.metadata.annotations = annotations;
      }),
    );
  assert.deepEqual(k8s(), [
    'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111',
  ]);
  assert.deepEqual(k8s({ 'api-approved.kubernetes.io': 'unapproved, experimental' }), []);
  assert.deepEqual(k8s({ 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/1' }), []);
  assert.equal(k8s({ 'api-approved.kubernetes.io': 'yes' }).length, 1);
});

test('CEL rules go to the hook with their schema path', () => {
  const c = crd((x) => (x.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!['x-kubernetes-validations'] = [{ rule: 'self.replicas > 0' }]));
  const seen: string[] = [];
  const got = validateCustomResourceDefinition(c, (schema, path) => {
    seen.push(`${path}: ${schema['x-kubernetes-validations']![0]!.rule}`);
    return [{ type: 'FieldValueInvalid', field: `${path}.x-kubernetes-validations[0].rule`, badValue: 'x', detail: 'compilation failed' }];
  });
  assert.deepEqual(seen, ['spec.validation.openAPIV3Schema.properties[spec]: self.replicas > 0']);
  assert.deepEqual(got.map(fieldErrorMessage), [
    'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "x": compilation failed',
  ]);
});

test('update: immutable group and plural, scope/kind once established, stored versions', () => {
  const old = crd((c) => (c.status = { storedVersions: ['v1'], conditions: [{ type: 'Established', status: 'True' }] }));
  assert.deepEqual(validateCustomResourceDefinitionUpdate(crd(), old).map(fieldErrorMessage), []);
  const next = crd((c) => {
    c.spec.scope = 'Cluster';
    c.spec.versions = [version('v1', { storage: false }), version('v2')];
    c.status = { storedVersions: ['v0', 'v1'] };
  });
  assert.deepEqual(validateCustomResourceDefinitionUpdate(next, old).map(fieldErrorMessage), [
    'spec.scope: Invalid value: "Cluster": field is immutable',
    'status.storedVersions: Invalid value: []string{"v0", "v1"}: must have the storage version v2',
    'status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions',
  ]);
  const notEstablished = crd();
  assert.deepEqual(
    validateCustomResourceDefinitionUpdate(
      crd((c) => (c.spec.scope = 'Cluster')),
      notEstablished,
    ).map(fieldErrorMessage),
    [],
  );
  const renamed = crd((c) => {
    c.metadata.name = 'bars.example.org';
    c.spec.group = 'example.org';
    c.spec.names.plural = 'bars';
  });
  assert.deepEqual(validateCustomResourceDefinitionUpdate(renamed, old, undefined, { objectMeta: false }).map(fieldErrorMessage), [
    'spec.group: Invalid value: "example.org": field is immutable',
    'spec.names.plural: Invalid value: "bars": field is immutable',
  ]);
});

test('update: rules the stored CRD already broke are not enforced', () => {
  const setOfObjects = (): JSONSchemaProps => ({
    type: 'object',
    properties: { spec: { type: 'object', properties: { l: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object' } } } } },
  });
  const old = crd((c) => (c.spec.versions[0]!.schema = { openAPIV3Schema: setOfObjects() }));
  assert.deepEqual(errs(old), [
    'spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set',
  ]);
  const changed = crd((c) => {
    c.spec.versions[0]!.schema = { openAPIV3Schema: setOfObjects() };
    c.spec.versions[0]!.schema!.openAPIV3Schema!.description = 'changed';
  });
  assert.deepEqual(validateCustomResourceDefinitionUpdate(changed, old).map(fieldErrorMessage), []);
  // Structural schemas are always required once preserveUnknownFields is false.
  const nonStructural = crd((c) => (c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!.spec!.properties!.foo = {}));
  assert.deepEqual(validateCustomResourceDefinitionUpdate(nonStructural, nonStructural).map(fieldErrorMessage), [
    'spec.validation.openAPIV3Schema.properties[spec].properties[foo].type: Required value: must not be empty for specified object fields',
  ]);
});

test('status: accepted names follow the naming rules', () => {
  const c = crd((x) => (x.status = { storedVersions: ['v1'], acceptedNames: { plural: 'foos', kind: 'Foo', listKind: 'Foo' } }));
  assert.deepEqual(validateCustomResourceDefinitionStatus(c).map(fieldErrorMessage), [
    'status.acceptedNames.listKind: Invalid value: "Foo": kind and listKind may not be the same',
  ]);
});

test('malformed input gives field errors, never an exception', () => {
  const empty = validateCustomResourceDefinition({} as CustomResourceDefinition).map(fieldErrorMessage);
  assert.ok(empty.includes('spec.group: Required value'));
  assert.ok(empty.includes('spec.scope: Required value'));
  assert.ok(
    empty.includes(
      'spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version',
    ),
  );
  const weird = crd((c) => {
    (c.spec.versions[0]!.schema!.openAPIV3Schema as Record<string, unknown>).enum = 'x';
    (c.spec.versions[0]!.schema!.openAPIV3Schema as Record<string, unknown>).required = 5;
    (c.spec as unknown as Record<string, unknown>).names = 'x';
  });
  assert.doesNotThrow(() => validateCustomResourceDefinition(weird));
  assert.doesNotThrow(() => validateCustomResourceDefinitionUpdate(weird, {} as CustomResourceDefinition));
});
