/**
 * `kubectl drain` with the real kubectl against a whole cluster: two nodes
 * (kubeling's runtime and a kubelet each, as processes), the controller-manager
 * (deployment, replicaset, daemonset, disruption, garbage collector) and the
 * scheduler, over a real etcd and apiserver.
 *
 * cordon and uncordon set and clear spec.unschedulable. A 3-replica Deployment
 * with an emptyDir volume runs on one node, guarded by a PodDisruptionBudget
 * with minAvailable 2; a DaemonSet runs on both. Draining the node cordons it,
 * leaves the DaemonSet's pod, and evicts the Deployment's pods one at a time:
 * the first eviction is granted, the next ones answered 429 until the
 * replacement on the other node is ready; the drain then completes with the
 * budget never broken.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, Kubectl, kubectlBinaries, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes, startControlPlane, type ControlPlane } from './cluster.js';

interface PodView {
  metadata: { name: string; deletionTimestamp?: string; ownerReferences?: { kind: string }[] };
  spec: { nodeName?: string };
  status?: { conditions?: { type: string; status: string }[] };
}

let env: TestEnv;
let dir: string;
let plane: ControlPlane;
const procs = new Processes();
const kubectlBin = kubectlBinaries().default;

before(async () => {
  if (!kubectlBin) return;
  dir = mkdtempSync(join(tmpdir(), 'e2e-drain-'));
  env = await startTestEnv();
  plane = await startControlPlane(env, ['deployment', 'replicaset', 'daemonset', 'disruption', 'garbagecollector']);
  for (const [i, node] of ['drain-1', 'drain-2'].entries()) {
    const sock = await procs.runtime(dir, node, `127.7.${i + 1}.0/24`);
    await procs.kubelet(env, dir, node, sock, await freePort(), ['--capacity=cpu=4,memory=8Gi']);
  }
});
after(async () => {
  await procs.stop();
  await plane?.stop();
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const pods = async (selector: string): Promise<PodView[]> =>
  ((await request(env.url, 'GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(selector)}`)).body.items as PodView[]).filter(
    (p) => !p.metadata.deletionTimestamp,
  );
const ready = (p: PodView) => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
const unschedulable = async (node: string) => (await request(env.url, 'GET', `/api/v1/nodes/${node}`)).body.spec?.unschedulable === true;

test('kubectl cordon/uncordon, and drain --ignore-daemonsets --delete-emptydir-data honouring a PodDisruptionBudget', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const k = new Kubectl(env.url, kubectlBin!, { namespace: 'default' });
  try {
    await waitFor(async () => (await request(env.url, 'GET', '/api/v1/nodes')).body.items.length === 2, 30_000, 'two nodes');
    // Everything starts on drain-1: drain-2 is cordoned meanwhile.
    const cordon = await k.run(['cordon', 'drain-2']);
    assert.equal(cordon.code, 0, cordon.stderr);
    assert.equal(cordon.stdout, 'node/drain-2 cordoned\n');
    assert.equal(await unschedulable('drain-2'), true);
    const f = k.file(
      'app.yaml',
      `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: registry.k8s.io/pause:3.9
        volumeMounts: [{name: scratch, mountPath: /scratch}]
      volumes: [{name: scratch, emptyDir: {}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: c, image: registry.k8s.io/pause:3.9}]
`,
    );
    const applied = await k.run(['apply', '-f', f]);
    assert.equal(applied.code, 0, applied.stderr);
    await waitFor(async () => (await pods('app=web')).filter(ready).length === 3, 60_000, '3 ready web pods');
    assert.deepEqual([...new Set((await pods('app=web')).map((p) => p.spec.nodeName))], ['drain-1']);
    await waitFor(
      async () => (await request(env.url, 'GET', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).body.status?.disruptionsAllowed === 1,
      20_000,
      'the budget to allow one disruption',
    );
    const uncordon = await k.run(['uncordon', 'drain-2']);
    assert.equal(uncordon.code, 0, uncordon.stderr);
    assert.equal(uncordon.stdout, 'node/drain-2 uncordoned\n');
    assert.equal(await unschedulable('drain-2'), false);
    await waitFor(async () => (await pods('app=agent')).filter(ready).length === 2, 60_000, 'the DaemonSet on both nodes');

    // While the drain runs, the budget must never be broken: at least 2 web pods ready at every look.
    let minReady = 3;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        minReady = Math.min(minReady, (await pods('app=web')).filter(ready).length);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const t0 = Date.now();
    const drain = await k.run(['drain', 'drain-1', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=120s'], { timeoutMs: 150_000 });
    const drainMs = Date.now() - t0;
    watching = false;
    await watcher;
    assert.equal(drain.code, 0, drain.stderr + drain.stdout);
    assert.match(drain.stdout, /node\/drain-1 cordoned/);
    assert.match(drain.stderr, /Warning: ignoring DaemonSet-managed Pods: default\/agent-/);
    assert.match(drain.stdout, /evicting pod default\/web-/);
    assert.match(drain.stdout, /node\/drain-1 drained/);
    // kubectl reports each refusal and retries it 5 s later.
    assert.match(
      drain.stderr,
      /error when evicting pods\/"web-[^"]+" -n "default" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\./,
    );
    assert.ok(minReady >= 2, `the budget held: at least ${minReady} ready pods throughout`);
    assert.equal(await unschedulable('drain-1'), true);
    // The drain ends once the last evicted pod is gone; its replacement may still be starting.
    await waitFor(async () => (await pods('app=web')).filter(ready).length === 3, 30_000, 'the Deployment whole again');
    assert.deepEqual([...new Set((await pods('app=web')).map((p) => p.spec.nodeName))], ['drain-2']);
    // The DaemonSet's pod stays on the drained node.
    assert.ok((await pods('app=agent')).some((p) => p.spec.nodeName === 'drain-1'));
    console.log(`# drain took ${drainMs} ms`);
  } finally {
    k.cleanup();
  }
});
