import { strict as assert } from 'node:assert';
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { createCA, issue } from '@kubeling/pki';
import { forbiddenMessage, parseBundle, requestHeaderUser, signedBy, subjectNames } from './auth.js';

test('signedBy tells which CA signed a client certificate, and refuses server-only certificates', async () => {
  const frontProxy = await createCA('front-proxy-ca');
  const clients = await createCA('client-ca');
  const proxyCert = new X509Certificate((await issue(frontProxy, { commonName: 'front-proxy-client', usage: 'client' })).certPem);
  const userCert = new X509Certificate((await issue(clients, { commonName: 'alice', usage: 'client' })).certPem);
  const serving = new X509Certificate((await issue(clients, { commonName: 'srv', usage: 'server' })).certPem);
  const rh = parseBundle(frontProxy.certPem);
  const cc = parseBundle(`${clients.certPem}\n${frontProxy.certPem}`);
  assert.equal(cc.length, 2);
  assert.equal(signedBy(proxyCert, rh), true);
  assert.equal(signedBy(userCert, rh), false);
  assert.equal(signedBy(userCert, parseBundle(clients.certPem)), true);
  assert.equal(signedBy(serving, parseBundle(clients.certPem)), false, 'no clientAuth usage');
  assert.equal(signedBy(userCert, parseBundle(clients.certPem), Date.now() + 400 * 24 * 3600 * 1000), false, 'expired');
  assert.deepEqual(parseBundle(undefined), []);
});

test('the request headers name the user, its groups (one per header line) and extras (key unescaped)', () => {
  const req = {
    headersDistinct: {
      'x-remote-user': ['alice'],
      'x-remote-group': ['devs', 'system:authenticated', ''],
      'x-remote-extra-scopes': ['a', 'b'],
      'x-remote-extra-acme.com%2fproject': ['p1'],
      'x-remote-extra-bad%zz': ['v'],
      'x-other': ['ignored'],
    },
  } as unknown as IncomingMessage;
  const cfg = { clientCA: '', allowedNames: [], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeadersPrefix: ['X-Remote-Extra-'] };
  assert.deepEqual(requestHeaderUser(req, cfg), {
    name: 'alice',
    groups: ['devs', 'system:authenticated'],
    extra: { scopes: ['a', 'b'], 'acme.com/project': ['p1'], 'bad%zz': ['v'] },
  });
  assert.equal(requestHeaderUser({ headersDistinct: {} } as unknown as IncomingMessage, cfg), undefined);
});

test('subject names and forbidden messages follow upstream', () => {
  assert.deepEqual(subjectNames({ CN: 'bob', O: ['a', 'b,c'] }), { cn: 'bob', orgs: ['a', 'b,c'] });
  assert.deepEqual(subjectNames({ CN: 'bob', O: 'a' }), { cn: 'bob', orgs: ['a'] });
  const base = { group: 'metrics.k8s.io', version: 'v1beta1', name: '' };
  assert.equal(
    forbiddenMessage('x', { ...base, verb: 'list', resource: 'pods', namespace: 'default' }),
    'User "x" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"',
  );
  assert.equal(
    forbiddenMessage('x', { ...base, verb: 'get', resource: 'nodes', namespace: '' }),
    'User "x" cannot get resource "nodes" in API group "metrics.k8s.io" at the cluster scope',
  );
  assert.equal(forbiddenMessage('x', { verb: 'get', path: '/apis' }), 'User "x" cannot get path "/apis"');
});
