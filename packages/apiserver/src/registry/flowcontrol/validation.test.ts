/**
 * Defaulting and validation of FlowSchemas and PriorityLevelConfigurations:
 * the bootstrap objects are valid fixed points of defaulting, mistakes get
 * upstream's field errors, and the mandatory objects' specs are fixed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '@kubeling/apimachinery';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap.js';
import { defaultFlowSchemaSpec, defaultPriorityLevelSpec, semanticEqual } from './defaults.js';
import { nonResourceURLProblem, validateFlowSchema, validatePriorityLevel } from './validation.js';

type Obj = Record<string, unknown>;
const clone = (o: unknown) => structuredClone(o) as Obj;
const messages = (errs: ReturnType<typeof validateFlowSchema>) => errs.map(fieldErrorMessage);

test('the bootstrap objects are valid and already defaulted', () => {
  for (const fs of [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]) {
    assert.deepEqual(validateFlowSchema(clone(fs)), [], fs.metadata.name);
    const spec = clone(fs.spec);
    defaultFlowSchemaSpec(spec);
    assert.ok(semanticEqual(spec, fs.spec), fs.metadata.name);
  }
  for (const pl of [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]) {
    assert.deepEqual(validatePriorityLevel(clone(pl)), [], pl.metadata.name);
    const spec = clone(pl.spec);
    defaultPriorityLevelSpec(spec);
    assert.ok(semanticEqual(spec, pl.spec), pl.metadata.name);
  }
});

test('v1 defaults: precedence 1000, 30 shares (an explicit 0 stays), queuing 64/8/50', () => {
  const fs: Obj = { priorityLevelConfiguration: { name: 'x' } };
  defaultFlowSchemaSpec(fs);
  assert.equal(fs.matchingPrecedence, 1000);
  const pl: Obj = { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } };
  defaultPriorityLevelSpec(pl);
  assert.deepEqual(pl.limited, {
    nominalConcurrencyShares: 30,
    lendablePercent: 0,
    limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } },
  });
  const zero: Obj = { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } };
  defaultPriorityLevelSpec(zero);
  assert.equal((zero.limited as Obj).nominalConcurrencyShares, 0);
  const exempt: Obj = { type: 'Exempt', exempt: {} };
  defaultPriorityLevelSpec(exempt);
  assert.deepEqual(exempt.exempt, { nominalConcurrencyShares: 0, lendablePercent: 0 });
});

test('FlowSchema mistakes get upstream field errors', () => {
  const fs = {
    metadata: { name: 'mine' },
    spec: {
      priorityLevelConfiguration: { name: '' },
      matchingPrecedence: 1,
      distinguisherMethod: { type: 'ByColour' },
      rules: [
        {
          subjects: [{ kind: 'User', group: { name: 'g' } }, { kind: 'Robot' }, { kind: 'ServiceAccount', serviceAccount: { name: '*' } }],
          resourceRules: [{ verbs: ['get', '*'], apiGroups: [], resources: ['pods', '*'], namespaces: ['Bad_NS'] }],
          nonResourceRules: [{ verbs: ['fly'], nonResourceURLs: ['/a/*/b'] }],
        },
        { subjects: [] },
      ],
    },
  };
  assert.deepEqual(messages(validateFlowSchema(fs)), [
    "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
    'spec.distinguisherMethod.type: Unsupported value: "ByColour": supported values: "ByNamespace", "ByUser"',
    'spec.priorityLevelConfiguration.name: Required value: must reference a priority level',
    "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'",
    "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
    'spec.rules[0].subjects[1].kind: Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"',
    'spec.rules[0].subjects[2].serviceAccount.namespace: Required value: must specify namespace for service account',
    'spec.rules[0].resourceRules[0].verbs: Invalid value: []string{"get", "*"}: if \'*\' is present, must not specify other verbs',
    'spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group',
    'spec.rules[0].resourceRules[0].resources: Invalid value: []string{"pods", "*"}: if \'*\' is present, must not specify other resources',
    "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"Bad_NS\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    'spec.rules[0].nonResourceRules[0].verbs: Unsupported value: []string{"fly"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"',
    'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a/*/b": wildcard can only do suffix matching',
    'spec.rules[1].subjects: Required value: subjects must contain at least one value',
    'spec.rules[1]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty',
  ]);
  assert.equal(nonResourceURLProblem('healthz'), 'must start with slash');
  assert.equal(nonResourceURLProblem('/a//b'), 'must not contain double slash');
  assert.equal(nonResourceURLProblem('/apis/*'), undefined);
});

test('PriorityLevelConfiguration mistakes get upstream field errors', () => {
  const pl = (name: string, spec: Obj) => messages(validatePriorityLevel({ metadata: { name }, spec }));
  assert.deepEqual(pl('x', { type: 'Exempt' }), ["spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"]);
  assert.deepEqual(pl('x', { type: 'Limited' }), ['spec.limited: Required value: must not be empty when type is Limited']);
  assert.deepEqual(
    pl('x', {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: -1,
        lendablePercent: 101,
        borrowingLimitPercent: -2,
        limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 5, queueLengthLimit: 0 } },
      },
    }),
    [
      'spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
      'spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: 0: must be positive',
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)',
      'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
      'spec.limited.borrowingLimitPercent: Invalid value: -2: if specified, must be a non-negative integer',
    ],
  );
  assert.deepEqual(pl('x', { type: 'Limited', limited: { limitResponse: { type: 'Reject', queuing: { queues: 1 } } } }), [
    'spec.limited.limitResponse.queuing: Forbidden: must be nil if limited.limitResponse.type is not Limited',
  ]);
  assert.deepEqual(
    pl('x', { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 1 << 20, handSize: 4, queueLengthLimit: 1 } } } }),
    ['spec.limited.limitResponse.queuing.handSize: Invalid value: 4: required entropy bits of deckSize 1048576 and handSize 4 should not be greater than 60'],
  );
});

test('the mandatory objects keep their spec; only spec.exempt of the exempt level is free', () => {
  const catchAll = clone(MANDATORY_FLOW_SCHEMAS.find((f) => f.metadata.name === 'catch-all'));
  (catchAll.spec as Obj).matchingPrecedence = 9000;
  assert.match(messages(validateFlowSchema(catchAll)).join('\n'), /spec: Invalid value: .*: spec of 'catch-all' must equal the fixed value/);
  const exempt = clone(MANDATORY_PRIORITY_LEVELS.find((p) => p.metadata.name === 'exempt'));
  (exempt.spec as Obj).exempt = { nominalConcurrencyShares: 10, lendablePercent: 50 };
  assert.deepEqual(validatePriorityLevel(exempt), []);
  const catchAllPL = clone(MANDATORY_PRIORITY_LEVELS.find((p) => p.metadata.name === 'catch-all'));
  ((catchAllPL.spec as Obj).limited as Obj).nominalConcurrencyShares = 50;
  assert.match(messages(validatePriorityLevel(catchAllPL)).join('\n'), /spec of 'catch-all' must equal the fixed value/);
});
