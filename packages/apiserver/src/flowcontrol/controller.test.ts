/**
 * Classification by the bootstrap FlowSchemas, flow distinguishers, the
 * concurrency limits the controller derives from the shares, dangling schemas,
 * the imagined mandatory objects, and Retry-After of rejected requests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import {
  type FlowSchema,
  MANDATORY_FLOW_SCHEMAS,
  MANDATORY_PRIORITY_LEVELS,
  SUGGESTED_FLOW_SCHEMAS,
  SUGGESTED_PRIORITY_LEVELS,
} from '../registry/flowcontrol/bootstrap.js';
import { FlowControl } from './controller.js';
import { DroppedRequests } from './dropped.js';
import { FakeClock } from './fakeclock.js';
import { classify, flowDistinguisher, type RequestDigest, sortFlowSchemas } from './rule.js';

const ALL_FS = sortFlowSchemas([...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS].map((f) => structuredClone(f)));

function digest(user: string, groups: string[], req: Partial<RequestDigest> = {}): RequestDigest {
  return {
    user: { name: user, groups: [...groups, 'system:authenticated'] },
    isResourceRequest: true,
    verb: 'get',
    path: '',
    apiGroup: '',
    namespace: 'default',
    resource: 'pods',
    subresource: '',
    ...req,
  };
}

const schemaOf = (d: RequestDigest) => classify(d, ALL_FS)?.metadata.name;

test('the bootstrap schemas classify the usual callers as upstream does', () => {
  assert.equal(schemaOf(digest('admin', ['system:masters'])), 'exempt');
  assert.equal(
    schemaOf(digest('system:node:n1', ['system:nodes'], { resource: 'nodes', subresource: 'status', verb: 'patch', namespace: '' })),
    'system-node-high',
  );
  assert.equal(
    schemaOf(digest('system:node:n1', ['system:nodes'], { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-node-lease' })),
    'system-node-high',
  );
  assert.equal(schemaOf(digest('system:node:n1', ['system:nodes'], { resource: 'pods', verb: 'list' })), 'system-nodes');
  const kcm = 'system:kube-controller-manager';
  assert.equal(
    schemaOf(digest(kcm, [], { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system', verb: 'update' })),
    'system-leader-election',
  );
  assert.equal(schemaOf(digest(kcm, [], { resource: 'endpoints', verb: 'create' })), 'endpoint-controller');
  assert.equal(schemaOf(digest(kcm, [], { apiGroup: 'apps', resource: 'deployments', verb: 'list' })), 'kube-controller-manager');
  assert.equal(schemaOf(digest('system:kube-scheduler', [], { resource: 'pods', subresource: 'binding', verb: 'create' })), 'kube-scheduler');
  const ksa = 'system:serviceaccount:kube-system:coredns';
  assert.equal(
    schemaOf(digest(ksa, ['system:serviceaccounts', 'system:serviceaccounts:kube-system'], { resource: 'configmaps', verb: 'update' })),
    'workload-leader-election',
  );
  assert.equal(schemaOf(digest(ksa, ['system:serviceaccounts', 'system:serviceaccounts:kube-system'], { verb: 'list' })), 'kube-system-service-accounts');
  assert.equal(schemaOf(digest('system:serviceaccount:default:app', ['system:serviceaccounts'], { verb: 'list' })), 'service-accounts');
  assert.equal(schemaOf(digest('alice', [], { verb: 'list' })), 'global-default');
  const anonymous = { user: { name: 'system:anonymous', groups: ['system:unauthenticated'] } };
  assert.equal(schemaOf({ ...digest('x', []), ...anonymous, isResourceRequest: false, path: '/healthz', verb: 'get' }), 'probes');
  assert.equal(schemaOf({ ...digest('x', []), ...anonymous, isResourceRequest: false, path: '/healthz', verb: 'post' }), 'global-default');
  assert.equal(schemaOf({ ...digest('x', []), ...anonymous, isResourceRequest: false, path: '/metrics' }), 'global-default');
});

test('rules: namespaces versus cluster scope, subresources, non-resource prefixes, ServiceAccount names', () => {
  const fs = (rules: NonNullable<FlowSchema['spec']>): FlowSchema => ({ metadata: { name: 'x' }, spec: rules });
  const nsOnly = fs({
    priorityLevelConfiguration: { name: 'p' },
    rules: [
      {
        subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: '*' } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['pods/log'], namespaces: ['ns1'] }],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/apis/*', '/version'] }],
      },
    ],
  });
  const sa = (name: string, req: Partial<RequestDigest>) => classify(digest(name, [], req), [nsOnly])?.metadata.name;
  assert.equal(sa('system:serviceaccount:ns1:a', { namespace: 'ns1', resource: 'pods', subresource: 'log' }), 'x');
  assert.equal(sa('system:serviceaccount:ns1:a', { namespace: 'ns1', resource: 'pods' }), undefined, 'pods is not pods/log');
  assert.equal(sa('system:serviceaccount:ns1:a', { namespace: '', resource: 'pods', subresource: 'log' }), undefined, 'not cluster scoped');
  assert.equal(sa('system:serviceaccount:ns10:a', { namespace: 'ns1', resource: 'pods', subresource: 'log' }), undefined, 'namespace prefix only');
  const path = (p: string) => sa('system:serviceaccount:ns1:a', { isResourceRequest: false, path: p });
  assert.equal(path('/apis/apps'), 'x');
  assert.equal(path('/apis'), undefined);
  assert.equal(path('/version'), 'x');
  assert.equal(path('/version/x'), 'x', 'a rule path is also a prefix of its subpaths');
});

test('flow distinguishers: by user, by namespace, or none', () => {
  const byName = new Map(ALL_FS.map((f) => [f.metadata.name, f]));
  const d = digest('alice', [], { namespace: 'team-a' });
  assert.equal(flowDistinguisher(d, byName.get('global-default')!), 'alice');
  assert.equal(flowDistinguisher(d, byName.get('kube-scheduler')!), 'team-a');
  assert.equal(flowDistinguisher(d, byName.get('exempt')!), '');
});

test('schemas are tried by matching precedence, then name', () => {
  const mk = (name: string, p: number): FlowSchema => ({ metadata: { name }, spec: { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: p } });
  assert.deepEqual(
    sortFlowSchemas([mk('b', 10), mk('a', 10), mk('c', 5)]).map((f) => f.metadata.name),
    ['c', 'a', 'b'],
  );
});

function loaded(serverCL: number) {
  const fc = new FlowControl({ serverConcurrencyLimit: serverCL, clock: new FakeClock() });
  let uid = 0;
  for (const pl of [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS]) {
    const o = structuredClone(pl) as unknown as KubeObject;
    o.metadata.uid = `pl-${++uid}`;
    fc.apply('PriorityLevelConfiguration', 'ADDED', o);
  }
  for (const fs of [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS]) fc.apply('FlowSchema', 'ADDED', structuredClone(fs) as unknown as KubeObject);
  fc.digest();
  return fc;
}

test('limits are ceil(serverCL × shares ÷ the sum of all shares)', () => {
  const fc = loaded(600);
  const limits = Object.fromEntries(fc.levels().map(([n, s]) => [n, s.nominalCL]));
  // Shares: catch-all 5, system 30, node-high 40, leader-election 10, workload-high 40, workload-low 100, global-default 20 (245).
  assert.deepEqual(limits, {
    'catch-all': 13,
    exempt: 0,
    'global-default': 49,
    'leader-election': 25,
    'node-high': 98,
    system: 74,
    'workload-high': 98,
    'workload-low': 245,
  });
  assert.equal(fc.levels().find(([n]) => n === 'exempt')![1].queues.config.desiredNumQueues, -1);
  assert.equal(fc.levels().find(([n]) => n === 'catch-all')![1].queues.config.desiredNumQueues, 0);
});

test('without any objects the mandatory ones are imagined; a dangling schema is skipped', () => {
  const fc = new FlowControl({ serverConcurrencyLimit: 10, clock: new FakeClock() });
  assert.deepEqual(
    fc.flowSchemas().map((f) => f.metadata.name),
    ['exempt', 'catch-all'],
  );
  const a = fc.admit(
    digest('alice', []),
    { user: 'alice', verb: 'get', path: '', namespace: '', name: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '' },
    1000,
  );
  assert.deepEqual([a.flowSchema.metadata.name, a.priorityLevel.metadata.name, 'ticket' in a], ['catch-all', 'catch-all', true]);
  const dangling = structuredClone(SUGGESTED_FLOW_SCHEMAS.find((f) => f.metadata.name === 'global-default')!) as unknown as KubeObject;
  fc.apply('FlowSchema', 'ADDED', dangling);
  fc.digest();
  assert.ok(!fc.flowSchemas().some((f) => f.metadata.name === 'global-default'));
});

test('a level that disappears while busy quiesces, and goes once idle', async () => {
  const fc = loaded(600);
  const gd = SUGGESTED_PRIORITY_LEVELS.find((p) => p.metadata.name === 'global-default')! as unknown as KubeObject;
  const descr = { user: 'alice', verb: 'get', path: '', namespace: '', name: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '' };
  const a = fc.admit(digest('alice', []), descr, 1000);
  assert.ok('ticket' in a);
  fc.apply('PriorityLevelConfiguration', 'DELETED', gd);
  fc.digest();
  const st = fc.levels().find(([n]) => n === 'global-default')![1];
  assert.equal(st.quiescing, true);
  a.ticket.finish();
  fc.released(a.state);
  await new Promise((r) => setImmediate(r));
  assert.ok(!fc.levels().some(([n]) => n === 'global-default'));
});

test('Retry-After doubles under sustained drops and comes back down', () => {
  let now = 0;
  const t = new DroppedRequests(() => now);
  assert.equal(t.retryAfter('pl'), 1);
  for (let s = 0; s < 4; s++) {
    now = s * 1000;
    for (let i = 0; i < 10; i++) t.record('pl');
  }
  assert.ok(t.retryAfter('pl') >= 4, `retryAfter ${t.retryAfter('pl')}`);
  const high = t.retryAfter('pl');
  // Quiet seconds with a single drop each: the value goes down one at a time.
  for (let s = 10; s < 10 + 2 * high; s++) {
    now = s * 1000;
    t.record('pl');
  }
  assert.ok(t.retryAfter('pl') < high);
  assert.equal(t.retryAfter('other'), 1);
});
