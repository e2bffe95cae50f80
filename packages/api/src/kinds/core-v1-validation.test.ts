import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage, validateObjectMeta, type FieldError } from '@kubeling/apimachinery';
import {
  canonicalQuantity,
  compareQuantities,
  defaultPodOnlyFields,
  defaultPodSpec,
  validateContainerPorts,
  validatePodSpec,
  validatePodSpecForPod,
  validatePodTemplateSpec,
  validateResourceRequirements,
  validateServiceName,
  validateVolumes,
} from './core-v1-validation.js';

type Obj = Record<string, unknown>;
const messages = (errs: FieldError[]) => errs.map(fieldErrorMessage);
/** A defaulted pod spec with one container `c`, overridden by `spec` and `container`. */
function podSpec(container: Obj = {}, spec: Obj = {}): Obj {
  const s: Obj = { containers: [{ name: 'c', image: 'busybox', ...container }], ...spec };
  defaultPodSpec(s);
  return s;
}

test('quantities print in their canonical form, as Quantity.String() does', () => {
  const cases: [string | number, string][] = [
    ['2', '2'],
    ['1', '1'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['0.5', '500m'],
    ['1.5', '1500m'],
    ['1.0', '1'],
    ['1000', '1k'],
    ['100m', '100m'],
    ['0.1n', '1n'],
    ['-1', '-1'],
    ['-1000m', '-1'],
    ['0', '0'],
    ['0Mi', '0'],
    ['-0', '0'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['2048Ki', '2Mi'],
    ['1000Ki', '1000Ki'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['512', '512'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['1E', '1E'],
    ['10E', '10E'],
    ['10000000000000000000', '9223372036854775807'],
    [2, '2'],
    [0.25, '250m'],
    ['+1', '+1'],
    ['.', '0'],
    ['1.', '1.'], // upstream keeps what its fast path finds canonical, dot and all
    ['Mi', '0'],
    ['1e4294967299', '1e4294967299'],
  ];
  for (const [q, want] of cases) assert.equal(canonicalQuantity(q), want, `canonical ${JSON.stringify(q)}`);
  assert.equal(compareQuantities('2', '1'), 1);
  assert.equal(compareQuantities('1000m', '1'), 0);
  assert.equal(compareQuantities('1Gi', '1G'), 1);
  assert.equal(compareQuantities('-1', '0'), -1);
  assert.equal(compareQuantities('lots', '1'), undefined);
  assert.equal(compareQuantities('Ei', '1'), undefined);
  assert.equal(compareQuantities('1e2000000000', '9E'), 1);
  assert.equal(canonicalQuantity('1e-2000000000'), '1e-9');
  // the exponent is narrowed to int32 (4294967299 → 3)
  assert.equal(compareQuantities('1e4294967299', '1k'), 0);
});

test('a request above its limit names the requests map, with both quantities in canonical form', () => {
  const res = { requests: { cpu: '2' }, limits: { cpu: '1' } };
  const want = 'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1';
  assert.deepEqual(messages(validatePodSpec(podSpec({ resources: res }), 'spec')), [want]);
  assert.deepEqual(messages(validateResourceRequirements({ requests: { memory: '2Gi' }, limits: { memory: '1024Mi' } }, 'r')), [
    'r.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi',
  ]);
  assert.deepEqual(messages(validateResourceRequirements({ requests: { cpu: '1500m' }, limits: { cpu: '1000m' } }, 'r')), [
    'r.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1',
  ]);
  assert.deepEqual(validateResourceRequirements({ requests: { cpu: '1000m' }, limits: { cpu: '1' } }, 'r'), []);

  // init containers and templates too
  const init = podSpec({}, { initContainers: [{ name: 'i', image: 'busybox', resources: res }] });
  assert.deepEqual(messages(validatePodSpec(init, 'spec.template.spec')), [
    'spec.template.spec.initContainers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
  ]);
  // ephemeral containers: checked, and resources are not theirs to set
  const eph = podSpec({}, { ephemeralContainers: [{ name: 'debug', image: 'busybox', resources: res }] });
  defaultPodSpec(eph);
  assert.deepEqual(messages(validatePodSpec(eph, 'spec')), [
    'spec.ephemeralContainers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    'spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
  ]);
});

test('negative quantities, resource names, extended and integer resources', () => {
  assert.deepEqual(messages(validatePodSpec(podSpec({ resources: { requests: { cpu: '-1' } } }), 'spec')), [
    'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
  ]);
  assert.deepEqual(messages(validateResourceRequirements({ limits: { memory: '-1.5Gi' } }, 'r')), [
    'r.limits[memory]: Invalid value: "-1536Mi": must be greater than or equal to 0',
  ]);
  assert.deepEqual(messages(validateResourceRequirements({ limits: { foo: '1' } }, 'r')), [
    'r.limits[foo]: Invalid value: "foo": must be a standard resource type or fully qualified',
    'r.limits[foo]: Invalid value: "foo": must be a standard resource for containers',
  ]);
  assert.deepEqual(messages(validateResourceRequirements({ limits: { storage: '1' } }, 'r')), [
    'r.limits[storage]: Invalid value: "storage": must be a standard resource for containers',
  ]);
  assert.equal(
    messages(validateResourceRequirements({ limits: { 'a/b/c': '1' } }, 'r'))[0]?.startsWith(
      'r.limits[a/b/c]: Invalid value: "a/b/c": a qualified name must consist of',
    ),
    true,
  );
  // extended resources may not be overcommitted, and are whole numbers
  assert.deepEqual(messages(validateResourceRequirements({ requests: { 'example.com/gpu': '1' } }, 'r')), [
    'r.limits: Required value: Limit must be set for non overcommitable resources',
  ]);
  assert.deepEqual(messages(validateResourceRequirements({ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '2' } }, 'r')), [
    'r.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2',
  ]);
  assert.deepEqual(messages(validateResourceRequirements({ limits: { 'example.com/gpu': '500m' } }, 'r')), [
    'r.limits[example.com/gpu]: Invalid value: 500m: must be an integer',
  ]);
  assert.deepEqual(
    validateResourceRequirements({ limits: { 'example.com/gpu': 2, 'kubernetes.io/anything': '1' }, requests: { 'example.com/gpu': '2' } }, 'r'),
    [],
  );
  // hugepages
  assert.deepEqual(messages(validateResourceRequirements({ limits: { 'hugepages-2Mi': '3Mi' } }, 'r')), [
    'r.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi',
    'r: Forbidden: HugePages require cpu or memory',
  ]);
  assert.deepEqual(validateResourceRequirements({ limits: { 'hugepages-2Mi': '4Mi', memory: '1Gi' }, requests: { 'hugepages-2Mi': '4Mi' } }, 'r'), []);
  // claims name the pod's resourceClaims
  assert.deepEqual(messages(validateResourceRequirements({ claims: [{ name: 'gpu' }] }, 'r')), [
    'r.claims[0]: Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
  ]);
  assert.deepEqual(validateResourceRequirements({ claims: [{ name: 'gpu' }] }, 'r', new Set(['gpu'])), []);
});

test('a volume with two sources is refused on the second source upstream finds', () => {
  const errs = (v: Obj) => messages(validateVolumes([v], 'spec.volumes').errors);
  assert.deepEqual(errs({ name: 'v', emptyDir: {}, hostPath: { path: '/tmp' } }), [
    'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
  ]);
  assert.deepEqual(errs({ name: 'v', hostPath: { path: '/tmp' }, emptyDir: {} }), [
    'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
  ]);
  assert.deepEqual(errs({ name: 'v', configMap: { name: 'c' }, secret: { secretName: 's' } }), [
    'spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type',
  ]);
  // upstream's paths for cephfs and downwardAPI (sic)
  assert.deepEqual(errs({ name: 'v', emptyDir: {}, downwardAPI: {} }), ['spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type']);
  assert.deepEqual(errs({ name: 'v', emptyDir: {}, cephfs: {} }), ['spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type']);
  assert.deepEqual(errs({ name: 'v', emptyDir: {}, nfs: {}, image: {} }), [
    'spec.volumes[0].nfs: Forbidden: may not specify more than 1 volume type',
    'spec.volumes[0].image: Forbidden: may not specify more than 1 volume type',
  ]);
  // a null member is no source
  assert.deepEqual(errs({ name: 'v', emptyDir: {}, hostPath: null }), []);
  // without defaulting (internal callers), no source at all is refused
  assert.deepEqual(errs({ name: 'v' }), ['spec.volumes[0]: Required value: must specify a volume type']);
  // sources are checked inside, and volumes with errors cannot be mounted
  assert.deepEqual(errs({ name: 'v', hostPath: {} }), ['spec.volumes[0].hostPath.path: Required value']);
  assert.deepEqual(errs({ name: 'v', secret: { secretName: 's', defaultMode: 1000, items: [{ key: 'k', path: '../x' }] } }), [
    'spec.volumes[0].secret.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive',
    'spec.volumes[0].secret.items[0].path: Invalid value: "../x": must not contain \'..\'',
    'spec.volumes[0].secret.items[0].path: Invalid value: "../x": must not start with \'..\'',
  ]);
  assert.deepEqual(errs({ name: 'V', persistentVolumeClaim: { claimName: '' } }).length, 2);
});

test('v1 defaulting gives a volume without a source an emptyDir, for pods and templates', () => {
  const s = podSpec(
    { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] },
    { volumes: [{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'c' } }] },
  );
  assert.deepEqual((s.volumes as Obj[])[0], { name: 'scratch', emptyDir: {} });
  assert.deepEqual((s.volumes as Obj[])[1], { name: 'cfg', configMap: { name: 'c', defaultMode: 420 } });
  assert.deepEqual(validatePodSpec(s, 'spec'), []);
  const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'v', emptyDir: null }] } };
  defaultPodSpec(template.spec);
  assert.deepEqual(template.spec.volumes[0], { name: 'v', emptyDir: {} });
  assert.deepEqual(validatePodTemplateSpec(template, 'spec.template'), []);
});

