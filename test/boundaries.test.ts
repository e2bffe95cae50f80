/**
 * Import boundaries: the components talk to each other only through the API
 * (and the kubelet to its runtime only through CRI), so no component's source
 * imports another component, the apiserver, or the test environment; and only
 * the apiserver's storage speaks to etcd. Tests and benchmarks may use
 * anything: they are where components meet.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const COMPONENTS = ['apiserver', 'controller-manager', 'scheduler', 'kubelet', 'proxy', 'kubectl', 'runtime', 'metrics-server', 'csi-driver', 'dns'];

/** The non-test TypeScript sources below `dir`. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** The modules a source imports (static and dynamic imports, re-exports). */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g,
  )) {
    out.push((m[1] ?? m[2] ?? m[3])!);
  }
  return out;
}

const packageOf = (spec: string) => /^@kubeling\/([^/]+)/.exec(spec)?.[1];

test('no component imports another component, or the test environment', () => {
  const bad: string[] = [];
  for (const c of COMPONENTS) {
    for (const file of sources(join(ROOT, 'packages', c, 'src'))) {
      for (const spec of imports(file)) {
        const p = packageOf(spec);
        if (p && p !== c && (COMPONENTS.includes(p) || p === 'testenv')) bad.push(`${relative(ROOT, file)} imports ${spec}`);
      }
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'packages', c, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      const p = packageOf(dep);
      if (p && p !== c && (COMPONENTS.includes(p) || p === 'testenv')) bad.push(`packages/${c}/package.json depends on ${dep}`);
    }
  }
  assert.deepEqual(bad, []);
});

test('only the apiserver storage imports etcd3', () => {
  const bad: string[] = [];
  const storage = join(ROOT, 'packages', 'apiserver', 'src', 'storage');
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    for (const file of sources(join(ROOT, 'packages', pkg, 'src'))) {
      if (file.startsWith(storage + '/')) continue;
      if (imports(file).some((s) => s === 'etcd3' || s.startsWith('etcd3/'))) bad.push(relative(ROOT, file));
    }
  }
  for (const file of sources(join(ROOT, 'scripts'))) if (imports(file).includes('etcd3')) bad.push(relative(ROOT, file));
  assert.deepEqual(bad, []);
});

test('the import reader sees the forms of import there are', () => {
  // A check that reads nothing would pass whatever the tree holds.
  const kubelet = sources(join(ROOT, 'packages', 'kubelet', 'src')).flatMap(imports);
  assert.ok(kubelet.includes('@kubeling/cri'));
  assert.ok(kubelet.includes('@kubeling/client'));
  const etcd = imports(join(ROOT, 'packages', 'apiserver', 'src', 'storage', 'etcd.ts'));
  assert.ok(etcd.includes('etcd3'));
});
