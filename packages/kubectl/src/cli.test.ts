import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columns, parseArgs, validateManifest } from './cli.js';

test('flags in every spelling; unknown flags are usage errors', () => {
  const { g, args } = parseArgs(['get', 'pods', '-n', 'kube-system', '--selector=app=web', '-o', 'wide', '-A', '--kubeconfig=/x', '-f', 'a.yaml', '--filename=b.yaml']);
  assert.deepEqual(args, ['get', 'pods']);
  assert.equal(g.namespace, 'kube-system');
  assert.equal(g.selector, 'app=web');
  assert.equal(g.output, 'wide');
  assert.equal(g.allNamespaces, true);
  assert.equal(g.kubeconfig, '/x');
  assert.deepEqual(g.filenames, ['a.yaml', 'b.yaml']);
  assert.throws(() => parseArgs(['get', '--bogus']), /unknown flag: --bogus/);
  assert.throws(() => parseArgs(['get', '-n']), /flag needs an argument: -n/);
});

test('columns pad like kubectl (three spaces), the last column unpadded', () => {
  assert.equal(columns([['NAME', 'READY'], ['web-1', '1/1']]), 'NAME    READY\nweb-1   1/1\n');
});

test('client-side validation: kind, apiVersion, names, negative replicas', () => {
  assert.throws(() => validateManifest({ kind: 'Pod', metadata: { name: 'x' } }, 'f.yaml'), /apiVersion not set/);
  assert.throws(() => validateManifest({ apiVersion: 'v1', metadata: { name: 'x' } }, 'f.yaml'), /kind not set/);
  assert.throws(() => validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' } }, 'f.yaml'), /metadata\.name: Invalid value: "Bad_Name"/);
  assert.throws(() => validateManifest({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: -1 } }, 'f.yaml'), /spec\.replicas: Invalid value: -1/);
  validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ok' } }, 'f.yaml');
});
