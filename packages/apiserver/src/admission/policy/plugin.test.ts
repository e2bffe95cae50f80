/**
 * The plugin's dispatch with plain-function lookups: validationActions Deny,
 * Warn and Audit, audit annotations, params by selector, configuration errors
 * under both failure policies, and requests it never looks at.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeList, KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import { type PolicyAttributes, type PolicyPluginContext, VALIDATION_FAILURE_ANNOTATION, ValidatingAdmissionPolicyPlugin } from './plugin.js';

type Handler = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject) => void;
const subscriber = (objs: KubeObject[]) => ({
  subscribe(h: Handler) {
    for (const o of objs) h('ADDED', o);
    return () => undefined;
  },
});

const configMaps: KubeObject[] = [
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'small', namespace: 'default', labels: { limit: 'yes' }, resourceVersion: '1' },
    data: { max: '3' },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'default', labels: { limit: 'yes' }, resourceVersion: '1' }, data: { max: '8' } },
];

function plugin(policies: object[], bindings: object[]): ValidatingAdmissionPolicyPlugin {
  const ctx: PolicyPluginContext = {
    policies: () => subscriber(policies as KubeObject[]),
    bindings: () => subscriber(bindings as KubeObject[]),
    namespaces: () => ({ get: async (_ns, name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { env: 'test' } } }) }),
    resolve: (r) => (r === 'apps/deployments' ? { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true } : undefined),
    paramSource: (g, v, k) =>
      g === '' && v === 'v1' && k === 'ConfigMap'
        ? {
            namespaced: true,
            reader: {
              get: async () => {
                throw new Error('not used');
              },
              list: async (ns) =>
                ({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: {}, items: configMaps.filter((c) => c.metadata.namespace === ns) }) as KubeList,
            },
          }
        : undefined,
  };
  return new ValidatingAdmissionPolicyPlugin(ctx);
}

const rules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }];
const policy = (name: string, spec: object) => ({
  metadata: { name, resourceVersion: '1' },
  spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: rules }, ...spec },
});
const binding = (name: string, policyName: string, spec: object = {}) => ({ metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } });
const deployment = (replicas: number): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { replicas },
});
const attrs = (): PolicyAttributes => ({
  operation: 'CREATE',
  resource: 'apps/deployments',
  namespace: 'default',
  name: 'web',
  warnings: [],
  auditAnnotations: {},
});

const maxFive = policy('max', {
  validations: [{ expression: 'object.spec.replicas <= 5' }],
  auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
});

test('Warn adds a warning, Audit an audit annotation; neither refuses', async () => {
  const p = plugin([maxFive], [binding('warn', 'max', { validationActions: ['Warn', 'Audit'] })]);
  const a = attrs();
  assert.equal(p.handles(a), true);
  await p.validate(deployment(6), a);
  assert.deepEqual(a.warnings, ["Validation failed for ValidatingAdmissionPolicy 'max' with binding 'warn': failed expression: object.spec.replicas <= 5"]);
  assert.deepEqual(JSON.parse(a.auditAnnotations![VALIDATION_FAILURE_ANNOTATION]!), [
    { message: 'failed expression: object.spec.replicas <= 5', policy: 'max', binding: 'warn', expressionIndex: 0, validationActions: ['Warn', 'Audit'] },
  ]);
  assert.equal(a.auditAnnotations!['max/replicas'], '6');
});

test('Deny refuses with the first denial; reason and code follow the validation', async () => {
  const p = plugin(
    [maxFive, policy('named', { validations: [{ expression: "object.metadata.name != 'web'", reason: 'Forbidden', message: 'not web' }] })],
    [binding('b1', 'max'), binding('b2', 'named')],
  );
  await assert.rejects(p.validate(deployment(6), attrs()), (e: unknown) => {
    assert.ok(e instanceof StatusError);
    assert.equal(e.status.code, 422);
    assert.equal(
      e.status.message,
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max' with binding 'b1' denied request: failed expression: object.spec.replicas <= 5`,
    );
    return true;
  });
  await assert.rejects(p.validate(deployment(1), attrs()), (e: unknown) => {
    assert.ok(e instanceof StatusError);
    assert.equal(e.status.code, 403);
    assert.equal(e.status.reason, 'Forbidden');
    return true;
  });
});

test('params by selector: each selected param is one evaluation, all must pass', async () => {
  const limit = policy('limit', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    validations: [{ expression: 'object.spec.replicas <= int(params.data.max)' }],
  });
  const p = plugin([limit], [binding('sel', 'limit', { paramRef: { selector: { matchLabels: { limit: 'yes' } }, parameterNotFoundAction: 'Deny' } })]);
  await p.validate(deployment(3), attrs());
  await assert.rejects(p.validate(deployment(4), attrs()), /denied request: failed expression/);
});

test('configuration errors deny under Fail and are ignored under Ignore', async () => {
  const unknownKind = (failurePolicy: string) =>
    policy('unknown', { failurePolicy, paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' }, validations: [{ expression: 'true' }] });
  await assert.rejects(
    plugin([unknownKind('Fail')], [binding('b', 'unknown', { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } })]).validate(deployment(1), attrs()),
    (e: unknown) =>
      e instanceof StatusError &&
      e.status.message ===
        `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'unknown' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'`,
  );
  await plugin([unknownKind('Ignore')], [binding('b', 'unknown')]).validate(deployment(1), attrs());
  const noConstraints = { metadata: { name: 'nc' }, spec: { failurePolicy: 'Fail', validations: [{ expression: 'true' }] } };
  await assert.rejects(
    plugin([noConstraints], [binding('b', 'nc')]).validate(deployment(1), attrs()),
    /failed to configure policy: policy contained no match constraints, a required field/,
  );
});

test('admissionregistration objects, and bindings without their policy, are left alone', async () => {
  const p = plugin([maxFive], [binding('orphan', 'missing')]);
  assert.equal(p.handles({ operation: 'CREATE', resource: 'admissionregistration.k8s.io/validatingadmissionpolicies', namespace: undefined }), false);
  await p.validate(deployment(9), attrs());
  assert.equal(plugin([maxFive], []).handles(attrs()), false);
});
