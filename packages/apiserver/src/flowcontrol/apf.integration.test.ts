/**
 * API Priority and Fairness against a real apiserver (HTTPS, client
 * certificates, RBAC) with a small concurrency budget (2 + 1 seats): the
 * bootstrap configuration, the response headers, a flooding user refused with
 * 429 while another user of the same level is served, watches holding a seat
 * only while they start, Dangling FlowSchemas, the real kubectl's tables, the
 * debug dumps behind authorization, the metrics, and the bootstrap ensurer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { Kubectl, eventually, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ensureFlowControlConfiguration } from '../registry/flowcontrol/ensurer.js';
import { FLOW_SCHEMAS, PRIORITY_LEVELS } from './index.js';

type Creds = { certPem: string; keyPem: string };
interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

let env: TestEnv;
let admin: Creds;
let alice: Creds;
let bob: Creds;
const agents: Agent[] = [];
const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';

function agentFor(c: Creds): Agent {
  const a = new Agent({ keepAlive: true, maxSockets: 200, ca: env.pki!.caPem, cert: c.certPem, key: c.keyPem });
  agents.push(a);
  return a;
}

function call(agent: Agent | Creds, method: string, path: string, body?: unknown): Promise<Reply> {
  const u = new URL(env.url + path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const tls = agent instanceof Agent ? { agent } : { ca: env.pki!.caPem, cert: agent.certPem, key: agent.keyPem };
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, ...tls, headers: payload ? { 'content-type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json')) parsed = JSON.parse(text);
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const uidOf = async (resource: string, name: string) => (await call(admin, 'GET', `${FC}/${resource}/${name}`)).body.metadata.uid as string;

before(async () => {
  env = await startTestEnv({ secure: true, server: { maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 } });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  alice = await env.pki!.client('alice', ['apf-testers']);
  bob = await env.pki!.client('bob', ['apf-testers']);
  await call(admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'apf-testers-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'apf-testers' }],
  });
  await call(admin, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flood' } });
  // Lists of these take a while to encode and send: the flood's seats stay taken.
  const data = { blob: 'x'.repeat(2000) };
  for (let i = 0; i < 40; i++)
    await call(admin, 'POST', '/api/v1/namespaces/flood/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data });
  // One level for the testers: 245 shares against the bootstrap levels' 245, so 2 of the 3 seats; small queues.
  const pl = await call(admin, 'POST', `${FC}/prioritylevelconfigurations`, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: 'apf-test' },
    spec: {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 245, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 1 } } },
    },
  });
  assert.equal(pl.status, 201, JSON.stringify(pl.body));
  const fs = await call(admin, 'POST', `${FC}/flowschemas`, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'apf-test' },
    spec: {
      priorityLevelConfiguration: { name: 'apf-test' },
      matchingPrecedence: 500,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'Group', group: { name: 'apf-testers' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  });
  assert.equal(fs.status, 201, JSON.stringify(fs.body));
  // The configuration and the RBAC policy reach the server through the watch cache.
  await eventually(
    async () => (await call(alice, 'GET', '/api/v1/namespaces/flood/configmaps?limit=1')).headers['x-kubernetes-pf-flowschema-uid'] === fs.body.metadata.uid,
  );
});

after(async () => {
  for (const a of agents) a.destroy();
  await env?.stop();
});

test('the mandatory and suggested configuration exists, annotated for auto-update', async () => {
  const fss = (await call(admin, 'GET', `${FC}/flowschemas`)).body.items;
  const precedence = Object.fromEntries(fss.map((f: any) => [f.metadata.name, f.spec.matchingPrecedence]));
  assert.deepEqual(precedence, {
    'apf-test': 500,
    'catch-all': 10000,
    'endpoint-controller': 150,
    exempt: 1,
    'global-default': 9900,
    'kube-controller-manager': 800,
    'kube-scheduler': 800,
    'kube-system-service-accounts': 900,
    probes: 2,
    'service-accounts': 9000,
    'system-leader-election': 100,
    'system-node-high': 400,
    'system-nodes': 500,
    'workload-leader-election': 200,
  });
  for (const f of fss) if (f.metadata.name !== 'apf-test') assert.equal(f.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'true', f.metadata.name);
  const pls = (await call(admin, 'GET', `${FC}/prioritylevelconfigurations`)).body.items;
  assert.deepEqual(pls.map((p: any) => p.metadata.name).sort(), [
    'apf-test',
    'catch-all',
    'exempt',
    'global-default',
    'leader-election',
    'node-high',
    'system',
    'workload-high',
    'workload-low',
  ]);
  const exempt = pls.find((p: any) => p.metadata.name === 'exempt');
  assert.deepEqual(exempt.spec, { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } });
  // The apiserver reports in each schema's status that its priority level exists.
  await eventually(async () => {
    const items = (await call(admin, 'GET', `${FC}/flowschemas`)).body.items;
    return items.every((f: any) => f.status?.conditions?.some((c: any) => c.type === 'Dangling' && c.status === 'False' && c.reason === 'Found'));
  });
});

test('responses name the FlowSchema and priority level they were classified into, by UID', async () => {
  const r = await call(admin, 'GET', '/api/v1/namespaces');
  assert.equal(r.headers['x-kubernetes-pf-flowschema-uid'], await uidOf('flowschemas', 'exempt'));
  assert.equal(r.headers['x-kubernetes-pf-prioritylevel-uid'], await uidOf('prioritylevelconfigurations', 'exempt'));
  const a = await call(alice, 'GET', '/api/v1/namespaces/flood/configmaps?limit=1');
  assert.equal(a.headers['x-kubernetes-pf-prioritylevel-uid'], await uidOf('prioritylevelconfigurations', 'apf-test'));
  // Refused by authorization, classified all the same (APF comes first).
  const denied = await call(alice, 'POST', '/api/v1/namespaces/flood/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nope' } });
  assert.equal(denied.status, 403);
  assert.equal(denied.headers['x-kubernetes-pf-flowschema-uid'], await uidOf('flowschemas', 'apf-test'));
});

test('a flooding user gets 429s while another user of the same level keeps being served', async () => {
  const floodAgent = agentFor(alice);
  const steadyAgent = agentFor(bob);
  const list = (agent: Agent, query = '') => call(agent, 'GET', `/api/v1/namespaces/flood/configmaps${query}`);
  // Connections first (cheap requests), so that the flood arrives at once.
  await Promise.all(Array.from({ length: 60 }, () => list(floodAgent, '?limit=1')));
  await list(steadyAgent, '?limit=1');
  const flood = Promise.all(Array.from({ length: 60 }, () => list(floodAgent)));
  const steady: Reply[] = [];
  for (let i = 0; i < 10; i++) steady.push(await list(steadyAgent));
  const flooded = await flood;
  const refused = flooded.filter((r) => r.status === 429);
  assert.ok(refused.length > 0, 'the flood was refused in part');
  assert.ok(flooded.every((r) => r.status === 200 || r.status === 429));
  assert.deepEqual(
    steady.map((r) => r.status),
    Array(10).fill(200),
  );
  const one = refused[0]!;
  assert.ok(Number(one.headers['retry-after']) >= 1);
  assert.deepEqual(
    [one.body.kind, one.body.reason, one.body.message, one.body.code],
    ['Status', 'TooManyRequests', 'Too many requests, please try again later.', 429],
  );
  assert.equal(one.headers['x-kubernetes-pf-flowschema-uid'], await uidOf('flowschemas', 'apf-test'));
  const metrics = (await call(admin, 'GET', '/metrics')).body as string;
  assert.match(metrics, /apiserver_flowcontrol_rejected_requests_total\{priority_level="apf-test",flow_schema="apf-test",reason="queue-full"\} [1-9]/);
  assert.match(metrics, /apiserver_flowcontrol_dispatched_requests_total\{priority_level="apf-test",flow_schema="apf-test"\} [1-9]/);
  assert.match(metrics, /apiserver_flowcontrol_request_wait_duration_seconds_count\{priority_level="apf-test",flow_schema="apf-test",execute="true"\} [1-9]/);
  assert.match(metrics, /apiserver_flowcontrol_current_inqueue_requests\{priority_level="apf-test",flow_schema="apf-test"\} 0/);
  assert.match(metrics, /apiserver_flowcontrol_nominal_limit_seats\{priority_level="apf-test"\} 2/);
});

test('watches hold a seat only while they start', async () => {
  const agent = agentFor(alice);
  const open: { destroy(): void }[] = [];
  // More watches than the level has seats, all open at once.
  for (let i = 0; i < 4; i++) {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(`${env.url}/api/v1/namespaces/flood/configmaps?watch=1&timeoutSeconds=30`);
      const req = httpsRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, agent }, (res) => {
        open.push(res);
        assert.ok(res.headers['x-kubernetes-pf-flowschema-uid']);
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 200);
  }
  assert.equal((await call(alice, 'GET', '/api/v1/namespaces/flood/configmaps?limit=1')).status, 200, 'seats are free while the watches run');
  for (const r of open) r.destroy();
});

test('a FlowSchema whose priority level is missing is Dangling, and ignored', async () => {
  const fs = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: 'orphan' },
    spec: {
      priorityLevelConfiguration: { name: 'nowhere' },
      matchingPrecedence: 2,
      rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
    },
  };
  assert.equal((await call(admin, 'POST', `${FC}/flowschemas`, fs)).status, 201);
  const cond = await eventually(async () => {
    const o = (await call(admin, 'GET', `${FC}/flowschemas/orphan`)).body;
    return o.status?.conditions?.find((c: any) => c.type === 'Dangling' && c.status === 'True');
  });
  assert.deepEqual(
    [cond.reason, cond.message],
    ['NotFound', 'This FlowSchema references the PriorityLevelConfiguration object named "nowhere" but there is no such object'],
  );
  const r = await call(alice, 'GET', '/version');
  assert.equal(r.headers['x-kubernetes-pf-flowschema-uid'], await uidOf('flowschemas', 'apf-test'));
  assert.equal((await call(admin, 'DELETE', `${FC}/flowschemas/orphan`)).status, 200);
});

const kubectl = kubectlBinaries().default;

test('kubectl get flowschemas,prioritylevelconfigurations shows upstream columns', { skip: !kubectl && 'kubectl not on PATH' }, async () => {
  const k = new Kubectl(env.url, kubectl!, { caPem: env.pki!.caPem, ...admin });
  try {
    const r = await k.run(['get', 'flowschemas,prioritylevelconfigurations']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL\n/);
    assert.match(r.stdout, /flowschema\.flowcontrol\.apiserver\.k8s\.io\/global-default\s+global-default\s+9900\s+ByUser\s+\S+\s+False\n/);
    assert.match(r.stdout, /flowschema\.flowcontrol\.apiserver\.k8s\.io\/exempt\s+exempt\s+1\s+<none>\s+\S+\s+False\n/);
    assert.match(r.stdout, /NAME\s+TYPE\s+NOMINALCONCURRENCYSHARES\s+QUEUES\s+HANDSIZE\s+QUEUELENGTHLIMIT\s+AGE\n/);
    assert.match(r.stdout, /prioritylevelconfiguration\.flowcontrol\.apiserver\.k8s\.io\/exempt\s+Exempt\s+<none>\s+<none>\s+<none>\s+<none>\s+\S+\n/);
    assert.match(r.stdout, /prioritylevelconfiguration\.flowcontrol\.apiserver\.k8s\.io\/catch-all\s+Limited\s+5\s+<none>\s+<none>\s+<none>\s+\S+\n/);
    assert.match(r.stdout, /prioritylevelconfiguration\.flowcontrol\.apiserver\.k8s\.io\/leader-election\s+Limited\s+10\s+16\s+4\s+50\s+\S+\n/);
  } finally {
    k.cleanup();
  }
});

test('the debug dumps answer administrators only', async () => {
  const levels = await call(admin, 'GET', '/debug/api_priority_and_fairness/dump_priority_levels');
  assert.equal(levels.status, 200);
  assert.match(String(levels.headers['content-type']), /^text\/plain/);
  assert.match(levels.body, /^PriorityLevelName, +ActiveQueues, +IsIdle, +IsQuiescing, +WaitingRequests/);
  assert.match(levels.body, /\napf-test, +0, +(true|false), +false, +0, +\d+, +[1-9]\d*, +[1-9]\d*, /);
  const queues = (await call(admin, 'GET', '/debug/api_priority_and_fairness/dump_queues')).body as string;
  assert.equal(queues.split('\n').filter((l) => l.startsWith('apf-test,')).length, 64);
  const requests = await call(admin, 'GET', '/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1');
  assert.match(requests.body, /^PriorityLevelName, +FlowSchemaName, +QueueIndex, .*UserName, +Verb, +APIPath/);
  // The dump request itself is executing in the exempt level.
  assert.match(requests.body, /\nexempt, +exempt, +-1, +-1, +, .*kubernetes-admin, +get, +\/debug\/api_priority_and_fairness\/dump_requests/);
  assert.equal((await call(alice, 'GET', '/debug/api_priority_and_fairness/dump_priority_levels')).status, 403);
});

test('the ensurer restores mandatory objects, updates auto-updated ones, leaves the others', async () => {
  const put = async (name: string, change: (o: any) => void) => {
    const o = (await call(admin, 'GET', `${FC}/prioritylevelconfigurations/${name}`)).body;
    change(o);
    const r = await call(admin, 'PUT', `${FC}/prioritylevelconfigurations/${name}`, o);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };
  // Mandatory specs are fixed: validation refuses a change, so deletion is the only way to disturb them.
  const catchAll = (await call(admin, 'GET', `${FC}/flowschemas/catch-all`)).body;
  catchAll.spec.matchingPrecedence = 9999;
  const refused = await call(admin, 'PUT', `${FC}/flowschemas/catch-all`, catchAll);
  assert.equal(refused.status, 422);
  assert.match(refused.body.message, /spec of 'catch-all' must equal the fixed value/);
  assert.equal((await call(admin, 'DELETE', `${FC}/prioritylevelconfigurations/catch-all`)).status, 200);
  await put('global-default', (o) => {
    o.spec.limited.nominalConcurrencyShares = 99;
  });
  await put('workload-low', (o) => {
    o.spec.limited.nominalConcurrencyShares = 77;
    o.metadata.annotations['apf.kubernetes.io/autoupdate-spec'] = 'false';
  });
  const stale = await call(admin, 'POST', `${FC}/prioritylevelconfigurations`, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name: 'stale', annotations: { 'apf.kubernetes.io/autoupdate-spec': 'true' } },
    spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } },
  });
  assert.equal(stale.status, 201);
  assert.equal(stale.body.spec.limited.nominalConcurrencyShares, 30, 'defaulted');
  await ensureFlowControlConfiguration(env.server!.registry.get(FLOW_SCHEMAS)!, env.server!.registry.get(PRIORITY_LEVELS)!);
  const get = async (name: string) => (await call(admin, 'GET', `${FC}/prioritylevelconfigurations/${name}`)).body;
  assert.equal((await get('catch-all')).spec.limited.nominalConcurrencyShares, 5, 'mandatory: recreated');
  assert.equal((await get('global-default')).spec.limited.nominalConcurrencyShares, 20, 'auto-updated: restored');
  const low = await get('workload-low');
  assert.equal(low.spec.limited.nominalConcurrencyShares, 77, "the operator's: kept");
  assert.equal(low.metadata.annotations['apf.kubernetes.io/autoupdate-spec'], 'false');
  assert.equal((await get('stale')).code, 404, 'no longer wanted: deleted');
});
