/**
 * activeDeadlineSeconds and termination messages on kubeling's runtime: a
 * pod past its deadline is stopped and fails with DeadlineExceeded; a
 * container's termination message comes from the file mounted at its
 * terminationMessagePath, or from its log's tail with FallbackToLogsOnError;
 * a pod asking for a host port another holds is rejected.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, startTestNode, waitFor, type TestEnv, type TestNode } from '@kubeling/testenv';

let env: TestEnv;
let node: TestNode;
const NODE = 'dl-node';

before(async () => {
  env = await startTestEnv();
  node = await startTestNode({ server: env.url, name: NODE, podCIDR: '127.5.11.0/24' });
});
after(async () => {
  await node?.stop();
  await env?.stop();
});

const pods = '/api/v1/namespaces/default/pods';
const pod = async (name: string) => (await request(env.url, 'GET', `${pods}/${name}`)).body;

test('a pod past its activeDeadlineSeconds is stopped and fails with DeadlineExceeded', async () => {
  const c = await request(env.url, 'POST', pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'deadline' },
    spec: { nodeName: NODE, activeDeadlineSeconds: 2, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] },
  });
  assert.equal(c.status, 201, c.text);
  await waitFor(async () => (await pod('deadline')).status?.phase === 'Running', 20_000, 'the pod to run');
  await waitFor(async () => (await pod('deadline')).status?.phase === 'Failed', 20_000, 'the deadline to fail the pod');
  const p = await pod('deadline');
  assert.equal(p.status.reason, 'DeadlineExceeded');
  assert.equal(p.status.message, 'Pod was active on the node longer than the specified deadline');
  assert.ok(p.status.containerStatuses[0].state.terminated, 'its container was stopped');
  const events = (await request(env.url, 'GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Ddeadline')).body.items as {
    reason: string;
  }[];
  assert.ok(events.some((e) => e.reason === 'DeadlineExceeded'));
});

test('termination messages: the file at terminationMessagePath, or the log tail with FallbackToLogsOnError', async () => {
  const c = await request(env.url, 'POST', pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'messages' },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Never',
      containers: [
        // Here a container's root is its working directory: /dev/termination-log is dev/termination-log.
        { name: 'file', image: 'busybox', command: ['sh', '-c', 'printf done > dev/termination-log'] },
        { name: 'custom', image: 'busybox', terminationMessagePath: '/tmp/why', command: ['sh', '-c', 'printf custom > tmp/why; exit 2'] },
        { name: 'logs', image: 'busybox', terminationMessagePolicy: 'FallbackToLogsOnError', command: ['sh', '-c', 'echo first; echo last words; exit 1'] },
        { name: 'ok-logs', image: 'busybox', terminationMessagePolicy: 'FallbackToLogsOnError', command: ['sh', '-c', 'echo fine'] },
        // A last line without a newline is read back without one.
        { name: 'no-newline', image: 'busybox', terminationMessagePolicy: 'FallbackToLogsOnError', command: ['sh', '-c', 'printf DONE; exit 1'] },
      ],
    },
  });
  assert.equal(c.status, 201, c.text);
  await waitFor(async () => ['Failed', 'Succeeded'].includes((await pod('messages')).status?.phase), 30_000, 'the pod to finish');
  const byName = Object.fromEntries(
    ((await pod('messages')).status.containerStatuses as { name: string; state: { terminated: { message?: string; exitCode: number } } }[]).map((s) => [
      s.name,
      s.state.terminated,
    ]),
  );
  assert.equal(byName.file?.message, 'done');
  assert.deepEqual([byName.custom?.exitCode, byName.custom?.message], [2, 'custom']);
  assert.equal(byName.logs?.message, 'first\nlast words\n');
  assert.equal(byName['ok-logs']?.message, undefined, 'no fallback for a container that succeeded');
  assert.equal(byName['no-newline']?.message, 'DONE');
  // The log as a reader gets it: output that ends without a newline, kept as it is.
  const log = await request(env.url, 'GET', `${pods}/messages/log?container=no-newline`);
  assert.equal(log.text, 'DONE');
  assert.equal((await request(env.url, 'GET', `${pods}/messages/log?container=logs`)).text, 'first\nlast words\n');
});

test('a pod asking for a host port another pod on the node holds is rejected (NodePorts)', async () => {
  const withPort = (name: string, hostIP?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      nodeName: NODE,
      containers: [
        { name: 'c', image: 'busybox', command: ['sleep', '3600'], ports: [{ containerPort: 21017, hostPort: 21017, ...(hostIP ? { hostIP } : {}) }] },
      ],
    },
  });
  assert.equal((await request(env.url, 'POST', pods, withPort('port-holder'))).status, 201);
  await waitFor(async () => (await pod('port-holder')).status?.phase === 'Running', 20_000, 'the first pod to run');
  assert.equal((await request(env.url, 'POST', pods, withPort('port-taker', '127.0.0.5'))).status, 201);
  await waitFor(async () => (await pod('port-taker')).status?.phase === 'Failed', 20_000, 'the second pod to be rejected');
  const p = await pod('port-taker');
  assert.equal(p.status.reason, 'NodePorts');
  assert.equal(p.status.message, "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports");
  await request(env.url, 'DELETE', `${pods}/port-holder?gracePeriodSeconds=0`);
});

test("admission reads the Node as the API has it: a label set on it after registration lets a pod's nodeSelector match", async () => {
  const patched = await request(
    env.url,
    'PATCH',
    `/api/v1/nodes/${NODE}`,
    { metadata: { labels: { color: 'blue' } } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  // The kubelet's watch of its Node carries the label in well under a second.
  await new Promise((r) => setTimeout(r, 1000));
  const c = await request(env.url, 'POST', pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'blue-only' },
    spec: { nodeName: NODE, nodeSelector: { color: 'blue' }, containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] },
  });
  assert.equal(c.status, 201, c.text);
  await waitFor(async () => ['Running', 'Failed'].includes((await pod('blue-only')).status?.phase), 20_000, 'the pod to be admitted or rejected');
  assert.equal((await pod('blue-only')).status.phase, 'Running', JSON.stringify((await pod('blue-only')).status));
  await request(env.url, 'DELETE', `${pods}/blue-only?gracePeriodSeconds=0`);
});
