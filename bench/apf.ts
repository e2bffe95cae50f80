/**
 * API Priority and Fairness benchmark: one apiserver (its own process, HTTPS,
 * RBAC) with a small concurrency budget (--max-requests-inflight 4 +
 * --max-mutating-requests-inflight 2 by default), and two users whose requests
 * go to the same priority level (a FlowSchema each, so that the server's
 * metrics tell their queue waits apart; two flows sharing the level's queues):
 *
 * - "flood" keeps --flood requests in flight without pause (closed loop),
 * - "steady" sends --rate requests per second on a fixed schedule (open loop).
 *
 * Both list the same 50 ConfigMaps. Printed per flow: requests, successes per
 * second, 429s, the p50/p99 latency of its successful requests and its mean
 * wait in the APF queue (server side, from /metrics); the steady flow is also
 * measured alone first. Beside them, the
 * goal: fair queuing gives each flow its share of the level, so the flood is
 * refused (429) while the steady flow, using less than its share, sees no 429
 * and a low p99. Figures only: nothing is asserted.
 *
 *   npm run bench:apf [-- --seconds 10 --flood 64 --rate 5 --inflight 4 --mutating-inflight 2]
 *
 * The apiserver is this same file run with --serve (the options reach it in a
 * 0600 file), so that the load generator does not share its event loop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { APISERVER_DNS, APISERVER_IPS, createCA, issue } from '@kubeling/pki';
import { startEtcd, stopChild, waitFor } from '@kubeling/testenv';

const { values } = parseArgs({
  options: {
    serve: { type: 'string' },
    seconds: { type: 'string', default: '10' },
    flood: { type: 'string', default: '64' },
    rate: { type: 'string', default: '5' },
    inflight: { type: 'string', default: '4' },
    'mutating-inflight': { type: 'string', default: '2' },
  },
});

interface ServeConfig {
  etcd: string;
  tls: { cert: string; key: string; clientCA: string };
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
}

/** The apiserver process: listens on a loopback port, prints it, stops on SIGTERM. */
async function serve(configFile: string): Promise<void> {
  const { buildApiServer } = await import('@kubeling/apiserver');
  const cfg = JSON.parse(readFileSync(configFile, 'utf8')) as ServeConfig;
  const server = await buildApiServer({
    etcdServers: [cfg.etcd],
    logger: false,
    tls: cfg.tls,
    maxRequestsInflight: cfg.maxRequestsInflight,
    maxMutatingRequestsInflight: cfg.maxMutatingRequestsInflight,
    compactionIntervalMs: 0,
  });
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = server.app.server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0 })}\n`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
}

interface Reply {
  status: number;
  ms: number;
}

function get(agent: Agent, base: URL, path: string): Promise<Reply> {
  const t = performance.now();
  return new Promise((resolve) => {
    const req = httpsRequest({ agent, host: base.hostname, port: base.port, path, method: 'GET', headers: { accept: 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t }));
    req.end();
  });
}

function send(
  creds: { cert: string; key: string },
  ca: string,
  base: URL,
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpsRequest(
      { host: base.hostname, port: base.port, path, method, ca, cert: creds.cert, key: creds.key, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const quantile = (xs: number[], q: number) => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

function report(name: string, replies: Reply[], seconds: number): string {
  const ok = replies.filter((r) => r.status === 200);
  const refused = replies.filter((r) => r.status === 429).length;
  const other = replies.length - ok.length - refused;
  const lat = ok.map((r) => r.ms);
  return `${name.padEnd(7)} ${String(replies.length).padStart(7)} ${(ok.length / seconds).toFixed(1).padStart(9)} ${String(refused).padStart(7)} ${String(other).padStart(6)} ${quantile(lat, 0.5).toFixed(1).padStart(8)} ${quantile(lat, 0.99).toFixed(1).padStart(8)}`;
}

async function main(): Promise<void> {
  const SECONDS = Number(values.seconds);
  const FLOOD = Number(values.flood);
  const RATE = Number(values.rate);
  const etcd = await startEtcd();
  const dir = mkdtempSync(join(tmpdir(), 'bench-apf-'));
  let child: ChildProcess | undefined;
  const agents: Agent[] = [];
  try {
    const ca = await createCA('kubeling-bench-ca');
    const serving = await issue(ca, { commonName: 'kube-apiserver', dnsNames: APISERVER_DNS, ips: APISERVER_IPS, usage: 'server' });
    const cert = async (cn: string, orgs: string[]) => {
      const c = await issue(ca, { commonName: cn, organizations: orgs, usage: 'client' });
      return { cert: c.certPem, key: c.keyPem };
    };
    const admin = await cert('bench-admin', ['system:masters']);
    const flooder = await cert('flood', ['bench-users']);
    const steady = await cert('steady', ['bench-users']);
    const configFile = join(dir, 'serve.json');
    const cfg: ServeConfig = {
      etcd: etcd.endpoint,
      tls: { cert: serving.certPem, key: serving.keyPem, clientCA: ca.certPem },
      maxRequestsInflight: Number(values.inflight),
      maxMutatingRequestsInflight: Number(values['mutating-inflight']),
    };
    writeFileSync(configFile, JSON.stringify(cfg), { mode: 0o600 });
    child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), `--serve=${configFile}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n')[0];
        if (out.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
      });
      child!.once('exit', (code) => reject(new Error(`apiserver exited with ${code}`)));
    });
    const base = new URL(`https://127.0.0.1:${port}`);
    const adminSend = (method: string, path: string, body: unknown) => send(admin, ca.certPem, base, method, path, body);
    await waitFor(async () => (await adminSend('GET', '/readyz', undefined)).status === 200, 60_000, 'apiserver ready');
    /** Server-side queue waits of executed requests, by flow schema (from /metrics): seconds in total, and how many. */
    const waits = async () => {
      const out = new Map<string, { sum: number; count: number }>();
      const re = /^apiserver_flowcontrol_request_wait_duration_seconds_(sum|count)\{priority_level="bench",flow_schema="([^"]+)",execute="true"\} (\S+)$/gm;
      for (const m of (await adminSend('GET', '/metrics', undefined)).text.matchAll(re)) {
        const w = out.get(m[2]!) ?? { sum: 0, count: 0 };
        w[m[1] as 'sum' | 'count'] = Number(m[3]);
        out.set(m[2]!, w);
      }
      return out;
    };

    await adminSend('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bench-users-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'bench-users' }],
    });
    await adminSend('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apf-bench' } });
    for (let i = 0; i < 50; i++) {
      await adminSend('POST', '/api/v1/namespaces/apf-bench/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}` },
        data: { v: 'x'.repeat(1000) },
      });
    }
    // Half the server's seats for the users (245 shares against the bootstrap levels' 245), queues as upstream's suggested levels.
    const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
    await adminSend('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'bench' },
      spec: {
        type: 'Limited',
        limited: { nominalConcurrencyShares: 245, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 10 } } },
      },
    });
    // A schema per user (so that /metrics tells their queue waits apart), both to the same level: two flows sharing its queues.
    for (const user of ['flood', 'steady']) {
      await adminSend('POST', `${FC}/flowschemas`, {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name: `bench-${user}` },
        spec: {
          priorityLevelConfiguration: { name: 'bench' },
          matchingPrecedence: 500,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [{ kind: 'User', user: { name: user } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
            },
          ],
        },
      });
    }
    const agentOf = (c: { cert: string; key: string }, sockets: number) => {
      const a = new Agent({ keepAlive: true, maxSockets: sockets, ca: ca.certPem, cert: c.cert, key: c.key });
      agents.push(a);
      return a;
    };
    const floodAgent = agentOf(flooder, FLOOD);
    const steadyAgent = agentOf(steady, 64);
    const path = '/api/v1/namespaces/apf-bench/configmaps';
    // Connections and RBAC in place before the clock starts.
    await waitFor(async () => (await get(steadyAgent, base, path)).status === 200, 30_000, 'the users to be authorized');
    await Promise.all(Array.from({ length: FLOOD }, () => get(floodAgent, base, `${path}?limit=1`)));
    await Promise.all(Array.from({ length: 8 }, () => get(steadyAgent, base, `${path}?limit=1`)));
    await new Promise((r) => setTimeout(r, 1000));

    /** The steady flow for `seconds`: a request every 1/RATE s, whatever the earlier ones are doing. */
    const steadyFor = async (seconds: number, into: Reply[]) => {
      const start = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; (i * 1000) / RATE < seconds * 1000; i++) {
        const wait = start + (i * 1000) / RATE - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(get(steadyAgent, base, path).then((r) => void into.push(r)));
      }
      await Promise.all(pending);
    };
    // The steady flow alone first: what its latencies are without competition.
    const BASELINE = Math.min(3, SECONDS);
    const alone: Reply[] = [];
    await steadyFor(BASELINE, alone);

    const before = await waits();
    const end = performance.now() + SECONDS * 1000;
    const floodReplies: Reply[] = [];
    const steadyReplies: Reply[] = [];
    const worker = async () => {
      while (performance.now() < end) floodReplies.push(await get(floodAgent, base, path));
    };
    const workers = Array.from({ length: FLOOD }, worker);
    await Promise.all([...workers, steadyFor(SECONDS, steadyReplies)]);
    const after = await waits();
    const meanWait = (fs: string) => {
      const a = after.get(fs) ?? { sum: 0, count: 0 };
      const b = before.get(fs) ?? { sum: 0, count: 0 };
      return a.count > b.count ? (((a.sum - b.sum) / (a.count - b.count)) * 1000).toFixed(1) : '-';
    };

    console.log(
      `APF benchmark: ${SECONDS} s, server limit ${cfg.maxRequestsInflight}+${cfg.maxMutatingRequestsInflight} seats, level "bench" 3 of them (64 queues, hand 6, 10 per queue)`,
    );
    console.log(`flood: ${FLOOD} requests always in flight; steady: ${RATE} requests/s; both list 50 ConfigMaps, as two users sent to the same priority level`);
    console.log('flow      requests   ok/s     429s  other   p50 ms   p99 ms   (latencies of successful requests)');
    console.log(`${report('steady', alone, BASELINE)}   (alone, ${BASELINE} s before the flood)`);
    console.log(`${report('flood', floodReplies, SECONDS)}   (mean wait in its APF queue ${meanWait('bench-flood')} ms)`);
    console.log(`${report('steady', steadyReplies, SECONDS)}   (mean wait in its APF queue ${meanWait('bench-steady')} ms)`);
    console.log('goal: flood gets 429s; steady gets none, all its requests served, its p99 low (it asks less than its fair share)');
  } finally {
    for (const a of agents) a.destroy();
    if (child) await stopChild(child);
    await etcd.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.serve) {
  serve(values.serve).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
