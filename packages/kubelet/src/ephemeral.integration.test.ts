/**
 * Ephemeral containers on a kubelet with kubeling's runtime (CRI over gRPC)
 * against a real etcd + apiserver: one added through pods/ephemeralcontainers
 * starts in the running pod's sandbox (its IP, its volumes), reports
 * `status.ephemeralContainerStatuses` (running, then terminated; never ready,
 * never restarted, whatever the pod's restart policy), takes exec and gives its
 * logs through the apiserver, starts even while an init container blocks the
 * pod, and is stopped with the pod.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { RestClient } from '@kubeling/client';
import { serveCri, type CriServer } from '@kubeling/cri';
import { KubelingRuntime } from '@kubeling/runtime';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Kubelet } from './kubelet.js';

type Obj = Record<string, any>;

let env: TestEnv;
let dir: string;
let runtime: KubelingRuntime;
let cri: CriServer;
let kubelet: Kubelet;
let client: RestClient;

const NODE = 'eph-node';
const path = (name: string, sub = '') => `/api/v1/namespaces/default/pods/${name}${sub}`;
const getPod = async (name: string): Promise<Obj> => (await request(env.url, 'GET', path(name))).body;

async function until(name: string, pred: (p: Obj) => boolean, what: string, ms = 20_000): Promise<Obj> {
  let last: Obj = {};
  await waitFor(async () => pred((last = await getPod(name))), ms, `${name}: ${what}`).catch((e) => {
    throw new Error(`${(e as Error).message}; last status ${JSON.stringify(last.status)}`);
  });
  return last;
}

async function createPod(name: string, spec: Obj): Promise<void> {
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { nodeName: NODE, ...spec },
  });
  assert.equal(r.status, 201, r.text);
}

/** Adds an ephemeral container as kubectl debug does (a strategic merge patch of the subresource). */
async function addEphemeral(pod: string, c: Obj): Promise<void> {
  const r = await request(
    env.url,
    'PATCH',
    path(pod, '/ephemeralcontainers'),
    { spec: { ephemeralContainers: [c] } },
    {
      contentType: 'application/strategic-merge-patch+json',
    },
  );
  assert.equal(r.status, 200, r.text);
}

