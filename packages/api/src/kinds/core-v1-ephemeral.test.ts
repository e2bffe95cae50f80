import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage, type FieldError } from '@kubeling/apimachinery';
import { defaultPodSpec, objectFieldDiff, validatePodEphemeralContainersUpdate } from './core-v1-validation.js';

type Obj = Record<string, unknown>;
const messages = (errs: FieldError[]) => errs.map(fieldErrorMessage);

/** A defaulted pod spec with containers `app` and `sidecar`, init container `setup`, and the given ephemeral containers. */
function spec(ephemeral: Obj[] = []): Obj {
  const s: Obj = {
    containers: [
      { name: 'app', image: 'busybox' },
      { name: 'sidecar', image: 'busybox' },
    ],
    initContainers: [{ name: 'setup', image: 'busybox' }],
    ...(ephemeral.length ? { ephemeralContainers: ephemeral } : {}),
  };
  defaultPodSpec(s);
  return s;
}

const debug = (extra: Obj = {}): Obj => ({ name: 'debugger', image: 'busybox', stdin: true, tty: true, ...extra });

test('adding an ephemeral container that targets a container or an init container is valid', () => {
  assert.deepEqual(validatePodEphemeralContainersUpdate(spec([debug({ targetContainerName: 'app' })]), spec(), undefined), []);
  assert.deepEqual(validatePodEphemeralContainersUpdate(spec([debug({ targetContainerName: 'setup' })]), spec(), undefined), []);
  // and a second one next to an unchanged first
  const one = spec([debug()]);
  const two = spec([debug(), debug({ name: 'second' })]);
  assert.deepEqual(validatePodEphemeralContainersUpdate(two, one, undefined), []);
});

test("ports, probes, lifecycle and resources are forbidden, in the struct's field order", () => {
  const bad = debug({
    ports: [{ containerPort: 80 }],
    resources: { limits: { cpu: '1' } },
    livenessProbe: { exec: { command: ['true'] } },
    readinessProbe: { exec: { command: ['true'] } },
    startupProbe: { exec: { command: ['true'] } },
    lifecycle: { postStart: { exec: { command: ['true'] } } },
  });
  const forbidden = messages(validatePodEphemeralContainersUpdate(spec([bad]), spec(), undefined)).filter((m) => m.includes('Ephemeral'));
  assert.deepEqual(forbidden, [
    'spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].startupProbe: Forbidden: cannot be set for an Ephemeral Container',
    'spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container',
  ]);
  // defaulting alone (resources: {}, pull policy, termination message) sets nothing forbidden
  assert.deepEqual(validatePodEphemeralContainersUpdate(spec([debug({ resources: {} })]), spec(), undefined), []);
});

test('names are unique across all containers; the target must be a container of the pod', () => {
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(spec([debug({ name: 'app' })]), spec(), undefined)), [
    'spec.ephemeralContainers[0].name: Duplicate value: "app"',
  ]);
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(spec([debug({ name: 'setup' })]), spec(), undefined)), [
    'spec.ephemeralContainers[0].name: Duplicate value: "setup"',
  ]);
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(spec([debug(), debug()]), spec(), undefined)), [
    'spec.ephemeralContainers[1].name: Duplicate value: "debugger"',
  ]);
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(spec([debug({ targetContainerName: 'nope' })]), spec(), undefined)), [
    'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"',
  ]);
  // an ephemeral container is no target for another
  const two = spec([debug(), debug({ name: 'second', targetContainerName: 'debugger' })]);
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(two, spec([debug()]), undefined)), [
    'spec.ephemeralContainers[1].targetContainerName: Not found: "debugger"',
  ]);
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(spec([debug({ name: 'Bad_Name' })]), spec(), undefined)), [
    "spec.ephemeralContainers[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ]);
});

test('existing ephemeral containers may be neither removed nor changed; Go zero values are no change', () => {
  const before = spec([debug()]);
  assert.deepEqual(messages(validatePodEphemeralContainersUpdate(spec(), before, undefined)), [
    'spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed\n',
  ]);
  const changed = messages(validatePodEphemeralContainersUpdate(spec([debug({ image: 'busybox:1.36' })]), before, undefined));
  assert.equal(changed.length, 1);
  assert.match(changed[0]!, /^spec\.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be changed\n/);
  assert.match(changed[0]!, /- image: "busybox"\n\+ image: "busybox:1.36"/);
  // reordered, and with explicit zero values, it is the same container
  const a = spec([debug(), debug({ name: 'b' })]);
  const b = spec([debug({ name: 'b', workingDir: '', stdinOnce: false }), debug()]);
  assert.deepEqual(validatePodEphemeralContainersUpdate(b, a, undefined), []);
});

test('a static pod takes no ephemeral container, and that refusal stands alone', () => {
  const errs = validatePodEphemeralContainersUpdate(spec([debug({ ports: [{ containerPort: 1 }] })]), spec(), { 'kubernetes.io/config.mirror': 'x' });
  assert.deepEqual(messages(errs), [': Forbidden: static pods do not support ephemeral containers']);
});

test('objectFieldDiff names each changed field with its old and new value', () => {
  assert.equal(objectFieldDiff({ a: 1, b: [1], c: 'x' }, { a: 1, b: [2], d: true }), '- b: [1]\n+ b: [2]\n- c: "x"\n+ d: true');
  assert.equal(objectFieldDiff({ a: false }, {}), '');
});