test('container ports follow upstream order; host ports may not collide', () => {
  assert.deepEqual(messages(validateContainerPorts([{ name: 'HTTP', containerPort: 0, protocol: 'tcp' }], 'p')), [
    'p[0].name: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    'p[0].name: Invalid value: "HTTP": must contain at least one letter (a-z)',
    'p[0].containerPort: Required value',
    'p[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
  ]);
  assert.deepEqual(messages(validateContainerPorts([{ containerPort: 70000, hostPort: -1, protocol: '' }], 'p')), [
    'p[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    'p[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive',
    'p[0].protocol: Required value',
  ]);
  assert.deepEqual(
    messages(
      validateContainerPorts(
        [
          { name: 'web', containerPort: 80, protocol: 'TCP' },
          { name: 'web', containerPort: 81, protocol: 'TCP' },
        ],
        'p',
      ),
    ),
    ['p[1].name: Duplicate value: "web"'],
  );
  const s: Obj = {
    containers: [
      { name: 'a', image: 'x', ports: [{ containerPort: 80, hostPort: 8080 }] },
      { name: 'b', image: 'x', ports: [{ containerPort: 81, hostPort: 8080 }] },
    ],
  };
  defaultPodSpec(s);
  assert.deepEqual(messages(validatePodSpec(s, 'spec')), ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']);
  // with hostNetwork, a pod's host ports are its container ports (defaulted so for pods)
  const hn: Obj = { hostNetwork: true, containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 80 }] }] };
  defaultPodSpec(hn);
  assert.deepEqual(messages(validatePodSpecForPod(hn)), [
    'spec.containers[0].ports[0].hostPort: Invalid value: 0: must match `containerPort` when `hostNetwork` is true',
  ]);
  assert.deepEqual(validatePodSpec(hn, 'spec.template.spec'), []);
  defaultPodOnlyFields(hn);
  assert.deepEqual(validatePodSpecForPod(hn), []);
});

