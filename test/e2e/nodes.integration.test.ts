/**
 * Nodes as processes: two runtimes and two kubelets (each its own process)
 * with a controller-manager and a scheduler against a real etcd + apiserver.
 * A Deployment spreads over both nodes; a killed and restarted kubelet adopts
 * its running containers instead of starting them again; a kubelet killed for
 * good makes its node NotReady, and its pods are replaced on the other node.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, Kubectl, kubectlBinaries, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes, startControlPlane, type ControlPlane } from './cluster.js';

type Obj = Record<string, any>;

let env: TestEnv;
let dir: string;
let plane: ControlPlane;
const procs = new Processes();
const kubelets = new Map<string, { proc: ChildProcess; port: number; sock: string }>();

async function startKubelet(node: string, sock: string, port: number): Promise<ChildProcess> {
  const proc = await procs.kubelet(env, dir, node, sock, port, ['--capacity=cpu=4,memory=8Gi', '--node-lease-duration-seconds=2']);
  kubelets.set(node, { proc, port, sock });
  return proc;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-nodes-'));
  // The node lifecycle controller runs: new nodes are tainted not-ready until Ready, as in a cluster.
  env = await startTestEnv({ server: { admission: { enable: ['TaintNodesByCondition'] } } });
  plane = await startControlPlane(env, ['deployment', 'replicaset', 'nodelifecycle', 'garbagecollector'], {
    nodeMonitorGracePeriodMs: 4000,
    nodeMonitorPeriodMs: 500,
  });
  for (const [i, node] of ['e2e-1', 'e2e-2'].entries()) {
    const sock = await procs.runtime(dir, node, `127.6.${i + 1}.0/24`);
    await startKubelet(node, sock, await freePort());
  }
});
after(async () => {
  await procs.stop();
  await plane?.stop();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pods = async (): Promise<Obj[]> => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')).body.items;
const live = (ps: Obj[]) => ps.filter((p) => !p.metadata.deletionTimestamp);
const ready = (p: Obj) => p.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True');

const kubectlBin = kubectlBinaries().default;

test('with the real kubectl: apply a 3-replica nginx Deployment, curl a pod, logs and logs -f, delete a pod', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const k = new Kubectl(env.url, kubectlBin!, { namespace: 'default' });
  try {
    const f = k.file(
      'nginx.yaml',
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx}
spec:
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: nginx
        image: nginx:1.27
        env: [{name: NGINX_PORT, value: "8080"}]
        ports: [{containerPort: 8080}]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
        lifecycle: {preStop: {exec: {command: [sh, -c, "echo stopping"]}}}
`,
    );
    const a = await k.run(['apply', '-f', f]);
    assert.equal(a.code, 0, a.stderr);
    const rs = await k.run(['rollout', 'status', 'deploy/nginx', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(rs.code, 0, rs.stderr + rs.stdout);
    assert.match(rs.stdout, /deployment "nginx" successfully rolled out/);
    const list = JSON.parse((await k.run(['get', 'pods', '-l', 'app=nginx', '-o', 'json'])).stdout).items as Obj[];
    assert.equal(list.length, 3);
    assert.deepEqual([...new Set(list.map((p) => p.spec.nodeName))].sort(), ['e2e-1', 'e2e-2'], 'across both nodes');
    const pod = list[0]!;
    assert.match(await (await fetch(`http://${pod.status.podIP}:8080/`)).text(), /Welcome to nginx!/);
    const logs = await k.run(['logs', pod.metadata.name]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /GET \/ HTTP\/1\.1" 200/);
    const follow = k.spawn(['logs', '-f', pod.metadata.name, '--tail=0']);
    // With --tail=0 a request made before the stream is up never shows: ask again until one does.
    await waitFor(
      async () => {
        await fetch(`http://${pod.status.podIP}:8080/followed`).catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
        return /GET \/followed HTTP\/1\.1" 404/.test(follow.output());
      },
      20_000,
      'logs -f to show the new request',
    );
    follow.child.kill();
    const t0 = Date.now();
    const del = await k.run(['delete', 'pod', pod.metadata.name], { timeoutMs: 30_000 });
    assert.equal(del.code, 0, del.stderr);
    assert.ok(Date.now() - t0 < 5000 + 2000, 'terminated within the grace period');
    await waitFor(
      async () => {
        const l = live(JSON.parse((await k.run(['get', 'pods', '-l', 'app=nginx', '-o', 'json'])).stdout).items);
        return l.length === 3 && l.every(ready);
      },
      30_000,
      'the Deployment to be whole again',
    );
    assert.equal((await k.run(['delete', 'deploy', 'nginx'])).code, 0);
  } finally {
    k.cleanup();
  }
});

test('a Deployment spreads over both nodes; a restarted kubelet starts nothing twice; a dead node loses its pods to the other', async () => {
  const r = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          terminationGracePeriodSeconds: 2,
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } },
          ],
          // Evicted 5 s after the node is tainted: a kubelet restarted on a loaded machine still comes back in time.
          tolerations: [
            { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
            { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
          ],
          containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 8080 }], readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }],
        },
      },
    },
  });
  assert.equal(r.status, 201);
  let ps: Obj[] = [];
  await waitFor(async () => (ps = live(await pods())).length === 4 && ps.every(ready), 60_000, '4 ready pods');
  const byNode = new Map<string, Obj[]>();
  for (const p of ps) byNode.set(p.spec.nodeName, [...(byNode.get(p.spec.nodeName) ?? []), p]);
  assert.deepEqual([...byNode.keys()].sort(), ['e2e-1', 'e2e-2']);
  for (const p of ps) assert.match(await (await fetch(`http://${p.status.podIP}:8080/`)).text(), /Welcome to nginx!/);

  // Kill kubelet 1 and start it again: the same containers keep running.
  const before1 = byNode.get('e2e-1')!.map((p) => [p.metadata.name, p.status.containerStatuses[0].containerID, p.status.podIP]);
  const k1 = kubelets.get('e2e-1')!;
  k1.proc.kill('SIGKILL');
  await new Promise((res) => k1.proc.once('exit', res));
  await startKubelet('e2e-1', k1.sock, k1.port);
  await new Promise((res) => setTimeout(res, 3000));
  const after1 = live(await pods()).filter((p) => p.spec.nodeName === 'e2e-1');
  assert.deepEqual(
    after1.map((p) => [p.metadata.name, p.status.containerStatuses[0].containerID, p.status.podIP]).sort(),
    before1.sort(),
    'same pods, same containers',
  );
  for (const p of after1) assert.equal(p.status.containerStatuses[0].restartCount, 0);

  // Kill kubelet 2 for good: its node goes NotReady and its pods move to node 1.
  const k2 = kubelets.get('e2e-2')!;
  k2.proc.kill('SIGKILL');
  await waitFor(
    async () => {
      const n = (await request(env.url, 'GET', '/api/v1/nodes/e2e-2')).body;
      return n.status.conditions.find((c: Obj) => c.type === 'Ready')?.status !== 'True';
    },
    20_000,
    'node e2e-2 NotReady',
  );
  await waitFor(
    async () => {
      const l = live(await pods());
      return l.length === 4 && l.every((p) => p.spec.nodeName === 'e2e-1' && ready(p));
    },
    60_000,
    'all 4 pods ready on e2e-1',
  );
});
