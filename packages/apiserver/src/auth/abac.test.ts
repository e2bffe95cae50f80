/** ABAC policy files: both formats, upstream's matching rules, parse errors by line, and the rules a review lists. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbacAuthorizer, parsePolicies } from './abac.js';
import type { Attributes, UserInfo } from './types.js';

const V1 = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });

const user = (name: string, ...groups: string[]): UserInfo => ({ name, groups: [...groups, 'system:authenticated'] });
const anonymous: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const res = (u: UserInfo, verb: string, resource: string, namespace?: string, apiGroup = ''): Attributes => ({
  user: u,
  verb,
  isResourceRequest: true,
  resource,
  apiGroup,
  ...(namespace ? { namespace } : {}),
});
const path = (u: UserInfo, p: string, verb = 'get'): Attributes => ({ user: u, verb, isResourceRequest: false, path: p });

const file = [
  '# who may do what',
  V1({ user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
  V1({ user: 'bob', namespace: 'projectCaribou', resource: 'pods', readonly: true }),
  V1({ group: 'ops', namespace: '*', resource: 'deployments', apiGroup: 'apps' }),
  '',
  V1({ user: '*', nonResourcePath: '/healthz', readonly: true }),
  V1({ user: 'carol', nonResourcePath: '/logs/*' }),
  V1({ group: 'system:unauthenticated', nonResourcePath: '/version', readonly: true }),
].join('\n');
const abac = new AbacAuthorizer(parsePolicies(file, '/etc/abac.jsonl'));
const allowed = (a: Attributes) => abac.authorize(a).allowed;

test('a user with every wildcard may do anything with resources, not paths', () => {
  assert.equal(allowed(res(user('alice'), 'delete', 'secrets', 'kube-system')), true);
  assert.equal(allowed(res(user('alice'), 'create', 'nodes')), true, 'cluster-scoped requests: * namespace');
  assert.equal(allowed(path(user('alice'), '/metrics')), false);
});

test('readonly matches get, list and watch only; the namespace, resource and (core) group must match', () => {
  const bob = user('bob');
  for (const v of ['get', 'list', 'watch']) assert.equal(allowed(res(bob, v, 'pods', 'projectCaribou')), true, v);
  for (const v of ['create', 'update', 'patch', 'delete']) assert.equal(allowed(res(bob, v, 'pods', 'projectCaribou')), false, v);
  assert.equal(allowed(res(bob, 'get', 'pods', 'other')), false);
  assert.equal(allowed(res(bob, 'get', 'pods')), false, 'an empty namespace is cluster-scoped requests only');
  assert.equal(allowed(res(bob, 'get', 'services', 'projectCaribou')), false);
  assert.equal(allowed(res(bob, 'get', 'pods', 'projectCaribou', 'metrics.k8s.io')), false, 'apiGroup "" is the core group only');
  const d = abac.authorize(res(bob, 'create', 'pods', 'projectCaribou'));
  assert.deepEqual(d, { allowed: false, reason: 'No policy matched.' }, 'no opinion, never a denial');
});

test('group policies match members only', () => {
  assert.equal(allowed(res(user('dave', 'ops'), 'update', 'deployments', 'prod', 'apps')), true);
  assert.equal(allowed(res(user('dave', 'dev'), 'update', 'deployments', 'prod', 'apps')), false);
  assert.equal(allowed(res(user('dave', 'ops'), 'update', 'deployments', 'prod', 'extensions')), false);
});

test('non-resource paths: exact, /prefix/*, and "*" users being every authenticated user', () => {
  assert.equal(allowed(path(user('zed'), '/healthz')), true);
  assert.equal(allowed(path(user('zed'), '/healthz', 'post')), false, 'readonly');
  assert.equal(allowed(path(anonymous, '/healthz')), false, '"*" is system:authenticated');
  assert.equal(allowed(path(anonymous, '/version')), true, 'system:unauthenticated by group');
  assert.equal(allowed(path(user('carol'), '/logs/kubelet.log', 'post')), true);
  assert.equal(allowed(path(user('carol'), '/logs')), false, '/logs/* is the subpaths');
  assert.equal(allowed(res(user('carol'), 'get', 'logs')), false, 'a path policy never matches resources');
});

test('the unversioned format converts as upstream v0: empty fields are wildcards, every API group', () => {
  const legacy = new AbacAuthorizer(
    parsePolicies(['{"user":"admin"}', '{"user":"scheduler","readonly":true,"resource":"pods"}', '{"readonly":true,"namespace":"public"}'].join('\n'), 'f'),
  );
  assert.equal(legacy.authorize(res(user('admin'), 'delete', 'deployments', 'x', 'apps')).allowed, true);
  assert.equal(legacy.authorize(path(user('admin'), '/anything', 'post')).allowed, true, 'no namespace and resource: every path');
  assert.equal(legacy.authorize(res(user('scheduler'), 'list', 'pods', 'x', 'metrics.k8s.io')).allowed, true);
  assert.equal(legacy.authorize(path(user('scheduler'), '/healthz')).allowed, false);
  assert.equal(legacy.authorize(res(user('anyone'), 'get', 'configmaps', 'public')).allowed, true, 'no subject: every authenticated user');
  assert.equal(legacy.authorize(res(anonymous, 'get', 'configmaps', 'public')).allowed, false);
});

test('parse errors name the file, the line and the line itself', () => {
  assert.throws(() => parsePolicies(`${V1({ user: 'a' })}\n{not json`, '/p.jsonl'), /^Error: error reading policy file \/p\.jsonl, line 2: \{not json: /);
  assert.throws(() => parsePolicies(JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v2', kind: 'Policy' }), '/p'), {
    message:
      'error reading policy file /p, line 1: {"apiVersion":"abac.authorization.kubernetes.io/v2","kind":"Policy"}: no kind "Policy" is registered for version "abac.authorization.kubernetes.io/v2"',
  });
  assert.throws(() => parsePolicies(V1({ user: 7 }), '/p'), /cannot unmarshal number into Go struct field Policy\.spec\.user of type string/);
  assert.throws(() => parsePolicies(V1({ readonly: 'yes' }), '/p'), /of type bool/);
});

test('rules reviews list the matching policies of the namespace', () => {
  assert.deepEqual(abac.resolveRules(user('bob'), 'projectCaribou'), {
    resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }],
    nonResourceRules: [],
    incomplete: false,
  });
  assert.deepEqual(abac.resolveRules(user('bob'), 'elsewhere').resourceRules, []);
  // A policy without a namespace is listed for the cluster scope only (upstream compares the namespace as given).
  assert.deepEqual(abac.resolveRules(user('zed'), '').nonResourceRules, [{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['/healthz'] }]);
});
