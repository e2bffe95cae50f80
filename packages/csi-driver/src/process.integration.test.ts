/**
 * `kubeling-csi-driver` as a process against a real etcd and apiserver: it
 * offers the registration socket the kubelet's plugin watcher dials (GetInfo
 * as node-driver-registrar answers it, NotifyRegistrationStatus accepted),
 * provisions a claim selected on its node, and on SIGTERM exits 0 having
 * removed both of its sockets. Bad flags stop it with the reason.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RegistrationClient } from '@kubeling/csi';
import { eventually, nodeArgs, packageMain, request, startTestEnv, stopChild, type TestEnv } from '@kubeling/testenv';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const DRIVER = 'hostpath.csi.kubeling.io';

let env: TestEnv;
let dir: string;
const children: ChildProcess[] = [];

before(async () => {
  env = await startTestEnv();
  dir = mkdtempSync(join(tmpdir(), 'csip-'));
  writeFileSync(
    join(dir, 'kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: test, cluster: {server: "${env.url}"}}]`,
      'users: [{name: csi, user: {}}]',
      'contexts: [{name: test, context: {cluster: test, user: csi}}]',
      'current-context: test',
      '',
    ].join('\n'),
  );
  await request(env.url, 'POST', '/apis/storage.k8s.io/v1/storageclasses', {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'local' },
    provisioner: DRIVER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
});

after(async () => {
  for (const c of children) await stopChild(c);
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const flags = (extra: string[] = []) => [
  `--kubeconfig=${join(dir, 'kubeconfig')}`,
  '--node-id=p1',
  `--driver-name=${DRIVER}`,
  `--endpoint=unix://${join(dir, 'csi.sock')}`,
  `--state-dir=${join(dir, 'state')}`,
  '--capacity=4Gi',
  `--registration-dir=${join(dir, 'registry')}`,
  '--log-level=warn',
  ...extra,
];

test('registers on the registration socket, provisions, and stops cleanly on SIGTERM', async () => {
  const child = spawn(process.execPath, nodeArgs(packageMain('csi-driver'), flags()), { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  const regSocket = join(dir, 'registry', `${DRIVER}-reg.sock`);
  await eventually(async () => existsSync(regSocket), 30_000);
  const reg = new RegistrationClient(regSocket);
  try {
    assert.deepEqual(await reg.getInfo(), { type: 'CSIPlugin', name: DRIVER, endpoint: join(dir, 'csi.sock'), supported_versions: ['1.0.0'] });
    await reg.notifyRegistrationStatus({ plugin_registered: true, error: '' });
  } finally {
    reg.close();
  }

  const claim = await request(env.url, 'POST', '/api/v1/namespaces/default/persistentvolumeclaims', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'p', annotations: { 'volume.kubernetes.io/storage-provisioner': DRIVER, 'volume.kubernetes.io/selected-node': 'p1' } },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '1Gi' } } },
  });
  assert.equal(claim.status, 201);
  const pv = await eventually(async () => {
    const r = await request(env.url, 'GET', `/api/v1/persistentvolumes/pvc-${claim.body.metadata.uid}`);
    return r.status === 200 && r.body;
  }, 20_000);
  assert.equal(pv.spec.csi.driver, DRIVER);
  assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions, [
    { key: 'topology.hostpath.kubeling.io/node', operator: 'In', values: ['p1'] },
  ]);

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.equal(existsSync(regSocket), false, 'the registration socket is removed');
  assert.equal(existsSync(join(dir, 'csi.sock')), false, 'the driver socket is removed');
});

test('missing or bad flags stop the process with the reason', () => {
  const run = (args: string[]) => spawnSync(process.execPath, nodeArgs(packageMain('csi-driver'), args), { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  const noNode = run(flags().filter((f) => !f.startsWith('--node-id')));
  assert.equal(noNode.status, 1);
  assert.match(noNode.stderr, /--node-id is required/);
  const badCap = run(flags(['--capacity=lots']));
  assert.equal(badCap.status, 1);
  assert.match(badCap.stderr, /capacity/);
});
