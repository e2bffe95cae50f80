/**
 * The metrics server against a real etcd + apiserver (HTTPS, RBAC) and a
 * fake kubelet on loopback: an HTTPS server that checks the metrics server's
 * client certificate and serves /metrics/resource with counters growing at
 * known rates, stamped with the time of each scrape. The Node object points
 * at it. The metrics server runs in-process at a 300 ms resolution as a user
 * with metrics-server's RBAC, and is asked directly (front-proxy certificate
 * and X-Remote-* headers, client certificates, bearer tokens) and through
 * the apiserver's aggregation layer.
 */
import { strict as assert } from 'node:assert';
import { request as httpsRequest, createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { parseQuantity } from '@kubeling/apimachinery';
import { createCA, issue } from '@kubeling/pki';
import { clientFor, eventually, Kubectl, kubectlBinaries, type Reply, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { MetricsServer } from './server.js';

const MS_USER = 'system:metrics-server';
const RATES = { node: 1.5, app: 0.25, sidecar: 0.05 };
const T_START = Date.now();

let env: TestEnv;
let admin: ReturnType<typeof clientFor>;
let kubelet: Server;
let ms: MetricsServer;
let port = 0;
let servingCA = '';
let proxy: { certPem: string; keyPem: string };
let frontProxyCA: Awaited<ReturnType<typeof createCA>>;
const kubeletCallers = new Set<string>();

/** The fake kubelet's exposition at time `t`: cumulative CPU grows at RATES from T_START. */
function exposition(t: number): string {
  const cpu = (rate: number) => (rate * (t - T_START)) / 1000 + 100;
  const l = (c: string) => `{container="${c}",namespace="default",pod="web"}`;
  const start = (T_START - 3_600_000) / 1000;
  return [
    '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
    '# TYPE container_cpu_usage_seconds_total counter',
    `container_cpu_usage_seconds_total${l('app')} ${cpu(RATES.app)} ${t}`,
    `container_cpu_usage_seconds_total${l('sidecar')} ${cpu(RATES.sidecar)} ${t}`,
    '# TYPE container_memory_working_set_bytes gauge',
    `container_memory_working_set_bytes${l('app')} ${100 * 2 ** 20} ${t}`,
    `container_memory_working_set_bytes${l('sidecar')} ${10 * 2 ** 20} ${t}`,
    '# TYPE container_start_time_seconds gauge',
    `container_start_time_seconds${l('app')} ${start}`,
    `container_start_time_seconds${l('sidecar')} ${start}`,
    '# TYPE node_cpu_usage_seconds_total counter',
    `node_cpu_usage_seconds_total ${cpu(RATES.node)} ${t}`,
    '# TYPE node_memory_working_set_bytes gauge',
    `node_memory_working_set_bytes ${2 * 2 ** 30} ${t}`,
    '# TYPE scrape_error gauge',
    'scrape_error 0',
    '',
  ].join('\n');
}

/** A request to the metrics server itself, with a client certificate and headers of the caller's choosing. */
function call(
  path: string,
  o: { cert?: { certPem: string; keyPem: string }; headers?: Record<string, string | string[]>; accept?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        ca: servingCA,
        servername: 'metrics-server.kube-system.svc',
        ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}),
        headers: { accept: o.accept ?? 'application/json', ...(o.headers ?? {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          if (String(res.headers['content-type']).includes('json')) body = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers: new Headers(), body, text });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const as = (user: string, groups: string[] = []) => ({ cert: proxy, headers: { 'X-Remote-User': user, 'X-Remote-Group': groups } });

before(async () => {
  frontProxyCA = await createCA('front-proxy-ca');
  proxy = await issue(frontProxyCA, { commonName: 'front-proxy-client', usage: 'client' });
  env = await startTestEnv({
    secure: true,
    server: {
      aggregation: {
        proxyClient: { cert: proxy.certPem, key: proxy.keyPem },
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
  const pki = env.pki!;
  admin = clientFor(env, await pki.client('admin', ['system:masters']));
  const ok = async (method: string, path: string, body: unknown) => {
    const r = await admin(method, path, body);
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    return r;
  };
  // metrics-server's RBAC (its manifests' system:metrics-server ClusterRole, and the auth-reader and auth-delegator bindings).
  await ok('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:metrics-server' },
    rules: [
      { apiGroups: [''], resources: ['nodes/metrics'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ],
  });
  const bind = (kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, role: string, user: string, ns?: string) =>
    ok('POST', `/apis/rbac.authorization.k8s.io/v1/${ns ? `namespaces/${ns}/rolebindings` : 'clusterrolebindings'}`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind,
      metadata: { name, ...(ns ? { namespace: ns } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: ns ? 'Role' : 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  await bind('ClusterRoleBinding', 'system:metrics-server', 'system:metrics-server', MS_USER);
  await bind('RoleBinding', 'metrics-server-auth-reader', 'extension-apiserver-authentication-reader', MS_USER, 'kube-system');
  // Who may read metrics: dave (a ClusterRole on the metrics group); carol has nothing.
  await ok('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'metrics-reader' },
    rules: [{ apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: ['get', 'list'] }],
  });
  await bind('ClusterRoleBinding', 'dave-metrics', 'metrics-reader', 'dave');

  // The fake kubelet: its own serving CA; it records who called with a certificate of the cluster CA.
  const kubeletCA = await createCA('kubelet-ca');
  const kubeletServing = await issue(kubeletCA, { commonName: 'fake-node', ips: ['127.0.0.1'], usage: 'server' });
  kubelet = createServer(
    { cert: kubeletServing.certPem, key: kubeletServing.keyPem, ca: pki.caPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const sock = req.socket as TLSSocket;
      if (!sock.authorized) return void res.writeHead(401).end('Unauthorized');
      kubeletCallers.add(String(sock.getPeerCertificate().subject.CN));
      if (req.url !== '/metrics/resource') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(exposition(Date.now()));
    },
  );
  await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', () => r()));
  const kubeletPort = (kubelet.address() as { port: number }).port;
  const node = await ok('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'fake-node', labels: { 'kubernetes.io/hostname': 'fake-node', zone: 'a' } },
    status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } },
  });
  if (node.body.status?.daemonEndpoints?.kubeletEndpoint?.Port !== kubeletPort) {
    await ok('PUT', '/api/v1/nodes/fake-node/status', {
      ...node.body,
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } },
    });
  }
  // A node whose kubelet does not answer: skipped, logged, no metrics.
  await ok('POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'gone-node' },
    status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 1 } } },
  });
  // No controller-manager here: the ServiceAccount admission wants the namespace's default account.
  await ok('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  await ok('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      nodeName: 'fake-node',
      containers: [
        { name: 'app', image: 'nginx' },
        { name: 'sidecar', image: 'busybox' },
      ],
    },
  });

  // The metrics server: a serving certificate for its Service name, the metrics-server identity to the apiserver and kubelets.
  const msCA = await createCA('metrics-server-ca');
  servingCA = msCA.certPem;
  const serving = await issue(msCA, { commonName: 'metrics-server', dnsNames: ['metrics-server.kube-system.svc'], ips: ['127.0.0.1'], usage: 'server' });
  const ident = await pki.client(MS_USER);
  const config = {
    server: env.url,
    namespace: 'default',
    insecureSkipTLSVerify: false,
    ca: Buffer.from(pki.caPem),
    cert: Buffer.from(ident.certPem),
    key: Buffer.from(ident.keyPem),
  };
  ms = new MetricsServer({
    config,
    port: 0,
    tls: serving,
    resolutionMs: 300,
    kubelet: { cert: ident.certPem, key: ident.keyPem, ca: kubeletCA.certPem },
    // As --requestheader-client-ca-file (and its header defaults); client-ca-file comes from the ConfigMap.
    requestHeader: {
      clientCA: frontProxyCA.certPem,
      allowedNames: ['front-proxy-client'],
      usernameHeaders: ['X-Remote-User'],
      groupHeaders: ['X-Remote-Group'],
      extraHeadersPrefix: ['X-Remote-Extra-'],
    },
    log: pino({ level: 'silent' }),
  });
  await ms.start();
  port = ms.address!.port;
});

