/**
 * Evaluating a policy against one request: validations and their messages,
 * params, variables, match conditions, failure policies, audit annotations,
 * and the request and namespaceObject variables (validator.go, condition.go).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import { compilePolicy } from './compile.js';
import { type EvalInput, validatePolicy } from './evaluate.js';
import { webhookMatchConditions } from './request.js';

type Spec = NonNullable<admissionregistrationv1.ValidatingAdmissionPolicy['spec']>;
const policy = (spec: Spec): admissionregistrationv1.ValidatingAdmissionPolicy => ({ metadata: { name: 'p' }, spec: { failurePolicy: 'Fail', ...spec } });
const deployment = (replicas: number): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default' },
  spec: { replicas },
});
const request = {
  operation: 'CREATE',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  name: 'web',
  namespace: 'default',
  userInfo: { username: 'alice' },
};
const input = (replicas: number, over: Partial<EvalInput> = {}): EvalInput => ({
  object: deployment(replicas),
  oldObject: null,
  request,
  namespaceObject: null,
  ...over,
});

test('a false validation denies with reason Invalid and `failed expression: <expr>`; a true one admits', () => {
  const c = compilePolicy(policy({ validations: [{ expression: 'object.spec.replicas <= 5' }] }));
  assert.deepEqual(validatePolicy(c, input(6)).decisions, [
    { action: 'deny', evaluation: 'deny', message: 'failed expression: object.spec.replicas <= 5', reason: 'Invalid', index: 0 },
  ]);
  assert.equal(validatePolicy(c, input(3)).decisions[0]!.action, 'admit');
});

test('messageExpression wins over message, and falls back to it when blank, failing or multi-line', () => {
  const v = (messageExpression: string) =>
    compilePolicy(policy({ validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', messageExpression, reason: 'Forbidden' }] }));
  const d = validatePolicy(v("'replicas ' + string(object.spec.replicas) + ' > 5'"), input(7)).decisions[0]!;
  assert.equal(d.message, 'replicas 7 > 5');
  assert.equal(d.reason, 'Forbidden');
  assert.equal(validatePolicy(v("'  '"), input(7)).decisions[0]!.message, 'too many');
  assert.equal(validatePolicy(v("'a\\nb'"), input(7)).decisions[0]!.message, 'too many');
  assert.equal(validatePolicy(v("object.spec.nope + ''"), input(7)).decisions[0]!.message, 'too many');
});

test('params come from the param object; variables are computed lazily and may use params', () => {
  const c = compilePolicy(
    policy({
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      variables: [
        { name: 'max', expression: 'int(params.data.max)' },
        { name: 'broken', expression: 'object.spec.nope' },
      ],
      validations: [{ expression: 'object.spec.replicas <= variables.max', messageExpression: "'at most ' + string(variables.max)" }],
    }),
  );
  const params: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits' }, data: { max: '4' } };
  assert.equal(validatePolicy(c, input(5, { params })).decisions[0]!.message, 'at most 4');
  assert.equal(validatePolicy(c, input(4, { params })).decisions[0]!.action, 'admit', 'the broken variable is never read');
  const uses = compilePolicy(
    policy({ variables: [{ name: 'broken', expression: 'object.spec.nope' }], validations: [{ expression: 'variables.broken == 1' }] }),
  );
  assert.equal(
    validatePolicy(uses, input(1)).decisions[0]!.message,
    `expression 'variables.broken == 1' resulted in error: composited variable "broken" fails to evaluate: no such key: nope`,
  );
});

test('runtime and compile errors deny under failurePolicy Fail and admit under Ignore', () => {
  const spec: Spec = { validations: [{ expression: 'object.spec.template.x == 1' }, { expression: 'object.spec.replicas <= max' }] };
  const fail = validatePolicy(compilePolicy(policy(spec)), input(1)).decisions;
  assert.deepEqual(
    fail.map((d) => [d.action, d.evaluation, d.message]),
    [
      ['deny', 'error', "expression 'object.spec.template.x == 1' resulted in error: no such key: template"],
      [
        'deny',
        'error',
        "compilation error: compilation failed: ERROR: <input>:1:25: undeclared reference to 'max' (in container '')\n | object.spec.replicas <= max\n | ........................^",
      ],
    ],
  );
  const ignore = validatePolicy(compilePolicy(policy({ ...spec, failurePolicy: 'Ignore' })), input(1)).decisions;
  assert.deepEqual(
    ignore.map((d) => d.action),
    ['admit', 'admit'],
  );
});

test('match conditions: false skips the policy, an error is the failure policy', () => {
  const spec = (expression: string, failurePolicy = 'Fail'): Spec => ({
    failurePolicy,
    matchConditions: [{ name: 'only-web', expression }],
    validations: [{ expression: 'object.spec.replicas <= 5' }],
  });
  assert.equal(validatePolicy(compilePolicy(policy(spec("object.metadata.name == 'web'"))), input(9)).decisions[0]!.action, 'deny');
  assert.deepEqual(validatePolicy(compilePolicy(policy(spec("object.metadata.name == 'api'"))), input(9)).decisions, []);
  const err = validatePolicy(compilePolicy(policy(spec("object.metadata.nope == 'x'"))), input(9)).decisions;
  assert.deepEqual(err, [
    { action: 'deny', evaluation: 'error', message: "expression 'object.metadata.nope == 'x'' resulted in error: no such key: nope", index: 0 },
  ]);
  assert.deepEqual(validatePolicy(compilePolicy(policy(spec("object.metadata.nope == 'x'", 'Ignore'))), input(9)).decisions, []);
});

test('request and namespaceObject carry the admission request and the namespace (timestamps typed)', () => {
  const c = compilePolicy(
    policy({
      validations: [
        { expression: "request.operation == 'CREATE' && request.kind.kind == 'Deployment' && request.userInfo.username == 'alice'" },
        { expression: "namespaceObject.metadata.labels['env'] == 'prod'" },
        { expression: "namespaceObject.metadata.creationTimestamp < timestamp('2030-01-01T00:00:00Z')" },
      ],
    }),
  );
  const namespaceObject: KubeObject = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'default', labels: { env: 'prod' }, creationTimestamp: '2024-05-01T10:00:00Z' },
  };
  assert.deepEqual(
    validatePolicy(c, input(1, { namespaceObject })).decisions.map((d) => [d.action, d.message]),
    [
      ['admit', ''],
      ['admit', ''],
      ['admit', ''],
    ],
  );
});

test('audit annotations publish strings, skip null and blank; other result types do not compile', () => {
  const c = compilePolicy(
    policy({
      auditAnnotations: [
        { key: 'replicas', valueExpression: "'replicas: ' + string(object.spec.replicas)" },
        { key: 'none', valueExpression: 'null' },
        { key: 'blank', valueExpression: "' '" },
        { key: 'bad', valueExpression: 'object.spec.replicas' },
      ],
    }),
  );
  assert.deepEqual(validatePolicy(c, input(3)).auditAnnotations, [
    { key: 'replicas', action: 'publish', value: 'replicas: 3' },
    { key: 'none', action: 'exclude' },
    { key: 'blank', action: 'exclude' },
    { key: 'bad', action: 'error', error: 'compilation error: must evaluate to one of [string null_type] but got dyn' },
  ]);
});

test("a webhook's match conditions: false skips, errors follow its failurePolicy", () => {
  const obj = deployment(2);
  const conds = [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }];
  assert.deepEqual(webhookMatchConditions(conds, 'Fail', obj, null, request), { matches: true });
  assert.deepEqual(webhookMatchConditions(conds, 'Fail', obj, null, { ...request, userInfo: { username: 'system:admin' } }), {
    matches: false,
    failedCondition: 'not-system',
  });
  const broken = [{ name: 'broken', expression: 'object.spec.nope == 1' }];
  assert.deepEqual(webhookMatchConditions(broken, 'Fail', obj, null, request), {
    matches: false,
    error: "expression 'object.spec.nope == 1' resulted in error: no such key: nope",
  });
  assert.deepEqual(webhookMatchConditions(broken, 'Ignore', obj, null, request), { matches: false });
});
