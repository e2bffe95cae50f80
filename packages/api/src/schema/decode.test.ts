import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base64Error, checkAgainstSchema, goJSONFloat, jsonNumberText, typeErrorMessage, type DecodeOptions } from './decode.js';
import { Deployment } from '../kinds/apps-v1.js';
import { ConfigMap, Pod, Secret } from '../kinds/core-v1.js';
import type { TSchema } from '@sinclair/typebox';

const REGEXP_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Decodes a JSON text as the apiserver does: JSON.parse plus the number texts of the body. */
function decode(schema: TSchema, text: string, opts: DecodeOptions = { numberText: jsonNumberText(text) }) {
  return checkAgainstSchema(schema, JSON.parse(text), opts);
}
/** The message upstream returns for the body (after `<Kind> in version "v1" cannot be handled as a <Kind>: `), or undefined. */
function firstError(schema: TSchema, text: string, opts?: DecodeOptions): string | undefined {
  const issues = decode(schema, text, opts);
  return issues.typeErrors[0] && typeErrorMessage(issues.typeErrors[0]);
}
const spec = (s: string) => `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":${s}}`;
const podSpec = (s: string) => `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":${s}}`;
const container = (c: string) => podSpec(`{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i",${c}}]}`);

test('integers: non-integral and out-of-range numbers are refused with the literal as written', () => {
  const replicas = (lit: string) => firstError(Deployment, spec(`{"replicas":${lit}}`));
  const msg = (lit: string) => `json: cannot unmarshal number ${lit} into Go struct field DeploymentSpec.spec.replicas of type int32`;
  for (const lit of ['99999999999999999999', '1.5', '1e3', '1.0', '1E+2', '2147483648', '-2147483649', '0.0', '-1.0e0'])
    assert.equal(replicas(lit), msg(lit), lit);
  for (const lit of ['0', '-0', '3', '2147483647', '-2147483648']) assert.equal(replicas(lit), undefined, lit);
  assert.equal(replicas('"3"'), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
  assert.equal(replicas('true'), 'json: cannot unmarshal bool into Go struct field DeploymentSpec.spec.replicas of type int32');
  assert.equal(replicas('{}'), 'json: cannot unmarshal object into Go struct field DeploymentSpec.spec.replicas of type int32');
  assert.equal(replicas('[1]'), 'json: cannot unmarshal array into Go struct field DeploymentSpec.spec.replicas of type int32');
  assert.equal(replicas('null'), undefined);
});

test('integers: int64 fields take the whole int64 range', () => {
  const grace = (lit: string) => firstError(Pod, podSpec(`{"containers":[],"terminationGracePeriodSeconds":${lit}}`));
  assert.equal(grace('9223372036854775807'), undefined);
  assert.equal(grace('-9223372036854775808'), undefined);
  assert.equal(grace('4294967296'), undefined);
  assert.equal(
    grace('9223372036854775808'),
    'json: cannot unmarshal number 9223372036854775808 into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64',
  );
  assert.equal(grace('30.5'), 'json: cannot unmarshal number 30.5 into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64');
  assert.equal(
    firstError(Pod, podSpec('{"containers":[],"activeDeadlineSeconds":1e2}')),
    'json: cannot unmarshal number 1e2 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64',
  );
  assert.equal(
    firstError(Deployment, '{"metadata":{"name":"d","generation":2.5}}'),
    'json: cannot unmarshal number 2.5 into Go struct field ObjectMeta.metadata.generation of type int64',
  );
  assert.equal(
    firstError(Deployment, '{"status":{"observedGeneration":"1"}}'),
    'json: cannot unmarshal string into Go struct field DeploymentStatus.status.observedGeneration of type int64',
  );
});

test('integers: without number texts the value is written as Go writes a float64', () => {
  const none: DecodeOptions = {};
  const replicas = (lit: string) => firstError(Deployment, spec(`{"replicas":${lit}}`), none);
  const msg = (text: string) => `json: cannot unmarshal number ${text} into Go struct field DeploymentSpec.spec.replicas of type int32`;
  assert.equal(replicas('1.5'), msg('1.5'));
  assert.equal(replicas('99999999999999999999'), msg('100000000000000000000'));
  assert.equal(replicas('1e21'), msg('1e+21'));
  assert.equal(replicas('1.5e-7'), msg('1.5e-7'));
  assert.equal(replicas('0.000001'), msg('0.000001'));
  assert.equal(replicas('1.0'), undefined); // JSON.parse gives 1: only the body's text tells
  // a numberText that knows nothing falls back the same way
  assert.equal(firstError(Deployment, spec('{"replicas":2.5}'), { numberText: () => undefined }), msg('2.5'));
  assert.equal(goJSONFloat(-0), '-0');
  assert.equal(goJSONFloat(1e21), '1e+21');
  assert.equal(goJSONFloat(123456789012), '123456789012');
});

test('the field path has struct field names only: no list indices, no map keys', () => {
  assert.equal(
    firstError(Deployment, spec('{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","ports":[{"containerPort":80},{"containerPort":1.5}]}]}}}')),
    'json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32',
  );
  const issues = decode(Pod, container('"stdin":"yes"'));
  assert.equal(issues.typeErrors[0]?.path, 'spec.containers[1].stdin');
  assert.equal(issues.typeErrors[0]?.field, 'spec.containers.stdin');
  assert.equal(typeErrorMessage(issues.typeErrors[0]!), 'json: cannot unmarshal string into Go struct field Container.spec.containers.stdin of type bool');
  assert.equal(firstError(Secret, '{"stringData":{"k":1}}'), 'json: cannot unmarshal number into Go struct field Secret.stringData of type string');
  assert.equal(
    firstError(Deployment, '{"metadata":{"labels":{"app":true}}}'),
    'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string',
  );
  assert.equal(
    firstError(Pod, podSpec('{"containers":[{"name":"a","args":["x",2]}]}')),
    'json: cannot unmarshal number into Go struct field Container.spec.containers.args of type string',
  );
  assert.equal(
    firstError(Pod, podSpec('{"containers":"x"}')),
    'json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container',
  );
  assert.equal(
    firstError(Pod, podSpec('{"containers":[3]}')),
    'json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type v1.Container',
  );
  assert.equal(
    firstError(Pod, container('"resources":{"limits":"1"}')),
    'json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList',
  );
});

test('quantities: the ParseQuantity error alone, for strings, numbers and other JSON values', () => {
  const limits = (v: string) => firstError(Pod, container(`"resources":{"limits":{"cpu":${v}}}`));
  assert.equal(limits('"lots"'), REGEXP_ERROR);
  assert.equal(limits('""'), REGEXP_ERROR);
  assert.equal(limits('"1..2"'), REGEXP_ERROR); // upstream's scanner stops at the second dot
  assert.equal(limits('"1 Gi"'), REGEXP_ERROR);
  assert.equal(limits('"1Gu"'), "unable to parse quantity's suffix");
  assert.equal(limits('"1e"'), "unable to parse quantity's suffix");
  assert.equal(limits('"Ei"'), 'unable to parse numeric part of quantity');
  assert.equal(limits('".e-10"'), 'unable to parse numeric part of quantity');
  assert.equal(limits('true'), REGEXP_ERROR);
  assert.equal(limits('{"a":1}'), REGEXP_ERROR);
  assert.equal(limits('[1]'), REGEXP_ERROR);
  for (const ok of ['"100m"', '"1Gi"', '" 1 "', '"1.5"', '"."', '"1e3"', '"0"', '2', '0.5', '1e3', '0', 'null']) assert.equal(limits(ok), undefined, ok);
  // a JSON number is parsed from its text: an exponent beyond int64 is refused
  assert.equal(limits('1e99999999999999999999'), "unable to parse quantity's suffix");
  assert.equal(limits('0e99999999999999999999'), "unable to parse quantity's suffix");
  assert.equal(limits('1e400'), undefined);
  const issue = decode(Pod, container('"resources":{"requests":{"memory":"lots"}}')).typeErrors[0];
  assert.equal(issue?.path, 'spec.containers[1].resources.requests.memory');
  assert.equal(issue?.fatal, true);
});

test("bytes: standard base64 with Go's error offsets", () => {
  const data = (v: string) => firstError(Secret, `{"data":{"k":${JSON.stringify(v)}}}`);
  assert.equal(data('hello'), 'illegal base64 data at input byte 4');
  assert.equal(data('not base64!'), 'illegal base64 data at input byte 3');
  assert.equal(data('***'), 'illegal base64 data at input byte 0');
  assert.equal(data('dg='), 'illegal base64 data at input byte 3');
  assert.equal(data('dg=x'), 'illegal base64 data at input byte 2');
  assert.equal(data('dg==x'), 'illegal base64 data at input byte 4');
  assert.equal(data('dmFsdWU=-'), 'illegal base64 data at input byte 8');
  assert.equal(data('dmFsdWU'), 'illegal base64 data at input byte 4');
  assert.equal(data('dmFs_dWU='), 'illegal base64 data at input byte 4');
  assert.equal(data('ééé'), 'illegal base64 data at input byte 0');
  assert.equal(data('dmFsé'), 'illegal base64 data at input byte 4'); // a byte offset into the UTF-8 text
  for (const ok of ['', 'dg==', 'dmFsdWU=', 'dmFsdWUx', 'dmFs\ndWU=', 'dmFs\r\ndWU=\n', 'dg=\n=']) assert.equal(data(ok), undefined, JSON.stringify(ok));
  assert.equal(firstError(ConfigMap, '{"binaryData":{"b":"not base64!"}}'), 'illegal base64 data at input byte 3');
  assert.equal(firstError(Secret, '{"data":{"k":1}}'), 'json: cannot unmarshal number into Go struct field Secret.data of type []uint8');
  assert.equal(firstError(Secret, '{"data":"x"}'), 'json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8');
  assert.equal(base64Error('\n\n'), undefined);
  assert.equal(base64Error('a'), 0);
  assert.equal(base64Error('ab\n'), 1);
});

test('int-or-string: anything but a string or an int32 is an int32 error', () => {
  const surge = (v: string) => firstError(Deployment, spec(`{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":${v}}}}`));
  const msg = (what: string) =>
    `json: cannot unmarshal ${what} into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32`;
  assert.equal(surge('true'), msg('bool'));
  assert.equal(surge('1.5'), msg('number 1.5'));
  assert.equal(surge('2147483648'), msg('number 2147483648'));
  assert.equal(surge('{}'), msg('object'));
  for (const ok of ['1', '"25%"', '"x"', 'null', '-3']) assert.equal(surge(ok), undefined, ok);
});

test('errors from an UnmarshalJSON method stop decoding and win over a remembered one', () => {
  // replicas comes first, but Go only remembers it; the Quantity error ends decoding and is returned
  const text = spec('{"replicas":"x","template":{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]}}}');
  const issues = decode(Deployment, text);
  assert.equal(typeErrorMessage(issues.typeErrors[0]!), REGEXP_ERROR);
  assert.equal(typeErrorMessage(issues.typeErrors[1]!), 'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
  // of the remembered ones the first in the document wins
  assert.equal(
    firstError(Deployment, spec('{"paused":"no","replicas":"x","minReadySeconds":1.5}')),
    'json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool',
  );
  assert.equal(firstError(Secret, '{"data":{"a":"***"},"immutable":"x"}'), 'illegal base64 data at input byte 0');
  // a metav1.Time that is not a string
  assert.equal(
    firstError(Deployment, '{"spec":{"paused":1},"metadata":{"creationTimestamp":5}}'),
    'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string',
  );
});

test('unknown fields are reported in document order', () => {
  const issues = decode(Deployment, spec('{"a":1,"template":{"metadata":{"b":2}},"selector":{"matchExpressions":[{"key":"k","c":3}]},"d":4}'));
  assert.deepEqual(issues.unknown, ['spec.a', 'spec.template.metadata.b', 'spec.selector.matchExpressions[0].c', 'spec.d']);
  assert.deepEqual(issues.typeErrors, []);
});

test('documents nested far beyond the schema do not overflow the stack', () => {
  const depth = 10_000;
  const deep = '['.repeat(depth) + '1.0' + ']'.repeat(depth);
  const deepObj = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const numberText = jsonNumberText(deep);
  assert.equal(numberText?.(1, Array(depth).fill(0)), '1.0');
  for (const text of [
    spec(`{"unknown":${deep}}`),
    spec(`{"template":{"metadata":{"labels":{"x":${deep}}}}}`),
    spec(`{"template":{"metadata":{"managedFields":[{"fieldsV1":${deepObj}}]}}}`),
    podSpec(`{"containers":[],"affinity":${deepObj}}`),
    podSpec(`{"containers":[{"name":"a","args":${deep}}]}`),
  ]) {
    const issues = decode(text.startsWith('{"apiVersion":"v1"') ? Pod : Deployment, text);
    assert.ok(issues.unknown.length + issues.typeErrors.length <= 1, text.slice(0, 80));
  }
  assert.deepEqual(decode(Deployment, spec(`{"unknown":${deep}}`)).unknown, ['spec.unknown']);
});

test('jsonNumberText keeps only the literals JSON.parse does not give back, by location', () => {
  assert.equal(jsonNumberText('{"a":1,"b":[2,-3,1.5,"1.0"],"c":{"d":1e+21}}'), undefined);
  const text = '{"a":1.0,"b":[1,1e3,{"c\\"d":10.50}],"a\\u0062":2E0,"dup":1.0,"dup":1,"o":{"x":1.0},"o":{"y":1}}';
  const nt = jsonNumberText(text)!;
  assert.equal(nt(1, ['a']), '1.0');
  assert.equal(nt(1000, ['b', 1]), '1e3');
  assert.equal(nt(1, ['b', 0]), undefined);
  assert.equal(nt(10.5, ['b', 2, 'c"d']), '10.50');
  assert.equal(nt(2, ['ab']), '2E0');
  assert.equal(nt(1, ['dup']), undefined); // the last of a repeated key is what JSON.parse keeps
  assert.equal(nt(1, ['o', 'x']), undefined);
  assert.equal(nt(2, ['a']), undefined); // a different value at that place: not this literal
  assert.equal(jsonNumberText('1.0')?.(1, []), '1.0');
});
