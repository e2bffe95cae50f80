import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from './request-info.js';

const info = (m: string, p: string, q: Record<string, string> = {}) => {
  const i = parseRequestInfo(m, p, q);
  return [i.verb, i.apiGroup, i.apiVersion, i.namespace, i.resource, i.name, i.subresource].join('|');
};

test('core and grouped paths', () => {
  assert.equal(info('GET', '/api/v1/namespaces/default/pods'), 'list||v1|default|pods||');
  assert.equal(info('GET', '/api/v1/namespaces/default/pods', { watch: 'True' }), 'watch||v1|default|pods||');
  assert.equal(info('GET', '/api/v1/pods'), 'list||v1||pods||');
  assert.equal(info('GET', '/api/v1/namespaces/default/pods/x/log'), 'get||v1|default|pods|x|log');
  assert.equal(info('POST', '/api/v1/namespaces/default/pods/x/binding'), 'create||v1|default|pods|x|binding');
  assert.equal(info('PATCH', '/apis/apps/v1/namespaces/ns1/deployments/web/scale'), 'patch|apps|v1|ns1|deployments|web|scale');
  assert.equal(info('DELETE', '/apis/apps/v1/namespaces/ns1/deployments'), 'deletecollection|apps|v1|ns1|deployments||');
  assert.equal(info('GET', '/api/v1/nodes/n1'), 'get||v1||nodes|n1|');
});

test('namespaces are cluster-scoped, with status and finalize subresources', () => {
  assert.equal(info('GET', '/api/v1/namespaces'), 'list||v1||namespaces||');
  assert.equal(info('GET', '/api/v1/namespaces/kube-system'), 'get||v1||namespaces|kube-system|');
  assert.equal(info('PUT', '/api/v1/namespaces/x/status'), 'update||v1||namespaces|x|status');
  assert.equal(info('PUT', '/api/v1/namespaces/x/finalize'), 'update||v1||namespaces|x|finalize');
  assert.equal(info('DELETE', '/api/v1/namespaces/x'), 'delete||v1||namespaces|x|');
});

test('discovery paths are not resource requests', () => {
  for (const p of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version']) {
    assert.equal(parseRequestInfo('GET', p, {}).isResourceRequest, false, p);
  }
});

test('watch: any value but false and 0 asks for one, as upstream converts booleans; /watch/ paths are watches', () => {
  for (const v of ['maybe', '', '1', 'TRUE', 'yes']) assert.equal(info('GET', '/api/v1/pods', { watch: v }).split('|')[0], 'watch', v);
  for (const v of ['0', 'false', 'FALSE']) assert.equal(info('GET', '/api/v1/pods', { watch: v }).split('|')[0], 'list', v);
  assert.equal(info('GET', '/api/v1/watch/namespaces/default/pods'), 'watch||v1|default|pods||');
  assert.equal(info('GET', '/apis/apps/v1/watch/namespaces/ns1/deployments/web'), 'watch|apps|v1|ns1|deployments|web|');
  assert.equal(info('GET', '/api/v1/namespaces/default/pods/x', { watch: 'true' }), 'get||v1|default|pods|x|');
});

test('a path escape that does not decode is a 400', () => {
  assert.throws(
    () => parseRequestInfo('GET', '/api/v1/namespaces/%zz/pods', {}),
    (e: any) => e.status.code === 400,
  );
});
