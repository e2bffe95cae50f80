// biome-ignore-all format: a table of cases, one per line, reads better than one field per line
/**
 * The bad-input corpus that bad-input.integration.test.ts sends: malformed
 * bodies in JSON, YAML and protobuf, names, sizes, selectors,
 * resourceVersions, continue tokens, patches, content types, methods, headers,
 * query parameters — each with the 4xx code and Status reason (and, where it
 * matters, the message) kube-apiserver answers. The requests target the
 * namespace `corpus`, which the test fills with a ConfigMap `cm` (held by a
 * finalizer) and a Deployment `web`.
 */
export const NS = 'corpus';
export const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const CM = `${CMS}/cm`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;
const SERVICES = `/api/v1/namespaces/${NS}/services`;
export const DEPLOYS = `/apis/apps/v1/namespaces/${NS}/deployments`;
const DEPLOY = `${DEPLOYS}/web`;

export const JSON_T = 'application/json';
const YAML_T = 'application/yaml';
const PB_T = 'application/vnd.kubernetes.protobuf';
const SMP = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';
const JSONPATCH = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';

export interface Case {
  what: string;
  method: string;
  path: string;
  body?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Sent without the client certificate. */
  anonymous?: boolean;
  /** The answer expected: HTTP code, Status reason, and (optionally) message. */
  code: number;
  reason: string;
  message?: string | RegExp;
}

function nested(depth: number, open = '{"a":', close = '}', leaf = '1'): string {
  return open.repeat(depth) + leaf + close.repeat(depth);
}

const cm = (extra: Record<string, unknown> = {}, name = 'x') => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, ...extra });
export const deploy = (spec: Record<string, unknown>, tmpl: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...tmpl } }, ...spec },
  });
