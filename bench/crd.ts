/**
 * CustomResourceDefinition benchmark, beside its goals:
 * - creates per second of a custom resource whose schema has ~50 fields and 5
 *   `x-kubernetes-validations` rules, against ConfigMap creates, 64 in flight
 *   (a ratio: upstream pays a similar price for schema validation and CEL);
 * - how long a new CRD takes to be Established, and to serve its resources
 *   (the first successful list), p50 and p99 of 20 CRDs.
 *
 *   npm run bench:crd [-- --count 3000 --inflight 64 --crds 20 --inprocess]
 */
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { startTestEnv } from '@kubeling/testenv';
import { fmt, run, send } from './load.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '3000' },
    inflight: { type: 'string', default: '64' },
    crds: { type: 'string', default: '20' },
    inprocess: { type: 'boolean', default: false },
  },
});
const COUNT = Number(values.count);
const INFLIGHT = Number(values.inflight);
const CRDS = Number(values.crds);

/** A spec of 48 fields (strings, integers, booleans, a list and a map) and 5 CEL rules. */
function schema(): object {
  const spec: Record<string, object> = {};
  for (let i = 0; i < 16; i++) spec[`s${i}`] = { type: 'string', maxLength: 63, pattern: '^[a-z0-9-]*$' };
  for (let i = 0; i < 16; i++) spec[`n${i}`] = { type: 'integer', minimum: 0, maximum: 1000 };
  for (let i = 0; i < 14; i++) spec[`b${i}`] = { type: 'boolean' };
  spec.items = { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 32 } };
  spec.labels = { type: 'object', maxProperties: 16, additionalProperties: { type: 'string', maxLength: 63 } };
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: spec,
        'x-kubernetes-validations': [
          { rule: 'self.n0 <= self.n1', message: 'n0 must not exceed n1' },
          { rule: "self.s0.startsWith('w')" },
          { rule: 'self.items.all(x, x.size() > 0)' },
          { rule: "!has(self.s1) || self.s1 != 'forbidden'" },
          { rule: 'self.labels.size() <= 16' },
        ],
      },
    },
  };
}

function crd(plural: string, group: string): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind: `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema() } }],
    },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const env = await startTestEnv({ apiserverProcess: !values.inprocess, server: { compactionIntervalMs: 0 } });
  const agent = new Agent({ keepAlive: true, maxSockets: INFLIGHT });
  const base = new URL(env.url);
  try {
    // Time to Established and to a served resource, one CRD at a time.
    const established: number[] = [];
    const usable: number[] = [];
    for (let i = 0; i < CRDS; i++) {
      const t = performance.now();
      const c = await send(agent, base, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd(`widgets${i}s`, 'bench.example.com'));
      if (c.code !== 201) throw new Error(`CRD create: ${c.code} ${c.text}`);
      let est = false;
      for (let k = 0; k < 2000; k++) {
        if (!est) {
          const g = await send(agent, base, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets${i}s.bench.example.com`);
          if (/"type":"Established","status":"True"/.test(g.text)) {
            est = true;
            established.push(performance.now() - t);
          }
        }
        if (est && (await send(agent, base, 'GET', `/apis/bench.example.com/v1/namespaces/default/widgets${i}s`)).code === 200) {
          usable.push(performance.now() - t);
          break;
        }
        await sleep(2);
      }
    }
    const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? Number.NaN;

    const cm = (i: number) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { key: 'value' } });
    const cr = (i: number) => {
      const spec: Record<string, unknown> = { items: ['a', 'b', 'c'], labels: { a: 'b' } };
      for (let k = 0; k < 16; k++) spec[`s${k}`] = k === 0 ? 'web' : `v-${k}`;
      for (let k = 0; k < 16; k++) spec[`n${k}`] = k;
      for (let k = 0; k < 14; k++) spec[`b${k}`] = k % 2 === 0;
      return JSON.stringify({ apiVersion: 'bench.example.com/v1', kind: 'Widgets0', metadata: { name: `w-${i}` }, spec });
    };
    const path0 = '/apis/bench.example.com/v1/namespaces/default/widgets0s';
    const check = await send(agent, base, 'POST', path0, cr(-1));
    if (check.code !== 201) throw new Error(`custom resource create: ${check.code} ${check.text}`);
    await run(200, INFLIGHT, async (i) => void (await send(agent, base, 'POST', '/api/v1/namespaces/kube-public/configmaps', cm(i))));
    await run(200, INFLIGHT, async (i) => void (await send(agent, base, 'POST', '/apis/bench.example.com/v1/namespaces/kube-public/widgets0s', cr(i))));
    let failures = 0;
    const cms = await run(COUNT, INFLIGHT, async (i) => {
      if ((await send(agent, base, 'POST', '/api/v1/namespaces/default/configmaps', cm(i))).code !== 201) failures++;
    });
    const crs = await run(COUNT, INFLIGHT, async (i) => {
      if ((await send(agent, base, 'POST', path0, cr(i))).code !== 201) failures++;
    });
    console.log(`CRD benchmark: ${COUNT} objects, ${INFLIGHT} in flight, apiserver ${values.inprocess ? 'in-process' : 'as its own process'}`);
    console.log(`ConfigMap create          ${fmt(cms)}`);
    console.log(`custom resource create    ${fmt(crs)}${failures ? `   (${failures} failed)` : ''}   (48 fields, 5 CEL rules)`);
    console.log(
      `ratio custom resource / ConfigMap creates per second: ${(crs.perSecond / cms.perSecond).toFixed(3)}   (goal: comparable to upstream, which validates and runs CEL too)`,
    );
    console.log(
      `CRD created → Established: p50 ${q(established, 0.5).toFixed(0)} ms, p99 ${q(established, 0.99).toFixed(0)} ms; → resources served: p50 ${q(usable, 0.5).toFixed(0)} ms, p99 ${q(usable, 0.99).toFixed(0)} ms   (${CRDS} CRDs)`,
    );
  } finally {
    agent.destroy();
    await env.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
