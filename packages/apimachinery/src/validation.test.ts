import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  finalizerWarnings,
  isCIdentifier,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isEnvVarName,
  isQualifiedName,
  isValidIP,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  regexError,
  validateAnnotations,
  validateFinalizers,
  validateKubeFinalizerName,
  validateLabelSelector,
  validateLabels,
  validateManagedFields,
  validateObjectMeta,
  validateObjectMetaUpdate,
  validateOwnerReferences,
  validatePathSegmentName,
} from './validation/index.js';
import { aggregateMessage, fieldErrorMessage } from './field-errors.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const msgs = (errs: Parameters<typeof aggregateMessage>[0]) => errs.map(fieldErrorMessage);

test('regexError keeps upstream punctuation', () => {
  assert.equal(regexError('m', 're'), "m (regex used for validation is 're')");
  assert.equal(regexError('m', 're', 'a'), "m (e.g. 'a', regex used for validation is 're')");
  assert.equal(regexError('m', 're', 'a', 'b'), "m (e.g. 'a',  or 'b', regex used for validation is 're')");
});

test('DNS names', () => {
  for (const ok of ['a', 'ab', 'a-b', '0', 'a'.repeat(63), '1-2']) assert.deepEqual(isDNS1123Label(ok), [], ok);
  assert.deepEqual(isDNS1123Label('My_Name'), [LABEL_MSG]);
  assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
  assert.deepEqual(isDNS1123Label(''), [LABEL_MSG]);
  for (const ok of ['example.com', 'a.b.c', 'a-1.b-2', 'a'.repeat(253)]) assert.deepEqual(isDNS1123Subdomain(ok), [], ok);
  assert.deepEqual(isDNS1123Subdomain('Example.com'), [SUBDOMAIN_MSG]);
  assert.deepEqual(isDNS1123Subdomain('a..b'), [SUBDOMAIN_MSG]);
  assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  assert.deepEqual(isDNS1035Label('my-name'), []);
  assert.deepEqual(isDNS1035Label('1abc'), [
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  ]);
});

test('qualified names and label values', () => {
  for (const ok of ['simple', 'now-with-dashes', '1-starts-with-num', 'example.com/MyName', 'a.b/c_d', 'A', 'x'.repeat(63)])
    assert.deepEqual(isQualifiedName(ok), [], ok);
  assert.deepEqual(isQualifiedName('bad key!'), [NAME_PART_MSG]);
  assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
  assert.deepEqual(isQualifiedName('a/'), ['name part must be non-empty', NAME_PART_MSG]);
  assert.deepEqual(isQualifiedName('x'.repeat(64)), ['name part must be no more than 63 characters']);
  assert.deepEqual(isQualifiedName('Ex.com/a'), [`prefix part ${SUBDOMAIN_MSG}`]);
  assert.deepEqual(isQualifiedName('a/b/c'), [
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
  ]);
  for (const ok of ['', 'a', 'MyValue', 'my_value', '12345', 'a.b-c_d', 'x'.repeat(63)]) assert.deepEqual(isValidLabelValue(ok), [], ok);
  assert.equal(isValidLabelValue('-a').length, 1);
  assert.deepEqual(isValidLabelValue('x'.repeat(64)), ['must be no more than 63 characters']);
  // Go counts bytes
  assert.deepEqual(isValidLabelValue('é'.repeat(32)).slice(0, 1), ['must be no more than 63 characters']);
});