const pod = (container: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2' }, spec: { containers: [{ name: 'c', image: 'busybox', ...container }], ...spec } });
const b64url = (s: string) => Buffer.from(s).toString('base64url');
const token = (t: Record<string, unknown>) => encodeURIComponent(b64url(JSON.stringify(t)));

const malformedJSON: [string, string][] = [
  ['unterminated object', '{'],
  ['lone brace', '}'],
  ['missing value', '{"a":}'],
  ['trailing comma', '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},}'],
  ['array', '[]'],
  ['string', '"x"'],
  ['number', '42'],
  ['boolean', 'true'],
  ['bytes that are not UTF-8 text', '\xff\xfe\x00{'],
  ['single quotes', "{'a': 1}"],
  ['NaN', '{"a": NaN}'],
  ['object nested 10,001 deep', nested(10_001)],
  ['array nested 100,000 deep', nested(100_000, '[', ']', '')],
  ['object nested 2,000 deep', nested(2_000)],
];

export function bodyCases(): Case[] {
  const out: Case[] = [];
  const targets: [string, string, string][] = [
    ['POST', CMS, 'ConfigMap'],
    ['POST', PODS, 'Pod'],
    ['POST', SECRETS, 'Secret'],
    ['POST', SERVICES, 'Service'],
    ['POST', DEPLOYS, 'Deployment'],
    ['PUT', CM, 'ConfigMap'],
    ['PUT', DEPLOY, 'Deployment'],
  ];
  for (const [method, path, kind] of targets) {
    for (const [what, body] of malformedJSON) out.push({ what: `${method} ${kind}: ${what}`, method, path, body, code: 400, reason: 'BadRequest' });
    out.push({ what: `${method} ${kind}: metadata a string`, method, path, body: JSON.stringify({ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, metadata: 'x' }), code: 400, reason: 'BadRequest' });
    out.push({ what: `${method} ${kind}: name a number`, method, path, body: JSON.stringify({ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, metadata: { name: 5 } }), code: 400, reason: 'BadRequest' });
    out.push({ what: `${method} ${kind}: labels a list`, method, path, body: JSON.stringify({ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1', kind, metadata: { name: 'x', labels: [] } }), code: 400, reason: 'BadRequest' });
    out.push({ what: `${method} ${kind}: wrong kind`, method, path, body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }), code: 400, reason: 'BadRequest' });
    out.push({ what: `${method} ${kind}: wrong apiVersion`, method, path, body: JSON.stringify({ apiVersion: 'bogus/v9', kind, metadata: { name: 'x' } }), code: 400, reason: 'BadRequest' });
    // YAML
    for (const [what, body] of [
      ['!!binary metadata', `apiVersion: v1\nkind: ${kind}\nmetadata: !!binary aGVsbG8=\n`],
      ['!!binary with invalid base64', `apiVersion: v1\nkind: ${kind}\nmetadata:\n  name: !!binary '%%%'\n`],
      ['a bare scalar', 'hello'],
      ['a sequence', '- a\n- b\n'],
      ['broken indentation', 'a:\n  b: 1\n c: 2\n'],
      ['a tab for indentation', 'a:\n\tb: 1\n'],
      ['an unclosed flow', 'a: [1, 2\n'],
      ['aliases that expand without end', `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n`],
      ['a flow nested 10,001 deep', nested(10_001, '[', ']', '')],
      ['a map nested 1,500 deep', Array.from({ length: 1500 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n'],
      ['an undefined alias', 'a: *nope\n'],
      ['a duplicate key', `apiVersion: v1\nkind: ${kind}\nkind: ${kind}\n`],
    ] as [string, string][]) {
      out.push({ what: `${method} ${kind} YAML: ${what}`, method, path, body, contentType: YAML_T, code: 400, reason: 'BadRequest' });
    }
    // protobuf
    for (const [what, body] of [
      ['random bytes', Buffer.from('5c1d7e0f99aabbccddeeff00112233', 'hex')],
      ['the magic alone', Buffer.from('6b387300', 'hex')],
      ['a truncated envelope', Buffer.concat([Buffer.from('6b387300', 'hex'), Buffer.from('0a0c0a0276311206', 'hex')])],
      ['a length past the end', Buffer.concat([Buffer.from('6b387300', 'hex'), Buffer.from('0affffffff0f', 'hex')])],
      ['JSON sent as protobuf', Buffer.from(cm())],
      ['an envelope of the wrong kind', Buffer.concat([Buffer.from('6b387300', 'hex'), Buffer.from('0a0f0a02763112094e616d657370616365', 'hex')])],
      ['a varint of eleven bytes', Buffer.concat([Buffer.from('6b387300', 'hex'), Buffer.from('08ffffffffffffffffffff01', 'hex')])],
    ] as [string, Buffer][]) {
      out.push({ what: `${method} ${kind} protobuf: ${what}`, method, path, body, contentType: PB_T, code: 400, reason: 'BadRequest' });
    }
  }
  return out;
}

export function fieldCases(): Case[] {
  const out: Case[] = [];
  const bad = (what: string, path: string, body: string, message?: string | RegExp): Case => ({ what, method: 'POST', path, body, code: 400, reason: 'BadRequest', ...(message ? { message } : {}) });
  const invalid = (what: string, path: string, body: string, message?: string | RegExp): Case => ({ what, method: 'POST', path, body, code: 422, reason: 'Invalid', ...(message ? { message } : {}) });
  // integers
  out.push(bad('replicas beyond int64', DEPLOYS, deploy({ replicas: '__BIG__' }).replace('"__BIG__"', '99999999999999999999'), 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 99999999999999999999 into Go struct field DeploymentSpec.spec.replicas of type int32'));
  out.push(bad('replicas beyond int32', DEPLOYS, deploy({ replicas: 99999999999 }), /cannot unmarshal number 99999999999 into Go struct field DeploymentSpec\.spec\.replicas of type int32$/));
  out.push(bad('replicas 2^31', DEPLOYS, deploy({ replicas: 2147483648 }), /of type int32$/));
  out.push(bad('replicas 1.5', DEPLOYS, deploy({ replicas: 1.5 }), /cannot unmarshal number 1\.5 into Go struct field DeploymentSpec\.spec\.replicas of type int32$/));
  out.push(bad('replicas 1e3', DEPLOYS, deploy({ replicas: '__E__' }).replace('"__E__"', '1e3'), /cannot unmarshal number 1e3 into/));
  out.push(bad('replicas a string', DEPLOYS, deploy({ replicas: '3' }), /cannot unmarshal string into Go struct field DeploymentSpec\.spec\.replicas of type int32$/));
  out.push(invalid('replicas negative', DEPLOYS, deploy({ replicas: -1 }), /spec\.replicas: Invalid value: -1: must be greater than or equal to 0/));
  out.push(bad('revisionHistoryLimit beyond int32', DEPLOYS, deploy({ revisionHistoryLimit: 4294967296 }), /DeploymentSpec\.spec\.revisionHistoryLimit of type int32$/));
  out.push(bad('containerPort beyond int32', DEPLOYS, deploy({}, { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 1e10 }] }] }), /Go struct field ContainerPort\.spec\.template\.spec\.containers\.ports\.containerPort of type int32$/));
  out.push(invalid('containerPort 70000', DEPLOYS, deploy({}, { containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 70000 }] }] }), /containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive/));
  out.push(bad('terminationGracePeriodSeconds beyond int64', PODS, pod({}, { terminationGracePeriodSeconds: 1e30 }), /PodSpec\.spec\.terminationGracePeriodSeconds of type int64$/));
  out.push(bad('activeDeadlineSeconds 2^63', PODS, pod({}, { activeDeadlineSeconds: '__N__' }).replace('"__N__"', '9223372036854775808'), /of type int64$/));
  out.push(bad('a port of a Service beyond int32', SERVICES, JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 1e12 }] } }), /ServicePort\.spec\.ports\.port of type int32$/));
  out.push(bad('a boolean as a number', PODS, pod({ stdin: 1 }), /cannot unmarshal number into Go struct field Container\.spec\.containers\.stdin of type bool$/));
  // quantities
  const qre = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  out.push(bad('cpu: lots', PODS, pod({ resources: { limits: { cpu: 'lots' } } }), `Pod in version "v1" cannot be handled as a Pod: ${qre}`));
  out.push(bad('memory: 1Gu', PODS, pod({ resources: { requests: { memory: '1Gu' } } }), /Pod in version "v1" cannot be handled as a Pod: unable to parse quantity's suffix$/));
  out.push(bad('cpu: empty', PODS, pod({ resources: { requests: { cpu: '' } } }), `Pod in version "v1" cannot be handled as a Pod: ${qre}`));
  out.push(bad('cpu: 1..2', PODS, pod({ resources: { requests: { cpu: '1..2' } } }), `Pod in version "v1" cannot be handled as a Pod: ${qre}`));
  out.push(bad('cpu: Pi (no digits)', PODS, pod({ resources: { requests: { cpu: 'Pi' } } }), /Pod in version "v1" cannot be handled as a Pod: unable to parse numeric part of quantity$/));
  out.push(bad('a quantity in a Deployment template', DEPLOYS, deploy({}, { containers: [{ name: 'c', image: 'busybox', resources: { limits: { memory: 'much' } } }] }), `Deployment in version "v1" cannot be handled as a Deployment: ${qre}`));
  out.push(invalid('requests above limits', PODS, pod({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }), 'Pod "p2" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'));
  out.push(invalid('a negative quantity', PODS, pod({ resources: { requests: { cpu: '-1' } } }), /spec\.containers\[0\]\.resources\.requests\[cpu\]: Invalid value: "-1": must be greater than or equal to 0/));
  // base64
  out.push(bad('binaryData not base64', CMS, cm({ binaryData: { a: 'hello' } }), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 4'));
  out.push(bad('binaryData with a bang', CMS, cm({ binaryData: { a: 'not base64!' } }), 'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 3'));
  out.push(bad('Secret data not base64', SECRETS, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: '***' } }), 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0'));
  out.push(bad('Secret stringData a number', SECRETS, JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: 5 } }), /cannot unmarshal number into Go struct field Secret\.stringData of type string$/));
  // names and metadata
  for (const name of ['UPPER', 'a_b', 'a'.repeat(254), '..', '.', 'a/b', 'a%b', '-a', 'a-', 'ünïcode']) {
    out.push(invalid(`ConfigMap name ${JSON.stringify(name.slice(0, 20))}`, CMS, cm({}, name)));
  }
  out.push(invalid('no name', CMS, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }), 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'));
  out.push(invalid('a bad generateName', CMS, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'BAD-' } })));
  out.push(invalid('a Service name that is no DNS-1035 label', SERVICES, JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: '1abc' }, spec: { ports: [{ port: 80 }] } })));
  out.push(invalid('a label value of 64 characters', CMS, cm({ metadata: { name: 'x', labels: { a: 'v'.repeat(64) } } })));
  out.push(invalid('a label key with two slashes', CMS, cm({ metadata: { name: 'x', labels: { 'a/b/c': 'v' } } })));
  out.push(invalid('an annotation key that is empty', CMS, cm({ metadata: { name: 'x', annotations: { '': 'v' } } })));
  out.push(invalid('annotations over 256 KiB', CMS, cm({ metadata: { name: 'x', annotations: { a: 'v'.repeat(262_145) } } }), /metadata\.annotations: Too long: may not be (longer|more) than 262144 bytes/));
  out.push(invalid('a data key that is no config key', CMS, cm({ data: { 'a/b': 'v' } })));
  out.push(invalid('the same key in data and binaryData', CMS, cm({ data: { a: 'v' }, binaryData: { a: 'dg==' } })));
  out.push({ what: 'a namespace in the body that differs from the path', method: 'POST', path: CMS, body: cm({ metadata: { name: 'x', namespace: 'other' } }), code: 400, reason: 'BadRequest', message: 'the namespace of the provided object does not match the namespace sent on the request' });
  out.push({ what: 'a name in the body that differs from the path', method: 'PUT', path: CM, body: cm({}, 'other'), code: 400, reason: 'BadRequest', message: 'the name of the object (other) does not match the name on the URL (cm)' });
  out.push(invalid('a Namespace name in capitals', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'BAD' } })));
  out.push({ what: 'a ConfigMap in a namespace that does not exist', method: 'POST', path: '/api/v1/namespaces/nope/configmaps', body: cm(), code: 404, reason: 'NotFound', message: 'namespaces "nope" not found' });
  // pod specs
  out.push(invalid('a volume with two sources', PODS, pod({}, { volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/tmp' } }] })));
  out.push(invalid('two volumes of one name', PODS, pod({}, { volumes: [{ name: 'v', emptyDir: {} }, { name: 'v', emptyDir: {} }] }), /spec\.volumes\[1\]\.name: Duplicate value: "v"/));
  out.push(invalid('a container without an image', PODS, pod({ image: '' })));
  out.push(invalid('two containers of one name', PODS, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2' }, spec: { containers: [{ name: 'c', image: 'a' }, { name: 'c', image: 'b' }] } })));
  out.push(invalid('a restartPolicy that does not exist', PODS, pod({}, { restartPolicy: 'Sometimes' })));
  out.push(invalid('no containers', PODS, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2' }, spec: { containers: [] } })));
  out.push(invalid('a Deployment whose selector misses its template', DEPLOYS, deploy({ selector: { matchLabels: { app: 'other' } } })));
  out.push(invalid('a Service port of 0', SERVICES, JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 0 }] } })));
  out.push(invalid('a Service type that does not exist', SERVICES, JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { type: 'Magic', ports: [{ port: 80 }] } })));
  return out;
}

