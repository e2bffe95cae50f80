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
import { eventually, request, startTestEnv, startTestNode, waitFor, type TestEnv, type TestNode } from '@kubeling/testenv';

let env: TestEnv;
let node: TestNode;
const NODE = 'rc-node';

before(async () => {
  env = await startTestEnv();
  node = await startTestNode({ server: env.url, name: NODE, podCIDR: '127.5.10.0/24' });
});
after(async () => {
  await node?.stop();
  await env?.stop();
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
  const sandboxes = await node.runtime.listPodSandbox({ label_selector: { 'io.kubernetes.pod.uid': c.body.metadata.uid } });
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