after(async () => {
  await ms?.stop();
  await new Promise<void>((r) => (kubelet ? kubelet.close(() => r()) : r()));
  await env?.stop();
});

const near = (q: string, want: number) => Math.abs(parseQuantity(q) - want) < 1e-6;

test('health is open to anyone; /readyz turns ready once metrics are stored', async () => {
  assert.equal((await call('/healthz')).text, 'ok');
  assert.equal((await call('/livez')).status, 200);
  await eventually(async () => (await call('/readyz')).status === 200);
});

test('NodeMetrics: the rate of the kubelet counters over the real window, scraped with the client certificate', async () => {
  const m = await eventually(async () => {
    const r = await call('/apis/metrics.k8s.io/v1beta1/nodes/fake-node', as('dave'));
    return r.status === 200 ? r.body : undefined;
  });
  assert.equal(m.kind, 'NodeMetrics');
  assert.equal(m.apiVersion, 'metrics.k8s.io/v1beta1');
  assert.deepEqual(m.metadata.labels, { 'kubernetes.io/hostname': 'fake-node', zone: 'a' });
  assert.ok(near(m.usage.cpu, RATES.node), m.usage.cpu);
  assert.equal(m.usage.memory, '2Gi');
  // The window is the time between the two scrapes, as a Go duration (~300ms).
  const w = /^(\d+(?:\.\d+)?)ms$/.exec(m.window);
  assert.ok(w && Number(w[1]) > 150 && Number(w[1]) < 2000, m.window);
  assert.ok(Math.abs(Date.parse(m.timestamp) - Date.now()) < 5000);
  assert.ok(kubeletCallers.has(MS_USER));

  const list = await call('/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Da', as('dave'));
  assert.deepEqual(
    list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name),
    ['fake-node'],
    'gone-node has no metrics',
  );
  const gone = await call('/apis/metrics.k8s.io/v1beta1/nodes/gone-node', as('dave'));
  assert.deepEqual([gone.status, gone.body.message], [404, 'nodemetrics.metrics.k8s.io "gone-node" not found']);
});

