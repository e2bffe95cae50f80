/**
 * The shape of the tree a newcomer reads: no source file in packages/<p>/src
 * over 500 lines, the request path's central files (HTTP dispatch, server
 * assembly, the generic store, the kubelet's pod manager) under 400, and
 * objects typed with the API kinds rather than `Record<string, any>` aliases.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

const sources = readdirSync(join(ROOT, 'packages')).flatMap((p) => {
  try {
    return files(join(ROOT, 'packages', p, 'src'));
  } catch {
    return [];
  }
});
const lines = (f: string) => readFileSync(f, 'utf8').split('\n').length - 1;

test('no file in packages/*/src is over 500 lines', () => {
  const long = sources.filter((f) => lines(f) > 500).map((f) => `${relative(ROOT, f)}: ${lines(f)}`);
  assert.deepEqual(long, []);
});

test('dispatch, server, store and the pod manager are under 400 lines', () => {
  for (const f of ['apiserver/src/http/resource-handler.ts', 'apiserver/src/server.ts', 'apiserver/src/registry/store.ts', 'kubelet/src/pods.ts']) {
    assert.ok(lines(join(ROOT, 'packages', f)) < 400, `${f}: ${lines(join(ROOT, 'packages', f))} lines`);
  }
});

test('no Record<string, any> object aliases in component sources', () => {
  const alias = /\btype\s+\w+\s*=\s*Record<string,\s*any>/;
  const found = sources.filter((f) => !f.endsWith('.test.ts') && alias.test(readFileSync(f, 'utf8'))).map((f) => relative(ROOT, f));
  assert.deepEqual(found, []);
});