test('pod-only defaults: requests default to limits', () => {
  const s = podSpec({ resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } } });
  defaultPodOnlyFields(s);
  assert.deepEqual(((s.containers as Obj[])[0]!.resources as Obj).requests, { cpu: '500m', memory: '1Gi' });
});

test('pod spec checks keep upstream order and wording', () => {
  assert.deepEqual(messages(validatePodSpec({}, 'spec')), [
    'spec.terminationGracePeriodSeconds: Required value',
    'spec.containers: Required value',
    'spec.restartPolicy: Required value',
    'spec.dnsPolicy: Required value',
  ]);
  const s = podSpec(
    { volumeMounts: [{ name: 'nope', mountPath: '/a' }], restartPolicy: 'Always', env: [{ name: '1 is fine' }, { name: 'A=B' }] },
    { restartPolicy: 'Sometimes', activeDeadlineSeconds: 0 },
  );
  assert.deepEqual(messages(validatePodSpec(s, 'spec')), [
    'spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than \'=\'',
    'spec.containers[0].volumeMounts[0].name: Not found: "nope"',
    'spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers',
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    'spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive',
  ]);
  // an image with blanks around it is a pod's problem only
  const blank = podSpec({ image: ' busybox' });
  assert.deepEqual(validatePodSpec(blank, 'spec.template.spec'), []);
  assert.deepEqual(messages(validatePodSpecForPod(blank)), [
    'spec.containers[0].image: Invalid value: " busybox": must not have leading or trailing whitespace',
  ]);
  // init containers: restartPolicy Always only, probes only for sidecars, names unique across both lists
  const init = podSpec({}, { initContainers: [{ name: 'c', image: 'x', restartPolicy: 'OnFailure', livenessProbe: { exec: { command: ['true'] } } }] });
  assert.deepEqual(messages(validatePodSpec(init, 'spec')), [
    'spec.initContainers[0].restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    'spec.initContainers[0].name: Duplicate value: "c"',
    'spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
  ]);
});

test('a volume that a StatefulSet claim template also names is no duplicate', () => {
  const s = podSpec(
    {
      volumeMounts: [
        { name: 'datadir', mountPath: '/data' },
        { name: 'www', mountPath: '/www' },
      ],
    },
    { volumes: [{ name: 'datadir', persistentVolumeClaim: { claimName: 'datadir' } }] },
  );
  assert.deepEqual(validatePodSpec(s, 'spec.template.spec', ['datadir', 'www']), []);
  assert.deepEqual(messages(validatePodSpec(s, 'spec.template.spec')), ['spec.template.spec.containers[0].volumeMounts[1].name: Not found: "www"']);
});

test('Service names are DNS-1035 labels', () => {
  const errs = validateObjectMeta({ name: '1abc', namespace: 'default' }, { namespaced: true, nameFn: validateServiceName });
  assert.deepEqual(messages(errs), [
    "metadata.name: Invalid value: \"1abc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  ]);
  assert.deepEqual(validateObjectMeta({ name: 'abc-1', namespace: 'default' }, { namespaced: true, nameFn: validateServiceName }), []);
  assert.deepEqual(validateServiceName('my-svc-', true), []);
});
