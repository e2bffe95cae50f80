/**
 * The aggregation layer against a real extension server on loopback: an
 * APIService naming a Service whose EndpointSlice points at a small HTTPS
 * server becomes Available, its group shows in discovery (legacy and
 * aggregated), requests reach it with the front-proxy client certificate and
 * the caller's identity in X-Remote-* headers (never the client's own), and
 * once it stops the APIService turns False and its group answers 503 while
 * the rest of discovery keeps working.
 */
import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, test } from 'node:test';
import { createCA, issue } from '@kubeling/pki';
import { clientFor, eventually, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let ext: Server;
let extPort = 0;
let admin: ReturnType<typeof clientFor>;
const seen: { user?: string; groups?: string; extraHeader?: string | undefined; proxyCN?: string }[] = [];
let caBundle = '';
let frontProxyCA: Awaited<ReturnType<typeof createCA>>;

const GROUP = 'example.kubeling.io';

let serving: { certPem: string; keyPem: string };

async function startExtension(port = 0): Promise<void> {
  if (!caBundle) {
    const ca = await createCA('ext-ca');
    caBundle = Buffer.from(ca.certPem).toString('base64');
    serving = await issue(ca, { commonName: 'ext', dnsNames: ['ext.default.svc'], usage: 'server' });
  }
  ext = createServer({ cert: serving.certPem, key: serving.keyPem, ca: frontProxyCA.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const sock = req.socket as TLSSocket;
    const cn = sock.authorized ? (sock.getPeerCertificate().subject?.CN as string | undefined) : undefined;
    const path = (req.url ?? '').split('?')[0];
    if (path === `/apis/${GROUP}/v1`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: `${GROUP}/v1`,
          resources: [
            { name: 'things', singularName: 'thing', namespaced: true, kind: 'Thing', verbs: ['get', 'list'] },
            { name: 'things/status', singularName: '', namespaced: true, kind: 'Thing', verbs: ['get'] },
          ],
        }),
      );
      return;
    }
    seen.push({
      user: req.headers['x-remote-user'] as string,
      groups: String(req.headers['x-remote-group'] ?? ''),
      extraHeader: req.headers['x-remote-extra-sneaky'] as string | undefined,
      ...(cn ? { proxyCN: cn } : {}),
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'ThingList', apiVersion: `${GROUP}/v1`, metadata: {}, items: [] }));
  });
  await new Promise<void>((r) => ext.listen(port, '127.0.0.1', () => r()));
  const a = ext.address();
  extPort = typeof a === 'object' && a ? a.port : 0;
}

before(async () => {
  frontProxyCA = await createCA('front-proxy-ca');
  const proxyClient = await issue(frontProxyCA, { commonName: 'front-proxy-client', usage: 'client' });
  env = await startTestEnv({
    secure: true,
    server: {
      aggregation: {
        proxyClient: { cert: proxyClient.certPem, key: proxyClient.keyPem },
        requestHeader: {
          clientCA: frontProxyCA.certPem,
          allowedNames: ['front-proxy-client'],
          usernameHeaders: ['X-Remote-User'],
          groupHeaders: ['X-Remote-Group'],
          extraHeadersPrefix: ['X-Remote-Extra-'],
        },
        resyncMs: 300,
      },
    },
  });
  const creds = await env.pki!.client('admin', ['system:masters']);
  admin = clientFor(env, { certPem: creds.certPem, keyPem: creds.keyPem });
  await startExtension();
});

after(async () => {
  ext?.close();
  await env?.stop();
});

test('local APIServices are registered for every served group-version, Available as Local', async () => {
  await eventually(async () => {
    const r = await admin('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.apps');
    assert.equal(r.status, 200);
    assert.equal(r.body.spec.groupPriorityMinimum, 17800);
    const c = r.body.status.conditions.find((x: { type: string }) => x.type === 'Available');
    assert.deepEqual([c.status, c.reason], ['True', 'Local']);
    return true;
  });
  const core = await admin('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.');
  assert.equal(core.status, 200);
  assert.equal(core.body.spec.group ?? '', '');
});

