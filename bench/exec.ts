/**
 * exec benchmark: the WebSocket path client → apiserver → kubelet → runtime
 * streaming server on one machine (etcd, an apiserver, a kubelet and
 * kubeling's runtime as processes of this run). Prints
 * - the round trip of `exec -- true` through the shared client (no CLI start),
 * - the wall time of `kubectl exec pod -- true` with bin/kubectl and the real kubectl,
 * - the output throughput of one exec streaming zeros (MB/s).
 *
 *   npm run bench:exec [-- --runs 20 --mb 64]
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { RestClient, STREAM_PROTOCOLS } from '@kubeling/client';
import { Kubelet } from '@kubeling/kubelet';
import { kubectlBinaries, nodeArgs, packageMain, startTestEnv, stopChild, waitFor } from '@kubeling/testenv';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, mb: { type: 'string', default: '64' } } });
const RUNS = Number(values.runs);
const MB = Number(values.mb);
const OURS = fileURLToPath(new URL('../bin/kubectl', import.meta.url));

const stats = (times: number[]) => {
  const s = [...times].sort((a, b) => a - b);
  return { med: s[Math.floor(s.length / 2)]!, p90: s[Math.floor(s.length * 0.9)]! };
};

const env = await startTestEnv();
const dir = mkdtempSync(join(tmpdir(), 'bench-exec-'));
const sock = join(dir, 'rt.sock');
const rt = spawn(process.execPath, nodeArgs(packageMain('runtime'), [`--listen=unix://${sock}`, `--root=${join(dir, 'rt')}`, '--pod-cidr=127.7.200.0/24']), {
  stdio: ['ignore', 'ignore', 'inherit'],
});
const config = { server: env.url, namespace: 'default', insecureSkipTLSVerify: false };
let kubelet: Kubelet | undefined;
const client = new RestClient(config);
try {
  await waitFor(async () => existsSync(sock), 60_000, 'runtime');
  kubelet = new Kubelet({
    config,
    nodeName: 'bench-exec',
    runtime: `unix://${sock}`,
    rootDir: join(dir, 'node'),
    port: 0,
    log: pino({ level: 'silent' }),
    statusUpdateMs: 1000,
    leaseRenewMs: 1000,
  });
  await kubelet.start();
  await client
    .post('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })
    .catch(() => undefined);
  await client.post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'sh' },
    spec: { nodeName: 'bench-exec', automountServiceAccountToken: false, containers: [{ name: 'sh', image: 'busybox', command: ['sleep', '3600'] }] },
  });
  await waitFor(
    async () => (await client.get<{ status?: { phase?: string } }>('/api/v1/namespaces/default/pods/sh')).status?.phase === 'Running',
    60_000,
    'the pod',
  );

  /** One exec through the shared client; resolves with the stdout bytes once the stream closes. */
  const execOnce = async (command: string[]): Promise<number> => {
    const q = new URLSearchParams();
    for (const c of command) q.append('command', c);
    q.set('stdout', 'true');
    let bytes = 0;
    const ws = await client.websocket('/api/v1/namespaces/default/pods/sh/exec', q, STREAM_PROTOCOLS, (d) => {
      if (d[0] === 1) bytes += d.length - 1;
    });
    await new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : ws.once('close', () => resolve())));
    return bytes;
  };

  await execOnce(['true']);
  const rtt: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await execOnce(['true']);
    rtt.push(performance.now() - t);
  }
  const r = stats(rtt);
  console.log(`exec -- true, shared client         median ${r.med.toFixed(1)} ms  p90 ${r.p90.toFixed(1)} ms`);

  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: b, cluster: {server: "${env.url}"}}]\nusers: [{name: b, user: {}}]\ncontexts: [{name: b, context: {cluster: b, user: b, namespace: default}}]\ncurrent-context: b\n`,
  );
  const real = kubectlBinaries().default;
  const medians: Record<string, number> = {};
  for (const [name, bin] of [['bin/kubectl', OURS], ...(real ? [['kubectl', real]] : [])] as [string, string][]) {
    // Asynchronously: the apiserver and the kubelet run in this process.
    const run = async () => {
      const t = performance.now();
      await promisify(execFile)(
        bin,
        [`--kubeconfig=${kubeconfig}`, `--cache-dir=${join(dir, `cache-${name.replace('/', '-')}`)}`, 'exec', 'sh', '--', 'true'],
        { env: { ...process.env, KUBECONFIG: '', HOME: dir } },
      );
      return performance.now() - t;
    };
    await run();
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await run());
    const s = stats(times);
    medians[name] = s.med;
    console.log(`${name.padEnd(12)} exec sh -- true          median ${s.med.toFixed(0)} ms  p90 ${s.p90.toFixed(0)} ms`);
  }
  if (medians.kubectl) console.log(`ratio (ours / real) kubectl exec       ${(medians['bin/kubectl']! / medians.kubectl).toFixed(2)}`);

  const t = performance.now();
  const bytes = await execOnce(['head', '-c', String(MB * 1024 * 1024), '/dev/zero']);
  const secs = (performance.now() - t) / 1000;
  console.log(`stdout throughput: ${(bytes / 1024 / 1024).toFixed(0)} MiB in ${secs.toFixed(2)} s = ${(bytes / 1024 / 1024 / secs).toFixed(0)} MiB/s`);
} finally {
  client.close();
  await kubelet?.stop();
  await stopChild(rt);
  await env.stop();
  rmSync(dir, { recursive: true, force: true });
}