const ephStatus = (p: Obj, name: string): Obj | undefined => (p.status?.ephemeralContainerStatuses as Obj[] | undefined)?.find((s) => s.name === name);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelet-eph-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'rt'), podCIDR: '127.5.9.0/24' });
  const endpoint = `unix://${join(dir, 'rt.sock')}`;
  cri = await serveCri(runtime, endpoint);
  env = await startTestEnv();
  client = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false });
  kubelet = new Kubelet({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    nodeName: NODE,
    runtime: endpoint,
    rootDir: join(dir, NODE),
    port: 0,
    log: pino({ level: 'silent' }),
    statusUpdateMs: 1000,
    leaseRenewMs: 1000,
    plegPeriodMs: 300,
    backoffInitialMs: 500,
    backoffMaxMs: 1000,
  });
  await kubelet.start();
});
after(async () => {
  await kubelet?.stop();
  for (const sb of (await runtime?.listPodSandbox().catch(() => [])) ?? []) await runtime.removePodSandbox(sb.id).catch(() => undefined);
  await runtime?.shutdown();
  cri?.forceShutdown();
  client?.close();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One exec through pods/exec (v5.channel.k8s.io): stdout and the final Status. */
async function exec(pod: string, container: string, command: string[]): Promise<{ out: string; status: Obj | undefined }> {
  const q = new URLSearchParams({ container, stdout: 'true', stderr: 'true' });
  for (const c of command) q.append('command', c);
  const r = { out: '', status: undefined as Obj | undefined };
  const ws = await client.websocket(path(pod, '/exec'), q, ['v5.channel.k8s.io'], (d) => {
    if (d[0] === 1) r.out += d.subarray(1).toString();
    else if (d[0] === 3) r.status = JSON.parse(d.subarray(1).toString());
  });
  if (ws.readyState !== ws.CLOSED) await new Promise<void>((resolve, reject) => ws.on('close', () => resolve()).on('error', reject));
  return r;
}

test("an ephemeral container runs in the pod's sandbox, reports its status, takes exec, and its logs come through pods/log", async () => {
  await createPod('web', {
    volumes: [{ name: 'data', emptyDir: {} }],
    containers: [
      {
        name: 'app',
        image: 'busybox',
        command: ['sh', '-c', 'echo from-app > $KUBELING_ROOT/data/note; sleep 3600'],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
        readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
      },
    ],
  });
  const running = await until(
    'web',
    (p) => p.status?.phase === 'Running' && p.status.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True'),
    'Ready',
  );
  assert.equal(running.status.ephemeralContainerStatuses, undefined);
  await addEphemeral('web', {
    name: 'debugger',
    image: 'busybox',
    targetContainerName: 'app',
    stdin: true,
    command: ['sh', '-c', 'cat $KUBELING_ROOT/data/note; echo "ip=$POD_IP"; exec sleep 3600'],
    volumeMounts: [{ name: 'data', mountPath: '/data' }],
  });
  const p = await until('web', (x) => !!ephStatus(x, 'debugger')?.state?.running, 'the ephemeral container running');
  const st = ephStatus(p, 'debugger')!;
  assert.equal(st.ready, false);
  assert.equal(st.restartCount, 0);
  assert.equal('started' in st, false);
  assert.equal(st.image, 'docker.io/library/busybox:latest');
  assert.match(st.containerID, /^kubeling:\/\/[0-9a-f]{64}$/);
  assert.ok(st.state.running.startedAt);
  // The pod is as it was: Running, Ready, its own container untouched.
  assert.equal(p.status.phase, 'Running');
  assert.deepEqual(
    (p.status.containerStatuses as Obj[]).map((c) => [c.name, c.ready, c.restartCount]),
    [['app', true, 0]],
  );
  assert.equal(p.status.conditions.find((c: Obj) => c.type === 'Ready').status, 'True');
  await waitFor(async () => (await request(env.url, 'GET', `${path('web', '/log')}?container=debugger`)).text.includes('ip='), 10_000, 'the debugger output');
  const logs = await request(env.url, 'GET', `${path('web', '/log')}?container=debugger`);
  assert.equal(logs.status, 200);
  assert.equal(logs.text, `from-app\nip=${p.status.podIP}\n`);
  const r = await exec('web', 'debugger', ['sh', '-c', 'echo exec-in-debugger']);
  assert.deepEqual([r.out, r.status?.status], ['exec-in-debugger\n', 'Success']);
  const evs = (await request(env.url, 'GET', '/api/v1/namespaces/default/events')).body.items as Obj[];
  for (const msg of ['Created container debugger', 'Started container debugger'])
    assert.ok(
      evs.some((e) => e.involvedObject.name === 'web' && e.message === msg),
      msg,
    );
});

test('an ephemeral container that exits is terminated for good, whatever the restart policy', async () => {
  await createPod('always', { containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] });
  await until('always', (p) => p.status?.phase === 'Running', 'Running');
  await addEphemeral('always', { name: 'once', image: 'busybox', command: ['sh', '-c', 'echo bye; exit 3'] });
  const p = await until('always', (x) => !!ephStatus(x, 'once')?.state?.terminated, 'the ephemeral container terminated');
  const t = ephStatus(p, 'once')!.state.terminated;
  assert.deepEqual([t.exitCode, t.reason], [3, 'Error']);
  // Well past the crash back-off, it has not run again.
  await new Promise((r) => setTimeout(r, 2500));
  const later = await getPod('always');
  const st = ephStatus(later, 'once')!;
  assert.equal(st.restartCount, 0);
  assert.equal(st.state.terminated.containerID, t.containerID);
  assert.deepEqual(st.lastState, {});
  assert.equal(later.status.phase, 'Running');
  const instances = (await runtime.listContainers()).filter((c) => c.metadata.name === 'once');
  assert.equal(instances.length, 1);
  assert.equal((await request(env.url, 'GET', `${path('always', '/log')}?container=once`)).text, 'bye\n');
});

test('an ephemeral container starts while an init container holds the pod; deleting the pod stops it', async () => {
  await createPod('stuck', {
    terminationGracePeriodSeconds: 1,
    initContainers: [{ name: 'wait', image: 'busybox', command: ['sleep', '3600'] }],
    containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }],
  });
  const pending = await until('stuck', (x) => x.status?.initContainerStatuses?.[0]?.state?.running, 'the init container running');
  assert.equal(pending.status.phase, 'Pending');
  await addEphemeral('stuck', { name: 'dbg', image: 'busybox', command: ['sleep', '3600'] });
  const p = await until('stuck', (x) => !!ephStatus(x, 'dbg')?.state?.running, 'the ephemeral container running');
  assert.equal(p.status.phase, 'Pending');
  assert.equal(p.status.containerStatuses[0].state.waiting.reason, 'PodInitializing');
  const id = ephStatus(p, 'dbg')!.containerID.replace('kubeling://', '');
  assert.equal((await request(env.url, 'DELETE', path('stuck'))).status, 200);
  await waitFor(async () => (await request(env.url, 'GET', path('stuck'))).status === 404, 15_000, 'the pod to be gone');
  assert.notEqual((await runtime.containerStatus(id).catch(() => ({ state: 'gone' }))).state, 'CONTAINER_RUNNING');
});

test('an ephemeral container whose image cannot be pulled waits with the pull error, and the pod runs on', async () => {
  await createPod('badimg', { containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] });
  await until('badimg', (p) => p.status?.phase === 'Running', 'Running');
  await addEphemeral('badimg', { name: 'nope', image: 'example.invalid/no-such-image:1.0' });
  const p = await until('badimg', (x) => ['ErrImagePull', 'ImagePullBackOff'].includes(ephStatus(x, 'nope')?.state?.waiting?.reason), 'the pull error');
  assert.equal(p.status.phase, 'Running');
});