test('the extension-apiserver-authentication ConfigMap tells extension servers whom to trust', async () => {
  const r = await admin('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
  assert.equal(r.status, 200);
  assert.equal(r.body.data['requestheader-client-ca-file'], frontProxyCA.certPem);
  assert.equal(r.body.data['requestheader-allowed-names'], '["front-proxy-client"]');
  assert.equal(r.body.data['requestheader-username-headers'], '["X-Remote-User"]');
  assert.ok(r.body.data['client-ca-file'].includes('BEGIN CERTIFICATE'));
});

test('an invalid APIService is refused as upstream', async () => {
  const r = await admin('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1.wrong.io' },
    spec: { group: 'other.io', version: 'v1', groupPriorityMinimum: 0, versionPriority: 10, service: { namespace: 'default', name: 'x' } },
  });
  assert.equal(r.status, 422);
  assert.match(r.body.message, /metadata.name: Invalid value: "v1.wrong.io": must be `spec.version\+"."\+spec.group`: "v1.other.io"/);
  assert.match(r.body.message, /spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000/);
});

test('an extension server behind an APIService: discovery, proxying with the user, 503 once it stops', async () => {
  assert.equal(
    (
      await admin('POST', '/api/v1/namespaces/default/services', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'ext' },
        spec: { ports: [{ name: 'https', port: 443, targetPort: extPort }] },
      })
    ).status,
    201,
  );
  assert.equal(
    (
      await admin('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'ext-1', labels: { 'kubernetes.io/service-name': 'ext' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
        ports: [{ name: 'https', port: extPort, protocol: 'TCP' }],
      })
    ).status,
    201,
  );
  const created = await admin('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `v1.${GROUP}` },
    spec: { group: GROUP, version: 'v1', groupPriorityMinimum: 100, versionPriority: 10, caBundle, service: { namespace: 'default', name: 'ext' } },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.spec.service.port, 443);
  await eventually(async () => {
    const r = await admin('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`);
    const c = r.body.status?.conditions?.find((x: { type: string }) => x.type === 'Available');
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'Passed', 'all checks passed']);
    return true;
  });

  const groups = await admin('GET', '/apis');
  assert.ok(groups.body.groups.some((g: { name: string }) => g.name === GROUP));
  assert.equal((await admin('GET', `/apis/${GROUP}`)).body.preferredVersion.groupVersion, `${GROUP}/v1`);
  const agg = await admin('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
  const entry = agg.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === GROUP);
  assert.equal(entry.versions[0].freshness, 'Current');
  assert.equal(entry.versions[0].resources[0].resource, 'things');
  assert.equal(entry.versions[0].resources[0].subresources[0].subresource, 'status');

  // The user reaches the extension server as itself, through the front proxy; a forged identity header does not.
  const r = await admin('GET', `/apis/${GROUP}/v1/namespaces/default/things`, undefined, {
    headers: { 'X-Remote-User': 'mallory', 'X-Remote-Extra-Sneaky': 'yes' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.kind, 'ThingList');
  const last = seen.at(-1)!;
  assert.equal(last.user, 'admin');
  assert.match(last.groups!, /system:masters/);
  assert.equal(last.extraHeader, undefined);
  assert.equal(last.proxyCN, 'front-proxy-client');

  // A user the apiserver does not authorize never reaches it.
  const nobody = await env.pki!.client('nobody');
  const before = seen.length;
  const denied = await clientFor(env, { certPem: nobody.certPem, keyPem: nobody.keyPem })('GET', `/apis/${GROUP}/v1/namespaces/default/things`);
  assert.equal(denied.status, 403);
  assert.equal(seen.length, before);

  // The backend stops: the APIService turns False, its group answers 503, the rest of discovery works.
  await new Promise<void>((res) => {
    ext.closeAllConnections();
    ext.close(() => res());
  });
  await eventually(async () => {
    const a = await admin('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`);
    const c = a.body.status.conditions.find((x: { type: string }) => x.type === 'Available');
    assert.deepEqual([c.status, c.reason], ['False', 'FailedDiscoveryCheck']);
    assert.match(c.message, /failing or missing response from https:\/\/127\.0\.0\.1:\d+\/apis\/example\.kubeling\.io\/v1/);
    return true;
  });
  const down = await admin('GET', `/apis/${GROUP}/v1/namespaces/default/things`);
  assert.equal(down.status, 503);
  assert.equal(down.text, 'service unavailable\n');
  assert.equal((await admin('GET', '/apis')).status, 200);
  assert.equal((await admin('GET', '/apis/apps/v1')).status, 200);
  const stale = await admin('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
  assert.equal(stale.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === GROUP).versions[0].freshness, 'Stale');

  // Back on the same port, with the same certificate: Available again.
  await startExtension(extPort);
  await eventually(async () => {
    return (await admin('GET', `/apis/${GROUP}/v1/namespaces/default/things`)).status === 200;
  });
});
