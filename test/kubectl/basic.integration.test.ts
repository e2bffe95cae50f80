/**
 * The real kubectl against a real apiserver and etcd: create -f (with
 * --validate=false, and with server-side validation through OpenAPI v3), get in
 * its output forms, get -w seeing an update and a delete, delete.
 * Skipped with a message where no kubectl is installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

const bins = kubectlBinaries();
const skip = bins.default ? false : 'kubectl is not installed on this machine';

const MANIFEST = `apiVersion: v1
kind: Namespace
metadata:
  name: story
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: story
data:
  color: blue
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: story
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
`;

describe('real kubectl', { skip }, () => {
  let env: TestEnv;
  let k: Kubectl;
  before(async () => {
    env = await startTestEnv();
    k = new Kubectl(env.url, bins.default!);
  });
  after(async () => {
    k?.cleanup();
    await env?.stop();
  });

  test('create -f with --validate=false, then get, get -o yaml|json|name', async () => {
    const file = k.file('story.yaml', MANIFEST);
    const created = await k.run(['--validate=false', 'create', '-f', file]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /namespace\/story created/);
    assert.match(created.stdout, /configmap\/settings created/);
    assert.match(created.stdout, /deployment.apps\/nginx created/);

    const get = await k.run(['get', 'deployments', '-n', 'story']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE/m);
    assert.match(get.stdout, /^nginx\s+0\/3\s+0\s+0\s+\d+s/m);

    const yaml = await k.run(['get', 'configmap', 'settings', '-n', 'story', '-o', 'yaml']);
    assert.equal(yaml.code, 0, yaml.stderr);
    assert.match(yaml.stdout, /color: blue/);
    assert.match(yaml.stdout, /resourceVersion: "\d+"/);
    assert.match(yaml.stdout, /uid: [0-9a-f-]{36}/);

    const json = await k.run(['get', 'deploy', 'nginx', '-n', 'story', '-o', 'json']);
    const obj = JSON.parse(json.stdout);
    assert.equal(obj.spec.replicas, 3);
    assert.equal(obj.metadata.generation, 1);

    const name = await k.run(['get', 'cm', '-n', 'story', '-o', 'name']);
    assert.match(name.stdout, /^configmap\/settings$/m);

    const again = await k.run(['--validate=false', 'create', '-f', file]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /Error from server \(AlreadyExists\): error when creating ".*story.yaml": namespaces "story" already exists/);
  });

  test('get -w sees a later update and delete', async () => {
    const watch = k.spawn(['get', 'configmaps', '-n', 'story', '-w', '-o', 'name']);
    try {
      await waitFor(() => watch.output().includes('configmap/settings'), 10_000);
      const patch = await k.run(['label', 'configmap', 'settings', '-n', 'story', 'stage=two']);
      assert.equal(patch.code, 0, patch.stderr);
      const del = await k.run(['delete', 'configmap', 'settings', '-n', 'story']);
      assert.equal(del.code, 0, del.stderr);
      assert.match(del.stdout, /configmap "settings" deleted/);
      await waitFor(() => (watch.output().match(/configmap\/settings/g) ?? []).length >= 3, 10_000);
    } finally {
      watch.child.kill('SIGTERM');
    }
  });

  test('create -f validates on the server through OpenAPI v3', async () => {
    const bad = k.file('bad.yaml', MANIFEST.split('---')[2]!.replace('replicas: 3', 'replica: 3'));
    const res = await k.run(['create', '-f', bad]);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /unknown field "spec.replica"/);
    const good = k.file('good.yaml', MANIFEST.split('---')[2]!.replace('name: nginx\n  namespace: story', 'name: nginx2\n  namespace: story'));
    const ok = await k.run(['create', '-f', good]);
    assert.equal(ok.code, 0, ok.stderr);
  });

  test('delete returns NotFound the kubectl way', async () => {
    const del = await k.run(['delete', 'deployment', 'nginx', '-n', 'story']);
    assert.equal(del.code, 0, del.stderr);
    const again = await k.run(['delete', 'deployment', 'nginx', '-n', 'story']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /Error from server \(NotFound\): deployments.apps "nginx" not found/);
  });
});

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
