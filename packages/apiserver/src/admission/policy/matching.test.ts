/** matchConstraints / matchResources: rules, resource names, exclusions, selectors and matchPolicy Equivalent. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { type MatchDeps, type MatchRequest, matchResources, ruleMatches } from './matching.js';

const deployment = (labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels } });

const req = (over: Partial<MatchRequest> = {}): MatchRequest => ({
  operation: 'CREATE',
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  subresource: '',
  namespace: 'default',
  name: 'web',
  object: deployment({ app: 'web' }),
  oldObject: null,
  ...over,
});

const nsLabels: Record<string, Record<string, string>> = { default: { env: 'prod' }, dev: { env: 'dev' } };
const deps: MatchDeps = {
  namespaceLabels: async (n) => {
    const l = nsLabels[n];
    if (!l) throw new Error(`namespaces "${n}" not found`);
    return l;
  },
};

const rule = { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] };
const mr = (over: Record<string, unknown> = {}) => ({ matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: [rule], ...over });

test('a rule matches on operation, group, version, resource, subresource and scope', () => {
  const r = req();
  assert.equal(ruleMatches(rule, r, r.resource), true);
  assert.equal(ruleMatches({ ...rule, operations: ['DELETE'] }, r, r.resource), false);
  assert.equal(ruleMatches({ ...rule, operations: ['*'] }, r, r.resource), true);
  assert.equal(ruleMatches({ ...rule, apiGroups: [''] }, r, r.resource), false);
  assert.equal(ruleMatches({ ...rule, apiVersions: ['v1beta1'] }, r, r.resource), false);
  const status = req({ subresource: 'status', operation: 'UPDATE' });
  assert.equal(ruleMatches(rule, status, status.resource), false, 'deployments does not cover deployments/status');
  assert.equal(ruleMatches({ ...rule, resources: ['deployments/*'] }, status, status.resource), true);
  assert.equal(ruleMatches({ ...rule, resources: ['*/status'] }, status, status.resource), true);
  assert.equal(ruleMatches({ ...rule, resources: ['*'] }, status, status.resource), false, "'*' is every resource but no subresource");
  assert.equal(ruleMatches({ ...rule, scope: 'Cluster' }, r, r.resource), false);
  assert.equal(ruleMatches({ ...rule, scope: 'Namespaced' }, r, r.resource), true);
  const ns = { group: '', version: 'v1', resource: 'namespaces' };
  assert.equal(ruleMatches({ ...rule, apiGroups: [''], resources: ['namespaces'], scope: 'Cluster' }, req({ namespace: '' }), ns), true);
});

test('resourceNames narrow a rule; excludeResourceRules win over resourceRules', async () => {
  assert.equal((await matchResources(mr({ resourceRules: [{ ...rule, resourceNames: ['web'] }] }), req(), deps)).matches, true);
  assert.equal((await matchResources(mr({ resourceRules: [{ ...rule, resourceNames: ['api'] }] }), req(), deps)).matches, false);
  assert.equal((await matchResources(mr({ excludeResourceRules: [{ ...rule, resourceNames: ['web'] }] }), req(), deps)).matches, false);
  assert.equal((await matchResources(mr({ resourceRules: undefined }), req(), deps)).matches, true, 'no resourceRules: every resource (bindings)');
});

test('namespaceSelector reads the namespace; cluster-scoped objects always pass; a Namespace is matched on its own labels', async () => {
  const sel = { namespaceSelector: { matchLabels: { env: 'prod' } } };
  assert.equal((await matchResources(mr(sel), req(), deps)).matches, true);
  assert.equal((await matchResources(mr(sel), req({ namespace: 'dev' }), deps)).matches, false);
  const clusterRule = { ...rule, apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'] };
  const cr = req({ namespace: '', resource: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' } });
  assert.equal((await matchResources(mr({ ...sel, resourceRules: [clusterRule] }), cr, deps)).matches, true);
  const nsRule = { ...rule, apiGroups: [''], resources: ['namespaces'] };
  const nsReq = req({
    namespace: '',
    name: 'team-a',
    resource: { group: '', version: 'v1', resource: 'namespaces' },
    object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'prod' } } },
  });
  assert.equal((await matchResources(mr({ ...sel, resourceRules: [nsRule] }), nsReq, deps)).matches, true);
  // A missing namespace is an error only when the rules match.
  await assert.rejects(matchResources(mr(sel), req({ namespace: 'gone' }), deps), /not found/);
  assert.equal((await matchResources(mr({ ...sel, resourceRules: [{ ...rule, operations: ['DELETE'] }] }), req({ namespace: 'gone' }), deps)).matches, false);
});

test('objectSelector matches the new or the old object', async () => {
  const sel = mr({ objectSelector: { matchLabels: { app: 'web' } } });
  assert.equal((await matchResources(sel, req(), deps)).matches, true);
  assert.equal((await matchResources(sel, req({ object: deployment({ app: 'api' }) }), deps)).matches, false);
  const update = req({ operation: 'UPDATE', object: deployment({ app: 'api' }), oldObject: deployment({ app: 'web' }) });
  assert.equal((await matchResources(sel, update, deps)).matches, true);
  const del = req({ operation: 'DELETE', object: null, oldObject: deployment({ app: 'web' }) });
  assert.equal(
    (await matchResources(mr({ objectSelector: { matchLabels: { app: 'web' } }, resourceRules: [{ ...rule, operations: ['DELETE'] }] }), del, deps)).matches,
    true,
  );
});

test('matchPolicy Equivalent matches another version of the same storage, which becomes the matched resource', async () => {
  const equivalents = () => [
    { resource: { group: 'stable.example.com', version: 'v1', resource: 'crontabs' }, kind: { group: 'stable.example.com', version: 'v1', kind: 'CronTab' } },
    { resource: { group: 'stable.example.com', version: 'v2', resource: 'crontabs' }, kind: { group: 'stable.example.com', version: 'v2', kind: 'CronTab' } },
  ];
  const r = req({
    resource: { group: 'stable.example.com', version: 'v2', resource: 'crontabs' },
    kind: { group: 'stable.example.com', version: 'v2', kind: 'CronTab' },
  });
  const v1Rule = { ...rule, apiGroups: ['stable.example.com'], apiVersions: ['v1'], resources: ['crontabs'] };
  const equivalent = await matchResources(mr({ resourceRules: [v1Rule] }), r, { ...deps, equivalents });
  assert.equal(equivalent.matches, true);
  assert.deepEqual(equivalent.kind, { group: 'stable.example.com', version: 'v1', kind: 'CronTab' });
  const exact = await matchResources(mr({ matchPolicy: 'Exact', resourceRules: [v1Rule] }), r, { ...deps, equivalents });
  assert.equal(exact.matches, false);
});
