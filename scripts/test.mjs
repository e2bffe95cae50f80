// Runs every test: the type check, then node's test runner over every *.test.ts
// in packages/, test/ and bench/ (integration suites start their own etcd).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildAll } from './build.mjs';

const root = new URL('..', import.meta.url).pathname;
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p.slice(root.length));
  }
}
for (const d of ['packages', 'test', 'examples']) {
  try {
    walk(join(root, d));
  } catch {
    // folder absent
  }
}
const filter = process.argv.slice(2);
const selected = filter.length ? files.filter((f) => filter.some((x) => f.includes(x))) : files;
files.sort();

// The compiled components, as `npm run up` runs them (only what changed is compiled again).
await buildAll();

if (!filter.length && !process.env.SKIP_TYPECHECK) {
  console.log('# typecheck: tsc -p tsconfig.json');
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  if (tsc.status !== 0) {
    console.log('# typecheck failed');
    process.exit(tsc.status ?? 1);
  }
  // Format and lint (biome.json); a lint warning fails too.
  console.log('# format and lint: biome ci');
  const lint = spawnSync(join(root, 'node_modules/.bin/biome'), ['ci', '--error-on-warnings', '.'], { cwd: root, stdio: 'inherit' });
  if (lint.status !== 0) {
    console.log('# format or lint failed: `npx biome check --write .` formats and fixes what it can');
    process.exit(lint.status ?? 1);
  }
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const res = spawnSync(
  process.execPath,
  // --test-force-exit: a file whose tests are done ends even if a handle leaked (its after hooks have run), so one leak cannot hang the suite.
  ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...selected.sort()],
  { cwd: root, stdio: 'inherit', env: { ...process.env, KUBELING_INTEGRATION: '1' } },
);
process.exit(res.status ?? 1);
