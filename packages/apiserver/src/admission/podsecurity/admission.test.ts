/** PodSecurity's label parsing, configuration and admission decisions, with plain injected lookups. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import type { AdmissionAttributes } from '../index.js';
import { DEFAULT_POLICY, policyToEvaluate } from './api.js';
import { loadPodSecurityConfiguration } from './config.js';
import { PodSecurityAdmission, type PodSecurityDeps } from './admission.js';

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const pod = (name: string, sc: object = {}, extra: object = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c', image: 'busybox', securityContext: sc }], ...extra },
});
const enforce = (level: string) => ({ 'pod-security.kubernetes.io/enforce': level });

function plugin(namespaces: Record<string, KubeObject>, pods: KubeObject[] = [], extra: Partial<PodSecurityDeps> = {}) {
  return new PodSecurityAdmission({ namespace: async (n) => namespaces[n], pods: async () => pods, ...extra });
}
type Attrs = AdmissionAttributes & { auditAnnotations?: Record<string, string> };
const attrs = (over: Partial<Attrs>): Attrs => ({
  operation: 'CREATE',
  resource: '/pods',
  namespace: 'ns',
  warnings: [],
  ...over,
});
const refusal = async (p: Promise<void>): Promise<StatusError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  assert.fail('expected a refusal');
};

test('labels: valid values, fail-closed enforce and fail-open audit/warn, errors in upstream form', () => {
  const ok = policyToEvaluate({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn-version': 'v1.25' }, DEFAULT_POLICY);
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.policy.enforce, { level: 'baseline', version: 'latest' });
  assert.deepEqual(ok.policy.warn, { level: 'privileged', version: 25 });
  const bad = policyToEvaluate(
    {
      'pod-security.kubernetes.io/enforce': 'strict',
      'pod-security.kubernetes.io/enforce-version': 'v1.022',
      'pod-security.kubernetes.io/warn': 'nope',
      'pod-security.kubernetes.io/audit-version': '1.25',
    },
    DEFAULT_POLICY,
  );
  assert.deepEqual(bad.policy.enforce, { level: 'restricted', version: 'latest' });
  assert.equal(bad.policy.warn.level, 'privileged');
  assert.deepEqual(
    bad.errors.map((e) => [e.field, e.badValue, e.detail]),
    [
      ['metadata.labels[pod-security.kubernetes.io/enforce]', 'strict', 'must be one of privileged, baseline, restricted'],
      ['metadata.labels[pod-security.kubernetes.io/enforce-version]', 'v1.022', 'must be "latest" or "v1.x"'],
      ['metadata.labels[pod-security.kubernetes.io/audit-version]', '1.25', 'must be "latest" or "v1.x"'],
      ['metadata.labels[pod-security.kubernetes.io/warn]', 'nope', 'must be one of privileged, baseline, restricted'],
    ],
  );
});

test('configuration: defaults fill in, exemptions load, invalid ones refuse to start', () => {
  const c = loadPodSecurityConfiguration({
    apiVersion: 'pod-security.admission.config.k8s.io/v1',
    kind: 'PodSecurityConfiguration',
    defaults: { enforce: 'baseline', 'warn-version': 'v1.30' },
    exemptions: { namespaces: ['kube-system'], usernames: ['admin'], runtimeClasses: ['kata'] },
  });
  assert.deepEqual(c.defaults.enforce, { level: 'baseline', version: 'latest' });
  assert.deepEqual(c.defaults.warn, { level: 'privileged', version: 30 });
  assert.ok(c.exemptions.namespaces.has('kube-system') && c.exemptions.usernames.has('admin') && c.exemptions.runtimeClasses.has('kata'));
  assert.throws(
    () =>
      loadPodSecurityConfiguration({
        apiVersion: 'pod-security.admission.config.k8s.io/v1',
        kind: 'PodSecurityConfiguration',
        defaults: { audit: 'high' },
        exemptions: { namespaces: ['Bad_NS', 'a', 'a'], usernames: [''] },
      }),
    /^Error: PodSecurity invalid: \[defaults\.audit: Invalid value: "high": must be one of privileged, baseline, restricted, exemptions\.namespaces\[0\]: Invalid value: "Bad_NS": .*exemptions\.namespaces\[2\]: Duplicate value: "a", exemptions\.usernames\[0\]: Required value\]$/,
  );
  assert.throws(() => loadPodSecurityConfiguration({ kind: 'Other' }), /expected kind PodSecurityConfiguration/);
});

test('enforce refuses with upstream message; audit annotates; warn is skipped on a refusal', async () => {
  const p = plugin({ ns: ns('ns', { ...enforce('restricted'), 'pod-security.kubernetes.io/warn': 'baseline' }) });
  const a = attrs({ name: 'x', auditAnnotations: {} });
  const e = await refusal(p.validate(pod('x', { privileged: true }), a));
  assert.equal(e.status.code, 403);
  assert.equal(e.status.reason, 'Forbidden');
  assert.match(
    e.status.message ?? '',
    /^pods "x" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false \(container "c" must set securityContext.allowPrivilegeEscalation=false\), /,
  );
  assert.deepEqual(a.warnings, []);
  assert.equal(a.auditAnnotations!['pod-security.kubernetes.io/enforce-policy'], 'restricted:latest');
});

test('warn and audit levels: warnings and annotations, the pod admitted', async () => {
  const p = plugin({
    ns: ns('ns', {
      'pod-security.kubernetes.io/warn': 'baseline',
      'pod-security.kubernetes.io/audit': 'baseline',
      'pod-security.kubernetes.io/audit-version': 'v1.29',
    }),
  });
  const a = attrs({ name: 'x', auditAnnotations: {} });
  await p.validate(pod('x', { privileged: true }), a);
  assert.deepEqual(a.warnings, ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
  assert.equal(
    a.auditAnnotations!['pod-security.kubernetes.io/audit-violations'],
    'would violate PodSecurity "baseline:v1.29": privileged (container "c" must not set securityContext.privileged=true)',
  );
});

test('pod templates only warn, even under enforce; scale and other subresources pass', async () => {
  const p = plugin({ ns: ns('ns', { ...enforce('restricted'), 'pod-security.kubernetes.io/warn': 'restricted' }) });
  const deploy: KubeObject = { metadata: { name: 'd', namespace: 'ns' }, spec: { template: { metadata: {}, spec: pod('x', { privileged: true }).spec } } };
  const a = attrs({ resource: 'apps/deployments', name: 'd' });
  await p.validate(deploy, a);
  assert.equal(a.warnings!.length, 1);
  assert.match(a.warnings![0]!, /^would violate PodSecurity "restricted:latest": privileged \(/);
  const cj: KubeObject = { metadata: { name: 'j' }, spec: { jobTemplate: { spec: { template: { spec: { hostPID: true, containers: [] } } } } } };
  const b = attrs({ resource: 'batch/cronjobs' });
  await p.validate(cj, b);
  assert.equal(b.warnings![0], 'would violate PodSecurity "restricted:latest": host namespaces (hostPID=true)');
  const scale = attrs({ resource: 'apps/deployments', operation: 'UPDATE', subresource: 'scale' });
  await p.validate(deploy, scale);
  assert.deepEqual(scale.warnings, []);
  assert.equal(p.handles(attrs({ resource: 'apps/deployments', operation: 'DELETE' })), false);
  assert.equal(p.handles(attrs({ resource: '/configmaps' })), false);
});

test('exempt namespaces, users and runtime classes are not evaluated; kube-system is not exempt by default', async () => {
  const config = loadPodSecurityConfiguration({
    apiVersion: 'pod-security.admission.config.k8s.io/v1',
    kind: 'PodSecurityConfiguration',
    defaults: { enforce: 'restricted' },
    exemptions: { namespaces: ['infra'], usernames: ['system:admin'], runtimeClasses: ['kata'] },
  });
  const p = plugin({ ns: ns('ns'), infra: ns('infra'), 'kube-system': ns('kube-system') }, [], { config });
  const bad = pod('x', { privileged: true });
  const a = attrs({ namespace: 'infra', auditAnnotations: {} });
  await p.validate(bad, a);
  assert.equal(a.auditAnnotations!['pod-security.kubernetes.io/exempt'], 'namespace');
  await p.validate(bad, attrs({ user: { name: 'system:admin', groups: [] } }));
  await p.validate(pod('x', { privileged: true }, { runtimeClassName: 'kata' }), attrs({}));
  await refusal(p.validate(bad, attrs({})));
  await refusal(plugin({ 'kube-system': ns('kube-system', enforce('baseline')) }).validate(bad, attrs({ namespace: 'kube-system' })));
});

test('pod updates that change only what the checks cannot see pass; an image change is evaluated', async () => {
  const p = plugin({ ns: ns('ns', enforce('baseline')) });
  const old = pod('x', { privileged: true });
  const relabeled = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } };
  await p.validate(relabeled, attrs({ operation: 'UPDATE', name: 'x', old }));
  await p.validate(old, attrs({ operation: 'UPDATE', name: 'x', subresource: 'status', old }));
  const newImage = pod('x', { privileged: true });
  (newImage.spec as { containers: { image: string }[] }).containers[0]!.image = 'nginx';
  await refusal(p.validate(newImage, attrs({ operation: 'UPDATE', name: 'x', old })));
  // Annotations upstream's validation keeps immutable are evaluated when they change.
  const fine = pod('y');
  const unconfined = { ...fine, metadata: { ...fine.metadata, annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } } };
  await refusal(p.validate(unconfined, attrs({ operation: 'UPDATE', name: 'y', old: fine })));
  const withEphemeral = pod('x', { privileged: true }, { ephemeralContainers: [{ name: 'dbg', image: 'busybox' }] });
  await refusal(p.validate(withEphemeral, attrs({ operation: 'UPDATE', name: 'x', subresource: 'ephemeralcontainers', old })));
});

test('namespaces: invalid labels are 422 on create and when changed; unchanged invalid labels pass', async () => {
  const p = plugin({});
  const e = await refusal(p.validate(ns('x', enforce('strict')), attrs({ resource: '/namespaces', namespace: undefined, name: 'x' })));
  assert.equal(e.status.code, 422);
  assert.equal(
    e.status.message,
    'Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
  );
  assert.deepEqual(e.status.details?.causes, [
    {
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "strict": must be one of privileged, baseline, restricted',
      field: 'metadata.labels[pod-security.kubernetes.io/enforce]',
    },
  ]);
  const old = ns('x', enforce('strict'));
  await p.validate({ ...old, metadata: { ...old.metadata, annotations: { a: 'b' } } }, attrs({ resource: '/namespaces', operation: 'UPDATE', old }));
  await refusal(p.validate(ns('x', enforce('stricter')), attrs({ resource: '/namespaces', operation: 'UPDATE', old })));
});

test('tightening enforce warns about existing pods, grouped by reasons, first pod name first', async () => {
  const owned = (name: string, uid: string): KubeObject => ({
    ...pod(name, { privileged: true }),
    metadata: { name, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }] },
  });
  const pods = [
    pod('web-b', { privileged: true }),
    pod('web-a', { privileged: true }),
    pod('hostnet', {}, { hostNetwork: true }),
    owned('rs-1', 'u1'),
    pod('fine'),
  ];
  const p = plugin({}, pods);
  const a = attrs({ resource: '/namespaces', operation: 'UPDATE', name: 'x', old: ns('x') });
  await p.validate(ns('x', enforce('baseline')), a);
  assert.deepEqual(a.warnings, [
    'existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"',
    'hostnet: host namespaces',
    'rs-1 (and 2 other pods): privileged',
  ]);
  // Relaxing, or setting privileged, checks nothing.
  const relax = attrs({ resource: '/namespaces', operation: 'UPDATE', old: ns('x', enforce('restricted')) });
  await p.validate(ns('x', enforce('baseline')), relax);
  assert.deepEqual(relax.warnings, []);
  // Limits: the first N pods (controllers' duplicates last), or as many as fit the time.
  const limited = plugin({}, pods, { maxPodsToCheck: 2 });
  const b = attrs({ resource: '/namespaces', operation: 'UPDATE', old: ns('x') });
  await limited.validate(ns('x', enforce('baseline')), b);
  assert.deepEqual(b.warnings, [
    'new PodSecurity enforce level only checked against the first 2 of 5 existing pods',
    'existing pods in namespace "x" violate the new PodSecurity enforce level "baseline:latest"',
    'web-a (and 1 other pod): privileged',
  ]);
  let t = 0;
  const slow = plugin({}, pods, { podCheckTimeoutMs: 5, now: () => (t += 6) });
  const c = attrs({ resource: '/namespaces', operation: 'UPDATE', old: ns('x') });
  await slow.validate(ns('x', enforce('baseline')), c);
  assert.equal(c.warnings![0], 'new PodSecurity enforce level only checked against the first 1 of 5 existing pods');
});

test('an exempt namespace labelled with a stricter policy is told the labels are ignored', async () => {
  const config = loadPodSecurityConfiguration({
    apiVersion: 'pod-security.admission.config.k8s.io/v1beta1',
    kind: 'PodSecurityConfiguration',
    exemptions: { namespaces: ['kube-system'] },
  });
  const p = plugin({}, [pod('x', { privileged: true })], { config });
  const a = attrs({ resource: '/namespaces', operation: 'UPDATE', name: 'kube-system', old: ns('kube-system') });
  await p.validate(ns('kube-system', { ...enforce('baseline'), 'pod-security.kubernetes.io/warn': 'restricted' }), a);
  assert.deepEqual(a.warnings, [
    'namespace "kube-system" is exempt from Pod Security, and the policy (enforce=baseline:latest, warn=restricted:latest) will be ignored',
  ]);
});

test('a privileged namespace costs one namespace lookup and no pod evaluation', async () => {
  let lookups = 0;
  const p = new PodSecurityAdmission({
    namespace: async (n) => {
      lookups++;
      return ns(n);
    },
    pods: async () => assert.fail('no pods listed'),
  });
  const a = attrs({});
  await p.validate(pod('x', { privileged: true }, { hostNetwork: true }), a);
  assert.equal(lookups, 1);
  assert.deepEqual(a.warnings, []);
  // A pod whose namespace is gone is NotFound, not an internal error.
  assert.equal((await refusal(plugin({}).validate(pod('x'), attrs({ namespace: 'gone' })))).status.code, 404);
});
