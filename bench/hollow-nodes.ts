/**
 * Kubelet scale benchmark: 100 hollow kubelets (one extra process) and a
 * Deployment of 2,000 replicas through the apiserver (its own process), the
 * controller-manager and the scheduler. Prints the time from Deployment create
 * to all pods Running and the pod startup latency (pod seen by a watch →
 * Running seen by the watch), p50/p90/p99 — the SLO anchor is p99 ≤ 5 s.
 *
 *   npm run bench:kubelet [-- --nodes 100 --pods 2000 --qps 200]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { ControllerManager } from '@kubeling/controller-manager';
import { InformerFactory, RestClient } from '@kubeling/client';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { nodeArgs, readWatch, request, startTestEnv, stopChild } from '@kubeling/testenv';

const { values } = parseArgs({
  options: { nodes: { type: 'string', default: '100' }, pods: { type: 'string', default: '2000' }, qps: { type: 'string', default: '200' } },
});
const NODES = Number(values.nodes);
const PODS = Number(values.pods);
const QPS = Number(values.qps);
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-hollow-'));
  const env = await startTestEnv({ apiserverProcess: true, server: { compactionIntervalMs: 0 } });
  const config = { server: env.url, namespace: 'default', insecureSkipTLSVerify: false };
  const host = spawn(
    process.execPath,
    nodeArgs(import.meta.url.endsWith('.js') ? 'bench/dist/hollow-host.js' : 'bench/hollow-host.ts', [
      `--master=${env.url}`,
      `--count=${NODES}`,
      `--dir=${dir}`,
    ]),
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const mgr = new ControllerManager({
    config,
    controllers: ['deployment', 'replicaset'],
    leaderElect: false,
    log: pino({ level: 'warn' }),
    qps: QPS,
    burst: QPS * 2,
  });
  const client = new RestClient(config, { qps: QPS, burst: QPS * 2 });
  const informers = new InformerFactory(client);
  const scheduler = new Scheduler({ client, informers, config: buildConfig(), log: pino({ level: 'warn' }) });
  try {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      host.stdout!.on('data', (b: Buffer) => b.toString().includes('ready') && resolve());
      host.once('exit', (c) => reject(new Error(`hollow host exited ${c}`)));
    });
    console.log(`${NODES} hollow kubelets registered in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await mgr.start();
    scheduler.init();
    informers.start();
    await scheduler.run();

    const seen = new Map<string, number>();
    const running = new Map<string, number>();
    const bound = new Map<string, number>();
    let done!: () => void;
    const allRunning = new Promise<void>((r) => (done = r));
    const watching = readWatch(
      `${env.url}/api/v1/namespaces/bench/pods?watch=true&allowWatchBookmarks=false`,
      (ev) => {
        const name = ev.object?.metadata?.name;
        if (!name) return;
        const now = performance.now();
        if (!seen.has(name)) seen.set(name, now);
        if (ev.object.spec?.nodeName && !bound.has(name)) bound.set(name, now);
        if (ev.object.status?.phase === 'Running' && !running.has(name)) {
          running.set(name, now);
          if (running.size >= PODS) {
            done();
            return true;
          }
        }
        return false;
      },
      600_000,
    );
    const start = performance.now();
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/bench/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'density' },
      spec: {
        replicas: PODS,
        selector: { matchLabels: { app: 'density' } },
        template: {
          metadata: { labels: { app: 'density' } },
          spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
        },
      },
    });
    await Promise.race([allRunning, watching.then(() => undefined)]);
    const total = (performance.now() - start) / 1000;
    const lat = [...running].map(([n, t]) => t - (seen.get(n) ?? t)).sort((a, b) => a - b);
    const createdSpan = (Math.max(...seen.values()) - start) / 1000;
    console.log(`kubelet benchmark: ${NODES} hollow nodes, Deployment of ${PODS}; controller-manager and scheduler client QPS ${QPS}`);
    console.log(
      `all ${running.size} pods Running ${total.toFixed(1)} s after the Deployment was created (${(running.size / total).toFixed(0)} pods/s); pods were created over ${createdSpan.toFixed(1)} s`,
    );
    const toBind = [...bound].map(([n, t]) => t - (seen.get(n) ?? t)).sort((a, b) => a - b);
    const toRun = [...running].map(([n, t]) => t - (bound.get(n) ?? t)).sort((a, b) => a - b);
    console.log(
      `  of which created → bound: p50 ${(pct(toBind, 50) / 1000).toFixed(2)} s, p99 ${(pct(toBind, 99) / 1000).toFixed(2)} s; bound → Running: p50 ${(pct(toRun, 50) / 1000).toFixed(2)} s, p99 ${(pct(toRun, 99) / 1000).toFixed(2)} s`,
    );
    console.log(
      `pod startup latency (created → Running, as watched): p50 ${(pct(lat, 50) / 1000).toFixed(2)} s, p90 ${(pct(lat, 90) / 1000).toFixed(2)} s, p99 ${(pct(lat, 99) / 1000).toFixed(2)} s (SLO anchor: p99 ≤ 5 s)`,
    );
  } finally {
    await scheduler.stop();
    informers.stop();
    client.close();
    await mgr.stop();
    await stopChild(host);
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
