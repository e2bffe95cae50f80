import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { decodeResourceMetrics, type MetricsBatch } from './decode.js';
import { MetricsStorage } from './storage.js';

const T0 = 1_700_000_000_000;

interface C {
  ns?: string;
  pod: string;
  name: string;
  cpu?: number;
  mem?: number;
  start?: number;
  t?: number;
}

/** An exposition as the kubelet writes it: node CPU and memory, containers' CPU, memory and start time. */
function exposition(o: { t: number; cpu?: number; mem?: number; containers?: C[] }): string {
  const l = (c: C) => `{container="${c.name}",namespace="${c.ns ?? 'default'}",pod="${c.pod}"}`;
  const out: string[] = [];
  for (const c of o.containers ?? []) if (c.cpu !== undefined) out.push(`container_cpu_usage_seconds_total${l(c)} ${c.cpu} ${c.t ?? o.t}`);
  for (const c of o.containers ?? []) if (c.mem !== undefined) out.push(`container_memory_working_set_bytes${l(c)} ${c.mem} ${c.t ?? o.t}`);
  for (const c of o.containers ?? []) out.push(`container_start_time_seconds${l(c)} ${(c.start ?? T0 - 3_600_000) / 1000}`);
  if (o.cpu !== undefined) out.push(`node_cpu_usage_seconds_total ${o.cpu} ${o.t}`);
  if (o.mem !== undefined) out.push(`node_memory_working_set_bytes ${o.mem} ${o.t}`);
  return `${out.join('\n')}\n`;
}

function batch(...nodes: [string, string][]): MetricsBatch {
  const b: MetricsBatch = { nodes: new Map(), pods: new Map() };
  for (const [name, text] of nodes) decodeResourceMetrics(text, T0, name, b);
  return b;
}

test('node usage: CPU is Δcpu/Δt over the two points, memory the newer working set, window Δt', () => {
  const s = new MetricsStorage(15_000);
  s.store(batch(['n1', exposition({ t: T0, cpu: 100, mem: 1000 })]));
  assert.equal(s.node('n1'), undefined, 'one point gives no rate');
  assert.equal(s.ready(), false);
  s.store(batch(['n1', exposition({ t: T0 + 10_000, cpu: 101.5, mem: 2048 })]));
  assert.deepEqual(s.node('n1'), { timestampMs: T0 + 10_000, windowMs: 10_000, usage: { cpuNanocores: 150_000_000, memoryBytes: 2048 } });
  assert.equal(s.ready(), true);
  s.store(batch(['n1', exposition({ t: T0 + 25_002, cpu: 103, mem: 4096 })]));
  // 1.5 core-seconds over 15.002 s, truncated to whole nanocores.
  assert.deepEqual(s.node('n1'), { timestampMs: T0 + 25_002, windowMs: 15_002, usage: { cpuNanocores: 99_986_668, memoryBytes: 4096 } });
});

test('a point that is not newer keeps the older pair; a node missing from a cycle is forgotten', () => {
  const s = new MetricsStorage(15_000);
  s.store(batch(['n1', exposition({ t: T0, cpu: 10, mem: 1 })]));
  s.store(batch(['n1', exposition({ t: T0 + 1000, cpu: 11, mem: 1 })]));
  // The kubelet answers the same cached point again: prev stays, usage unchanged.
  s.store(batch(['n1', exposition({ t: T0 + 1000, cpu: 11, mem: 1 })]));
  assert.equal(s.node('n1')?.usage.cpuNanocores, 1e9);
  s.store(batch());
  assert.equal(s.node('n1'), undefined);
});

test('a pod is served only when every container has two points; its time is its earliest container', () => {
  const s = new MetricsStorage(15_000);
  const a = (cpu: number, t: number): C => ({ pod: 'web', name: 'a', cpu, mem: 100, t });
  s.store(batch(['n1', exposition({ t: T0, containers: [a(1, T0)] })]));
  s.store(batch(['n1', exposition({ t: T0 + 10_000, containers: [a(2, T0 + 10_000), { pod: 'web', name: 'b', cpu: 5, mem: 200 }] })]));
  assert.equal(s.pod('default', 'web'), undefined, 'container b has a single point: the pod is left out');
  s.store(batch(['n1', exposition({ t: T0 + 20_000, containers: [a(3, T0 + 19_000), { pod: 'web', name: 'b', cpu: 5.5, mem: 300, t: T0 + 20_000 }] })]));
  const m = s.pod('default', 'web');
  assert.deepEqual(m, {
    timestampMs: T0 + 19_000,
    windowMs: 9_000,
    containers: [
      { name: 'a', usage: { cpuNanocores: 111_111_111, memoryBytes: 100 } },
      { name: 'b', usage: { cpuNanocores: 50_000_000, memoryBytes: 300 } },
    ],
  });
  assert.equal(s.counts.containers, 2);
});

