/**
 * The runtime's CRI stats: /proc parsing and the per-group scan on an injected
 * /proc, the hollow backend's synthetic figures, and a real process group
 * measured through CRI over gRPC against what /proc says of it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GrpcRuntime, serveCri, type CriServer, type PodSandboxConfig } from '@kubeling/cri';
import { KubelingRuntime } from './runtime.js';
import { hostConstants, parseProcStat, scanGroups, syntheticUsage, type ProcFs } from './stats.js';

/** A /proc/<pid>/stat line with the fields this test cares about, the rest zero. */
function statLine(
  pid: number,
  comm: string,
  pgid: number,
  f: { utime?: number; stime?: number; cutime?: number; cstime?: number; rss?: number; minflt?: number },
) {
  const fields = Array.from({ length: 52 - 2 }, () => '0');
  const set = (n: number, v: number | string) => (fields[n - 3] = String(v));
  set(3, 'R');
  set(4, 1);
  set(5, pgid);
  set(10, f.minflt ?? 0);
  set(14, f.utime ?? 0);
  set(15, f.stime ?? 0);
  set(16, f.cutime ?? 0);
  set(17, f.cstime ?? 0);
  set(24, f.rss ?? 0);
  return `${pid} (${comm}) ${fields.join(' ')}\n`;
}

function fakeProc(files: Record<string, string>): ProcFs & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    // 999 exits between the listing and the read.
    list: () => [...new Set(Object.keys(files).map((p) => p.split('/')[2]!)), '999', 'self', 'meminfo', 'sys'],
    read: (p) => {
      reads.push(p);
      return files[p];
    },
  };
}

test('parseProcStat: fields counted after the last parenthesis (commands may hold spaces and parentheses)', () => {
  const st = parseProcStat(statLine(42, 'sh -c (x) y', 40, { utime: 7, stime: 3, cutime: 5, cstime: 1, rss: 250, minflt: 9 }));
  assert.deepEqual(st, { pid: 42, pgid: 40, minflt: 9, majflt: 0, ticks: 16, rssPages: 250 });
  // A process of another group is rejected without parsing the rest.
  assert.equal(parseProcStat(statLine(42, 'x', 40, {}), new Set([41])), undefined);
  assert.equal(parseProcStat(statLine(42, 'a) (b', 40, {}), new Set([40]))?.pgid, 40);
  assert.equal(parseProcStat('garbage'), undefined);
  assert.equal(parseProcStat('1 (x) R 0 1'), undefined);
});

test('scanGroups: one pass over /proc sums each wanted group; other groups and vanished processes are skipped', () => {
  const fs = fakeProc({
    '/proc/100/stat': statLine(100, 'sh', 100, { utime: 10, stime: 5, rss: 100 }),
    '/proc/101/stat': statLine(101, 'busy loop', 100, { utime: 200, stime: 1, rss: 50 }),
    '/proc/200/stat': statLine(200, 'other', 200, { utime: 999, rss: 999 }),
    '/proc/300/stat': statLine(300, 'pause', 300, { rss: 10 }),
    // A process that ran 2.5 ms: no whole tick, but schedstat's nanoseconds.
    '/proc/300/schedstat': '2500000 1000 3\n',
  });
  const wanted = new Set([100, 300, 400]);
  const groups = scanGroups(fs, wanted);
  assert.deepEqual(groups.get(100), { ticks: 216, cpuNanos: 2.16e9, rssPages: 150, minflt: 0, majflt: 0, processes: 2 });
  assert.deepEqual(groups.get(300), { ticks: 0, cpuNanos: 2_500_000, rssPages: 10, minflt: 0, majflt: 0, processes: 1 });
  assert.equal(groups.has(200), false);
  assert.equal(groups.has(400), false);
  // Each numeric entry's stat read once, and the schedstat of the wanted groups' processes only.
  assert.deepEqual(fs.reads.sort(), [
    '/proc/100/schedstat',
    '/proc/100/stat',
    '/proc/101/schedstat',
    '/proc/101/stat',
    '/proc/200/stat',
    '/proc/300/schedstat',
    '/proc/300/stat',
    '/proc/999/stat',
  ]);
  assert.equal(scanGroups(fs, new Set()).size, 0);
});

