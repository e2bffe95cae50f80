/**
 * The pod and node plugins that are off by default, enabled together against
 * a real etcd with their AdmissionConfiguration: PodNodeSelector,
 * PodTolerationRestriction, ExtendedResourceToleration,
 * LimitPodHardAntiAffinityTopology, SecurityContextDeny, DenyEscalatingExec
 * (CONNECT at pods/exec and pods/attach), DenyServiceExternalIPs and
 * NamespaceExists, and TaintNodesByCondition.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const NOT_READY = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' };
const UNREACHABLE = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' };
const MEMORY_PRESSURE = { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' };
const TEAM = { key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' };
const GPU = { key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule' };
const DEDICATED = { key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' };

let env: TestEnv;
before(async () => {
  env = await startTestEnv({
    server: {
      admission: {
        enable: [
          'PodNodeSelector',
          'PodTolerationRestriction',
          'ExtendedResourceToleration',
          'LimitPodHardAntiAffinityTopology',
          'SecurityContextDeny',
          'DenyEscalatingExec',
          'DenyServiceExternalIPs',
          'NamespaceExists',
          'TaintNodesByCondition',
        ],
      },
      admissionConfig: {
        PodNodeSelector: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env=prod', restricted: 'env=prod, tier=db' } },
        PodTolerationRestriction: {
          apiVersion: 'podtolerationrestriction.admission.k8s.io/v1alpha1',
          kind: 'Configuration',
          default: [TEAM],
          whitelist: [NOT_READY, UNREACHABLE, MEMORY_PRESSURE, TEAM, GPU],
        },
      },
    },
  });
  const ns = (name: string, annotations: Record<string, string> = {}) =>
    request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations } });
  await ns('plain');
  await ns('restricted');
  await ns('zoned', { 'scheduler.alpha.kubernetes.io/node-selector': 'zone=a' });
  await ns('tol', {
    'scheduler.alpha.kubernetes.io/defaultTolerations': JSON.stringify([DEDICATED]),
    'scheduler.alpha.kubernetes.io/tolerationsWhitelist': JSON.stringify([{ key: 'dedicated', operator: 'Exists' }, NOT_READY, UNREACHABLE]),
  });
});
after(async () => {
  await env?.stop();
});

const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', ...container }], ...spec },
});
const create = (ns: string, body: object) => request(env.url, 'POST', `/api/v1/namespaces/${ns}/pods`, body);

test('TaintNodesByCondition: a new node is tainted not-ready:NoSchedule, once', async () => {
  const r = await request(env.url, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
  const own = await request(env.url, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n2' },
    spec: { taints: [{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }] },
  });
  assert.deepEqual(own.body.spec.taints, [{ key: 'node.kubernetes.io/not-ready', value: 'x', effect: 'NoSchedule' }]);
});

test('PodNodeSelector: the namespace’s selector (else the cluster default) is merged in; conflicts and whitelist breaches are Forbidden', async () => {
  const zoned = await create('zoned', pod('z1', { nodeSelector: { disk: 'ssd' } }));
  assert.equal(zoned.status, 201, JSON.stringify(zoned.body));
  assert.deepEqual(zoned.body.spec.nodeSelector, { zone: 'a', disk: 'ssd' });
  const clash = await create('zoned', pod('z2', { nodeSelector: { zone: 'b' } }));
  assert.equal(clash.status, 403);
  assert.equal(clash.body.message, 'pods "z2" is forbidden: pod node label selector conflicts with its namespace node label selector');
  const plain = await create('plain', pod('p1'));
  assert.deepEqual(plain.body.spec.nodeSelector, { env: 'prod' });
  const within = await create('restricted', pod('r1', { nodeSelector: { tier: 'db' } }));
  assert.equal(within.status, 201, JSON.stringify(within.body));
  const outside = await create('restricted', pod('r2', { nodeSelector: { gpu: 'yes' } }));
  assert.equal(outside.status, 403);
  assert.equal(outside.body.message, 'pods "r2" is forbidden: pod node label selector labels conflict with its namespace whitelist');
  assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/restricted/pods/r2')).status, 404);
});

test('PodTolerationRestriction: namespace and cluster defaults are merged in; whitelists refuse the rest', async () => {
  const tol = await create('tol', pod('t1'));
  assert.equal(tol.status, 201, JSON.stringify(tol.body));
  assert.deepEqual(
    tol.body.spec.tolerations.map((t: { key: string }) => t.key),
    ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'dedicated'],
  );
  const stray = await create('tol', pod('t2', { tolerations: [{ key: 'gpu-node', operator: 'Exists' }] }));
  assert.equal(stray.status, 403);
  assert.equal(
    stray.body.message,
    'pods "t2" is forbidden: pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
  );
  // A pod with requests is Burstable: it tolerates memory pressure too.
  const plain = await create('plain', pod('t3', {}, { resources: { requests: { cpu: '10m' } } }));
  assert.equal(plain.status, 201, JSON.stringify(plain.body));
  assert.deepEqual(
    plain.body.spec.tolerations.map((t: { key: string }) => t.key),
    ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'team', 'node.kubernetes.io/memory-pressure'],
  );
  const cluster = await create('plain', pod('t4', { tolerations: [{ key: 'other', operator: 'Exists' }] }));
  assert.equal(cluster.status, 403);
  assert.match(cluster.body.message, /conflict with its cluster whitelist$/);
});

test('ExtendedResourceToleration: requesting an extended resource tolerates its NoSchedule taint', async () => {
  const gpu = { 'example.com/gpu': '1' };
  const r = await create('plain', pod('g1', {}, { resources: { requests: gpu, limits: gpu } }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.ok(
    r.body.spec.tolerations.some((t: Record<string, string>) => t.key === 'example.com/gpu' && t.operator === 'Exists' && t.effect === 'NoSchedule'),
    JSON.stringify(r.body.spec.tolerations),
  );
});

test('LimitPodHardAntiAffinityTopology and SecurityContextDeny refuse with upstream’s messages', async () => {
  const term = { labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'topology.kubernetes.io/zone' };
  const anti = await create('plain', pod('a1', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } } }));
  assert.equal(anti.status, 403);
  assert.equal(
    anti.body.message,
    'pods "a1" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed',
  );
  const host = await create(
    'plain',
    pod('a2', { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ ...term, topologyKey: 'kubernetes.io/hostname' }] } } }),
  );
  assert.equal(host.status, 201, JSON.stringify(host.body));
  const runAs = await create('plain', pod('s1', { securityContext: { runAsUser: 1000 } }));
  assert.equal(runAs.status, 403);
  assert.equal(runAs.body.message, 'pods "s1" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden');
  const selinux = await create('plain', pod('s2', {}, { securityContext: { seLinuxOptions: { level: 's0:c1' } } }));
  assert.equal(selinux.body.message, 'pods "s2" is forbidden: SecurityContext.SELinuxOptions is forbidden');
});

test('DenyEscalatingExec: exec and attach into a privileged pod are refused before any kubelet is asked', async () => {
  assert.equal((await create('plain', pod('priv', {}, { securityContext: { privileged: true } }))).status, 201);
  assert.equal((await create('plain', pod('calm'))).status, 201);
  const exec = await request(env.url, 'POST', '/api/v1/namespaces/plain/pods/priv/exec?command=ls&stdout=true');
  assert.equal(exec.status, 403);
  assert.equal(exec.body.reason, 'Forbidden');
  assert.equal(exec.body.message, 'pods "priv" is forbidden: cannot exec into or attach to a privileged container');
  const attach = await request(env.url, 'POST', '/api/v1/namespaces/plain/pods/priv/attach?stdout=true');
  assert.equal(attach.status, 403);
  // A pod admission lets through goes on to the streaming checks (this one is bound to no node).
  const calm = await request(env.url, 'POST', '/api/v1/namespaces/plain/pods/calm/exec?command=ls&stdout=true');
  assert.equal(calm.status, 400, JSON.stringify(calm.body));
});

test('DenyServiceExternalIPs refuses new external IPs; NamespaceExists answers a missing namespace with 404', async () => {
  const svc = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ port: 80 }], ...extra },
  });
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/plain/services', svc('web'))).status, 201);
  const ext = await request(env.url, 'POST', '/api/v1/namespaces/plain/services', svc('ext', { externalIPs: ['192.0.2.10'] }));
  assert.equal(ext.status, 403);
  assert.equal(ext.body.message, 'services "ext" is forbidden: Use of external IPs is denied by admission control');
  const ghost = await create('ghost', pod('x'));
  assert.equal(ghost.status, 404);
  assert.equal(ghost.body.message, 'namespaces "ghost" not found');
});