test('ports, identifiers, env vars, config keys, IPs', () => {
  assert.deepEqual(isValidPortNum(1), []);
  assert.deepEqual(isValidPortNum(65535), []);
  assert.deepEqual(isValidPortNum(0), ['must be between 1 and 65535, inclusive']);
  assert.deepEqual(isValidPortNum(65536), ['must be between 1 and 65535, inclusive']);
  for (const ok of ['http', 'a-b', 'abc-123', 'a'.repeat(15)]) assert.deepEqual(isValidPortName(ok), [], ok);
  assert.deepEqual(isValidPortName('-'), ['must contain at least one letter (a-z)', 'must not begin or end with a hyphen']);
  assert.deepEqual(isValidPortName('a--b'), ['must not contain consecutive hyphens']);
  assert.deepEqual(isValidPortName('HTTP'), [
    'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    'must contain at least one letter (a-z)',
  ]);
  assert.deepEqual(isValidPortName('a'.repeat(16)), ['must be no more than 15 characters']);
  assert.deepEqual(isCIdentifier('_ok1'), []);
  assert.equal(isCIdentifier('1bad').length, 1);
  assert.deepEqual(isEnvVarName('MY_ENV.NAME'), []);
  assert.deepEqual(isEnvVarName('..a'), ["must not start with '..'"]);
  assert.deepEqual(isEnvVarName('1A'), [
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
  ]);
  assert.deepEqual(isConfigMapKey('key.name'), []);
  assert.deepEqual(isConfigMapKey('.'), ["must not be '.'"]);
  assert.deepEqual(isConfigMapKey('..'), ["must not be '..'"]);
  assert.deepEqual(isConfigMapKey('a b'), [
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
  ]);
  for (const ok of ['1.2.3.4', '010.001.0.1', '::', '::1', '1::', '2001:db8::ffff', '::ffff:1.2.3.4', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:1.2.3.4'])
    assert.deepEqual(isValidIP(ok), [], ok);
  for (const bad of ['', 'abc', '256.1.1.1', '1.2.3', '1.2.3.4.5', 'fe80::1%eth0', '1:2:3:4:5:6:7:8:9', '1::2::3', '1:2:3:4:5:6:7::8']) {
    assert.deepEqual(isValidIP(bad), ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'], bad);
  }
});

test('name functions', () => {
  assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
  assert.deepEqual(nameIsDNSSubdomain('web-', false), [SUBDOMAIN_MSG]);
  assert.deepEqual(nameIsDNSLabel('ns-', true), []);
  assert.equal(nameIsDNSSubdomain('..', false).length, 1);
  assert.equal(nameIsDNSSubdomain('a/b', false).length, 1);
  assert.deepEqual(validatePathSegmentName('..', false), ["may not be '..'"]);
  assert.deepEqual(validatePathSegmentName('.', false), ["may not be '.'"]);
  assert.deepEqual(validatePathSegmentName('a/b%c', false), ["may not contain '/'", "may not contain '%'"]);
  assert.deepEqual(validatePathSegmentName('..', true), []);
  assert.deepEqual(validatePathSegmentName('system:admin', false), []);
});

test('labels, annotations, selectors', () => {
  assert.deepEqual(msgs(validateLabels({ 'bad key!': 'ok' }, 'metadata.labels')), [`metadata.labels: Invalid value: "bad key!": ${NAME_PART_MSG}`]);
  assert.equal(validateLabels({ a: '-v' }, 'metadata.labels')[0]!.badValue, '-v');
  assert.deepEqual(validateLabels(undefined, 'x'), []);
  assert.deepEqual(msgs(validateAnnotations({ 'Example.COM/Key': 'x' }, 'metadata.annotations')), []);
  assert.deepEqual(msgs(validateAnnotations({ 'a b': 'x' }, 'metadata.annotations')), [
    "metadata.annotations: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  ]);
  assert.deepEqual(msgs(validateAnnotations({ a: 'x'.repeat(256 * 1024) }, 'metadata.annotations')), [
    'metadata.annotations: Too long: may not be more than 262144 bytes',
  ]);
  assert.deepEqual(msgs(validateAnnotations({ a: 'x'.repeat(256 * 1024 - 1) }, 'metadata.annotations')), []);
  assert.deepEqual(
    msgs(
      validateLabelSelector(
        {
          matchExpressions: [
            { key: 'k', operator: 'In' },
            { key: 'k', operator: 'Exists', values: ['x'] },
            { key: 'k', operator: 'Foo' },
          ],
        },
        'spec.selector',
      ),
    ),
    [
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Foo": not a valid selector operator',
    ],
  );
});

test('owner references and finalizers', () => {
  assert.deepEqual(
    validateOwnerReferences([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }], 'metadata.ownerReferences'),
    [],
  );
  assert.deepEqual(msgs(validateOwnerReferences([{ apiVersion: 'apps/', kind: '', name: '', uid: '' }], 'metadata.ownerReferences')), [
    'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
    'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
    'metadata.ownerReferences.name: Invalid value: "": must not be empty',
    'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
  ]);
  const two = [
    { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
    { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'b', uid: '2', controller: true },
  ];
  assert.match(
    fieldErrorMessage(validateOwnerReferences(two, 'metadata.ownerReferences')[0]!),
    /^metadata\.ownerReferences: Invalid value: \[.*\]: Only one reference can have Controller set to true\. Found "true" in references for ReplicaSet\/a and StatefulSet\/b$/,
  );
  assert.match(
    fieldErrorMessage(validateOwnerReferences([{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }], 'm')[0]!),
    /: \/v1, Kind=Event is disallowed from being an owner$/,
  );

  assert.deepEqual(validateFinalizers(['kubernetes', 'orphan', 'example.com/cleanup', 'foo.bar'], 'metadata.finalizers'), []);
  assert.deepEqual(msgs(validateFinalizers(['orphan', 'foregroundDeletion'], 'metadata.finalizers')), [
    'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
  ]);
  assert.deepEqual(msgs(validateFinalizers(['bad finalizer'], 'metadata.finalizers')), [
    `metadata.finalizers: Invalid value: "bad finalizer": ${NAME_PART_MSG}`,
  ]);
  assert.deepEqual(validateKubeFinalizerName('kubernetes', 'spec.finalizers[0]'), []);
  assert.deepEqual(msgs(validateKubeFinalizerName('foo', 'spec.finalizers[0]')), [
    'spec.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
  ]);
  assert.deepEqual(finalizerWarnings(['foo.example.com', 'kubernetes', 'example.com/x']), [
    'metadata.finalizers: "foo.example.com": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers',
  ]);
});

test('object metadata on create', () => {
  const dns = { namespaced: true, nameFn: nameIsDNSSubdomain };
  assert.deepEqual(validateObjectMeta({ name: 'web', namespace: 'default', labels: { app: 'web' } }, dns), []);
  const errs = validateObjectMeta({ name: 'ok', labels: { 'bad key!': 'v' } }, dns);
  assert.deepEqual(
    errs.map((e) => e.field),
    ['metadata.namespace', 'metadata.labels'],
  );
  assert.equal(fieldErrorMessage(errs[0]!), 'metadata.namespace: Required value');
  assert.equal(
    aggregateMessage(validateObjectMeta({ namespace: 'x' }, { namespaced: false, nameFn: nameIsDNSSubdomain })),
    '[metadata.name: Required value: name or generateName is required, metadata.namespace: Forbidden: not allowed on this type]',
  );
  assert.deepEqual(msgs(validateObjectMeta({ name: 'My_Name', namespace: 'default' }, dns)), [`metadata.name: Invalid value: "My_Name": ${SUBDOMAIN_MSG}`]);
  assert.deepEqual(msgs(validateObjectMeta({ name: 'a', namespace: 'Bad.NS' }, dns)), [`metadata.namespace: Invalid value: "Bad.NS": ${LABEL_MSG}`]);
  assert.deepEqual(msgs(validateObjectMeta({ name: 'a', namespace: 'a.b' }, dns)), ['metadata.namespace: Invalid value: "a.b": must not contain dots']);
  assert.deepEqual(msgs(validateObjectMeta({ name: 'web-x1y2z', generateName: 'web-', namespace: 'd' }, dns)), []);
  assert.deepEqual(msgs(validateObjectMeta({ name: 'x', generateName: 'Web-', namespace: 'd' }, dns)), [
    `metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_MSG}`,
  ]);
  assert.deepEqual(msgs(validateObjectMeta({ name: 'a', namespace: 'd', generation: -1 }, dns)), [
    'metadata.generation: Invalid value: -1: must be greater than or equal to 0',
  ]);
  assert.deepEqual(msgs(validateManagedFields([{ operation: 'Bogus', manager: 'm\u0007' }], 'metadata.managedFields')), [
    'metadata.managedFields[0].operation: Invalid value: "Bogus": must be `Apply` or `Update`',
    'metadata.managedFields[0].manager: Invalid value: "m\\a": invalid character U+0007 (at position 1)',
  ]);
  assert.deepEqual(
    validateObjectMeta({ name: 'a' }, { namespaced: false, nameFn: nameIsDNSLabel }, 'spec.template.metadata').map((e) => e.field),
    [],
  );
});

test('object metadata on update', () => {
  const old = { name: 'a', namespace: 'n', uid: 'u1', creationTimestamp: '2024-01-01T00:00:00Z' };
  assert.deepEqual(validateObjectMetaUpdate({ ...old }, old), []);
  assert.deepEqual(msgs(validateObjectMetaUpdate({ ...old, name: 'b', uid: 'u2' }, old)), [
    'metadata.name: Invalid value: "b": field is immutable',
    'metadata.uid: Invalid value: "u2": field is immutable',
  ]);
  assert.deepEqual(msgs(validateObjectMetaUpdate({ ...old, namespace: 'm', creationTimestamp: '2025-01-01T00:00:00Z' }, old)), [
    'metadata.namespace: Invalid value: "m": field is immutable',
    'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
  ]);
  assert.deepEqual(msgs(validateObjectMetaUpdate({ ...old, deletionGracePeriodSeconds: 5 }, { ...old, deletionGracePeriodSeconds: 30 })), [
    'metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable',
  ]);
});
