/**
 * The kubelet's stats: /proc parsing for the node, the Summary built from CRI
 * answers (usageNanoCores from the previous sample, the ListContainerStats
 * fallback for runtimes without ListPodSandboxStats), and /metrics/resource's
 * text compared with upstream's own expectations
 * (pkg/kubelet/metrics/collectors/resource_metrics_test.go).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CriError, GRPC_UNIMPLEMENTED, type Container, type ContainerStats, type CriRuntime, type PodSandbox, type PodSandboxStats } from '@kubeling/cri';
import { parseMeminfo, parseProcStatCpu, rfc3339, StatsProvider, summaryJSON, type Summary } from './stats.js';
import { goFloat, resourceMetricsText } from './stats-prometheus.js';

const PROC_STAT = `cpu  1000 20 300 90000 50 7 8 5 40 0
cpu0 500 10 150 45000 25 3 4 2 20 0
intr 123 0 0
ctxt 456
btime 1700000000
processes 789
`;
const MEMINFO = `MemTotal:        8000000 kB
MemFree:         2000000 kB
MemAvailable:    5000000 kB
Buffers:          100000 kB
AnonPages:       1500000 kB
`;

test('node CPU is the root cgroup time of /proc/stat (user+nice+system+irq+softirq+steal), memory from /proc/meminfo', () => {
  assert.deepEqual(parseProcStatCpu(PROC_STAT), { ticks: 1000 + 20 + 300 + 7 + 8 + 5, bootTimeSeconds: 1700000000 });
  assert.equal(parseProcStatCpu('nothing here'), undefined);
  assert.deepEqual(parseMeminfo(MEMINFO), { total: 8000000 * 1024, free: 2000000 * 1024, available: 5000000 * 1024, anon: 1500000 * 1024 });
  assert.equal(parseMeminfo('MemTotal: 1 kB\n'), undefined);
});

test("goFloat writes float64 as Go's strconv.FormatFloat(v, 'g', -1, 64)", () => {
  const cases: [number, string][] = [
    [10, '10'],
    [1000, '1000'],
    [999999, '999999'],
    [1e6, '1e+06'],
    [123456789, '1.23456789e+08'],
    [1.6243962483020916e9, '1.6243962483020916e+09'],
    [1234567.5, '1.2345675e+06'],
    [0.5, '0.5'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [1e21, '1e+21'],
    [1e100, '1e+100'],
    [0, '0'],
    [-2.5, '-2.5'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, '+Inf'],
  ];
  for (const [v, want] of cases) assert.equal(goFloat(v), want, String(v));
});

// Upstream test's static timestamp: 2021-06-23 05:11:18.302091597 +0800.
const T = 1624396278302091597n;
const S = 1_000_000_000n;

test("/metrics/resource text is upstream's for the same summary (families by name, samples by labels, ms timestamps)", () => {
  const c = (name: string, start: bigint) => ({
    name,
    startTime: start,
    cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
    memory: { time: T, workingSetBytes: 1000 },
  });
  const summary: Summary = {
    node: { nodeName: 'n', startTime: 0n, cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 }, memory: { time: T, workingSetBytes: 1000 } },
    pods: [
      {
        podRef: { name: 'pod_b', namespace: 'namespace_b', uid: 'b' },
        startTime: T,
        containers: [c('container_a', T - 600n * S)],
        cpu: { time: T, usageCoreNanoSeconds: 10_000_000_000 },
        memory: { time: T, workingSetBytes: 1000 },
      },
      {
        podRef: { name: 'pod_a', namespace: 'namespace_a', uid: 'a' },
        startTime: T,
        containers: [c('container_b', T - 120n * S), c('container_a', T - 30n * S)],
      },
    ],
  };
  assert.equal(
    resourceMetricsText(summary),
    `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_a",pod="pod_a"} 10 1624396278302
container_cpu_usage_seconds_total{container="container_a",namespace="namespace_b",pod="pod_b"} 10 1624396278302
container_cpu_usage_seconds_total{container="container_b",namespace="namespace_a",pod="pod_a"} 10 1624396278302
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="container_a",namespace="namespace_a",pod="pod_a"} 1000 1624396278302
container_memory_working_set_bytes{container="container_a",namespace="namespace_b",pod="pod_b"} 1000 1624396278302
container_memory_working_set_bytes{container="container_b",namespace="namespace_a",pod="pod_a"} 1000 1624396278302
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="container_a",namespace="namespace_a",pod="pod_a"} 1.6243962483020916e+09
container_start_time_seconds{container="container_a",namespace="namespace_b",pod="pod_b"} 1.6243956783020916e+09
container_start_time_seconds{container="container_b",namespace="namespace_a",pod="pod_a"} 1.6243961583020916e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 10 1624396278302
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1000 1624396278302
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="namespace_b",pod="pod_b"} 10 1624396278302
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="namespace_b",pod="pod_b"} 1000 1624396278302
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`,
  );
  assert.equal(
    resourceMetricsText(new Error('runtime down')),
    `# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 1
# HELP scrape_error [ALPHA] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 1
`,
  );
  // Label values are escaped; a start time at the epoch is left out.
  const odd: Summary = {
    node: { nodeName: 'n', startTime: 0n },
    pods: [
      {
        podRef: { name: 'p"\\', namespace: 'n\nx', uid: 'u' },
        startTime: 0n,
        containers: [{ name: 'c', startTime: 0n, memory: { time: T, workingSetBytes: 5 } }],
      },
    ],
  };
  assert.match(resourceMetricsText(odd), /^container_memory_working_set_bytes\{container="c",namespace="n\\nx",pod="p\\"\\\\"\} 5 1624396278302$/m);
  assert.doesNotMatch(resourceMetricsText(odd), /container_start_time_seconds/);
});

/** CRI answers for one pod with two containers; CPU counters and the clock advance by `step`. */
function fakeRuntime(o: { podStats: 'yes' | 'unimplemented' | 'fails' }) {
  let step = 0;
  const sec = (n: number) => (T + BigInt(step) * 10n * S + BigInt(n)).toString();
  const sandbox: PodSandbox = {
    id: 'sb1',
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1', attempt: 0 },
    state: 'SANDBOX_READY',
    created_at: (T - 60n * S).toString(),
  };
  const ctr = (id: string, name: string): Container => ({
    id,
    pod_sandbox_id: 'sb1',
    metadata: { name, attempt: 0 },
    image: { image: 'busybox' },
    image_ref: 'x',
    state: 'CONTAINER_RUNNING',
    created_at: (T - 50n * S).toString(),
  });
  // app burns half a core, sidecar a tenth.
  const cstats = (id: string, name: string, rate: number, rss: number): ContainerStats => ({
    attributes: { id, metadata: { name, attempt: 0 } },
    cpu: { timestamp: sec(0), usage_core_nano_seconds: { value: String(Math.round(rate * 1e9 * (100 + step * 10))) }, usage_nano_cores: null },
    memory: { timestamp: sec(0), working_set_bytes: { value: String(rss) }, rss_bytes: { value: String(rss) }, available_bytes: null },
  });
  const containers = () => [cstats('c1', 'app', 0.5, 4096), cstats('c2', 'sidecar', 0.1, 1024)];
  const calls: string[] = [];
  const lists: string[] = [];
  const runtime = {
    listPodSandbox: async () => {
      lists.push('ListPodSandbox');
      return [sandbox];
    },
    listContainers: async () => {
      lists.push('ListContainers');
      return [ctr('c1', 'app'), ctr('c2', 'sidecar')];
    },
    listPodSandboxStats: async (): Promise<PodSandboxStats[]> => {
      calls.push('ListPodSandboxStats');
      if (o.podStats === 'unimplemented') throw new CriError(GRPC_UNIMPLEMENTED, 'unknown method ListPodSandboxStats');
      if (o.podStats === 'fails') throw new CriError(2, 'cgroup gone');
      const cs = containers();
      return [
        {
          attributes: { id: 'sb1', metadata: sandbox.metadata },
          linux: {
            // containerd's own rate (0 at first) is not what the kubelet reports.
            cpu: { timestamp: sec(0), usage_core_nano_seconds: { value: String(Math.round(0.7 * 1e9 * (100 + step * 10))) }, usage_nano_cores: { value: '0' } },
            memory: { timestamp: sec(0), working_set_bytes: { value: '8192' } },
            process: { timestamp: sec(0), process_count: { value: '3' } },
            network: null,
            containers: cs,
          },
        },
      ];
    },
    listContainerStats: async () => {
      calls.push('ListContainerStats');
      return containers();
    },
  } as unknown as CriRuntime;
  return { runtime, calls, lists, sandbox, ctr, advance: () => step++ };
}

