/**
 * ValidatingAdmissionPolicy / Binding validation messages, defaults and
 * Table cells as upstream's validation.go, defaults.go and printers.go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import { admissionPolicyPrinters } from './printers.js';
import { validatingAdmissionPolicyBindingStrategy, validatingAdmissionPolicyStrategy, webhookConfigurationStrategy } from './strategy.js';
import { validateBinding, validatePolicy } from './validation.js';

type Policy = admissionregistrationv1.ValidatingAdmissionPolicy;
type Binding = admissionregistrationv1.ValidatingAdmissionPolicyBinding;

const rules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }];
/** A policy as the strategy's defaults leave it. */
function policy(spec: NonNullable<Policy['spec']>): Policy {
  const p = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'max-replicas' }, spec };
  validatingAdmissionPolicyStrategy.defaults!(p as unknown as KubeObject);
  return p as Policy;
}
const messages = (errs: ReturnType<typeof validatePolicy>) => errs.map(fieldErrorMessage);

test('defaults: failurePolicy Fail, matchPolicy Equivalent, empty selectors, scope *', () => {
  const p = policy({ matchConstraints: { resourceRules: rules }, validations: [{ expression: 'object.spec.replicas <= 5' }] });
  assert.equal(p.spec?.failurePolicy, 'Fail');
  assert.deepEqual(p.spec?.matchConstraints, {
    resourceRules: [{ ...rules[0], scope: '*' }],
    matchPolicy: 'Equivalent',
    namespaceSelector: {},
    objectSelector: {},
  });
  assert.deepEqual(validatePolicy(p), []);
  const b = { metadata: { name: 'b' }, spec: { policyName: 'max-replicas', validationActions: ['Deny'], matchResources: {} } } as unknown as KubeObject;
  validatingAdmissionPolicyBindingStrategy.defaults!(b);
  assert.deepEqual((b as unknown as Binding).spec?.matchResources, { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} });
});

