/**
 * PodSecurity against a real etcd and apiserver: enforce refusals with
 * upstream's message, warn as Warning headers the real kubectl prints, pod
 * templates that only warn, the namespace dry run of a new enforce level, an
 * exemption from the admission configuration, and invalid labels.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
const kubectlBin = kubectlBinaries().default;
const PSA = 'pod-security.kubernetes.io';

before(async () => {
  env = await startTestEnv({
    server: {
      admissionConfig: {
        PodSecurity: {
          apiVersion: 'pod-security.admission.config.k8s.io/v1',
          kind: 'PodSecurityConfiguration',
          exemptions: { namespaces: ['exempt'] },
        },
      },
    },
  });
  const namespaces: [string, Record<string, string>][] = [
    ['strict', { [`${PSA}/enforce`]: 'restricted' }],
    ['warned', { [`${PSA}/warn`]: 'restricted' }],
    ['apps', { [`${PSA}/enforce`]: 'restricted', [`${PSA}/warn`]: 'restricted' }],
    ['dry', {}],
    ['exempt', { [`${PSA}/enforce`]: 'restricted' }],
  ];
  for (const [name, labels] of namespaces) {
    const r = await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
    assert.equal(r.status, 201, r.text);
  }
});
after(async () => {
  await env?.stop();
});

const privilegedPod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] },
});

const compliantPod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [{ name: 'c', image: 'busybox', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
  },
});

const RESTRICTED_DETAIL =
  'privileged (container "c" must not set securityContext.privileged=true), ' +
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

test('an enforce=restricted namespace refuses a privileged pod with upstream message and admits a compliant one', async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/strict/pods', privilegedPod('x'));
  assert.equal(r.status, 403, r.text);
  assert.equal(r.body.reason, 'Forbidden');
  assert.equal(r.body.message, `pods "x" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`);
  assert.deepEqual(r.body.details, { name: 'x', kind: 'pods' });
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/strict/pods/x')).status, 404);
  const ok = await request(env.url, 'POST', '/api/v1/namespaces/strict/pods', compliantPod('ok'));
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.headers.get('warning'), null);
});

test('warn=restricted admits the pod with a Warning header', async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/warned/pods', privilegedPod('w'));
  assert.equal(r.status, 201, r.text);
  assert.equal(r.headers.get('warning'), `299 - ${JSON.stringify(`would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`)}`);
});

test('a Deployment in an enforce=restricted namespace is created, with warnings only', async () => {
  const r = await request(env.url, 'POST', '/apis/apps/v1/namespaces/apps/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: {
      selector: { matchLabels: { app: 'd' } },
      template: {
        metadata: { labels: { app: 'd' } },
        spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] },
      },
    },
  });
  assert.equal(r.status, 201, r.text);
  assert.match(
    r.headers.get('warning') ?? '',
    /^299 - "would violate PodSecurity \\"restricted:latest\\": host namespaces \(hostNetwork=true\), privileged \(/,
  );
});

test('a namespace exempt by the admission configuration is not evaluated', async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/exempt/pods', privilegedPod('p'));
  assert.equal(r.status, 201, r.text);
});

test('invalid policy labels are refused as Invalid', async () => {
  const r = await request(env.url, 'POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'bad', labels: { [`${PSA}/enforce`]: 'strict' } },
  });
  assert.equal(r.status, 422, r.text);
  assert.equal(
    r.body.message,
    `Namespace "bad" is invalid: metadata.labels[${PSA}/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`,
  );
  const patch = await request(
    env.url,
    'PATCH',
    '/api/v1/namespaces/dry',
    { metadata: { labels: { [`${PSA}/warn-version`]: 'v2.0' } } },
    {
      contentType: 'application/merge-patch+json',
    },
  );
  assert.equal(patch.status, 422, patch.text);
  assert.equal(patch.body.details.causes[0].field, `metadata.labels[${PSA}/warn-version]`);
});

test('kubectl prints the warnings of warn=restricted and of a server dry run of a new enforce level', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const k = new Kubectl(env.url, kubectlBin!, { namespace: 'warned' });
  try {
    const applied = await k.run(['apply', '-f', '-'], { input: JSON.stringify(privilegedPod('kw')) });
    assert.equal(applied.code, 0, applied.stderr);
    assert.ok(applied.stderr.includes(`Warning: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`), applied.stderr);

    for (const name of ['priv-a', 'priv-b']) assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/dry/pods', privilegedPod(name))).status, 201);
    const label = await k.run(['label', 'ns', 'dry', `${PSA}/enforce=baseline`, '--dry-run=server']);
    assert.equal(label.code, 0, label.stderr);
    assert.match(label.stdout, /namespace\/dry labeled \(server dry run\)/);
    assert.ok(label.stderr.includes('Warning: existing pods in namespace "dry" violate the new PodSecurity enforce level "baseline:latest"'), label.stderr);
    assert.ok(label.stderr.includes('Warning: priv-a (and 1 other pod): privileged'), label.stderr);
    const ns = await request(env.url, 'GET', '/api/v1/namespaces/dry');
    assert.equal(ns.body.metadata.labels?.[`${PSA}/enforce`], undefined);
  } finally {
    k.cleanup();
  }
});
