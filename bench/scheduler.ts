/**
 * Scheduler benchmark: N nodes (default 1,000) and M pods (default 5,000)
 * created through the apiserver (running as its own process), then the
 * scheduler starts and binds them all. Prints pods bound per second, the time to
 * bind all, how many nodes each attempt evaluated (percentageOfNodesToScore),
 * and the share of time spent in the scheduling algorithm itself.
 *
 *   npm run bench:scheduler [-- --nodes 1000 --pods 5000 --qps 5000 --burst 5000]
 *
 * Upstream's scheduler_perf runs with a high client QPS too; at the
 * kube-scheduler default of 50 the client's rate limiter is the bound.
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { InformerFactory, RestClient } from '@kubeling/client';
import { buildConfig, numFeasibleNodesToFind, Scheduler } from '@kubeling/scheduler';
import { request, startTestEnv } from '@kubeling/testenv';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    pods: { type: 'string', default: '5000' },
    qps: { type: 'string', default: '5000' },
    burst: { type: 'string', default: '5000' },
    percentage: { type: 'string', default: '0' },
  },
});
const NODES = Number(values.nodes);
const PODS = Number(values.pods);

async function inParallel(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

async function main(): Promise<void> {
  const env = await startTestEnv({ apiserverProcess: true, server: { compactionIntervalMs: 0 } });
  const client = new RestClient(
    { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    { qps: Number(values.qps), burst: Number(values.burst) },
  );
  const eventClient = new RestClient(
    { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    { qps: Number(values.qps), burst: Number(values.burst) },
  );
  const informers = new InformerFactory(client);
  const config = buildConfig({ percentageOfNodesToScore: Number(values.percentage) });
  const scheduler = new Scheduler({ client, eventClient, informers, config, log: pino({ level: 'warn' }) });
  try {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    let t = performance.now();
    await inParallel(NODES, 32, async (i) => {
      const name = `node-${i}`;
      const alloc = { cpu: '32', memory: '128Gi', pods: '110' };
      await request(env.url, 'POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': `zone-${i % 3}` } },
      });
      await request(
        env.url,
        'PATCH',
        `/api/v1/nodes/${name}/status`,
        { status: { capacity: alloc, allocatable: alloc, conditions: [{ type: 'Ready', status: 'True' }] } },
        { contentType: 'application/merge-patch+json' },
      );
    });
    console.log(`created ${NODES} nodes in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
    await inParallel(PODS, 64, async (i) => {
      const r = await request(env.url, 'POST', '/api/v1/namespaces/bench/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `pod-${i}`, labels: { app: 'bench' } },
        spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
      });
      if (r.status !== 201) throw new Error(`pod create: ${r.status} ${JSON.stringify(r.body)}`);
    });
    console.log(`created ${PODS} pods in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    scheduler.init();
    const syncStart = performance.now();
    informers.start();
    await scheduler.run();
    const start = performance.now();
    console.log(`scheduler informers synced in ${((start - syncStart) / 1000).toFixed(1)} s; scheduling`);
    const marks: string[] = [];
    let bound = 0;
    for (let i = 0; i < 3000; i++) {
      bound = scheduler.bound;
      if (bound >= PODS) break;
      if (i % 10 === 0) marks.push(`${((performance.now() - start) / 1000).toFixed(1)}s:${bound}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - start) / 1000;
    // Check what the apiserver holds, not only what the scheduler counted.
    let onNodes = 0;
    let cont = '';
    do {
      const list = await request(env.url, 'GET', `/api/v1/namespaces/bench/pods?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      if (list.status !== 200) throw new Error(`list pods: ${list.status} ${JSON.stringify(list.body).slice(0, 300)}`);
      onNodes += (list.body.items as { spec: { nodeName?: string } }[]).filter((p) => p.spec.nodeName).length;
      cont = list.body.metadata.continue ?? '';
    } while (cont);
    console.log(`scheduler benchmark: ${NODES} nodes, ${PODS} pods, client QPS ${values.qps} burst ${values.burst}`);
    console.log(
      `nodes evaluated per attempt: ${numFeasibleNodesToFind(config.percentageOfNodesToScore, NODES)} of ${NODES} (percentageOfNodesToScore ${config.percentageOfNodesToScore || 'adaptive'})`,
    );
    console.log(`bound ${bound} pods in ${seconds.toFixed(2)} s: ${(bound / seconds).toFixed(0)} pods/s (goal >= 400/s); apiserver shows ${onNodes} on nodes`);
    console.log(
      `scheduling algorithm (filter + score): ${(scheduler.algorithmMs / Math.max(scheduler.scheduled, 1)).toFixed(2)} ms per pod, ${((scheduler.algorithmMs / 1000 / seconds) * 100).toFixed(0)} % of the wall time; the rest is binding and watch traffic`,
    );
    console.log(`progress: ${marks.join(' ')}`);
  } finally {
    await scheduler.stop();
    informers.stop();
    client.close();
    eventClient.close();
    await env.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
