/**
 * Controller benchmark: time for a Deployment of N replicas (default 1000) to have
 * N Pods created, with the controller-manager's client QPS/burst printed beside it
 * (upstream kube-controller-manager defaults to 20/30).
 *
 *   npm run bench:deployment [-- --replicas 1000 --qps 20 --burst 30]
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { ControllerManager } from '@kubeling/controller-manager';
import { request, startTestEnv } from '@kubeling/testenv';

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '1000' },
    qps: { type: 'string', default: '20' },
    burst: { type: 'string', default: '30' },
  },
});
const N = Number(values.replicas);

async function main(): Promise<void> {
  const env = await startTestEnv({ apiserverProcess: true, server: { compactionIntervalMs: 0 } });
  const mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['deployment', 'replicaset'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    qps: Number(values.qps),
    burst: Number(values.burst),
  });
  try {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await mgr.start();
    await new Promise((r) => setTimeout(r, 500));
    const start = performance.now();
    const before = mgr.client.requestCount;
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/bench/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bench' },
      spec: {
        replicas: N,
        selector: { matchLabels: { app: 'bench' } },
        template: { metadata: { labels: { app: 'bench' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    let count = 0;
    const marks: string[] = [];
    for (let i = 0; i < 6000; i++) {
      // Without a selector the list reports remainingItemCount: one small request counts them all.
      const list = await request(env.url, 'GET', '/api/v1/namespaces/bench/pods?limit=1');
      count = Number(list.body.metadata.remainingItemCount ?? 0) + list.body.items.length;
      if (count >= N) break;
      if (i % 50 === 0) marks.push(`${((performance.now() - start) / 1000).toFixed(1)}s:${count}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - start) / 1000;
    const requests = mgr.client.requestCount - before;
    console.log(`deployment benchmark: ${N} replicas, controller-manager client QPS ${values.qps} burst ${values.burst}`);
    console.log(`pods created: ${count} in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(1)} pods/s)`);
    console.log(
      `controller-manager requests: ${requests} (${(requests / seconds).toFixed(1)}/s, waited ${(mgr.client.limiter.waitedMs / 1000).toFixed(1)} s for rate limiting)`,
    );
    console.log(`progress: ${marks.join(' ')}`);
  } finally {
    await mgr.stop();
    await env.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