test('hollow usage is synthetic: deterministic per id and time, CPU growing at a constant rate, memory constant', () => {
  const s = 1_000_000_000n;
  const a1 = syntheticUsage('abc', 0n, 10n * s);
  const a2 = syntheticUsage('abc', 0n, 20n * s);
  assert.deepEqual(syntheticUsage('abc', 0n, 10n * s), a1);
  assert.equal(a2.cpuNanos, 2n * a1.cpuNanos);
  assert.equal(a1.rss, a2.rss);
  const rate = Number(a1.cpuNanos) / 10 / 1e9;
  assert.ok(rate >= 0.01 && rate <= 0.2, `rate ${rate}`);
  assert.ok(a1.rss >= 16 * 1024 * 1024 && a1.rss <= 128 * 1024 * 1024);
  assert.notDeepEqual(syntheticUsage('other', 0n, 10n * s), a1);
  // With requests (2 cores as shares, 1 GiB limit): 25-75 % of the request, 30-70 % of the limit.
  const r = syntheticUsage('abc', 0n, 10n * s, { cpu_shares: 2048, memory_limit_in_bytes: 1 << 30 });
  const cores = Number(r.cpuNanos) / 10 / 1e9;
  assert.ok(cores >= 0.5 && cores <= 1.5, `cores ${cores}`);
  assert.ok(r.rss >= 0.3 * 2 ** 30 && r.rss <= 0.7 * 2 ** 30);
  assert.equal(syntheticUsage('abc', 5n * s, 1n * s).cpuNanos, 0n);
});

let dir: string;
let runtime: KubelingRuntime;
let hollow: KubelingRuntime;
let server: CriServer;
let cri: GrpcRuntime;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeling-rt-stats-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'root'), podCIDR: '127.3.8.0/24' });
  hollow = new KubelingRuntime({ backend: 'hollow', root: join(dir, 'hollow'), podCIDR: '127.3.9.0/24' });
  server = await serveCri(runtime, `unix://${join(dir, 'rt.sock')}`);
  cri = new GrpcRuntime(`unix://${join(dir, 'rt.sock')}`);
});
after(async () => {
  cri?.close();
  await runtime?.shutdown();
  await hollow?.shutdown();
  server?.forceShutdown();
  rmSync(dir, { recursive: true, force: true });
});

const sandboxConfig = (name: string): PodSandboxConfig => ({
  metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt: 0 },
  labels: { app: name },
});

const readOr = (p: string) => {
  try {
    return readFileSync(p, 'latin1');
  } catch {
    return '';
  }
};

/** The process group of the process whose command line holds `marker`. */
function pgidOf(marker: string): number {
  const pid = readdirSync('/proc').find((p) => /^\d+$/.test(p) && readOr(`/proc/${p}/cmdline`).includes(marker));
  return (pid && parseProcStat(readOr(`/proc/${pid}/stat`))?.pgid) || 0;
}

/** CPU ticks of a process group as /proc says, in seconds. */
/**
 * The CPU seconds of a process group's processes. `container` leaves out an
 * isolated container's unshare (the group leader) and init (its child), as the
 * runtime does: they are the runtime's, the setup's commands in their time.
 */
function procGroupSeconds(pgid: number, container: boolean): number {
  let ticks = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const text = readOr(`/proc/${name}/stat`);
    const st = parseProcStat(text);
    if (st?.pgid !== pgid) continue;
    const ppid = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
    if (container && (st.pid === pgid || ppid === pgid)) continue;
    ticks += st.ticks;
  }
  return ticks / hostConstants().clkTck;
}