const nodeFiles = (ticks: number) => (path: string) =>
  path === '/proc/stat' ? PROC_STAT.replace('cpu  1000', `cpu  ${ticks}`) : path === '/proc/meminfo' ? MEMINFO : undefined;

test('the Summary from ListPodSandboxStats: pod and container figures, usageNanoCores from the previous sample', async () => {
  const f = fakeRuntime({ podStats: 'yes' });
  let ticks = 1000;
  let now = T;
  const p = new StatsProvider({ nodeName: 'node-1', runtime: f.runtime, readFile: (x) => nodeFiles(ticks)(x), now: () => now, clkTck: 100 });
  const first = await p.summary();
  assert.equal(first.pods[0]!.cpu!.usageNanoCores, undefined);
  assert.equal(first.node.cpu!.usageNanoCores, undefined);
  f.advance();
  ticks += 1500; // 15 core-seconds over 10 s
  now += 10n * S;
  const s = await p.summary();
  assert.deepEqual(JSON.parse(summaryJSON(s)), {
    node: {
      nodeName: 'node-1',
      startTime: '2023-11-14T22:13:20Z',
      cpu: { time: rfc3339(now), usageNanoCores: 1_500_000_000, usageCoreNanoSeconds: (2500 + 20 + 300 + 20) * 10_000_000 },
      memory: { time: rfc3339(now), availableBytes: 5000000 * 1024, usageBytes: 6000000 * 1024, workingSetBytes: 3000000 * 1024, rssBytes: 1500000 * 1024 },
    },
    pods: [
      {
        podRef: { name: 'web', namespace: 'default', uid: 'uid-1' },
        startTime: '2021-06-22T21:10:18Z',
        containers: [
          {
            name: 'app',
            startTime: '2021-06-22T21:10:28Z',
            cpu: { time: '2021-06-22T21:11:28Z', usageNanoCores: 500_000_000, usageCoreNanoSeconds: 55_000_000_000 },
            memory: { time: '2021-06-22T21:11:28Z', workingSetBytes: 4096, rssBytes: 4096 },
          },
          {
            name: 'sidecar',
            startTime: '2021-06-22T21:10:28Z',
            cpu: { time: '2021-06-22T21:11:28Z', usageNanoCores: 100_000_000, usageCoreNanoSeconds: 11_000_000_000 },
            memory: { time: '2021-06-22T21:11:28Z', workingSetBytes: 1024, rssBytes: 1024 },
          },
        ],
        cpu: { time: '2021-06-22T21:11:28Z', usageNanoCores: 700_000_000, usageCoreNanoSeconds: 77_000_000_000 },
        memory: { time: '2021-06-22T21:11:28Z', workingSetBytes: 8192 },
        process_stats: { process_count: 3 },
      },
    ],
  });
  // Reading without updating keeps the last rate (as /metrics/resource and only_cpu_and_memory do).
  f.advance();
  const again = await p.summary(false);
  assert.equal(again.pods[0]!.containers[0]!.cpu!.usageNanoCores, 500_000_000);
  assert.deepEqual(f.calls, ['ListPodSandboxStats', 'ListPodSandboxStats', 'ListPodSandboxStats']);
  assert.match(resourceMetricsText(again), /^pod_cpu_usage_seconds_total\{namespace="default",pod="web"\} 84 1624396298302$/m);
});

