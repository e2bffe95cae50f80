import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigPaths, loadKubeConfig, resolveClientConfig } from './kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kc-'));
const file = (name: string, server: string, ctx = 'c', ns = 'default', token?: string) => {
  const p = join(dir, name);
  writeFileSync(
    p,
    `apiVersion: v1
kind: Config
clusters:
- name: ${ctx}
  cluster: {server: ${server}}
users:
- name: ${ctx}
  user: {${token ? `token: ${token}` : ''}}
contexts:
- name: ${ctx}
  context: {cluster: ${ctx}, user: ${ctx}, namespace: ${ns}}
current-context: ${ctx}
`,
  );
  return p;
};
const a = file('a', 'https://a.example:6443', 'ctx-a', 'ns-a', 'tok-a');
const b = file('b', 'https://b.example:6443', 'ctx-b', 'ns-b');
const home = join(dir, 'home');
mkdirSync(join(home, '.kube'), { recursive: true });
file(join('home', '.kube', 'config'), 'https://home.example:6443', 'ctx-home');

test('--kubeconfig wins over $KUBECONFIG, which wins over ~/.kube/config', () => {
  assert.deepEqual(kubeconfigPaths({ explicitPath: a, env: { KUBECONFIG: b, HOME: home } }), [a]);
  assert.deepEqual(kubeconfigPaths({ env: { KUBECONFIG: `${b}:${a}`, HOME: home } }), [b, a]);
  assert.deepEqual(kubeconfigPaths({ env: { HOME: home } }), [join(home, '.kube', 'config')]);
  assert.equal(resolveClientConfig(loadKubeConfig({ env: { HOME: home } })).server, 'https://home.example:6443');
});

test('$KUBECONFIG lists merge: the first file to set a value wins', () => {
  const kc = loadKubeConfig({ env: { KUBECONFIG: `${b}:${a}` } });
  assert.equal(kc['current-context'], 'ctx-b');
  assert.equal(kc.contexts.length, 2);
  const cfg = resolveClientConfig(kc);
  assert.equal(cfg.server, 'https://b.example:6443');
  assert.equal(cfg.namespace, 'ns-b');
  const other = resolveClientConfig(kc, { context: 'ctx-a' });
  assert.equal(other.server, 'https://a.example:6443');
  assert.equal(other.token, 'tok-a');
});

test('overrides: --server, --namespace, --token; unknown context is an error', () => {
  const kc = loadKubeConfig({ explicitPath: a });
  const cfg = resolveClientConfig(kc, { server: 'https://x:1', namespace: 'y', token: 't' });
  assert.equal(cfg.server, 'https://x:1');
  assert.equal(cfg.namespace, 'y');
  assert.equal(cfg.token, 't');
  assert.throws(() => resolveClientConfig(kc, { context: 'nope' }), /context was not found/);
  assert.throws(() => loadKubeConfig({ explicitPath: join(dir, 'missing') }), /no such file/);
});
