/**
 * The official clients against a kubeling apiserver: @kubernetes/client-node 1.4
 * and Debian's python3-kubernetes list, watch, create, patch and delete, built-in
 * kinds and a custom resource (CustomObjectsApi, DynamicClient).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
  for (const name of ['node-client', 'py-client']) {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  const crd = await request(env.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'foos.clients.example.com' },
    spec: {
      group: 'clients.example.com',
      scope: 'Namespaced',
      names: { plural: 'foos', singular: 'foo', kind: 'Foo' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
        },
      ],
    },
  });
  assert.equal(crd.status, 201, crd.text);
  for (let i = 0; i < 100 && (await request(env.url, 'GET', '/apis/clients.example.com/v1/foos')).status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
});
after(async () => {
  await env?.stop();
});

describe('@kubernetes/client-node', () => {
  const config = () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: env.url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: 'node-client' }],
      currentContext: 'x',
    });
    return kc;
  };

  test('list, create, patch (merge and JSON patch), delete', async () => {
    const kc = config();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const ns = await core.listNamespace();
    assert.ok(ns.items.some((n) => n.metadata?.name === 'default'));
    await core.createNamespacedConfigMap({ namespace: 'node-client', body: { metadata: { name: 'n1' }, data: { a: '1' } } });
    const merged = await core.patchNamespacedConfigMap(
      { name: 'n1', namespace: 'node-client', body: { data: { b: '2' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(merged.data, { a: '1', b: '2' });
    const jp = await core.patchNamespacedConfigMap({ name: 'n1', namespace: 'node-client', body: [{ op: 'remove', path: '/data/a' }] });
    assert.deepEqual(jp.data, { b: '2' });
    await core.deleteNamespacedConfigMap({ name: 'n1', namespace: 'node-client' });
    await assert.rejects(core.readNamespacedConfigMap({ name: 'n1', namespace: 'node-client' }), (e: { code?: number }) => e.code === 404);
  });

  test('watch sees ADDED and DELETED', async () => {
    const kc = config();
    const w = new k8s.Watch(kc);
    const seen: string[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const req = await w.watch(
      '/api/v1/namespaces/node-client/configmaps',
      { allowWatchBookmarks: true },
      (type, obj: k8s.V1ConfigMap) => {
        seen.push(`${type}:${obj.metadata?.name}`);
        if (type === 'DELETED') done();
      },
      () => done(),
    );
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await new Promise((r) => setTimeout(r, 200));
    await core.createNamespacedConfigMap({ namespace: 'node-client', body: { metadata: { name: 'w1' } } });
    await core.deleteNamespacedConfigMap({ name: 'w1', namespace: 'node-client' });
    await Promise.race([finished, new Promise((r) => setTimeout(r, 5000))]);
    req.abort();
    assert.deepEqual(seen, ['ADDED:w1', 'DELETED:w1']);
  });

  test('KubernetesObjectApi maps kinds through legacy discovery: create, read, delete', async () => {
    const kc = config();
    const api = k8s.KubernetesObjectApi.makeApiClient(kc);
    const created = await api.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'obj', namespace: 'node-client' },
      spec: {
        selector: { matchLabels: { app: 'obj' } },
        template: { metadata: { labels: { app: 'obj' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    } as k8s.KubernetesObject);
    assert.equal(created.metadata?.name, 'obj');
    const read = await api.read({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'obj', namespace: 'node-client' } });
    assert.equal((read as k8s.V1Deployment).spec?.replicas, 1);
    await api.delete({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'obj', namespace: 'node-client' } });
  });
});

describe('@kubernetes/client-node CustomObjectsApi', () => {
  test('create, list, watch and patch a custom resource', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: env.url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const where = { group: 'clients.example.com', version: 'v1', namespace: 'node-client', plural: 'foos' };
    const seen: string[] = [];
    let done!: () => void;
    const modified = new Promise<void>((r) => (done = r));
    const req = await new k8s.Watch(kc).watch(
      '/apis/clients.example.com/v1/namespaces/node-client/foos',
      {},
      (type, obj: { metadata: { name: string } }) => {
        seen.push(`${type}:${obj.metadata.name}`);
        if (type === 'MODIFIED') done();
      },
      () => done(),
    );
    await new Promise((r) => setTimeout(r, 200));
    const created = (await api.createNamespacedCustomObject({
      ...where,
      body: { apiVersion: 'clients.example.com/v1', kind: 'Foo', metadata: { name: 'f1' }, spec: { size: 1 } },
    })) as { metadata: { uid: string } };
    assert.ok(created.metadata.uid);
    const list = (await api.listNamespacedCustomObject(where)) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(list.kind, 'FooList');
    assert.deepEqual(
      list.items.map((i) => i.metadata.name),
      ['f1'],
    );
    const patched = (await api.patchNamespacedCustomObject(
      { ...where, name: 'f1', body: { spec: { size: 2 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    )) as { spec: { size: number } };
    assert.equal(patched.spec.size, 2);
    await Promise.race([modified, new Promise((r) => setTimeout(r, 5000))]);
    req.abort();
    assert.deepEqual(seen, ['ADDED:f1', 'MODIFIED:f1']);
  });
});

const python = '/usr/bin/python3';
const hasPython = existsSync(python);
describe('python3-kubernetes', { skip: hasPython ? false : 'Debian python3 is not installed' }, () => {
  test('list, watch, create, patch, scale, delete', async () => {
    const script = fileURLToPath(new URL('./python_client.py', import.meta.url));
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(python, [script, env.url, 'py-client'], { timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, stdout: String(stdout), stderr: String(stderr) }),
      ),
    );
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.deepEqual(out.stdout.trim().split('\n'), ['list ok', 'create ok', 'patch ok', 'scale ok', 'delete ok', 'watch ok']);
  });

  test('DynamicClient: a custom resource found through discovery, created, listed, watched and patched', async () => {
    const script = fileURLToPath(new URL('./python_dynamic.py', import.meta.url));
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(python, [script, env.url, 'py-client'], { timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, stdout: String(stdout), stderr: String(stderr) }),
      ),
    );
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.deepEqual(out.stdout.trim().split('\n'), ['discovery ok', 'create ok', 'list ok', 'patch ok', 'watch ok']);
  });
});