test('expressions that do not compile are Invalid with the compiler output', () => {
  const p = policy({
    matchConstraints: { resourceRules: rules },
    variables: [{ name: 'max', expression: '5' }],
    validations: [
      { expression: 'object.spec.replicas <= x' },
      { expression: 'object.spec.replicas' },
      { expression: 'object.spec.replicas <= variables.max', messageExpression: 'variables.max', message: 'a\nb', reason: 'Teapot' },
    ],
    auditAnnotations: [{ key: 'bad key!', valueExpression: "'x'" }],
  });
  assert.deepEqual(messages(validatePolicy(p)), [
    `spec.validations[0].expression: Invalid value: "object.spec.replicas <= x": compilation failed: ERROR: <input>:1:25: undeclared reference to 'x' (in container '')\n | object.spec.replicas <= x\n | ........................^`,
    'spec.validations[1].expression: Invalid value: "object.spec.replicas": must evaluate to bool but got dyn',
    'spec.validations[2].messageExpression: Invalid value: "variables.max": must evaluate to string but got int',
    'spec.validations[2].message: Invalid value: "a\\nb": message must not contain line breaks',
    'spec.validations[2].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
    `spec.auditAnnotations[0].key: Invalid value: "max-replicas/bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
  ]);
});

test('matchConstraints and its resourceRules are required; params only with a paramKind', () => {
  assert.deepEqual(messages(validatePolicy(policy({ validations: [{ expression: 'true' }] }))), ['spec.matchConstraints: Required value']);
  assert.deepEqual(messages(validatePolicy(policy({ matchConstraints: {}, validations: [{ expression: 'true' }] }))), [
    'spec.matchConstraints.resourceRules: Required value',
  ]);
  assert.deepEqual(messages(validatePolicy(policy({ matchConstraints: { resourceRules: rules } }))), [
    'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
    'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
  ]);
  const withoutParamKind = policy({ matchConstraints: { resourceRules: rules }, validations: [{ expression: 'params.x == 1' }] });
  assert.match(messages(validatePolicy(withoutParamKind))[0]!, /undeclared reference to 'params'/);
  const withParamKind = policy({
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: rules },
    validations: [{ expression: 'params.x == 1' }],
  });
  assert.deepEqual(validatePolicy(withParamKind), []);
  const badRules = policy({
    paramKind: { apiVersion: 'a/b/c', kind: '' },
    failurePolicy: 'Sometimes',
    matchConstraints: { resourceRules: [{ apiGroups: ['*', 'apps'], apiVersions: [], operations: ['PATCH'], resources: [] }] },
    validations: [{ expression: 'true' }],
  });
  assert.deepEqual(messages(validatePolicy(badRules)), [
    'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
    'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    'spec.paramKind.kind: Required value',
    'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
    `spec.matchConstraints.resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other API groups`,
    'spec.matchConstraints.resourceRules[0].apiVersions: Required value',
    'spec.matchConstraints.resourceRules[0].resources: Required value',
  ]);
});

test('bindings: policyName, paramRef and validationActions rules', () => {
  const binding = (spec: NonNullable<Binding['spec']>): Binding => ({ metadata: { name: 'b' }, spec });
  assert.deepEqual(validateBinding(binding({ policyName: 'p', validationActions: ['Deny'] })), []);
  assert.deepEqual(messages(validateBinding(binding({ validationActions: [] }))), [
    'spec.policyName: Required value',
    'spec.validationActions: Required value: at least one validation action is required',
  ]);
  assert.deepEqual(messages(validateBinding(binding({ policyName: 'p', validationActions: ['Deny', 'Warn', 'Deny', 'Log'] }))), [
    'spec.validationActions[2]: Duplicate value: "Deny"',
    'spec.validationActions[3]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
    'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", "Log"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
  ]);
  assert.deepEqual(messages(validateBinding(binding({ policyName: 'p', validationActions: ['Audit'], paramRef: { name: 'x', selector: {} } }))), [
    'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.selector: Forbidden: name and selector are mutually exclusive',
    'spec.paramRef.parameterNotFoundAction: Required value',
  ]);
  assert.deepEqual(messages(validateBinding(binding({ policyName: 'p', validationActions: ['Warn'], paramRef: { parameterNotFoundAction: 'Deny' } }))), [
    'spec.paramRef: Required value: one of name or selector must be specified',
  ]);
});

test('webhook match conditions are compiled without params', () => {
  const cfg = {
    metadata: { name: 'w' },
    webhooks: [
      {
        name: 'w.example.com',
        matchConditions: [
          { name: 'p', expression: "params.x == 'y'" },
          { name: 'p', expression: 'true' },
        ],
      },
    ],
  };
  const errs = webhookConfigurationStrategy.validate!(cfg as unknown as KubeObject).map(fieldErrorMessage);
  assert.match(
    errs[0]!,
    /^webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "params.x == 'y'": compilation failed: .*undeclared reference to 'params'/,
  );
  assert.equal(errs[1], 'webhooks[0].matchConditions[1].name: Duplicate value: "p"');
});

test('Table cells: VALIDATIONS and PARAMKIND; POLICYNAME and PARAMREF', () => {
  const now = Date.parse('2024-01-01T00:10:00Z');
  const metadata = { name: 'x', creationTimestamp: '2024-01-01T00:00:00Z' };
  const vap = admissionPolicyPrinters['admissionregistration.k8s.io/validatingadmissionpolicies']!;
  assert.deepEqual(
    vap.columns.map((c) => c.name),
    ['Name', 'Validations', 'ParamKind', 'Age'],
  );
  assert.deepEqual(vap.cells({ metadata, spec: { validations: [{ expression: 'true' }] } } as KubeObject, now), ['x', 1, '<unset>', '10m']);
  assert.deepEqual(vap.cells({ metadata, spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } } as KubeObject, now), ['x', 0, 'v1/ConfigMap', '10m']);
  const vapb = admissionPolicyPrinters['admissionregistration.k8s.io/validatingadmissionpolicybindings']!;
  const row = (paramRef?: unknown) => vapb.cells({ metadata, spec: { policyName: 'p', ...(paramRef ? { paramRef } : {}) } } as KubeObject, now);
  assert.deepEqual(row(), ['x', 'p', '<unset>', '10m']);
  assert.deepEqual(row({ name: 'limits', namespace: 'default' }), ['x', 'p', 'default/limits', '10m']);
  assert.deepEqual(row({ name: 'limits' }), ['x', 'p', '*/limits', '10m']);
  assert.equal(
    row({ selector: { matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }] } })[2],
    '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}',
  );
});