test('a runtime without ListPodSandboxStats: ListContainerStats from then on, the pod as the sum of its containers', async () => {
  const f = fakeRuntime({ podStats: 'unimplemented' });
  const p = new StatsProvider({ nodeName: 'n', runtime: f.runtime, readFile: () => undefined, now: () => T, clkTck: 100 });
  await p.summary();
  f.advance();
  const s = await p.summary();
  assert.deepEqual(f.calls, ['ListPodSandboxStats', 'ListContainerStats', 'ListContainerStats']);
  const pod = s.pods[0]!;
  assert.deepEqual(pod.cpu, { time: T + 10n * S, usageNanoCores: 600_000_000, usageCoreNanoSeconds: 66_000_000_000 });
  assert.deepEqual(pod.memory, { time: T + 10n * S, workingSetBytes: 5120, rssBytes: 5120 });
  // No /proc: the node has no figures, and the metrics say nothing of it.
  assert.deepEqual(s.node, { nodeName: 'n', startTime: 0n });
  assert.doesNotMatch(resourceMetricsText(s), /node_/);
});

test('a failing ListPodSandboxStats: ListContainerStats for a minute, then the former again; a failing runtime fails the summary', async () => {
  const f = fakeRuntime({ podStats: 'fails' });
  let now = T;
  const p = new StatsProvider({ nodeName: 'n', runtime: f.runtime, readFile: () => undefined, now: () => now });
  assert.equal((await p.summary()).pods[0]!.memory!.workingSetBytes, 5120);
  now += 30n * S;
  await p.summary();
  now += 31n * S;
  await p.summary();
  assert.deepEqual(f.calls, ['ListPodSandboxStats', 'ListContainerStats', 'ListContainerStats', 'ListPodSandboxStats', 'ListContainerStats']);
  const broken = { ...f.runtime, listContainers: async () => Promise.reject(new CriError(14, 'connection refused')) } as CriRuntime;
  await assert.rejects(new StatsProvider({ nodeName: 'n', runtime: broken, readFile: () => undefined }).summary(), /connection refused/);
});

test("the kubelet's own relist stands for ListPodSandbox and ListContainers when it knows every measured container", async () => {
  const f = fakeRuntime({ podStats: 'yes' });
  let relisted = {
    sandboxes: [f.sandbox],
    containers: [f.ctr('c1', 'app'), f.ctr('c2', 'sidecar'), { ...f.ctr('c0', 'gone'), state: 'CONTAINER_EXITED' as const }],
  };
  const p = new StatsProvider({ nodeName: 'n', runtime: f.runtime, readFile: () => undefined, lists: () => relisted });
  const s = await p.summary();
  assert.deepEqual(f.lists, []);
  assert.deepEqual(
    s.pods[0]!.containers.map((c) => c.name),
    ['app', 'sidecar'],
  );
  // A container the relist has not seen yet: asked afresh.
  relisted = { sandboxes: [f.sandbox], containers: [f.ctr('c1', 'app')] };
  assert.equal((await p.summary()).pods[0]!.containers.length, 2);
  assert.deepEqual(f.lists.sort(), ['ListContainers', 'ListPodSandbox']);
});