test('PodMetrics: every container with its rate and working set; NotFound as upstream', async () => {
  const p = await eventually(async () => {
    const r = await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web', as('dave'));
    return r.status === 200 ? r.body : undefined;
  });
  assert.equal(p.kind, 'PodMetrics');
  assert.deepEqual(p.metadata.labels, { app: 'web' });
  assert.deepEqual(
    p.containers.map((c: { name: string; usage: { memory: string } }) => [c.name, c.usage.memory]),
    [
      ['app', '100Mi'],
      ['sidecar', '10Mi'],
    ],
  );
  assert.ok(near(p.containers[0].usage.cpu, RATES.app), p.containers[0].usage.cpu);
  assert.ok(near(p.containers[1].usage.cpu, RATES.sidecar), p.containers[1].usage.cpu);
  const all = await call('/apis/metrics.k8s.io/v1beta1/pods', as('dave'));
  assert.deepEqual(
    all.body.items.map((i: { metadata: { namespace: string; name: string } }) => `${i.metadata.namespace}/${i.metadata.name}`),
    ['default/web'],
  );
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dother', as('dave'))).body.items.length, 0);
  const missing = await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope', as('dave'));
  assert.deepEqual([missing.status, missing.body.reason, missing.body.message], [404, 'NotFound', 'pods "nope" not found']);
  const table = await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', {
    ...as('dave'),
    accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  });
  assert.equal(table.body.kind, 'Table');
  assert.deepEqual(table.body.rows[0].cells.slice(0, 1).concat(table.body.rows[0].cells[2]), ['web', '110Mi']);
  assert.ok(near(table.body.rows[0].cells[1], RATES.app + RATES.sidecar));
});

test('authorization: a SubjectAccessReview per request; no RBAC is 403 with upstream message, RBAC is 200', async () => {
  const denied = await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', as('carol', ['devs']));
  assert.equal(denied.status, 403);
  assert.equal(denied.body.reason, 'Forbidden');
  assert.equal(
    denied.body.message,
    'pods.metrics.k8s.io is forbidden: User "carol" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "default"',
  );
  const deniedNode = await call('/apis/metrics.k8s.io/v1beta1/nodes/fake-node', as('carol'));
  assert.equal(
    deniedNode.body.message,
    'nodes.metrics.k8s.io "fake-node" is forbidden: User "carol" cannot get resource "nodes" in API group "metrics.k8s.io" at the cluster scope',
  );
  // A group the user is in through X-Remote-Group carries RBAC too.
  await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'readers-metrics' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
  });
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', as('erin', ['readers']))).status, 200);
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', as('dave'))).status, 200);
  // Discovery is a non-resource path: system:discovery lets any authenticated user read it.
  const disc = await call('/apis/metrics.k8s.io/v1beta1', as('carol'));
  assert.deepEqual(
    disc.body.resources.map((r: { name: string; kind: string; namespaced: boolean }) => [r.name, r.kind, r.namespaced]),
    [
      ['nodes', 'NodeMetrics', false],
      ['pods', 'PodMetrics', true],
    ],
  );
  assert.equal((await call('/apis', as('carol'))).body.groups[0].preferredVersion.version, 'v1beta1');
});

