/**
 * @kubeling/testenv start-up, beside its goals: the time from calling
 * startControlPlane() to a client that answers —
 * - cold: in a fresh process, etcd not yet running (its start, the PKI and
 *   the control plane), p50 of `--runs` processes; goal ≤ 1 s;
 * - warm: the following starts of one process, etcd shared, p50 of `--runs`; goal ≤ 150 ms;
 * - 8 control planes started at once in one process: the time until all answer.
 * Each figure is for the default options (every controller, the scheduler, no
 * nodes) and for `controllers: 'none', scheduler: false` (an apiserver alone,
 * as envtest gives), and the time stop() takes.
 *
 *   npm run bench:testenv [-- --runs 20 --parallel 8]
 *   node --conditions=kubeling-dist bench/dist/testenv.js --one   (one cold sample: what the cold runs spawn)
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startControlPlane, stopEtcdServer, type ControlPlaneOptions } from '@kubeling/testenv/control-plane';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    parallel: { type: 'string', default: '8' },
    one: { type: 'boolean', default: false },
    bare: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const PARALLEL = Number(values.parallel);
const BARE: ControlPlaneOptions = { controllers: 'none', scheduler: false };

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** One start: startControlPlane() until a list answers. */
async function timedStart(o: ControlPlaneOptions): Promise<{ startMs: number; componentsMs: number; stopMs: number }> {
  const t0 = performance.now();
  const cp = await startControlPlane(o);
  await cp.client.list('v1', 'Namespace');
  const startMs = performance.now() - t0;
  await cp.componentsStarted;
  const componentsMs = performance.now() - t0;
  const t1 = performance.now();
  await cp.stop();
  return { startMs, componentsMs, stopMs: performance.now() - t1 };
}

if (values.one) {
  const r = await timedStart(values.bare ? BARE : {});
  await stopEtcdServer();
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}

function cold(bare: boolean): number[] {
  const self = fileURLToPath(import.meta.url);
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, [...process.execArgv, self, '--one', ...(bare ? ['--bare'] : [])], {
      encoding: 'utf8',
      env: { ...process.env, KUBELING_ETCD_ENDPOINTS: '' },
    });
    if (r.status !== 0) throw new Error(`cold sample failed: ${r.stderr}`);
    out.push((JSON.parse(r.stdout.trim().split('\n').pop()!) as { startMs: number }).startMs);
  }
  return out;
}

async function warm(o: ControlPlaneOptions): Promise<{ start: number[]; components: number[]; stop: number[] }> {
  await timedStart(o); // etcd and the PKI are made once per process: not a warm start
  const start: number[] = [];
  const components: number[] = [];
  const stop: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await timedStart(o);
    start.push(r.startMs);
    components.push(r.componentsMs);
    stop.push(r.stopMs);
  }
  return { start, components, stop };
}

async function parallel(o: ControlPlaneOptions): Promise<number> {
  const t0 = performance.now();
  const cps = await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      const cp = await startControlPlane(o);
      await cp.client.list('v1', 'Namespace');
      return cp;
    }),
  );
  const t = performance.now() - t0;
  await Promise.all(cps.map((cp) => cp.stop()));
  return t;
}

const lines: string[] = [];
for (const [name, o, bare] of [
  ['defaults (controllers, scheduler)', {}, false],
  ["controllers: 'none', scheduler: false", BARE, true],
] as const) {
  const c = cold(bare);
  const w = await warm(o);
  const p = await parallel(o);
  lines.push(
    `${name}:`,
    `  cold start (etcd not running)  p50 ${ms(pct(c, 50))}  max ${ms(Math.max(...c))}   (goal: ≤ 1000 ms)`,
    `  warm start (etcd shared)       p50 ${ms(pct(w.start, 50))}  p90 ${ms(pct(w.start, 90))}   (goal: ≤ 150 ms)`,
    ...(bare ? [] : [`  controllers and scheduler running p50 ${ms(pct(w.components, 50))}   (after the start; not waited for)`]),
    `  stop()                         p50 ${ms(pct(w.stop, 50))}`,
    `  ${PARALLEL} started at once           all ready in ${ms(p)}`,
  );
}
await stopEtcdServer();
process.stdout.write(`testenv start-up, ${RUNS} runs each\n${lines.join('\n')}\n`);
