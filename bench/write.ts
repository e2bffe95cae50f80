/**
 * Write benchmark: ConfigMap creates per second through the apiserver versus raw
 * etcd3 puts per second, both with the same number of requests in flight (64),
 * printed as a ratio with p50/p99 latencies.
 *
 *   npm run bench:write [-- --count 5000 --inflight 64 --inprocess]
 *
 * The apiserver runs as its own process (as in a real cluster) unless
 * --inprocess is given.
 */
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { startTestEnv } from '@kubeling/testenv';
import { fmt, run, send } from './load.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '5000' },
    inflight: { type: 'string', default: '64' },
    inprocess: { type: 'boolean', default: false },
  },
});
const COUNT = Number(values.count);
const INFLIGHT = Number(values.inflight);

async function main(): Promise<void> {
  const env = await startTestEnv({ apiserverProcess: !values.inprocess, server: { compactionIntervalMs: 0 } });
  const etcd = new Etcd3({ hosts: env.etcd.endpoint });
  try {
    const value = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { key: 'value' } });
    // warm both paths
    await run(200, INFLIGHT, (i) =>
      etcd
        .put(`/bench/warm/${i}`)
        .value(value)
        .then(() => undefined),
    );
    const raw = await run(COUNT, INFLIGHT, (i) =>
      etcd
        .put(`/bench/raw/${i}`)
        .value(value)
        .then(() => undefined),
    );

    const agent = new Agent({ keepAlive: true, maxSockets: INFLIGHT });
    const base = new URL(env.url);
    const body = (i: number) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { key: 'value' } });
    await run(200, INFLIGHT, async (i) => {
      await send(agent, base, 'POST', '/api/v1/namespaces/kube-public/configmaps', body(i));
    });
    let failures = 0;
    const api = await run(COUNT, INFLIGHT, async (i) => {
      const { code } = await send(agent, base, 'POST', '/api/v1/namespaces/default/configmaps', body(i));
      if (code !== 201) failures++;
    });
    agent.destroy();
    console.log(`write benchmark: ${COUNT} objects, ${INFLIGHT} in flight, apiserver ${values.inprocess ? 'in-process' : 'as its own process'}`);
    console.log(`raw etcd3 put       ${fmt(raw)}`);
    console.log(`apiserver create    ${fmt(api)}${failures ? `   (${failures} failed)` : ''}`);
    console.log(`ratio apiserver/etcd creates per second: ${(api.perSecond / raw.perSecond).toFixed(3)}`);
  } finally {
    etcd.close();
    await env.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
