// Packs @kubeling/testenv as a package other projects install:
//
//   node scripts/pack-testenv.mjs [--out DIR]      → DIR/kubeling-testenv-<version>.tgz (DIR: .kubeling/pack)
//
// The package is built JavaScript with its own type declarations; nothing of
// the workspace is needed by whoever installs it:
// - esbuild bundles the public entry points (the API and the runner adapters)
//   with the workspace code they reach, in shared chunks so that the adapters
//   and the API hold one etcd between them; third-party packages stay imports
//   and become the package's dependencies, at the versions installed here;
// - tsc writes the declarations of the public folder, whose types stand alone
//   (the pack fails if one of them names a workspace package);
// - the files the code finds beside itself (the CRI proto, the built-in nginx
//   image) are copied to where the chunks look for them.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({ options: { out: { type: 'string', default: join(root, '.kubeling', 'pack') } } });
const pkgDir = join(root, 'packages', 'testenv');
const publicDir = join(pkgDir, 'src', 'control-plane');
const source = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));

/** Public entry points: output name → source. */
const ENTRIES = {
  index: join(publicDir, 'index.ts'),
  'node-test': join(publicDir, 'adapters', 'node-test.ts'),
  vitest: join(publicDir, 'adapters', 'vitest.ts'),
  'jest-global-setup': join(publicDir, 'adapters', 'jest-global-setup.ts'),
  'jest-global-teardown': join(publicDir, 'adapters', 'jest-global-teardown.ts'),
};

/** Bundled beside them but not exported: the process that keeps a node:test run's etcd. */
const INTERNAL = { keeper: join(publicDir, 'keeper.ts') };

const stage = mkdtempSync(join(tmpdir(), 'kubeling-testenv-pack-'));
try {
  const dist = join(stage, 'dist');
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const externals = new Set();
  const packageName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
  await build({
    entryPoints: { ...ENTRIES, ...INTERNAL },
    outdir: dist,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    legalComments: 'none',
    plugins: [
      {
        name: 'third-party-external',
        setup(b) {
          // The workspace's packages are bundled; every other bare import stays an import of a dependency.
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            if (args.path.startsWith('@kubeling/') || builtins.has(args.path)) return undefined;
            externals.add(packageName(args.path));
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });

  // Declarations: tsc over the entry points; only the public folder's are shipped.
  const typesTmp = join(stage, 'types-tmp');
  const tsconfig = join(stage, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        outDir: typesTmp,
        rootDir: join(root, 'packages'),
        typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: Object.values(ENTRIES),
      include: [],
    }),
  );
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], { stdio: ['ignore', 'inherit', 'inherit'] });
  const typesFrom = join(typesTmp, 'testenv', 'src', 'control-plane');
  const typesTo = join(dist, 'types');
  const leaks = [];
  // The declarations the entry points reach, following relative imports; any other import must be a dependency.
  const pending = Object.values(ENTRIES).map((e) => relative(publicDir, e).replace(/\.ts$/, '.d.ts'));
  const seen = new Set();
  while (pending.length) {
    const rel = pending.pop();
    if (seen.has(rel)) continue;
    seen.add(rel);
    const text = readFileSync(join(typesFrom, rel), 'utf8');
    for (const m of text.matchAll(/^(?:import|export)[^'\n]*from '([^']+)'|import\('([^']+)'\)/gm)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith('.')) {
        const target = relative(typesFrom, join(typesFrom, dirname(rel), spec.replace(/\.js$/, '.d.ts')));
        if (target.startsWith('..')) leaks.push(`${rel}: ${spec}`);
        else pending.push(target);
      } else if (!builtins.has(spec)) leaks.push(`${rel}: ${spec}`);
    }
    mkdirSync(dirname(join(typesTo, rel)), { recursive: true });
    writeFileSync(join(typesTo, rel), text);
  }
  if (leaks.length) throw new Error(`the public declarations name what the package does not ship:\n  ${leaks.join('\n  ')}`);

  // Files found relative to the code: packages/cri/proto and packages/runtime/images are `../proto`, `../images` of a chunk.
  cpSync(join(root, 'packages', 'cri', 'proto'), join(stage, 'proto'), { recursive: true });
  cpSync(join(root, 'packages', 'runtime', 'images'), join(stage, 'images'), { recursive: true });

  // Each dependency at the range the workspace declares for it (the root's devDependencies last).
  const declared = new Map();
  for (const f of [...readdirSync(join(root, 'packages')).map((p) => join(root, 'packages', p, 'package.json')), join(root, 'package.json')]) {
    if (!existsSync(f)) continue;
    const m = JSON.parse(readFileSync(f, 'utf8'));
    for (const [n, r] of Object.entries({ ...m.devDependencies, ...m.dependencies })) if (!declared.has(n) && !r.startsWith('workspace:')) declared.set(n, r);
  }
  const dependencies = Object.fromEntries(
    [...externals].sort().map((n) => {
      if (!declared.has(n)) throw new Error(`${n} is imported but no workspace package depends on it`);
      return [n, declared.get(n)];
    }),
  );
  const entry = (name) => ({ types: `./dist/types/${name === 'index' ? 'index' : `adapters/${name}`}.d.ts`, default: `./dist/${name}.js` });
  const manifest = {
    name: source.name,
    version: source.version,
    description: 'Real Kubernetes control planes for integration tests: etcd, the apiserver, controllers, the scheduler and hollow nodes, in TypeScript.',
    type: 'module',
    engines: { node: '>=20.10' },
    exports: Object.fromEntries(Object.keys(ENTRIES).map((n) => [n === 'index' ? '.' : `./${n}`, entry(n)])),
    types: './dist/types/index.d.ts',
    files: ['dist', 'proto', 'images', 'README.md'],
    dependencies,
  };
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  cpSync(join(pkgDir, 'README.md'), join(stage, 'README.md'));
  rmSync(typesTmp, { recursive: true, force: true });
  rmSync(tsconfig);

  mkdirSync(values.out, { recursive: true });
  const file = execFileSync('npm', ['pack', '--silent', '--pack-destination', values.out], { cwd: stage, encoding: 'utf8' }).trim().split('\n').pop();
  process.stdout.write(`${join(values.out, file)}\n`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
