/**
 * @kubeling/testenv as another project gets it: packed, installed from the
 * tarball into a scratch project outside the repository (with only npm's
 * registry for its dependencies), and the examples' suites run there — the
 * node:test one (two files, one etcd) and the Vitest one. Nothing of either
 * run may stay behind: no keeper, no etcd.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'kubeling-testenv-pkg-'));
let tarball = '';

function run(cmd: string, args: string[], cwd: string, timeoutMs: number) {
  // A clean environment for the scratch project: no workspace conditions, no etcd named by a parent.
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.FORCE_COLOR;
  delete env.KUBELING_ETCD_ENDPOINTS;
  delete env.NODE_OPTIONS;
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

before(() => {
  const r = run(process.execPath, [join(ROOT, 'scripts', 'pack-testenv.mjs'), '--out', work], ROOT, 120_000);
  assert.equal(r.status, 0, r.out);
  tarball = r.out
    .trim()
    .split('\n')
    .find((l) => l.endsWith('.tgz'))!;
  assert.ok(tarball && existsSync(tarball), r.out);
});

after(() => rmSync(work, { recursive: true, force: true }));

/** Copies an example out of the repository and installs the tarball (and the example's own devDependencies). */
function scratch(example: string): string {
  const dir = join(work, example);
  cpSync(join(ROOT, 'examples', example), dir, { recursive: true });
  const r = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], dir, 300_000);
  assert.equal(r.status, 0, r.out);
  return dir;
}

/** The folders a node:test run's keeper keeps (one per runner): none once runs have ended. */
const runnerFolders = () => readdirSync(tmpdir()).filter((n) => n.startsWith('kubeling-testenv-runner-'));

test('the package holds built JavaScript and declarations, and needs nothing of the workspace', () => {
  const dir = scratch('testenv-node-test');
  const pkg = join(dir, 'node_modules', '@kubeling', 'testenv');
  for (const f of ['dist/index.js', 'dist/types/index.d.ts', 'dist/node-test.js', 'dist/vitest.js', 'dist/jest-global-setup.js', 'proto/api.proto'])
    assert.ok(existsSync(join(pkg, f)), f);
  const deps = readdirSync(join(dir, 'node_modules', '@kubeling'));
  assert.deepEqual(deps, ['testenv'], 'no other workspace package is installed');
});

test('a node:test suite: two files, each with a control plane, sharing one etcd', async () => {
  const before = new Set(runnerFolders());
  const dir = join(work, 'testenv-node-test');
  const r = run('npm', ['test'], dir, 240_000);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /# pass 4/);
  assert.match(r.out, /# fail 0/);
  // The keeper stops etcd and removes its folder within moments of the runner's end.
  for (let i = 0; i < 50 && runnerFolders().some((f) => !before.has(f)); i++) await new Promise((res) => setTimeout(res, 100));
  assert.deepEqual(
    runnerFolders().filter((f) => !before.has(f)),
    [],
  );
});

test('a Vitest suite with the global setup', () => {
  const dir = scratch('testenv-vitest');
  const r = run('npm', ['test'], dir, 240_000);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /Tests\s+2 passed/);
});
