/**
 * certificates.k8s.io/v1 CertificateSigningRequests against a real etcd and an
 * HTTPS apiserver with RBAC: the requester's identity recorded on create,
 * upstream's validation errors, updates that cannot touch spec or status,
 * /approval (conditions only; `approve` on the signer needed), /status (the
 * certificate; `sign` needed), CertificateSubjectRestriction, field
 * selectors, Table columns, and `kubectl certificate approve|deny` with the
 * real kubectl.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCA, createCSR, issue } from '@kubeling/pki';
import { Kubectl, clientFor, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
type Creds = { certPem: string; keyPem: string };
let admin: Creds;
let alice: Creds;

const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const call = (creds: Creds, method: string, path: string, body?: unknown, opts: { accept?: string } = {}) => clientFor(env, creds)(method, path, body, opts);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const causes = (r: { body: { details?: { causes?: { field: string; message: string }[] } } }) =>
  (r.body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

async function csrBody(name: string, spec: Record<string, unknown> = {}, subject: { cn?: string; orgs?: string[] } = {}) {
  const { csrPem } = await createCSR({ commonName: subject.cn ?? name, organizations: subject.orgs ?? [] });
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(csrPem), signerName: 'example.com/signer', usages: ['digital signature', 'client auth'], ...spec },
  };
}

const grant = async (name: string, user: string, rules: object[]) => {
  const meta = { name };
  assert.equal(
    (await call(admin, 'POST', `${RBAC}/clusterroles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta, rules })).status,
    201,
  );
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: meta,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  };
  assert.equal((await call(admin, 'POST', `${RBAC}/clusterrolebindings`, binding)).status, 201);
  // RBAC reaches the authorizer through the watch cache.
  await new Promise((r) => setTimeout(r, 300));
};

before(async () => {
  env = await startTestEnv({ secure: true });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  alice = await env.pki!.client('alice', ['dev']);
  await grant('csr-user', 'alice', [
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'update'] },
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/approval', 'certificatesigningrequests/status'], verbs: ['update'] },
  ]);
});
after(async () => {
  await env?.stop();
});

test('create records the requester and clears the status, whatever the body says', async () => {
  const body = await csrBody('alice-1');
  Object.assign(body.spec, { username: 'mallory', groups: ['system:masters'], uid: 'x' });
  const r = await call(alice, 'POST', CSR, { ...body, status: { conditions: [{ type: 'Approved', status: 'True' }] } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.spec.username, 'alice');
  assert.deepEqual(r.body.spec.groups, ['dev', 'system:authenticated']);
  assert.equal(r.body.spec.uid, undefined);
  assert.deepEqual(r.body.status, {});
  const sel = await call(admin, 'GET', `${CSR}?fieldSelector=spec.signerName%3Dexample.com%2Fsigner`);
  assert.deepEqual(
    sel.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
    ['alice-1'],
  );
  const none = await call(admin, 'GET', `${CSR}?fieldSelector=spec.signerName%3Dkubernetes.io%2Fkubelet-serving`);
  assert.deepEqual(none.body.items, []);
});

test('validation: request PEM and signature, signerName, usages, expirationSeconds', async () => {
  const notPem = await csrBody('bad-pem', { request: b64('hello') });
  const r1 = await call(admin, 'POST', CSR, notPem);
  assert.equal(r1.status, 422, r1.text);
  assert.deepEqual(causes(r1), ['spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST']);

  // A request whose signature does not match its content.
  const { csrPem } = await createCSR({ commonName: 'x' });
  const der = Buffer.from(csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  der[der.length - 3]! ^= 0xff;
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  const r2 = await call(admin, 'POST', CSR, await csrBody('tampered', { request: b64(tampered) }));
  assert.equal(r2.status, 422);
  assert.match(causes(r2)[0]!, /^spec\.request: Invalid value: \[\]byte\{0x2d, .*\}: x509: ECDSA verification failure$/);

  const r3 = await call(
    admin,
    'POST',
    CSR,
    await csrBody('bad-fields', { signerName: 'signer', usages: ['client auth', 'flying', 'client auth'], expirationSeconds: 599 }),
  );
  assert.equal(r3.status, 422);
  assert.deepEqual(causes(r3), [
    'spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
    'spec.usages[2]: Duplicate value: "client auth"',
    'spec.signerName: Invalid value: "signer": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
    'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
  ]);
  const r4 = await call(admin, 'POST', CSR, await csrBody('no-signer', { signerName: '', usages: [] }));
  assert.deepEqual(causes(r4), ['spec.usages: Required value', 'spec.signerName: Required value: signerName must be provided']);
  const legacy = await call(admin, 'POST', CSR, await csrBody('legacy', { signerName: 'kubernetes.io/legacy-unknown' }));
  assert.deepEqual(causes(legacy), [
    'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
  ]);
});

test('CertificateSubjectRestriction: no system:masters through the kube-apiserver-client signer', async () => {
  const r = await call(
    admin,
    'POST',
    CSR,
    await csrBody('masters', { signerName: 'kubernetes.io/kube-apiserver-client' }, { cn: 'root', orgs: ['system:masters'] }),
  );
  assert.equal(r.status, 403, r.text);
  assert.equal(
    r.body.message,
    'certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
});

test('updates of the main resource keep spec and status; /approval needs approve on the signer and takes conditions only', async () => {
  const created = (await call(alice, 'POST', CSR, await csrBody('alice-2'))).body;
  const put = await call(alice, 'PUT', `${CSR}/alice-2`, {
    ...created,
    metadata: { ...created.metadata, labels: { a: 'b' } },
    spec: { ...created.spec, usages: ['server auth'] },
    status: { certificate: b64('x') },
  });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.body.spec.usages, ['digital signature', 'client auth']);
  assert.deepEqual(put.body.status, {});
  assert.equal(put.body.metadata.labels.a, 'b');

  const approve = (obj: typeof put.body, conditions: object[]) => ({ ...obj, status: { ...obj.status, conditions } });
  const approved = { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' };
  const refused = await call(alice, 'PUT', `${CSR}/alice-2/approval`, approve(put.body, [approved]));
  assert.equal(refused.status, 403, refused.text);
  assert.equal(
    refused.body.message,
    'certificatesigningrequests.certificates.k8s.io "alice-2" is forbidden: user not permitted to approve requests with signerName "example.com/signer"',
  );
  // The signer's domain wildcard is enough (IsAuthorizedForSignerName).
  await grant('example-approver', 'alice', [
    { apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] },
  ]);
  const both = await call(alice, 'PUT', `${CSR}/alice-2/approval`, approve(put.body, [approved, { type: 'Denied', status: 'True' }]));
  assert.equal(both.status, 422);
  assert.deepEqual(causes(both), ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive']);
  const ok = await call(alice, 'PUT', `${CSR}/alice-2/approval`, {
    ...approve(put.body, [approved]),
    status: { conditions: [approved], certificate: b64('y') },
  });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.status.certificate, undefined, 'approval does not write the certificate');
  assert.equal(ok.body.status.conditions[0].type, 'Approved');
  assert.match(ok.body.status.conditions[0].lastUpdateTime, /^\d{4}-\d\d-\d\dT/);
  assert.ok(ok.body.status.conditions[0].lastTransitionTime);
  const removed = await call(alice, 'PUT', `${CSR}/alice-2/approval`, approve(ok.body, []));
  assert.equal(removed.status, 422);
  assert.deepEqual(causes(removed), ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"']);
});

test('/status writes the certificate (sign on the signer needed), never Approved, never twice', async () => {
  const ca = await createCA('example-signer');
  const cert = (await issue(ca, { commonName: 'alice-3', usage: 'client' })).certPem;
  const created = (await call(alice, 'POST', CSR, await csrBody('alice-3'))).body;
  const status = (obj: typeof created, s: object) => ({ ...obj, status: s });
  const noSign = await call(alice, 'PUT', `${CSR}/alice-3/status`, status(created, { certificate: b64(cert) }));
  assert.equal(noSign.status, 403, noSign.text);
  assert.equal(
    noSign.body.message,
    'certificatesigningrequests.certificates.k8s.io "alice-3" is forbidden: user not permitted to sign requests with signerName "example.com/signer"',
  );
  const garbage = await call(
    admin,
    'PUT',
    `${CSR}/alice-3/status`,
    status(created, { certificate: b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n') }),
  );
  assert.equal(garbage.status, 422);
  assert.deepEqual(causes(garbage), ['status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"']);
  const sneak = await call(admin, 'PUT', `${CSR}/alice-3/status`, status(created, { conditions: [{ type: 'Approved', status: 'True' }] }));
  assert.equal(sneak.status, 422);
  assert.deepEqual(causes(sneak), ['status.conditions: Forbidden: updates may not add a condition of type "Approved"']);
  const issued = await call(admin, 'PUT', `${CSR}/alice-3/status`, status(created, { certificate: b64(cert) }));
  assert.equal(issued.status, 200, issued.text);
  assert.equal(issued.body.status.certificate, b64(cert));
  const again = await call(admin, 'PUT', `${CSR}/alice-3/status`, status(issued.body, { certificate: b64(cert + cert) }));
  assert.equal(again.status, 422);
  assert.deepEqual(causes(again), ['status.certificate: Forbidden: updates may not modify existing certificate content']);
  const t = await call(admin, 'GET', `${CSR}/alice-3`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(
    t.body.columnDefinitions.map((d: { name: string }) => d.name),
    ['Name', 'Age', 'SignerName', 'Requestor', 'RequestedDuration', 'Condition'],
  );
  assert.deepEqual(
    [0, 2, 3, 4, 5].map((i) => t.body.rows[0].cells[i]),
    ['alice-3', 'example.com/signer', 'alice', '<none>', 'Pending,Issued'],
  );
});

const bins = kubectlBinaries();
test('kubectl certificate approve / deny, kubectl get csr', { skip: bins.default ? false : 'kubectl is not installed' }, async () => {
  for (const name of ['kubectl-a', 'kubectl-d']) assert.equal((await call(alice, 'POST', CSR, await csrBody(name, { expirationSeconds: 3600 }))).status, 201);
  const k = new Kubectl(env.url, bins.default!, { caPem: env.pki!.caPem, ...admin });
  try {
    const a = await k.run(['certificate', 'approve', 'kubectl-a']);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /certificatesigningrequest.certificates.k8s.io\/kubectl-a approved/);
    const d = await k.run(['certificate', 'deny', 'kubectl-d']);
    assert.equal(d.code, 0, d.stderr);
    const got = await call(admin, 'GET', `${CSR}/kubectl-a`);
    assert.deepEqual(
      got.body.status.conditions.map((c: { type: string; status: string; reason: string }) => [c.type, c.status, c.reason]),
      [['Approved', 'True', 'KubectlApprove']],
    );
    const table = await k.run(['get', 'csr']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\n/);
    assert.match(table.stdout, /^kubectl-a\s+\d+s\s+example\.com\/signer\s+alice\s+60m\s+Approved$/m);
    assert.match(table.stdout, /^kubectl-d\s+\d+s\s+example\.com\/signer\s+alice\s+60m\s+Denied$/m);
  } finally {
    k.cleanup();
  }
});
