/**
 * RuntimeClass at the kubelet, with kubeling's runtime over CRI against a real
 * etcd + apiserver: a pod whose class names the runtime's handler runs, its
 * sandbox made with that handler; a class whose handler the runtime lacks fails
 * sandbox creation (a FailedCreatePodSandBox event, the pod left pending), as
 * with containerd. (The apiserver's RuntimeClass admission refuses pods naming
 * a class that does not exist; see the apiserver's tests.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { serveCri, type CriServer } from '@kubeling/cri';
import { KubelingRuntime } from '@kubeling/runtime';
import { eventually, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Kubelet } from './kubelet.js';

let env: TestEnv;
let dir: string;
let runtime: KubelingRuntime;
let cri: CriServer;
let kubelet: Kubelet;
const NODE = 'rc-node';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelet-rc-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'rt'), podCIDR: '127.5.10.0/24' });
  const endpoint = `unix://${join(dir, 'rt.sock')}`;
  cri = await serveCri(runtime, endpoint);
  env = await startTestEnv();
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
  });
  await kubelet.start();
});
after(async () => {
  await kubelet?.stop();
  for (const sb of (await runtime?.listPodSandbox().catch(() => [])) ?? []) await runtime.removePodSandbox(sb.id).catch(() => undefined);
  await runtime?.shutdown();
  cri?.forceShutdown();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const runtimeClass = (name: string, handler: string) => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler });
const pod = (name: string, runtimeClassName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName: NODE, runtimeClassName, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '60'] }] },
});

test('a pod of a RuntimeClass runs in a sandbox of its handler', async () => {
  assert.equal((await request(env.url, 'POST', '/apis/node.k8s.io/v1/runtimeclasses', runtimeClass('native', 'kubeling'))).status, 201);
  const c = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('native-pod', 'native'));
  assert.equal(c.status, 201, c.text);
  await waitFor(async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/native-pod')).body.status?.phase === 'Running', 20_000, 'running');
  const sandboxes = await runtime.listPodSandbox({ label_selector: { 'io.kubernetes.pod.uid': c.body.metadata.uid } });
  assert.equal(sandboxes.length, 1);
  assert.equal(sandboxes[0]!.runtime_handler, 'kubeling');
});

test('a handler the runtime lacks fails sandbox creation: FailedCreatePodSandBox, the pod pending', async () => {
  assert.equal((await request(env.url, 'POST', '/apis/node.k8s.io/v1/runtimeclasses', runtimeClass('gvisor', 'runsc'))).status, 201);
  const c = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod('sandboxed', 'gvisor'));
  assert.equal(c.status, 201, c.text);
  const ev = await eventually(async () => {
    const list = (await request(env.url, 'GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dsandboxed')).body.items as any[];
    return list.find((e) => e.reason === 'FailedCreatePodSandBox');
  });
  assert.match(ev.message, /^Failed to create pod sandbox: .*no runtime for "runsc" is configured/);
  assert.equal(ev.type, 'Warning');
  const p = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/sandboxed')).body;
  assert.equal(p.status?.phase ?? 'Pending', 'Pending');
});
