/**
 * The kubelet's secure port against a real etcd + HTTPS apiserver: only
 * client certificates its CA signed get in (401 otherwise), each request is
 * authorized by a SubjectAccessReview on nodes/<subresource> (403 for a user
 * without RBAC), /healthz stays open, and the apiserver's pods/log reaches it
 * with its kubelet client certificate (bound to system:kubelet-api-admin).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createCA, issue, type CA } from '@kubeling/pki';
import { RestClient } from '@kubeling/client';
import { startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { KubelingRuntime } from '@kubeling/runtime';
import { Kubelet } from './kubelet.js';

let env: TestEnv;
let kubeletCA: CA;
let kubelet: Kubelet;
let runtime: KubelingRuntime | undefined;
let dir: string;
let admin: { certPem: string; keyPem: string };

function get(path: string, cert?: { certPem: string; keyPem: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: kubelet.port, path, ca: kubeletCA.certPem, ...(cert ? { cert: cert.certPem, key: cert.keyPem } : {}) },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubelet-auth-'));
  // The kubelets' CA: it signs their serving certificates and the clients they accept.
  kubeletCA = await createCA('kubelet-ca');
  const apiClient = await issue(kubeletCA, { commonName: 'kube-apiserver-kubelet-client', usage: 'client' });
  env = await startTestEnv({ secure: true, server: { kubeletClient: { cert: apiClient.certPem, key: apiClient.keyPem, ca: kubeletCA.certPem } } });
  const node = await env.pki!.client('system:node:secure-1', ['system:nodes']);
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const serving = await issue(kubeletCA, { commonName: 'secure-1', ips: ['127.0.0.1'], usage: 'server' });
  kubelet = new Kubelet({
    config: {
      server: env.url,
      namespace: 'default',
      ca: Buffer.from(env.pki!.caPem),
      cert: Buffer.from(node.certPem),
      key: Buffer.from(node.keyPem),
      insecureSkipTLSVerify: false,
    },
    nodeName: 'secure-1',
    runtime: (runtime = new KubelingRuntime({ backend: 'hollow', root: join(dir, 'secure-1', 'runtime'), podCIDR: '127.9.1.0/24' })),
    rootDir: join(dir, 'secure-1'),
    port: 0,
    tls: { cert: serving.certPem, key: serving.keyPem, clientCA: kubeletCA.certPem },
    authorizationWebhook: true,
    log: pino({ level: 'silent' }),
    leaseRenewMs: 1000,
    statusUpdateMs: 1000,
  });
  await kubelet.start();
});
after(async () => {
  await kubelet?.stop();
  await runtime?.shutdown();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('anonymous 401, an unauthorized user 403 with the attributes, the apiserver client allowed; /healthz open', async () => {
  assert.deepEqual(await get('/healthz'), { status: 200, body: 'ok' });
  assert.equal((await get('/pods')).status, 401);
  const jane = await issue(kubeletCA, { commonName: 'jane', organizations: ['devs'], usage: 'client' });
  assert.deepEqual(await get('/pods', jane), { status: 403, body: 'Forbidden (user=jane, verb=get, resource=nodes, subresource(s)=[pods])' });
  assert.equal((await get('/containerLogs/default/x/c', jane)).body, 'Forbidden (user=jane, verb=get, resource=nodes, subresource(s)=[proxy])');
  const apiClient = await issue(kubeletCA, { commonName: 'kube-apiserver-kubelet-client', usage: 'client' });
  const pods = await get('/pods', apiClient);
  assert.equal(pods.status, 200, pods.body);
  assert.equal(JSON.parse(pods.body).kind, 'PodList');
});

test("the apiserver's pods/log reaches the kubelet over HTTPS with its client certificate", async () => {
  const c = new RestClient({
    server: env.url,
    namespace: 'default',
    ca: Buffer.from(env.pki!.caPem),
    cert: Buffer.from(admin.certPem),
    key: Buffer.from(admin.keyPem),
    insecureSkipTLSVerify: false,
  });
  try {
    await c
      .post('/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })
      .catch(() => undefined);
    await c.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'quiet' },
      spec: { nodeName: 'secure-1', automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox' }] },
    });
    await waitFor(
      async () => (await c.get<Record<string, any>>('/api/v1/namespaces/default/pods/quiet')).status?.phase === 'Running',
      20_000,
      'the pod to run',
    );
    const res = await c.raw({ path: '/api/v1/namespaces/default/pods/quiet/log', accept: '*/*' });
    // The kubelet answered (logs, or its own NotFound for a hollow container): not a refusal on the way.
    assert.ok(res.status === 200 || res.status === 404, `status ${res.status}: ${res.body.toString()}`);
    assert.doesNotMatch(res.body.toString(), /Forbidden|Unauthorized|could not be reached/);
  } finally {
    c.close();
  }
});
