/**
 * Resource measurement on real containerd: its CRI answers the stats calls
 * from the containers' cgroups, our gRPC client decodes them, and the kubelet
 * serves them on /metrics/resource and /stats/summary. Skipped with the
 * reason where containerd cannot run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { GrpcRuntime } from '@kubeling/cri';
import { containerdUnavailable, request, startContainerd, startTestEnv, waitFor, type Containerd, type TestEnv } from '@kubeling/testenv';
import { Kubelet } from './kubelet.js';

const why = containerdUnavailable();
const NODE = 'ctrd-stats';

let env: TestEnv;
let ctrd: Containerd;
let dir: string;
let kubelet: Kubelet;
let cri: GrpcRuntime;

before(async () => {
  if (why) return;
  dir = mkdtempSync(join(tmpdir(), 'kubelet-ctrd-stats-'));
  ctrd = await startContainerd();
  cri = new GrpcRuntime(ctrd.endpoint);
  env = await startTestEnv();
  kubelet = new Kubelet({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    nodeName: NODE,
    runtime: ctrd.endpoint,
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
      containers: [{ name: 'burn', image: ctrd.images.busybox, command: ['sh', '-c', 'while true; do :; done'] }],
    },
  });
  assert.equal(r.status, 201, r.text);
  await waitFor(
    async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/burner')).body.status?.phase === 'Running',
    60_000,
    'the pod to run',
  );
});

after(async () => {
  if (why) return;
  await kubelet?.stop();
  for (const sb of await cri.listPodSandbox().catch(() => [])) await cri.removePodSandbox(sb.id).catch(() => undefined);
  cri?.close();
  await env?.stop();
  await ctrd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("containerd's ListContainerStats and ListPodSandboxStats decode into CRI v1 stats", { skip: why }, async (t) => {
  await new Promise((r) => setTimeout(r, 1500));
  const [c] = await cri.listContainerStats();
  assert.ok(c, 'a running container');
  assert.equal(c.attributes.metadata.name, 'burn');
  assert.equal(c.attributes.labels?.['io.kubernetes.pod.name'], 'burner');
  const cpu = Number(c.cpu?.usage_core_nano_seconds?.value);
  t.diagnostic(
    `containerd: burn used ${cpu / 1e9}s (usage_nano_cores ${c.cpu?.usage_nano_cores?.value}), working set ${c.memory?.working_set_bytes?.value} bytes`,
  );
  assert.ok(cpu > 300_000_000, `cpu ${cpu}`);
  assert.ok(Number(c.cpu!.timestamp) > 1e18);
  assert.ok(Number(c.memory?.working_set_bytes?.value) > 0);
  // The kubelet's sandboxes have no cgroup parent, which containerd 1.6 refuses to measure a pod by ("cgroupPath is empty").
  const all = await cri.listPodSandboxStats().catch((e: Error) => e);
  t.diagnostic(`containerd ListPodSandboxStats over the kubelet's pods: ${all instanceof Error ? all.message : `${all.length} pod(s)`}`);
  // A sandbox with one, made here directly: its pod cgroup is measured, network included.
  const config = {
    metadata: { name: 'direct', uid: 'uid-direct', namespace: 'default', attempt: 0 },
    log_directory: join(dir, 'direct-logs'),
    linux: { cgroup_parent: '/kubeling-stats-test/pod-direct' },
  };
  const sb = await cri.runPodSandbox(config);
  const id = await cri.createContainer(
    sb,
    { metadata: { name: 'spin', attempt: 0 }, image: { image: ctrd.images.busybox }, command: ['sh', '-c', 'while true; do :; done'], log_path: 'spin.log' },
    config,
  );
  await cri.startContainer(id);
  await new Promise((r) => setTimeout(r, 1000));
  const [pod] = await cri.listPodSandboxStats({ id: sb });
  assert.ok(pod);
  assert.equal(pod.attributes.metadata.uid, 'uid-direct');
  const linux = pod.linux!;
  t.diagnostic(`containerd pod: cpu ${linux.cpu?.usage_core_nano_seconds?.value} ns, network ${JSON.stringify(linux.network?.default_interface)}`);
  assert.ok(Number(linux.cpu?.usage_core_nano_seconds?.value) > 200_000_000);
  assert.ok(Number(linux.memory?.working_set_bytes?.value) > 0);
  assert.equal(linux.containers?.[0]?.attributes.metadata.name, 'spin');
  assert.ok(Number(linux.containers?.[0]?.cpu?.usage_core_nano_seconds?.value) > 200_000_000);
  await cri.removePodSandbox(sb);
});

test('the kubelet serves containerd-measured usage on /metrics/resource and /stats/summary', { skip: why }, async () => {
  const base = `http://127.0.0.1:${kubelet.port}`;
  await request(base, 'GET', '/stats/summary');
  await new Promise((r) => setTimeout(r, 2000));
  const m = await request(base, 'GET', '/metrics/resource');
  const line = m.text.split('\n').find((l) => l.startsWith('container_cpu_usage_seconds_total{container="burn",namespace="default",pod="burner"} '));
  assert.ok(line, m.text);
  assert.ok(Number(line.split(' ')[1]) > 0.5);
  assert.match(m.text, /^container_memory_working_set_bytes\{container="burn",namespace="default",pod="burner"\} \S+ \d+$/m);
  assert.match(m.text, /^resource_scrape_error 0$/m);
  const s = (await request(base, 'GET', '/stats/summary')).body;
  const pod = s.pods.find((p: { podRef: { name: string } }) => p.podRef.name === 'burner');
  assert.ok(pod.containers[0].cpu.usageNanoCores > 200_000_000, JSON.stringify(pod.containers[0]));
  assert.ok(pod.cpu.usageCoreNanoSeconds >= pod.containers[0].cpu.usageCoreNanoSeconds * 0.9);
});
