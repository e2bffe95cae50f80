/**
 * What a pod's processes see on kubeling's runtime when it runs as root, as
 * the conformance suite looks at it: the pod's hostname and /etc/hosts at
 * their real paths; the security context's user, group, fsGroup and
 * supplementary groups; secret and configMap files with their modes and the
 * fsGroup's ownership; an emptyDir any user may write; a read-only root; and
 * runAsNonRoot refusing a container that would run as root, with upstream's
 * message.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, startTestNode, waitFor, type TestEnv, type TestNode } from '@kubeling/testenv';

const NODE = 'iso-node';
let env: TestEnv;
let node: TestNode;

before(async () => {
  env = await startTestEnv();
  node = await startTestNode({ server: env.url, name: NODE, podCIDR: '127.5.41.0/24' });
});

after(async () => {
  await node?.stop();
  await env?.stop();
});

async function post(path: string, body: object): Promise<void> {
  const r = await request(env.url, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
}

async function logOf(pod: string): Promise<string> {
  let log = '';
  await waitFor(
    async () => {
      log = (await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${pod}/log`)).text;
      return log.includes('== done');
    },
    60_000,
    `${pod} to finish`,
  ).catch(async (e) => {
    const p = (await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${pod}`)).text;
    throw new Error(`${(e as Error).message}\nlog: ${log}\npod: ${p}`);
  });
  return log;
}

test('a pod as a non-root user with fsGroup: its identity, hostname, hosts file, volume modes and owners, a read-only root', {
  timeout: 120_000,
}, async (t) => {
  if (!node.runtime.isolated) return t.skip('pods are isolated only when the runtime is root');
  await post('/api/v1/namespaces/default/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds' },
    data: { 'data-1': Buffer.from('value-1').toString('base64') },
  });
  await post('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf' }, data: { a: 'alpha' } });
  const script = [
    'echo "== id $(id -u) $(id -g) $(id -G)"',
    'echo "== hostname $(hostname)"',
    'grep -c "iso-pod" /etc/hosts | sed "s/^/== hosts /"',
    'echo "== secret $(stat -c "%a %g" /etc/secret/..data/data-1) $(cat /etc/secret/data-1)"',
    'echo "== conf $(stat -c "%a" /etc/conf/..data/path/to/a) $(cat /etc/conf/path/to/a)"',
    'echo "== scratch $(stat -c "%a %g" /scratch)"',
    'echo made > /scratch/f && echo "== scratch-file $(stat -c "%u %g" /scratch/f)"',
    '(touch /root-file 2>/dev/null && echo "== root writable") || echo "== root read-only"',
    'echo "== done"',
  ].join('; ');
  await post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'iso-pod' },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Never',
      securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000] },
      volumes: [
        { name: 'secret', secret: { secretName: 'creds', defaultMode: 0o440 } },
        { name: 'conf', configMap: { name: 'conf', items: [{ key: 'a', path: 'path/to/a', mode: 0o400 }] } },
        { name: 'scratch', emptyDir: {} },
      ],
      containers: [
        {
          name: 'c',
          image: 'busybox',
          command: ['sh', '-c', script],
          securityContext: { readOnlyRootFilesystem: true },
          volumeMounts: [
            { name: 'secret', mountPath: '/etc/secret' },
            { name: 'conf', mountPath: '/etc/conf' },
            { name: 'scratch', mountPath: '/scratch' },
          ],
        },
      ],
    },
  });
  const lines = (await logOf('iso-pod')).split('\n').filter((l) => l.startsWith('== '));
  assert.deepEqual(lines, [
    '== id 1000 3000 3000 2000 4000',
    '== hostname iso-pod',
    '== hosts 1',
    '== secret 440 2000 value-1',
    '== conf 440 alpha',
    '== scratch 2777 2000',
    '== scratch-file 1000 2000',
    '== root read-only',
    '== done',
  ]);
});

test('runAsNonRoot: a container that would run as root is not created, with upstream reason and message', { timeout: 60_000 }, async () => {
  await post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'nonroot' },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true },
      containers: [{ name: 'c', image: 'busybox', command: ['true'] }],
    },
  });
  let waiting: { reason?: string; message?: string } | undefined;
  await waitFor(
    async () => {
      const pod = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/nonroot')).body;
      waiting = pod.status?.containerStatuses?.[0]?.state?.waiting;
      return waiting?.reason === 'CreateContainerConfigError';
    },
    30_000,
    'CreateContainerConfigError',
  );
  const uid = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/nonroot')).body.metadata.uid;
  assert.equal(waiting?.message, `container has runAsNonRoot and image will run as root (pod: "nonroot_default(${uid})", container: c)`);
});
