/**
 * Resource measurement end to end: a kubelet on kubeling's runtime (process
 * backend, CRI over gRPC on a unix socket) against a real etcd + apiserver
 * runs a pod whose container burns CPU. /metrics/resource shows its counter
 * growing and within 20 % of what /proc says of its process group;
 * /stats/summary gives its rate; both come through the apiserver's
 * nodes/<name>/proxy/... as well.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { serveCri, type CriServer } from '@kubeling/cri';
import { KubelingRuntime } from '@kubeling/runtime';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Kubelet } from './kubelet.js';

const NODE = 'stats-node';
const MARKER = `kubelet-stats-burn-${process.pid}-${Date.now()}`;

let env: TestEnv;
let dir: string;
let runtime: KubelingRuntime;
let server: CriServer;
let kubelet: Kubelet;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelet-stats-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'rt'), podCIDR: '127.5.9.0/24' });
  const endpoint = `unix://${join(dir, 'rt.sock')}`;
  server = await serveCri(runtime, endpoint);
  env = await startTestEnv();
  kubelet = new Kubelet({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    nodeName: NODE,
    runtime: endpoint,
    rootDir: join(dir, 'node'),
    port: 0,
    log: pino({ level: 'silent' }),
    statusUpdateMs: 1000,
    leaseRenewMs: 1000,
    plegPeriodMs: 300,
  });
  await kubelet.start();
  await request(env.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'burner' },
    spec: {
      nodeName: NODE,
      automountServiceAccountToken: false,
      containers: [
        { name: 'burn', image: 'busybox', command: ['sh', '-c', 'while true; do :; done', MARKER] },
        { name: 'idle', image: 'busybox', command: ['sleep', '3600'] },
      ],
    },
  });
  assert.equal(r.status, 201, r.text);
  await waitFor(
    async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/burner')).body.status?.phase === 'Running',
    30_000,
    'the pod to run',
  );
});

after(async () => {
  await kubelet?.stop();
  await runtime?.shutdown();
  server?.forceShutdown();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const readOr = (p: string) => {
  try {
    return readFileSync(p, 'latin1');
  } catch {
    return '';
  }
};

/** CPU seconds of the burning container's process group, as /proc counts them (utime+stime+cutime+cstime, USER_HZ 100 on Linux). */
function procSeconds(): number {
  const stats = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map((p) => ({ cmd: readOr(`/proc/${p}/cmdline`), f: readOr(`/proc/${p}/stat`).split(') ')[1]?.split(' ') ?? [] }));
  const leader = stats.find((s) => s.cmd.includes(MARKER));
  assert.ok(leader, 'the burning process');
  const pgid = leader.f[2];
  return stats.filter((s) => s.f[2] === pgid).reduce((a, s) => a + Number(s.f[11]) + Number(s.f[12]) + Number(s.f[13]) + Number(s.f[14]), 0) / 100;
}

const kubeletGet = async (path: string) => request(`http://127.0.0.1:${kubelet.port}`, 'GET', path);

/** A sample's value and timestamp from the exposition text. */
function sample(text: string, series: string): { value: number; ms: number } {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line, `${series} in\n${text}`);
  const [, value, ms] = line.split(' ');
  return { value: Number(value), ms: Number(ms) };
}

const BURN = 'container_cpu_usage_seconds_total{container="burn",namespace="default",pod="burner"}';