export function sizeCases(): Case[] {
  const big = cm({ data: { a: 'x'.repeat(3 * 1024 * 1024) } });
  // Within a ConfigMap's 1 MiB of data, under the apiserver's 3 MiB body limit, and over etcd's 1.5 MiB once
  // stored: 400,000 control characters, each written as six in JSON (one key, so decoding and field tracking stay quick).
  const forEtcd = cm({ data: { a: '\u0001'.repeat(400_000) } });
  return [
    { what: 'a body over 3 MiB', method: 'POST', path: CMS, body: big, code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: limit is 3145728' },
    { what: 'an update over 3 MiB', method: 'PUT', path: CM, body: big, code: 413, reason: 'RequestEntityTooLarge' },
    { what: 'a patch over 3 MiB', method: 'PATCH', path: CM, body: big, contentType: MERGE, code: 413, reason: 'RequestEntityTooLarge' },
    { what: 'an object too large for etcd', method: 'POST', path: CMS, body: forEtcd, code: 413, reason: 'RequestEntityTooLarge', message: 'etcdserver: request is too large' },
    { what: 'a JSON patch of 10,001 operations', method: 'PATCH', path: CM, body: JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'ConfigMap' }))), contentType: JSONPATCH, code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001' },
    { what: 'a 100 KB name in the path', method: 'GET', path: `${CMS}/${'a'.repeat(100_000)}`, code: 404, reason: 'NotFound' },
    { what: 'a 100 KB label selector', method: 'GET', path: `${CMS}?labelSelector=${'a'.repeat(100_000)}`, code: 400, reason: 'BadRequest' },
  ];
}