test('process backend over gRPC: a busy container group measured as /proc counts it; the pod adds its pause process', async () => {
  await cri.pullImage({ image: 'busybox' });
  const sbc = sandboxConfig('burn');
  const sb = await cri.runPodSandbox(sbc);
  const spec = (name: string, command: string[]) => ({
    metadata: { name, attempt: 0 },
    image: { image: 'busybox' },
    command,
    labels: { c: name },
  });
  const marker = `burn-${process.pid}-${Date.now()}`;
  const busy = await cri.createContainer(sb, spec('busy', ['sh', '-c', 'while true; do :; done', marker]), sbc);
  const idle = await cri.createContainer(sb, spec('idle', ['sleep', '60']), sbc);
  await cri.startContainer(busy);
  await cri.startContainer(idle);
  await new Promise((r) => setTimeout(r, 1500));

  const [pod] = await cri.listPodSandboxStats({ label_selector: { app: 'burn' } });
  assert.ok(pod);
  assert.equal(pod.attributes.id, sb);
  assert.equal(pod.attributes.metadata.uid, 'uid-burn');
  const ctrs = new Map(pod.linux!.containers!.map((c) => [c.attributes.metadata.name, c]));
  const busyCpu = Number(ctrs.get('busy')!.cpu!.usage_core_nano_seconds!.value) / 1e9;
  const idleCpu = Number(ctrs.get('idle')!.cpu!.usage_core_nano_seconds!.value) / 1e9;
  assert.ok(busyCpu > 0.3, `busy ${busyCpu}s`);
  assert.ok(idleCpu < 0.1, `idle ${idleCpu}s`);
  const pgid = pgidOf(marker);
  assert.ok(pgid > 0);
  const truth = procGroupSeconds(pgid, runtime.isolated);
  assert.ok(Math.abs(truth - busyCpu) / truth < 0.2, `runtime ${busyCpu}s, /proc ${truth}s`);
  const rss = Number(ctrs.get('busy')!.memory!.working_set_bytes!.value);
  assert.ok(rss > 100_000 && rss < 100_000_000, `rss ${rss}`);
  assert.equal(ctrs.get('busy')!.memory!.rss_bytes!.value, String(rss));
  // The pod: both containers and the pause process.
  const podMem = Number(pod.linux!.memory!.working_set_bytes!.value);
  assert.ok(podMem > rss + Number(ctrs.get('idle')!.memory!.working_set_bytes!.value), `pod ${podMem}`);
  assert.equal(pod.linux!.process!.process_count!.value, '3');
  assert.ok(Number(pod.linux!.cpu!.usage_core_nano_seconds!.value) >= busyCpu * 1e9);

  // ListContainerStats and ContainerStats agree, and filter.
  const list = await cri.listContainerStats({ label_selector: { c: 'idle' } });
  assert.deepEqual(
    list.map((c) => c.attributes.id),
    [idle],
  );
  const later = await cri.containerStats(busy);
  assert.ok(Number(later.cpu!.usage_core_nano_seconds!.value) / 1e9 >= busyCpu);
  await cri.stopContainer(busy, 0);
  assert.deepEqual(
    (await cri.listContainerStats({ pod_sandbox_id: sb })).map((c) => c.attributes.metadata.name),
    ['idle'],
  );
  await cri.removePodSandbox(sb);
  assert.deepEqual(await cri.listPodSandboxStats(), []);
  await assert.rejects(cri.podSandboxStats(sb), (e: { code?: number }) => e.code === 5);
});

test('hollow backend: running containers report synthetic usage that grows between calls', async () => {
  await hollow.pullImage({ image: 'busybox' });
  const sbc = sandboxConfig('h');
  const sb = await hollow.runPodSandbox(sbc);
  const c = await hollow.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: { image: 'busybox' } }, sbc);
  assert.equal((await hollow.containerStats(c)).cpu, undefined);
  await hollow.startContainer(c);
  const first = await hollow.podSandboxStats(sb);
  await new Promise((r) => setTimeout(r, 200));
  const second = await hollow.podSandboxStats(sb);
  const cpu = (s: typeof first) => Number(s.linux!.containers![0]!.cpu!.usage_core_nano_seconds!.value);
  assert.ok(cpu(second) > cpu(first), `${cpu(first)} then ${cpu(second)}`);
  assert.equal(second.linux!.memory!.working_set_bytes!.value, first.linux!.memory!.working_set_bytes!.value);
  assert.equal(second.linux!.cpu!.usage_core_nano_seconds!.value, second.linux!.containers![0]!.cpu!.usage_core_nano_seconds!.value);
});