test('/metrics/resource: the burning container grows and matches /proc within 20 %', async (t) => {
  await new Promise((r) => setTimeout(r, 2000));
  // /proc read just before and just after the scrape bracket what the kubelet saw.
  const before = procSeconds();
  const first = await kubeletGet('/metrics/resource');
  const after = procSeconds();
  assert.equal(first.status, 200);
  assert.match(first.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const a = sample(first.text, BURN);
  assert.ok(a.value > 0.2, `burned ${a.value}s`);
  t.diagnostic(`metrics ${a.value}s, /proc ${before}s before the scrape and ${after}s after`);
  assert.ok(a.value >= before * 0.8 && a.value <= after * 1.2, `metrics ${a.value}s, /proc ${before}s..${after}s`);
  assert.ok(Math.abs(a.ms - Date.now()) < 10_000, 'a millisecond timestamp of the measurement');

  await new Promise((r) => setTimeout(r, 2000));
  const second = await kubeletGet('/metrics/resource');
  const b = sample(second.text, BURN);
  assert.ok(b.value - a.value > 0.3, `grew ${b.value - a.value}s in 2 s`);
  assert.ok(b.ms > a.ms);
  const idle = sample(second.text, 'container_cpu_usage_seconds_total{container="idle",namespace="default",pod="burner"}');
  assert.ok(idle.value < 0.1, `idle ${idle.value}s`);
  // The pod counts both containers and its pause process; the node, all of it.
  assert.ok(sample(second.text, 'pod_cpu_usage_seconds_total{namespace="default",pod="burner"}').value >= b.value);
  assert.ok(sample(second.text, 'node_cpu_usage_seconds_total').value > b.value);
  assert.ok(sample(second.text, 'container_memory_working_set_bytes{container="burn",namespace="default",pod="burner"}').value > 100_000);
  assert.ok(sample(second.text, 'node_memory_working_set_bytes').value > 10_000_000);
  const start = sample(second.text, 'container_start_time_seconds{container="burn",namespace="default",pod="burner"}');
  assert.ok(Math.abs(start.value * 1000 - Date.now()) < 120_000 && Number.isNaN(start.ms));
  assert.match(second.text, /^resource_scrape_error 0$/m);
});

test('/stats/summary: the container rate from the previous sample, close to one busy core', async (t) => {
  assert.equal((await kubeletGet('/stats/summary')).status, 200);
  await new Promise((r) => setTimeout(r, 2000));
  const { body: s } = await kubeletGet('/stats/summary');
  assert.equal(s.node.nodeName, NODE);
  assert.match(s.node.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(s.node.memory.workingSetBytes > 0 && s.node.cpu.usageNanoCores > 0);
  const pod = s.pods.find((p: { podRef: { name: string } }) => p.podRef.name === 'burner');
  assert.equal(pod.podRef.namespace, 'default');
  assert.match(pod.podRef.uid, /^[0-9a-f-]{36}$/);
  const burn = pod.containers.find((c: { name: string }) => c.name === 'burn');
  t.diagnostic(`burn ${burn.cpu.usageNanoCores} nanocores`);
  // Alone on a core it is 1e9; on a shared 2-core machine, less, but far above the idle one.
  assert.ok(burn.cpu.usageNanoCores > 300_000_000, `burn ${burn.cpu.usageNanoCores} nanocores`);
  assert.ok(burn.cpu.usageNanoCores < 1_300_000_000);
  assert.ok(pod.containers.find((c: { name: string }) => c.name === 'idle').cpu.usageNanoCores < 50_000_000);
  assert.equal(pod.process_stats.process_count, 3);
  const only = await kubeletGet('/stats/summary?only_cpu_and_memory=true');
  assert.equal(only.body.pods[0].process_stats, undefined);
  assert.ok(only.body.pods[0].cpu.usageCoreNanoSeconds > 0);
});

test("the apiserver's nodes/<name>/proxy reaches /metrics/resource and /stats/summary", async () => {
  const m = await request(env.url, 'GET', `/api/v1/nodes/${NODE}/proxy/metrics/resource`);
  assert.equal(m.status, 200, m.text);
  assert.ok(sample(m.text, BURN).value > 0.2);
  const s = await request(env.url, 'GET', `/api/v1/nodes/${NODE}/proxy/stats/summary`);
  assert.equal(s.status, 200, s.text);
  assert.equal(s.body.node.nodeName, NODE);
  assert.ok(s.body.pods.some((p: { podRef: { name: string } }) => p.podRef.name === 'burner'));
});