test('authentication: no credentials, an unknown CA, a proxy CN not allowed and a bad token are 401; client certificates and tokens work', async () => {
  const unauth = await call('/apis/metrics.k8s.io/v1beta1/nodes');
  assert.deepEqual([unauth.status, unauth.body.reason, unauth.body.message], [401, 'Unauthorized', 'Unauthorized']);
  const strangerCA = await createCA('stranger');
  const stranger = await issue(strangerCA, { commonName: 'front-proxy-client', usage: 'client' });
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/nodes', { cert: stranger, headers: { 'X-Remote-User': 'dave' } })).status, 401);
  const otherProxy = await issue(frontProxyCA, { commonName: 'not-the-proxy', usage: 'client' });
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/nodes', { cert: otherProxy, headers: { 'X-Remote-User': 'dave' } })).status, 401);
  // Signed by the cluster CA, not the front-proxy CA: its X-Remote-User is ignored, its CN is the user.
  const eve = await env.pki!.client('eve', ['devs']);
  const asEve = await call('/apis/metrics.k8s.io/v1beta1/nodes', { cert: eve, headers: { 'X-Remote-User': 'dave' } });
  assert.equal(asEve.status, 403);
  assert.match(asEve.body.message, /User "eve" cannot list/);
  const daveCert = await env.pki!.client('dave');
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/nodes', { cert: daveCert })).status, 200);
  // A ServiceAccount token goes through a TokenReview.
  await admin('POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'hpa' } });
  const tr = await admin('POST', '/api/v1/namespaces/default/serviceaccounts/hpa/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  assert.equal(tr.status, 201, tr.text);
  const withToken = await call('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { headers: { authorization: `Bearer ${tr.body.status.token}` } });
  assert.equal(withToken.status, 403);
  assert.match(withToken.body.message, /User "system:serviceaccount:default:hpa" cannot list resource "pods"/);
  assert.equal((await call('/apis/metrics.k8s.io/v1beta1/nodes', { headers: { authorization: 'Bearer not-a-token' } })).status, 401);
});

test('through the aggregation layer: APIService v1beta1.metrics.k8s.io serves NodeMetrics to kubectl users', async () => {
  await admin('POST', '/api/v1/namespaces/kube-system/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'metrics-server' },
    spec: { ports: [{ name: 'https', port: 443, targetPort: port }] },
  });
  await admin('POST', '/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices', {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'metrics-server-1', labels: { 'kubernetes.io/service-name': 'metrics-server' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  });
  const created = await admin('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: {
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      groupPriorityMinimum: 100,
      versionPriority: 100,
      caBundle: Buffer.from(servingCA).toString('base64'),
      service: { namespace: 'kube-system', name: 'metrics-server' },
    },
  });
  assert.equal(created.status, 201, created.text);
  const r = await eventually(async () => {
    const x = await admin('GET', '/apis/metrics.k8s.io/v1beta1/nodes/fake-node');
    return x.status === 200 ? x : undefined;
  });
  assert.equal(r.body.kind, 'NodeMetrics');
  assert.ok(near(r.body.usage.cpu, RATES.node));
  const table = await admin('GET', '/apis/metrics.k8s.io/v1beta1/nodes', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(
    table.body.columnDefinitions.map((c: { name: string }) => c.name),
    ['Name', 'cpu', 'memory', 'Window'],
  );
});

const kubectl = kubectlBinaries().default;
test('kubectl top and kubectl get print the metrics through the apiserver', { skip: !kubectl && 'no kubectl on PATH' }, async () => {
  const creds = await env.pki!.client('admin', ['system:masters']);
  const k = new Kubectl(env.url, kubectl!, { caPem: env.pki!.caPem, ...creds });
  try {
    await eventually(async () => (await k.run(['top', 'node', 'fake-node'])).code === 0);
    const top = await k.run(['top', 'node', 'fake-node', '--no-headers']);
    assert.match(top.stdout, /^fake-node\s+1500m\s+/, top.stdout + top.stderr);
    const pods = await k.run(['top', 'pod', 'web', '--containers', '--no-headers']);
    assert.match(pods.stdout, /web\s+app\s+250m\s+100Mi/, pods.stdout + pods.stderr);
    const get = await k.run(['get', 'nodes.metrics.k8s.io']);
    assert.match(get.stdout, /^NAME\s+CPU\s+MEMORY\s+WINDOW\n/, get.stdout + get.stderr);
    assert.match(get.stdout, /fake-node\s+\d+n?m?\s+2Gi\s+\d+(\.\d+)?ms/);
  } finally {
    k.cleanup();
  }
});
