/** Type checking of policy expressions against the schemas of the kinds they match (typechecking.go). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type admissionregistrationv1, findByKind, resources } from '@kubeling/api';
import { structuralOf, type TypeBoxSchema } from './schema-types.js';
import { type SchemaSource, typeCheck } from './typechecking.js';

const structural = (schema: unknown) => structuralOf(schema as TypeBoxSchema);
const schemas: SchemaSource = {
  kindsFor: (g, v, r) =>
    resources.filter((d) => d.group === g && d.version === v && d.resource === r).map((d) => ({ kind: d.kind, schema: structural(d.schema) })),
  schemaOf: (g, v, k) => {
    const d = findByKind(g, v, k);
    return d ? structural(d.schema) : undefined;
  },
};

const policy = (spec: NonNullable<admissionregistrationv1.ValidatingAdmissionPolicy['spec']>) => ({ metadata: { name: 'p' }, spec });
const deployments = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments', 'replicasets'] }];

test('expressions are checked against each matched kind; a typo is a warning per kind', () => {
  const warnings = typeCheck(
    policy({
      matchConstraints: { resourceRules: deployments },
      validations: [
        { expression: 'object.spec.replicas <= 5 && object.metadata.labels["app"] != ""' },
        { expression: 'object.spec.replica > 1', messageExpression: "'x' + object.spec.replicas" },
      ],
    }),
    schemas,
  );
  assert.deepEqual(warnings, [
    {
      fieldRef: 'spec.validations[1].expression',
      warning:
        "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n\n" +
        "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n",
    },
    {
      fieldRef: 'spec.validations[1].messageExpression',
      warning:
        "apps/v1, Kind=Deployment: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n | 'x' + object.spec.replicas\n | ....^\n\n" +
        "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n | 'x' + object.spec.replicas\n | ....^\n",
    },
  ]);
});

test('params are typed by the paramKind schema; wildcards and unknown kinds are not checked', () => {
  const withParams = typeCheck(
    policy({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
      validations: [{ expression: 'object.spec.replicas <= int(params.data.max)' }, { expression: 'params.spec.max > 0' }],
    }),
    schemas,
  );
  assert.deepEqual(
    withParams.map((w) => w.fieldRef),
    ['spec.validations[1].expression'],
  );
  assert.match(withParams[0]!.warning, /undefined field 'spec'/);
  const wildcard = policy({
    matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] },
    validations: [{ expression: 'object.nope' }],
  });
  assert.deepEqual(typeCheck(wildcard, schemas), []);
});
