/**
 * HA on one machine: a 3-member etcd cluster, two apiservers, two
 * controller-managers and two schedulers (leader-elected) as processes, and two
 * hollow kubelets. During a rollout the leading controller-manager, the
 * leading scheduler and one etcd member are killed; the rollout completes and
 * nothing written before is lost.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Kubelet } from '@kubeling/kubelet';
import { KubelingRuntime } from '@kubeling/runtime';
import { freePort, nodeArgs, packageMain, request, startEtcdCluster, stopChild, waitFor, type EtcdCluster } from '@kubeling/testenv';

type Obj = Record<string, any>;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let etcd: EtcdCluster;
let dir: string;
const apis: string[] = [];
const children: ChildProcess[] = [];
const kubelets: Kubelet[] = [];
const runtimes: KubelingRuntime[] = [];
const byPid = new Map<number, ChildProcess>();

function start(pkg: string, args: string[]): ChildProcess {
  const c = spawn(process.execPath, nodeArgs(packageMain(pkg), args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'ignore'] });
  children.push(c);
  if (c.pid) byPid.set(c.pid, c);
  return c;
}

const LEADER = [
  '--leader-elect=true',
  '--leader-elect-lease-duration=3s',
  '--leader-elect-renew-deadline=2s',
  '--leader-elect-retry-period=500ms',
  '--secure-port=0',
  '--log-level=warn',
];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-ha-'));
  etcd = await startEtcdCluster(3);
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    // No node lifecycle controller runs to lift TaintNodesByCondition's taint.
    start('apiserver', [
      `--etcd-servers=${etcd.endpoints.join(',')}`,
      `--secure-port=${port}`,
      '--log-level=warn',
      '--disable-admission-plugins=TaintNodesByCondition',
    ]);
    apis.push(`http://127.0.0.1:${port}`);
  }
  for (const a of apis) await waitFor(async () => (await fetch(`${a}/readyz`)).ok, 90_000, `apiserver ${a}`);
  for (let i = 0; i < 2; i++) {
    start('controller-manager', [
      `--master=${apis[i]}`,
      '--controllers=deployment,replicaset,garbagecollector',
      '--kube-api-qps=100',
      '--kube-api-burst=200',
      ...LEADER,
    ]);
    start('scheduler', [`--master=${apis[i]}`, ...LEADER]);
  }
  for (const [i, node] of ['ha-1', 'ha-2'].entries()) {
    const runtime = new KubelingRuntime({ backend: 'hollow', root: join(dir, node, 'runtime'), podCIDR: `127.8.${i + 1}.0/24` });
    runtimes.push(runtime);
    const k = new Kubelet({
      config: { server: apis[i]!, namespace: 'default', insecureSkipTLSVerify: false },
      nodeName: node,
      runtime,
      rootDir: join(dir, node),
      port: 0,
      capacity: { cpu: '8', memory: '16Gi', pods: '50' },
      log: pino({ level: 'silent' }),
      leaseRenewMs: 1000,
      statusUpdateMs: 1000,
    });
    await k.start();
    kubelets.push(k);
  }
});
after(async () => {
  for (const k of kubelets) await k.stop();
  for (const r of runtimes) await r.shutdown();
  for (const c of children.reverse()) await stopChild(c);
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const get = async (path: string, api = 1) => (await request(apis[api]!, 'GET', path)).body;
const holderPid = async (lease: string) => {
  const h = (await get(`/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/${lease}`)).spec?.holderIdentity as string | undefined;
  return h ? Number(h.split('_').pop()) : undefined;
};

test('killing the leaders and an etcd member mid-rollout: the rollout completes and nothing is lost', async () => {
  // Objects written before anything fails.
  for (let i = 0; i < 20; i++)
    assert.equal(
      (
        await request(apis[0]!, 'POST', '/api/v1/namespaces/default/configmaps', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `before-${i}` },
          data: { i: String(i) },
        })
      ).status,
      201,
    );
  const d = await request(apis[0]!, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'ha' },
    spec: {
      replicas: 6,
      minReadySeconds: 1,
      strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      selector: { matchLabels: { app: 'ha' } },
      template: { metadata: { labels: { app: 'ha' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.26' }] } },
    },
  });
  assert.equal(d.status, 201);
  await waitFor(
    async () => (await get('/apis/apps/v1/namespaces/default/deployments/ha')).status?.availableReplicas === 6,
    60_000,
    'the first version available',
  );
  await request(
    apis[1]!,
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/ha',
    { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } } },
    { contentType: 'application/strategic-merge-patch+json' },
  );
  await waitFor(
    async () => ((await get('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dha')).items as Obj[]).length === 2,
    20_000,
    'the second ReplicaSet',
  );
  // Mid-rollout: the leaders and an etcd member go.
  const cm = await holderPid('kube-controller-manager');
  const sched = await holderPid('kube-scheduler');
  assert.ok(cm && byPid.has(cm) && sched && byPid.has(sched), 'leaders are our processes');
  byPid.get(cm)!.kill('SIGKILL');
  byPid.get(sched)!.kill('SIGKILL');
  await etcd.kill(0);
  // The old ReplicaSet still had pods: the rollout was in progress when they died.
  const midRS = ((await get('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dha')).items as Obj[]).find(
    (r) => r.spec.template.spec.containers[0].image === 'nginx:1.26',
  );
  assert.ok(midRS && midRS.spec.replicas > 0, 'still rolling when killed');
  await waitFor(
    async () => {
      const x = await get('/apis/apps/v1/namespaces/default/deployments/ha');
      return x.status?.observedGeneration === 2 && x.status.updatedReplicas === 6 && x.status.availableReplicas === 6 && x.status.replicas === 6;
    },
    90_000,
    'the rollout to complete',
  );
  const rss = (await get('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dha')).items as Obj[];
  assert.equal(rss.length, 2, 'no extra ReplicaSet');
  await waitFor(
    async () =>
      ((await get('/api/v1/namespaces/default/pods?labelSelector=app%3Dha')).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp).length === 6,
    30_000,
    '6 pods',
  );
  const pods = ((await get('/api/v1/namespaces/default/pods?labelSelector=app%3Dha')).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
  assert.ok(pods.every((p) => p.spec.containers[0].image === 'nginx:1.27' && p.spec.nodeName));
  const cms = ((await get('/api/v1/namespaces/default/configmaps')).items as Obj[]).filter((c) => c.metadata.name.startsWith('before-'));
  assert.equal(cms.length, 20, 'every object written before is still there');
  const newLeader = await holderPid('kube-controller-manager');
  assert.ok(newLeader && newLeader !== cm, 'the other controller-manager leads');
});