export function selectorCases(): Case[] {
  const out: Case[] = [];
  for (const sel of ['a in (b', '=x', 'a==b==c', '!', 'a b', '-a=b', 'a/b/c=d', `a=${'v'.repeat(64)}`, 'a,,b', 'a notin', '(a)', 'a!', 'a=b)', 'a in b', 'x=%', 'a>b', 'a<1x']) {
    out.push({ what: `labelSelector ${sel}`, method: 'GET', path: `${CMS}?labelSelector=${encodeURIComponent(sel)}`, code: 400, reason: 'BadRequest' });
  }
  for (const sel of ['foo=bar', 'metadata.name', 'metadata.name=a=b', 'spec.nodeName=x', '=x', 'metadata.name in (a)', 'metadata.name!=a,foo']) {
    out.push({ what: `fieldSelector ${sel}`, method: 'GET', path: `${CMS}?fieldSelector=${encodeURIComponent(sel)}`, code: 400, reason: 'BadRequest' });
  }
  out.push({ what: 'fieldSelector on a field pods do not index', method: 'GET', path: `${PODS}?fieldSelector=spec.image%3Dx`, code: 400, reason: 'BadRequest', message: /field label not supported: spec\.image/ });
  return out;
}

export function resourceVersionCases(): Case[] {
  const out: Case[] = [];
  const bad: [string, string][] = [
    ['abc', 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'],
    ['-1', 'invalid resource version: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax'],
    ['99999999999999999999', 'invalid resource version: resourceVersion: Invalid value: "99999999999999999999": strconv.ParseUint: parsing "99999999999999999999": value out of range'],
    ['1.5', 'invalid resource version: resourceVersion: Invalid value: "1.5": strconv.ParseUint: parsing "1.5": invalid syntax'],
    ['0x10', 'invalid resource version: resourceVersion: Invalid value: "0x10": strconv.ParseUint: parsing "0x10": invalid syntax'],
    [' 1', 'invalid resource version: resourceVersion: Invalid value: " 1": strconv.ParseUint: parsing " 1": invalid syntax'],
  ];
  for (const [rv, message] of bad) {
    const q = `resourceVersion=${encodeURIComponent(rv)}`;
    out.push({ what: `get with resourceVersion ${rv}`, method: 'GET', path: `${CM}?${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `list with resourceVersion ${rv}`, method: 'GET', path: `${CMS}?${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `paged list with resourceVersion ${rv}`, method: 'GET', path: `${CMS}?limit=1&${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `exact list with resourceVersion ${rv}`, method: 'GET', path: `${CMS}?resourceVersionMatch=Exact&${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `watch with resourceVersion ${rv}`, method: 'GET', path: `${CMS}?watch=true&${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `watch of all namespaces with resourceVersion ${rv}`, method: 'GET', path: `/api/v1/configmaps?watch=1&${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `watch path with resourceVersion ${rv}`, method: 'GET', path: `/api/v1/watch/namespaces/${NS}/configmaps?${q}`, code: 400, reason: 'BadRequest', message });
    out.push({ what: `delete collection with resourceVersion ${rv}`, method: 'DELETE', path: `${CMS}?dryRun=All&${q}`, code: 400, reason: 'BadRequest', message });
  }
  const lo = (m: string) => `ListOptions.meta.k8s.io "" is invalid: ${m}`;
  out.push({ what: 'resourceVersionMatch bogus', method: 'GET', path: `${CMS}?resourceVersion=1&resourceVersionMatch=Bogus`, code: 422, reason: 'Invalid', message: lo('resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""') });
  out.push({ what: 'resourceVersionMatch without resourceVersion', method: 'GET', path: `${CMS}?resourceVersionMatch=NotOlderThan`, code: 422, reason: 'Invalid', message: lo('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided') });
  out.push({ what: 'resourceVersionMatch Exact with 0', method: 'GET', path: `${CMS}?resourceVersion=0&resourceVersionMatch=Exact`, code: 422, reason: 'Invalid', message: lo('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"') });
  out.push({ what: 'resourceVersionMatch on a watch', method: 'GET', path: `${CMS}?watch=true&resourceVersion=1&resourceVersionMatch=Exact`, code: 422, reason: 'Invalid', message: lo('[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]') });
  out.push({ what: 'limit not a number', method: 'GET', path: `${CMS}?limit=abc`, code: 400, reason: 'BadRequest' });
  out.push({ what: 'limit beyond int64', method: 'GET', path: `${CMS}?limit=99999999999999999999`, code: 400, reason: 'BadRequest' });
  out.push({ what: 'timeoutSeconds not a number', method: 'GET', path: `${CMS}?watch=true&timeoutSeconds=abc`, code: 400, reason: 'BadRequest' });
  out.push({ what: 'sendInitialEvents without a watch', method: 'GET', path: `${CMS}?sendInitialEvents=true`, code: 422, reason: 'Invalid', message: lo('sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list') });
  out.push({ what: 'sendInitialEvents without resourceVersionMatch', method: 'GET', path: `${CMS}?watch=true&sendInitialEvents=true`, code: 422, reason: 'Invalid', message: lo('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan') });
  out.push({ what: 'timeoutSeconds beyond int64', method: 'GET', path: `${CMS}?watch=true&timeoutSeconds=9223372036854775808`, code: 400, reason: 'BadRequest', message: 'strconv.ParseInt: parsing "9223372036854775808": value out of range' });
  return out;
}

export function continueCases(): Case[] {
  const list = (c: string, extra = '') => `${CMS}?limit=1&continue=${c}${extra}`;
  const pre = 'invalid continue token: continue key is not valid';
  const cases: [string, string, string | RegExp][] = [
    ['not base64', 'abc!', `${pre}: illegal base64 data at input byte 3`],
    ['base64 of no JSON', encodeURIComponent(b64url('xyz')), `${pre}: invalid character 'x' looking for beginning of value`],
    ['a revision of 1e400', encodeURIComponent(b64url('{"v":"meta.k8s.io/v1","rv":1e400,"start":"cm"}')), `${pre}: json: cannot unmarshal number 1e400 into Go struct field continueToken.rv of type int64`],
    ['a revision of 1.5', token({ v: 'meta.k8s.io/v1', rv: 1.5, start: 'cm' }), `${pre}: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64`],
    ['a revision that is a string', token({ v: 'meta.k8s.io/v1', rv: '5', start: 'cm' }), `${pre}: json: cannot unmarshal string into Go struct field continueToken.rv of type int64`],
    ['a revision of 0', token({ v: 'meta.k8s.io/v1', rv: 0, start: 'cm' }), `${pre}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`],
    ['no revision', token({ v: 'meta.k8s.io/v1', start: 'cm' }), `${pre}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)`],
    ['an empty start', token({ v: 'meta.k8s.io/v1', rv: 5, start: '' }), `${pre}: encoded start key empty (version meta.k8s.io/v1)`],
    ['a start that climbs out', token({ v: 'meta.k8s.io/v1', rv: 5, start: '../secrets/x' }), `${pre}: ../secrets/x`],
    ['a start with a double slash', token({ v: 'meta.k8s.io/v1', rv: 5, start: 'a//b' }), `${pre}: a//b`],
    ['a start with a trailing slash', token({ v: 'meta.k8s.io/v1', rv: 5, start: 'a/' }), `${pre}: a/`],
    ['a start of a dot', token({ v: 'meta.k8s.io/v1', rv: 5, start: '.' }), `${pre}: .`],
    ['an unknown version', token({ v: 'meta.k8s.io/v2', rv: 5, start: 'cm' }), `${pre}: server does not recognize this encoded version meta.k8s.io/v2`],
    ['a JSON array', encodeURIComponent(b64url('[]')), `${pre}: json: cannot unmarshal array into Go value of type storage.continueToken`],
    ['a start that is a number', token({ v: 'meta.k8s.io/v1', rv: 5, start: 5 }), `${pre}: json: cannot unmarshal number into Go struct field continueToken.start of type string`],
    ['a revision beyond int64', encodeURIComponent(b64url('{"v":"meta.k8s.io/v1","rv":99999999999999999999,"start":"cm"}')), `${pre}: json: cannot unmarshal number 99999999999999999999 into Go struct field continueToken.rv of type int64`],
  ];
  const out: Case[] = cases.map(([what, c, message]) => ({ what: `continue: ${what}`, method: 'GET', path: list(c), code: 400, reason: 'BadRequest', message }));
  const good = token({ v: 'meta.k8s.io/v1', rv: 5, start: 'cm' });
  out.push({ what: 'continue with a resourceVersion', method: 'GET', path: list(good, '&resourceVersion=5'), code: 400, reason: 'BadRequest', message: 'specifying resource version is not allowed when using continue' });
  out.push({ what: 'continue with resourceVersionMatch', method: 'GET', path: list(good, '&resourceVersion=0&resourceVersionMatch=NotOlderThan'), code: 422, reason: 'Invalid', message: 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided' });
  return out;
}

export function patchCases(): Case[] {
  const out: Case[] = [];
  const p = (what: string, path: string, contentType: string, body: string, code: number, reason: string, message?: string | RegExp): Case => ({ what, method: 'PATCH', path, body, contentType, code, reason, ...(message ? { message } : {}) });
  const tmpl = (spec: unknown) => JSON.stringify({ spec: { template: { spec } } });
  out.push(p('SMP: a container without its merge key', DEPLOY, SMP, tmpl({ containers: [{ image: 'x' }] }), 400, 'BadRequest', 'map: map[image:x] does not contain declared merge key: name'));
  out.push(p('SMP: $patch bogus in a map', DEPLOY, SMP, JSON.stringify({ spec: { $patch: 'bogus', replicas: 2 } }), 400, 'BadRequest', 'unknown patch type: bogus in map: map[$patch:bogus replicas:2]'));
  out.push(p('SMP: $patch bogus in a list element', DEPLOY, SMP, tmpl({ containers: [{ name: 'c', $patch: 'bogus' }] }), 400, 'BadRequest', 'unknown patch type: bogus in map: map[$patch:bogus name:c]'));
  out.push(p('SMP: $patch merge in a list element', DEPLOY, SMP, tmpl({ containers: [{ $patch: 'merge' }] }), 400, 'BadRequest', 'merging lists cannot yet be specified in the patch'));
  out.push(p('SMP: $setElementOrder not a list', DEPLOY, SMP, tmpl({ '$setElementOrder/containers': 'x', containers: [{ name: 'c', image: 'y' }] }), 400, 'BadRequest', 'expected a []interface {}, but received a string'));
  out.push(p('SMP: $setElementOrder element without the merge key', DEPLOY, SMP, tmpl({ '$setElementOrder/containers': [{ image: 'x' }], containers: [{ name: 'c', image: 'y' }] }), 400, 'BadRequest', /does not contain declared merge key: name$/));
  out.push(p('SMP: a patch element missing from $setElementOrder', DEPLOY, SMP, tmpl({ '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'c', image: 'y' }] }), 400, 'BadRequest', /^The order in patch list:/));
  out.push(p('SMP: $setElementOrder without a field', DEPLOY, SMP, tmpl({ $setElementOrder: [{ name: 'c' }] }), 400, 'BadRequest', 'invalid patch format of setElementOrder list'));
  out.push(p('SMP: $retainKeys not a list', DEPLOY, SMP, JSON.stringify({ spec: { strategy: { $retainKeys: 'x' } } }), 400, 'BadRequest', 'invalid patch format of retainKeys'));
  out.push(p('SMP: $deleteFromPrimitiveList not a list', CM, SMP, JSON.stringify({ metadata: { '$deleteFromPrimitiveList/finalizers': 'x' } }), 400, 'BadRequest', 'invalid patch format of primitive list'));
  out.push(p('SMP: a list of lists', DEPLOY, SMP, tmpl({ containers: [[{ name: 'c' }]] }), 400, 'BadRequest'));
  out.push(p('SMP: the containers a string', DEPLOY, SMP, tmpl({ containers: 'x' }), 422, 'Invalid', /^ "" is invalid: patch: Invalid value: /));
  for (const [what, body] of malformedJSON) {
    out.push(p(`SMP: ${what}`, DEPLOY, SMP, body, 400, 'BadRequest'));
    out.push(p(`merge patch: ${what}`, CM, MERGE, body, 400, 'BadRequest'));
    if (body !== '[]') out.push(p(`JSON patch: ${what}`, CM, JSONPATCH, body, 400, 'BadRequest'));
  }
  out.push(p('SMP nested 10,001 deep', DEPLOY, SMP, nested(10_001), 400, 'BadRequest', "invalid character '{' exceeded max depth"));
  out.push(p('merge patch nested 10,001 deep', CM, MERGE, nested(10_001), 400, 'BadRequest', "error decoding patch: invalid character '{' exceeded max depth"));
  out.push(p('JSON patch nested 10,001 deep', CM, JSONPATCH, `[{"op":"add","path":"/data/a","value":${nested(10_001)}}]`, 400, 'BadRequest', "error decoding patch: invalid character '{' exceeded max depth"));
  out.push(p('JSON patch: an object', CM, JSONPATCH, '{}', 400, 'BadRequest'));
  out.push(p('JSON patch: an unknown op', CM, JSONPATCH, '[{"op":"bogus","path":"/data"}]', 422, 'Invalid'));
  out.push(p('JSON patch: no path', CM, JSONPATCH, '[{"op":"add","value":1}]', 422, 'Invalid'));
  out.push(p('JSON patch: a failing test', CM, JSONPATCH, '[{"op":"test","path":"/metadata/name","value":"nope"}]', 422, 'Invalid'));
  out.push(p('JSON patch: removing what is not there', CM, JSONPATCH, '[{"op":"remove","path":"/nothing/here"}]', 422, 'Invalid'));
  out.push(p('JSON patch: an index past the end', CM, JSONPATCH, '[{"op":"add","path":"/metadata/finalizers/7","value":"x"}]', 422, 'Invalid'));
  out.push(p('JSON patch: a path without a slash', CM, JSONPATCH, '[{"op":"add","path":"data","value":{}}]', 422, 'Invalid'));
  out.push(p('JSON patch: move into itself', CM, JSONPATCH, '[{"op":"move","from":"/metadata","path":"/metadata/x"}]', 422, 'Invalid'));
  out.push(p('JSON patch: the name a number', CM, JSONPATCH, '[{"op":"replace","path":"/metadata/name","value":5}]', 422, 'Invalid'));
  out.push(p('JSON patch: the data a list', CM, JSONPATCH, '[{"op":"replace","path":"/data","value":[1]}]', 422, 'Invalid'));
  out.push(p('merge patch: a list', CM, MERGE, '[1]', 400, 'BadRequest'));
  out.push(p('merge patch: the data a list', CM, MERGE, '{"data":[1]}', 422, 'Invalid', ' "" is invalid: patch: Invalid value: "{\\"data\\":[1]}": json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string'));
  out.push(p('merge patch: another name', CM, MERGE, '{"metadata":{"name":"other"}}', 400, 'BadRequest'));
  out.push(p('merge patch: replicas beyond int32', DEPLOY, MERGE, '{"spec":{"replicas":99999999999}}', 422, 'Invalid'));
  out.push(p('merge patch: a label value of 64 characters', CM, MERGE, JSON.stringify({ metadata: { labels: { a: 'v'.repeat(64) } } }), 422, 'Invalid'));
  out.push(p('merge patch: binaryData not base64', CM, MERGE, '{"binaryData":{"a":"hello"}}', 422, 'Invalid'));
  out.push(p('merge patch: a quantity that does not parse', DEPLOY, MERGE, tmpl({ containers: [{ name: 'c', image: 'busybox', resources: { limits: { cpu: 'lots' } } }] }), 422, 'Invalid'));
  out.push(p('a patch as text/plain', CM, 'text/plain', '{}', 415, 'UnsupportedMediaType'));
  out.push(p('a patch as application/xml', CM, 'application/xml', '<a/>', 415, 'UnsupportedMediaType'));
  out.push(p('a patch as JSON', CM, JSON_T, '{}', 415, 'UnsupportedMediaType'));
  out.push({ what: 'apply without a fieldManager', method: 'PATCH', path: CM, body: 'data: {a: b}\n', contentType: APPLY, code: 422, reason: 'Invalid', message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' });
  out.push({ what: 'apply of broken YAML', method: 'PATCH', path: `${CM}?fieldManager=t`, body: 'a: [\n', contentType: APPLY, code: 400, reason: 'BadRequest' });
  out.push({ what: 'apply of a list', method: 'PATCH', path: `${CM}?fieldManager=t`, body: '- a\n', contentType: APPLY, code: 400, reason: 'BadRequest' });
  out.push({ what: 'apply of another kind', method: 'PATCH', path: `${CM}?fieldManager=t`, body: 'apiVersion: v1\nkind: Secret\nmetadata: {name: cm}\n', contentType: APPLY, code: 400, reason: 'BadRequest' });
  out.push({ what: 'apply with !!binary invalid base64', method: 'PATCH', path: `${CM}?fieldManager=t`, body: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: !!binary '%%'}\n", contentType: APPLY, code: 400, reason: 'BadRequest' });
  out.push({ what: 'apply with a fieldManager of 129 characters', method: 'PATCH', path: `${CM}?fieldManager=${'m'.repeat(129)}`, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n', contentType: APPLY, code: 422, reason: 'Invalid' });
  out.push(p('a patch of an object that does not exist', `${CMS}/nope`, MERGE, '{}', 404, 'NotFound'));
  return out;
}

export function requestCases(): Case[] {
  const out: Case[] = [];
  // content types and Accept
  for (const ct of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json-seq', 'image/png']) {
    out.push({ what: `a create as ${ct}`, method: 'POST', path: CMS, body: cm(), contentType: ct, code: 415, reason: 'UnsupportedMediaType' });
  }
  for (const accept of ['application/xml', 'text/html', 'application/json;as=Table;v=v9;g=meta.k8s.io', 'application/json;as=Bogus;v=v1;g=meta.k8s.io']) {
    out.push({ what: `Accept ${accept}`, method: 'GET', path: CM, headers: { accept }, code: 406, reason: 'NotAcceptable' });
  }
  // methods
  out.push({ what: 'PUT on a collection', method: 'PUT', path: CMS, body: cm(), code: 405, reason: 'MethodNotAllowed' });
  out.push({ what: 'POST on an object', method: 'POST', path: CM, body: cm(), code: 405, reason: 'MethodNotAllowed' });
  out.push({ what: 'PATCH on a collection', method: 'PATCH', path: CMS, body: '{}', contentType: MERGE, code: 405, reason: 'MethodNotAllowed' });
  out.push({ what: 'POST on a subresource that takes none', method: 'POST', path: `${DEPLOY}/status`, body: '{}', code: 405, reason: 'MethodNotAllowed' });
  out.push({ what: 'an unknown subresource', method: 'GET', path: `${CM}/bogus`, code: 404, reason: 'NotFound' });
  out.push({ what: 'an unknown resource', method: 'GET', path: `/api/v1/namespaces/${NS}/bogus`, code: 404, reason: 'NotFound' });
  out.push({ what: 'an unknown group', method: 'GET', path: '/apis/bogus.example.com/v1/things', code: 404, reason: 'NotFound' });
  out.push({ what: 'an unknown version', method: 'GET', path: '/apis/apps/v9/deployments', code: 404, reason: 'NotFound' });
  // headers
  out.push({ what: 'Impersonate-Extra without Impersonate-User', method: 'GET', path: CMS, headers: { 'impersonate-extra-foo': 'bar' }, code: 400, reason: 'BadRequest', message: 'requested [{UserExtra  bar  authentication.k8s.io/v1  foo}] without impersonating a user' });
  out.push({ what: 'Impersonate-Group without Impersonate-User', method: 'GET', path: CMS, headers: { 'impersonate-group': 'g' }, code: 400, reason: 'BadRequest', message: 'requested [{Group  g    }] without impersonating a user' });
  out.push({ what: 'Impersonate-Uid without Impersonate-User', method: 'GET', path: CMS, headers: { 'impersonate-uid': 'u' }, code: 400, reason: 'BadRequest', message: 'requested [{UID  u  authentication.k8s.io/v1  }] without impersonating a user' });
  out.push({ what: 'a bearer token that is garbage', method: 'GET', path: CMS, headers: { authorization: 'Bearer x.y.z' }, anonymous: true, code: 401, reason: 'Unauthorized' });
  out.push({ what: 'a token of another scheme', method: 'GET', path: CMS, headers: { authorization: 'Basic YTpi' }, anonymous: true, code: 401, reason: 'Unauthorized' });
  out.push({ what: 'an empty bearer token', method: 'GET', path: CMS, headers: { authorization: 'Bearer ' }, anonymous: true, code: 401, reason: 'Unauthorized' });
  out.push({ what: 'a forged service account token', method: 'GET', path: CMS, headers: { authorization: `Bearer ${b64url('{"alg":"none"}')}.${b64url('{"sub":"system:serviceaccount:kube-system:default","iss":"https://kubernetes.default.svc.cluster.local"}')}.` }, anonymous: true, code: 401, reason: 'Unauthorized' });
  out.push({ what: 'no credentials', method: 'GET', path: CMS, anonymous: true, code: 401, reason: 'Unauthorized' });
  // query parameters
  out.push({ what: 'dryRun bogus', method: 'POST', path: `${CMS}?dryRun=bogus`, body: cm(), code: 422, reason: 'Invalid' });
  out.push({ what: 'fieldValidation bogus', method: 'POST', path: `${CMS}?fieldValidation=bogus`, body: cm(), code: 400, reason: 'BadRequest' });
  out.push({ what: 'fieldManager of 129 characters', method: 'POST', path: `${CMS}?fieldManager=${'m'.repeat(129)}`, body: cm(), code: 422, reason: 'Invalid' });
  out.push({ what: 'gracePeriodSeconds not a number', method: 'DELETE', path: `${CM}?gracePeriodSeconds=abc`, code: 400, reason: 'BadRequest' });
  out.push({ what: 'propagationPolicy bogus', method: 'DELETE', path: `${CM}?propagationPolicy=Bogus`, code: 422, reason: 'Invalid' });
  out.push({ what: 'delete with a stale uid precondition', method: 'DELETE', path: CM, body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } }), code: 409, reason: 'Conflict' });
  out.push({ what: 'delete with a stale resourceVersion precondition', method: 'DELETE', path: CM, body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } }), code: 409, reason: 'Conflict' });
  // DELETE bodies of the wrong kind
  for (const [what, body] of [
    ['a Pod', '{"kind":"Pod","apiVersion":"v1"}'],
    ['a Status', '{"kind":"Status","apiVersion":"v1"}'],
    ['an array', '[]'],
    ['a string', '"x"'],
    ['gracePeriodSeconds a string', '{"gracePeriodSeconds":"x"}'],
    ['propagationPolicy a number', '{"propagationPolicy":5}'],
    ['preconditions a list', '{"preconditions":[]}'],
    ['broken JSON', '{'],
    ['nested 10,001 deep', nested(10_001)],
  ] as [string, string][]) {
    out.push({ what: `delete with a body of ${what}`, method: 'DELETE', path: CM, body, code: 400, reason: 'BadRequest' });
    out.push({ what: `delete collection with a body of ${what}`, method: 'DELETE', path: CMS, body, code: 400, reason: 'BadRequest' });
  }
  out.push({ what: 'delete with gracePeriodSeconds negative in the body', method: 'DELETE', path: CM, body: '{"gracePeriodSeconds":-5,"dryRun":["bogus"]}', code: 422, reason: 'Invalid' });
  return out;
}

export const rawCases: { what: string; bytes: () => string; code: number; reason: string }[] = [
  { what: 'an unknown method', bytes: () => 'FROB /api HTTP/1.1\r\nHost: x\r\n\r\n', code: 400, reason: 'BadRequest' },
  { what: 'a request line that is not HTTP', bytes: () => 'hello there\r\n\r\n', code: 400, reason: 'BadRequest' },
  { what: 'a header with a control character', bytes: () => 'GET /api HTTP/1.1\r\nHost: x\r\nX-A: b\x01c\r\n\r\n', code: 400, reason: 'BadRequest' },
  { what: 'a header without a colon', bytes: () => 'GET /api HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n', code: 400, reason: 'BadRequest' },
  { what: 'Content-Length and Transfer-Encoding both', bytes: () => `POST ${CMS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, code: 400, reason: 'BadRequest' },
  { what: 'a Content-Length that is not a number', bytes: () => `POST ${CMS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n`, code: 400, reason: 'BadRequest' },
  { what: 'a broken chunk size', bytes: () => `POST ${CMS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, code: 400, reason: 'BadRequest' },
  { what: 'a URL of 2 MiB', bytes: () => `GET ${CMS}?labelSelector=${'a'.repeat(2 * 1024 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`, code: 431, reason: '' },
  { what: 'a header of 2 MiB', bytes: () => `GET ${CMS} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(2 * 1024 * 1024)}\r\n\r\n`, code: 431, reason: '' },
  { what: 'a path escape that does not decode', bytes: () => `GET /api/v1/namespaces/%zz/configmaps HTTP/1.1\r\nHost: x\r\n\r\n`, code: 400, reason: 'BadRequest' },
];