test('a restarted container starts a new pair: no usage until two points after the restart', () => {
  const s = new MetricsStorage(15_000);
  const c = (cpu: number, t: number, start: number): C => ({ pod: 'p', name: 'c', cpu, mem: 10, t, start });
  s.store(batch(['n', exposition({ t: T0, containers: [c(50, T0, T0 - 3_600_000)] })]));
  s.store(batch(['n', exposition({ t: T0 + 15_000, containers: [c(51, T0 + 15_000, T0 - 3_600_000)] })]));
  assert.equal(s.pod('default', 'p')?.containers[0]?.usage.cpuNanocores, 66_666_666);
  // Restarted 11 s after the last point (4 s before this one): the counter began again.
  s.store(batch(['n', exposition({ t: T0 + 30_000, containers: [c(0.5, T0 + 30_000, T0 + 26_000)] })]));
  assert.equal(s.pod('default', 'p'), undefined);
  s.store(batch(['n', exposition({ t: T0 + 45_000, containers: [c(2, T0 + 45_000, T0 + 26_000)] })]));
  assert.deepEqual(s.pod('default', 'p')?.containers, [{ name: 'c', usage: { cpuNanocores: 100_000_000, memoryBytes: 10 } }]);
});

test('a fresh container (started 10 s to one resolution ago) has usage from its start after one scrape', () => {
  const s = new MetricsStorage(15_000);
  s.store(batch(['n', exposition({ t: T0, containers: [{ pod: 'p', name: 'c', cpu: 3, mem: 10, start: T0 - 12_000 }] })]));
  assert.deepEqual(s.pod('default', 'p'), {
    timestampMs: T0,
    windowMs: 12_000,
    containers: [{ name: 'c', usage: { cpuNanocores: 250_000_000, memoryBytes: 10 } }],
  });
  // Younger than 10 s: no synthetic point.
  s.store(batch(['n', exposition({ t: T0, containers: [{ pod: 'q', name: 'c', cpu: 3, mem: 10, start: T0 - 5_000 }] })]));
  assert.equal(s.pod('default', 'q'), undefined);
});

test('a container whose counter went backwards without a restart is left out of its pod', () => {
  const s = new MetricsStorage(15_000);
  const p = (x: number, y: number, t: number): C[] => [
    { pod: 'p', name: 'x', cpu: x, mem: 1, t },
    { pod: 'p', name: 'y', cpu: y, mem: 1, t },
  ];
  s.store(batch(['n', exposition({ t: T0, containers: p(10, 10, T0) })]));
  s.store(batch(['n', exposition({ t: T0 + 1000, containers: p(9, 11, T0 + 1000) })]));
  assert.deepEqual(s.pod('default', 'p')?.containers, [{ name: 'y', usage: { cpuNanocores: 1e9, memoryBytes: 1 } }]);
});

test('decoding drops incomplete nodes and pods, keeps the first report of a pod and stamps untimed samples with the request time', () => {
  const b = batch(
    ['no-mem', exposition({ t: T0, cpu: 1 })],
    [
      'n2',
      `node_cpu_usage_seconds_total 7\nnode_memory_working_set_bytes 9\n${exposition({
        t: T0,
        containers: [
          { pod: 'partial', name: 'a', cpu: 1, mem: 1 },
          { pod: 'partial', name: 'b', cpu: 1 },
          { pod: 'ok', name: 'a', cpu: 1, mem: 1, ns: 'kube-system' },
        ],
      })}`,
    ],
    ['n3', exposition({ t: T0 + 5, containers: [{ pod: 'ok', name: 'a', cpu: 2, mem: 2, ns: 'kube-system' }] })],
  );
  assert.deepEqual([...b.nodes.keys()], ['n2']);
  assert.deepEqual(b.nodes.get('n2'), { startTimeMs: 0, timestampMs: T0, cpuNanos: 7e9, memoryBytes: 9 });
  assert.deepEqual([...b.pods.keys()], ['kube-system/ok']);
  assert.equal(b.pods.get('kube-system/ok')?.get('a')?.cpuNanos, 1e9);
  assert.throws(() => batch(['bad', 'node_cpu_usage_seconds_total{ 1\n']));
});
