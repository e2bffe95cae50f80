/**
 * The certificate controllers against a real etcd and an HTTPS apiserver with
 * RBAC, whose client CA is the cluster CA the controller-manager signs with.
 * The controller-manager runs as system:kube-controller-manager, so the
 * bootstrap policy must let it approve and sign.
 *
 * - csrsigning: an approved kube-apiserver-client request gets a certificate
 *   that chains to the cluster CA, with the requested usages and validity,
 *   and that the apiserver accepts; a kubelet-serving one its SANs; one its
 *   signer's rules refuse gets a Failed condition.
 * - csrapproving: a kubelet client request from a bootstrap identity allowed
 *   `certificatesigningrequests/nodeclient` is approved (then issued, and the
 *   node can authenticate with it); one from a user without it stays pending;
 *   the node renewing through `selfnodeclient` is approved too.
 * - csrcleaner: with its clock moved on, issued, denied and failed requests go
 *   after 1 h, pending ones after 24 h.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import pino from 'pino';
import { createCA, createCSR, describeCertificate, issue, type CA } from '@kubeling/pki';
import { clientFor, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from '../../manager.js';

const CSR = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const HOUR = 3_600_000;

let ca: CA;
let env: TestEnv;
let mgr: ControllerManager;
let clockOffset = 0;
type Creds = { certPem: string; keyPem: string };
let admin: Creds;

const target = () => ({ url: env.url, pki: { ...env.pki!, caPem: ca.certPem } });
const call = (creds: Creds, method: string, path: string, body?: unknown) => clientFor(target(), creds)(method, path, body);
const b64 = (s: string) => Buffer.from(s).toString('base64');
const pem = (b: string) => Buffer.from(b, 'base64').toString('latin1');

before(async () => {
  ca = await createCA('kubeling-cluster-ca');
  const serving = await issue(ca, { commonName: 'kube-apiserver', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server' });
  env = await startTestEnv({ secure: true, server: { tls: { cert: serving.certPem, key: serving.keyPem, clientCA: ca.certPem } } });
  admin = await issue(ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'], usage: 'client' });
  const cm = await issue(ca, { commonName: 'system:kube-controller-manager', usage: 'client' });
  mgr = new ControllerManager({
    config: {
      server: env.url,
      namespace: 'default',
      insecureSkipTLSVerify: false,
      ca: Buffer.from(ca.certPem),
      cert: Buffer.from(cm.certPem),
      key: Buffer.from(cm.keyPem),
    },
    controllers: ['csrsigning', 'csrapproving', 'csrcleaner'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
    csrSigning: { certPem: ca.certPem, keyPem: ca.keyPem, durationMs: 24 * HOUR },
    csrCleaner: { periodMs: 200, now: () => Date.now() + clockOffset },
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

async function submit(
  creds: Creds,
  name: string,
  signerName: string,
  usages: string[],
  subject: { cn: string; orgs?: string[]; dns?: string[]; ips?: string[] },
  extra = {},
) {
  const { csrPem, keyPem } = await createCSR({
    commonName: subject.cn,
    organizations: subject.orgs ?? [],
    dnsNames: subject.dns ?? [],
    ips: subject.ips ?? [],
  });
  const r = await call(creds, 'POST', CSR, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: b64(csrPem), signerName, usages, ...extra },
  });
  assert.equal(r.status, 201, r.text);
  return { csr: r.body, keyPem };
}

async function decide(name: string, type: 'Approved' | 'Denied') {
  const cur = (await call(admin, 'GET', `${CSR}/${name}`)).body;
  cur.status = { conditions: [{ type, status: 'True', reason: 'ByTest', message: `${type} by the test` }] };
  const r = await call(admin, 'PUT', `${CSR}/${name}/approval`, cur);
  assert.equal(r.status, 200, r.text);
}

async function issued(name: string, what = 'a certificate'): Promise<Record<string, any>> {
  let got: Record<string, any> = {};
  await waitFor(
    async () => {
      got = (await call(admin, 'GET', `${CSR}/${name}`)).body;
      return !!got.status?.certificate || (got.status?.conditions ?? []).some((c: { type: string }) => c.type === 'Failed');
    },
    15_000,
    `${what} for ${name}`,
  );
  return got;
}

const bind = async (name: string, role: string, subject: { kind: string; name: string }) => {
  const r = await call(admin, 'POST', `${RBAC}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
  });
  assert.equal(r.status, 201, r.text);
};

test('csrsigning: an approved client request gets a certificate from the cluster CA, with its usages and duration, that the apiserver accepts', async () => {
  const { keyPem } = await submit(
    admin,
    'carol',
    'kubernetes.io/kube-apiserver-client',
    ['digital signature', 'client auth'],
    { cn: 'carol', orgs: ['devs'] },
    {
      expirationSeconds: 3600,
    },
  );
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await call(admin, 'GET', `${CSR}/carol`)).body.status.certificate, undefined, 'nothing is issued before approval');
  await decide('carol', 'Approved');
  const csr = await issued('carol');
  const certPem = pem(csr.status.certificate);
  // Chains to the cluster CA: checked with node's own X.509, not the library that made it.
  const cert = new X509Certificate(certPem);
  const caCert = new X509Certificate(ca.certPem);
  assert.ok(cert.checkIssued(caCert), 'issued by the cluster CA');
  assert.ok(cert.verify(caCert.publicKey), 'signed by the cluster CA key');
  const info = describeCertificate(certPem);
  assert.deepEqual([info.commonName, info.organizations, info.isCA], ['carol', ['devs'], false]);
  assert.deepEqual(info.keyUsages, ['digital signature']);
  assert.deepEqual(info.extKeyUsages, ['client auth']);
  // Short-lived: NotBefore backdated 5 minutes, NotAfter an hour from signing.
  assert.equal((info.notAfter.getTime() - info.notBefore.getTime()) / 1000, 3600 + 300);
  const who = await call({ certPem, keyPem }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(who.status, 201, who.text);
  assert.equal(who.body.status.userInfo.username, 'carol');
  assert.ok(who.body.status.userInfo.groups.includes('devs'));
});

test("csrsigning: kubelet-serving gets its SANs and server auth; a request its signer's rules refuse is Failed", async () => {
  await submit(admin, 'serving-n1', 'kubernetes.io/kubelet-serving', ['digital signature', 'key encipherment', 'server auth'], {
    cn: 'system:node:n1',
    orgs: ['system:nodes'],
    dns: ['n1.local'],
    ips: ['127.0.0.5'],
  });
  await decide('serving-n1', 'Approved');
  const info = describeCertificate(pem((await issued('serving-n1')).status.certificate));
  assert.deepEqual([info.dnsNames, info.ipAddresses, info.extKeyUsages], [['n1.local'], ['127.0.0.5'], ['server auth']]);
  assert.deepEqual(info.keyUsages, ['digital signature', 'key encipherment']);
  // Without an explicit duration, the signer's (24 h here), backdated at both ends.
  assert.equal(info.notAfter.getTime() - info.notBefore.getTime(), 24 * HOUR);

  await submit(admin, 'serving-bad', 'kubernetes.io/kubelet-serving', ['digital signature', 'client auth'], {
    cn: 'system:node:n1',
    orgs: ['system:nodes'],
    dns: ['n1.local'],
  });
  await decide('serving-bad', 'Approved');
  const failed = await issued('serving-bad', 'a Failed condition');
  assert.equal(failed.status.certificate, undefined);
  const cond = failed.status.conditions.find((c: { type: string }) => c.type === 'Failed');
  assert.deepEqual(
    [cond.status, cond.reason, cond.message],
    ['True', 'SignerValidationFailure', 'usages did not match [digital signature key encipherment server auth]'],
  );
});

test('csrapproving: a bootstrap identity allowed nodeclient gets its kubelet client request approved and issued; the node renews with selfnodeclient', async () => {
  const bootstrap = await issue(ca, { commonName: 'system:bootstrap:abcdef', organizations: ['system:bootstrappers'], usage: 'client' });
  const eve = await issue(ca, { commonName: 'eve', organizations: ['system:bootstrappers-lite'], usage: 'client' });
  await bind('bootstrappers-create-csrs', 'system:node-bootstrapper', { kind: 'Group', name: 'system:bootstrappers' });
  await bind('eve-create-csrs', 'system:node-bootstrapper', { kind: 'User', name: 'eve' });
  await bind('bootstrappers-autoapprove', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', { kind: 'Group', name: 'system:bootstrappers' });
  await bind('nodes-autorenew', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', { kind: 'Group', name: 'system:nodes' });
  await new Promise((r) => setTimeout(r, 300));

  const usages = ['digital signature', 'client auth'];
  const subject = { cn: 'system:node:n2', orgs: ['system:nodes'] };
  const signer = 'kubernetes.io/kube-apiserver-client-kubelet';
  const { csr, keyPem } = await submit(bootstrap, 'node-csr-n2', signer, usages, subject);
  assert.equal(csr.spec.username, 'system:bootstrap:abcdef');
  await submit(eve, 'node-csr-eve', signer, usages, subject);

  const done = await issued('node-csr-n2');
  const approved = done.status.conditions.find((c: { type: string }) => c.type === 'Approved');
  assert.deepEqual(
    [approved.status, approved.reason, approved.message],
    ['True', 'AutoApproved', 'Auto approving kubelet client certificate after SubjectAccessReview.'],
  );
  const certPem = pem(done.status.certificate);
  assert.deepEqual(describeCertificate(certPem).extKeyUsages, ['client auth']);
  const who = await call({ certPem, keyPem }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(who.body.status.userInfo.username, 'system:node:n2');
  assert.ok(who.body.status.userInfo.groups.includes('system:nodes'));

  // The node itself renews: its own name as the request's subject, allowed by selfnodeclient.
  await submit({ certPem, keyPem }, 'node-csr-n2-renew', signer, usages, subject);
  const renewed = await issued('node-csr-n2-renew');
  const self = renewed.status.conditions.find((c: { type: string }) => c.type === 'Approved');
  assert.equal(self.message, 'Auto approving self kubelet client certificate after SubjectAccessReview.');

  // eve may create requests but not nodeclient ones: hers stays pending.
  const pending = (await call(admin, 'GET', `${CSR}/node-csr-eve`)).body;
  assert.deepEqual(pending.status, {});
});

test('csrcleaner: issued, denied and failed requests go after 1 h, pending ones after 24 h', async () => {
  await submit(admin, 'denied-one', 'example.com/other', ['client auth'], { cn: 'x' });
  await decide('denied-one', 'Denied');
  await submit(admin, 'pending-one', 'example.com/other', ['client auth'], { cn: 'y' });
  const names = async () => ((await call(admin, 'GET', CSR)).body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort();
  await new Promise((r) => setTimeout(r, 500));
  assert.ok((await names()).includes('denied-one'), 'nothing goes before its time');

  clockOffset = 2 * HOUR;
  await waitFor(async () => !(await names()).includes('denied-one'), 10_000, 'the denied request to be cleaned');
  const left = await names();
  for (const gone of ['carol', 'serving-n1', 'serving-bad', 'node-csr-n2', 'denied-one']) assert.ok(!left.includes(gone), gone);
  assert.ok(left.includes('pending-one') && left.includes('node-csr-eve'), `pending requests stay a day: ${left.join(',')}`);

  clockOffset = 25 * HOUR;
  await waitFor(async () => (await names()).length === 0, 10_000, 'the pending requests to be cleaned');
});
