// Compiles the TypeScript that runs as processes into JavaScript, so that
// `npm run up`, compose and the benchmarks start plain `node` instead of
// compiling every module through tsx at each start.
//
// Each file is transpiled on its own (esbuild, no bundling): packages/<p>/src/x.ts
// becomes packages/<p>/dist/x.js, so paths computed from import.meta.url
// (the CRI proto, built-in images) resolve as they do from src/. Workspace
// packages point at dist/ under the export condition `kubeling-dist`:
//   node --conditions=kubeling-dist packages/apiserver/dist/main.js
// Without that condition they resolve to src/, which tests and tsx use.
//
// Type errors are the typecheck's business (`tsc`), not this step's. A tree
// whose sources are older than its last build is not built again.
import { readdirSync, statSync, writeFileSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;

/** The folders whose sources are compiled: [source folder, output folder]. */
function units() {
  const out = [];
  for (const p of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', p, 'src');
    if (existsSync(src)) out.push([src, join(root, 'packages', p, 'dist')]);
  }
  out.push([join(root, 'scripts'), join(root, 'scripts', 'dist')]);
  out.push([join(root, 'bench'), join(root, 'bench', 'dist')]);
  return out;
}

function sources(dir, acc = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'dist' || name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) sources(p, acc);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) acc.push([p, st.mtimeMs]);
  }
  return acc;
}

/** Builds what changed; returns the number of folders compiled. */
export async function buildAll({ force = false } = {}) {
  let built = 0;
  for (const [src, out] of units()) {
    const files = sources(src);
    if (!files.length) continue;
    const stamp = join(out, '.stamp');
    // The stamp records the newest source time and the file list: a deleted or renamed file rebuilds too.
    const want = JSON.stringify({ newest: Math.max(...files.map(([, m]) => m)), files: files.map(([p]) => relative(src, p)).sort() });
    if (!force && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) continue;
    rmSync(out, { recursive: true, force: true });
    await build({
      entryPoints: files.map(([p]) => p),
      outdir: out,
      outbase: src,
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    writeFileSync(stamp, want);
    built++;
  }
  return built;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const n = await buildAll({ force: process.argv.includes('--force') });
  if (n) console.error(`build: compiled ${n} folder(s) in ${Math.round(performance.now() - t0)} ms`);
}
