/**
 * Certificates checked against one CA each, and the front-proxy headers
 * (requestheader.go): which CA signed a certificate decides, never the TLS
 * layer's "authorized"; the identity headers are read from a trusted proxy
 * only and removed from every request.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { createCA, issue } from '@kubeling/pki';
import { Authenticator } from './authn.js';
import { CertPool, RequestHeaderAuthenticator } from './requestheader.js';

let clientCA: string;
let proxyCA: string;
let jane: string;
let proxy: string;
let intruder: string;
let serverOnly: string;

before(async () => {
  const c = await createCA('client-ca');
  const p = await createCA('front-proxy-ca');
  clientCA = c.certPem;
  proxyCA = p.certPem;
  jane = (await issue(c, { commonName: 'jane', organizations: ['dev', 'ops'], usage: 'client' })).certPem;
  proxy = (await issue(p, { commonName: 'front-proxy-client', organizations: ['system:masters'], usage: 'client' })).certPem;
  intruder = (await issue(p, { commonName: 'intruder', usage: 'client' })).certPem;
  serverOnly = (await issue(c, { commonName: 'server', usage: 'server' })).certPem;
});

/** A TLS socket as node reports a peer: the leaf, then the issuer from the server's trust store. */
function socket(pem: string | undefined, caPem: string, authorized = true): TLSSocket {
  const peer = (p: string, issuer?: object) => {
    const x = new X509Certificate(p);
    const subject = Object.fromEntries(
      x.subject.split('\n').reduce((m, kv) => {
        const [k, v] = kv.split('=') as [string, string];
        m.set(k, m.has(k) ? [...([] as string[]).concat(m.get(k)!), v] : v);
        return m;
      }, new Map<string, string | string[]>()),
    );
    return { raw: x.raw, subject, fingerprint256: x.fingerprint256, ...(issuer ? { issuerCertificate: issuer } : {}) };
  };
  return {
    encrypted: true,
    authorized,
    getPeerCertificate: () => (pem ? peer(pem, peer(caPem)) : {}),
  } as unknown as TLSSocket;
}

const request = (sock: TLSSocket, headers: Record<string, string | string[]> = {}) => {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    socket: sock,
    headers: Object.fromEntries(Object.entries(lower).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v])),
    headersDistinct: Object.fromEntries(Object.entries(lower).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])),
  } as unknown as IncomingMessage;
};

const settings = (allowedNames = ['front-proxy-client']) => ({
  clientCA: proxyCA,
  allowedNames,
  usernameHeaders: ['X-Remote-User'],
  groupHeaders: ['X-Remote-Group'],
  extraHeadersPrefix: ['X-Remote-Extra-'],
});

test('CertPool: a certificate verifies against the CA that signed it only', () => {
  const clients = new CertPool(clientCA);
  const proxies = new CertPool(proxyCA);
  assert.deepEqual(clients.verifyPeer(socket(jane, clientCA)), { cn: 'jane', orgs: ['dev', 'ops'] });
  assert.deepEqual(clients.verifyPeer(socket(proxy, proxyCA)), { error: 'x509: certificate signed by unknown authority' });
  assert.deepEqual(proxies.verifyPeer(socket(jane, clientCA)), { error: 'x509: certificate signed by unknown authority' });
  assert.deepEqual(clients.verifyPeer(socket(jane, clientCA, false)), { error: 'x509: certificate signed by unknown authority' });
  assert.deepEqual(clients.verifyPeer(socket(serverOnly, clientCA)), { error: 'x509: certificate specifies an incompatible key usage' });
  assert.deepEqual(clients.verifyPeer(socket(jane, clientCA), Date.now() + 400 * 86_400_000), { error: 'x509: certificate has expired or is not yet valid' });
  assert.equal(clients.verifyPeer(socket(undefined, clientCA)), undefined, 'no certificate: nothing to say');
  assert.throws(() => new CertPool('garbage'), { message: 'data does not contain any valid RSA or ECDSA certificates' });
});

test('request headers: a trusted proxy names the user, groups and extras; the headers are removed', () => {
  const rh = new RequestHeaderAuthenticator(settings());
  const req = request(socket(proxy, proxyCA), {
    'X-Remote-User': 'alice',
    'X-Remote-Group': ['g1', 'g2'],
    'X-Remote-Extra-Acme.com%2Fproject': 'p1',
    'X-Remote-Extra-Scopes': ['a', 'b'],
    accept: 'application/json',
  });
  assert.deepEqual(rh.authenticate(req), {
    user: { name: 'alice', groups: ['g1', 'g2'], extra: { 'acme.com/project': ['p1'], scopes: ['a', 'b'] } },
  });
  assert.deepEqual(req.headers, { accept: 'application/json' });
  assert.deepEqual(Object.keys(req.headersDistinct), ['accept']);
});

test('request headers: a CN not allowed is an error; any CN when the list is empty; other certificates are ignored', () => {
  assert.deepEqual(new RequestHeaderAuthenticator(settings()).authenticate(request(socket(intruder, proxyCA), { 'X-Remote-User': 'alice' })), {
    error: 'x509: subject with cn=intruder is not in the allowed list',
  });
  assert.deepEqual(new RequestHeaderAuthenticator(settings([])).authenticate(request(socket(intruder, proxyCA), { 'X-Remote-User': 'bob' })), {
    user: { name: 'bob', groups: [] },
  });
  const req = request(socket(jane, clientCA), { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' });
  assert.equal(new RequestHeaderAuthenticator(settings()).authenticate(req), undefined);
  assert.deepEqual(req.headers, {}, 'stripped even when not trusted');
  assert.equal(new RequestHeaderAuthenticator(settings()).authenticate(request(socket(proxy, proxyCA))), undefined, 'a proxy without a user header');
  assert.throws(() => new RequestHeaderAuthenticator({ ...settings(), usernameHeaders: [' '] }), { message: 'empty header " "' });
});

test('Authenticator: a client-CA certificate cannot set X-Remote-User; a proxy certificate is not its CN', async () => {
  const authn = new Authenticator([], { clientCA: new CertPool(clientCA), requestHeader: new RequestHeaderAuthenticator(settings()) });
  assert.deepEqual(await authn.authenticate(request(socket(jane, clientCA), { 'X-Remote-User': 'admin' })), {
    user: { name: 'jane', groups: ['dev', 'ops', 'system:authenticated'] },
  });
  assert.deepEqual(await authn.authenticate(request(socket(proxy, proxyCA))), { error: 'x509: certificate signed by unknown authority' });
  assert.deepEqual(await authn.authenticate(request(socket(intruder, proxyCA), { 'X-Remote-User': 'alice' })), {
    error: 'x509: subject with cn=intruder is not in the allowed list; x509: certificate signed by unknown authority',
  });
  assert.deepEqual(await authn.authenticate(request(socket(proxy, proxyCA), { 'X-Remote-User': 'alice' })), {
    user: { name: 'alice', groups: ['system:authenticated'] },
  });
});
