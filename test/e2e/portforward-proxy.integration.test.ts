/**
 * pods/portforward and the proxy subresources end to end on a secure cluster
 * (HTTPS apiserver with RBAC and a kubelet client certificate, a kubelet on
 * its secure port with webhook authorization, kubeling's runtime, the
 * EndpointSlice controller): the real kubectl's `port-forward` (WebSocket
 * tunnel from 1.31, SPDY before) and `proxy`, and the same paths spoken
 * directly — a SPDY session through the WebSocket tunnel, pods/services/nodes
 * proxy with redirects, HTML links, upgrades and refusals.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createCA, issue } from '@kubeling/pki';
import { RestClient } from '@kubeling/client';
import { dialPortForwardSpdy, dialPortForwardTunnel, openPortForward, type SpdyConnection } from '@kubeling/client/remotecommand';
import { ControllerManager } from '@kubeling/controller-manager';
import { Kubelet } from '@kubeling/kubelet';
import { clientFor, freePort, Kubectl, kubectlBinaries, startTestEnv, stopChild, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes } from './cluster.js';

type Obj = Record<string, any>;

const bins = kubectlBinaries();
const NS = 'pf';
const NODE = 'pf-1';
let env: TestEnv;
let dir: string;
let admin: RestClient;
let adminCert: { certPem: string; keyPem: string };
let kubelet: Kubelet;
let mgr: ControllerManager;
let appIP: string;
const procs = new Processes();
const started: ChildProcess[] = [];

/** The app pod's server: redirects, HTML with links, an echo of the request, a raw upgrade that echoes bytes. */
const APP = `
const http = require('node:http');
const zlib = require('node:zlib');
const ip = process.env.POD_IP;
const page = '<html><body><a href="/docs/">docs</a><img src="logo.png"><a href="http://example.com/">out</a></body></html>';
const s = http.createServer((req, res) => {
  const path = req.url.split('?')[0];
  if (path === '/redirect') { res.writeHead(302, { location: '/target?from=redirect' }); return res.end(); }
  if (path === '/absolute') { res.writeHead(301, { location: 'http://' + ip + ':8080/elsewhere/' }); return res.end(); }
  if (path === '/away') { res.writeHead(302, { location: 'http://example.com/x' }); return res.end(); }
  if (path === '/page') { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'access-control-allow-origin': '*' }); return res.end(page); }
  if (path === '/gzpage') { res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }); return res.end(zlib.gzipSync(page)); }
  const chunks = [];
  req.on('data', (d) => chunks.push(d));
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-app': 'yes' });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
  });
});
s.on('upgrade', (req, sock) => {
  sock.write('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: echo\\r\\n\\r\\n');
  sock.pipe(sock);
});
s.listen(8080, ip);
`;

const pod = (name: string, labels: Record<string, string>, container: Obj) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels },
  spec: { nodeName: NODE, automountServiceAccountToken: false, containers: [{ name: 'c', ...container }] },
});

const svc = (name: string, selector: Record<string, string>, port: Obj) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS },
  spec: { selector, ports: [port] },
});

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-pf-'));
  const kubeletCA = await createCA('kubelet-ca');
  const apiClient = await issue(kubeletCA, { commonName: 'kube-apiserver-kubelet-client', usage: 'client' });
  env = await startTestEnv({ secure: true, server: { kubeletClient: { cert: apiClient.certPem, key: apiClient.keyPem, ca: kubeletCA.certPem } } });
  adminCert = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const adminConfig = {
    server: env.url,
    namespace: 'default',
    ca: Buffer.from(env.pki!.caPem),
    cert: Buffer.from(adminCert.certPem),
    key: Buffer.from(adminCert.keyPem),
    insecureSkipTLSVerify: false,
  };
  admin = new RestClient(adminConfig);
  const node = await env.pki!.client(`system:node:${NODE}`, ['system:nodes']);
  const serving = await issue(kubeletCA, { commonName: NODE, ips: ['127.0.0.1'], usage: 'server' });
  const sock = await procs.runtime(dir, NODE, '127.7.12.0/24');
  kubelet = new Kubelet({
    config: { ...adminConfig, cert: Buffer.from(node.certPem), key: Buffer.from(node.keyPem) },
    nodeName: NODE,
    runtime: `unix://${sock}`,
    rootDir: join(dir, NODE),
    port: 0,
    tls: { cert: serving.certPem, key: serving.keyPem, clientCA: kubeletCA.certPem },
    authorizationWebhook: true,
    log: pino({ level: 'silent' }),
    leaseRenewMs: 1000,
    statusUpdateMs: 1000,
  });
  await kubelet.start();
  mgr = new ControllerManager({ config: adminConfig, controllers: ['endpointslice'], leaderElect: false, log: pino({ level: 'silent' }) });
  await mgr.start();
  await admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await admin.post(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  await admin.post(`/api/v1/namespaces/${NS}/pods`, pod('web', { app: 'web' }, { image: 'nginx', ports: [{ containerPort: 80 }] }));
  await admin.post(
    `/api/v1/namespaces/${NS}/pods`,
    pod('app', { app: 'app' }, { image: 'busybox', command: [process.execPath, '-e', APP], ports: [{ name: 'http', containerPort: 8080 }] }),
  );
  await admin.post(`/api/v1/namespaces/${NS}/services`, svc('web', { app: 'web' }, { port: 80 }));
  await admin.post(`/api/v1/namespaces/${NS}/services`, svc('app', { app: 'app' }, { name: 'web', port: 80, targetPort: 'http' }));
  await admin.post(`/api/v1/namespaces/${NS}/services`, svc('nothing', { app: 'none' }, { port: 80 }));
  const ready = async (n: string) => {
    const p = await admin.get<Obj>(`/api/v1/namespaces/${NS}/pods/${n}`);
    return p.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True') ? (p.status.podIP as string) : undefined;
  };
  await waitFor(async () => !!(await ready('web')) && !!(await ready('app')), 60_000, 'the pods to be ready');
  appIP = (await ready('app'))!;
  // The servers listen once their processes are up; the slices list the pods once they are ready.
  await waitFor(async () => (await fetch(`http://${appIP}:8080/`)).ok, 30_000, 'the app to serve');
  await waitFor(
    async () => {
      const slices = await admin.get<Obj>(`/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`);
      return slices.items.filter((s: Obj) => s.endpoints?.some((e: Obj) => e.conditions?.ready)).length >= 2;
    },
    30_000,
    'the endpoint slices',
  );
});

after(async () => {
  for (const c of started) await stopChild(c);
  await mgr?.stop();
  await kubelet?.stop();
  await procs.stop();
  admin?.close();
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const as = (creds: { certPem: string; keyPem: string }) => clientFor(env, creds);

/** Starts a long-running kubectl with `env` added; resolves once its output matches `ready`. */
async function kubectl(binary: string, args: string[], ready: RegExp, extraEnv: Record<string, string> = {}) {
  const k = new Kubectl(env.url, binary, { namespace: NS, caPem: env.pki!.caPem, certPem: adminCert.certPem, keyPem: adminCert.keyPem });
  const child = spawn(binary, [`--kubeconfig=${k.kubeconfig}`, `--cache-dir=${k.cacheDir}`, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBECONFIG: '', ...extraEnv },
  });
  started.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(async () => ready.test(out) || child.exitCode !== null, 30_000, `kubectl ${args.join(' ')}`);
  assert.match(out, ready);
  return {
    output: () => out,
    exited: () => child.exitCode !== null,
    stop: async () => {
      await stopChild(child);
      k.cleanup();
    },
  };
}

const get = async (url: string) => {
  const r = await fetch(url, { redirect: 'manual' });
  return { status: r.status, headers: r.headers, text: await r.text() };
};

describe('kubectl port-forward', { skip: bins.default ? false : 'kubectl is not installed' }, () => {
  const versions = (['1.33', '1.32', '1.31', '1.30'] as const).filter((v) => bins[v]);

  for (const v of versions.length ? versions : (['default'] as const)) {
    test(`kubectl ${v}: pod/web and svc/app forward to the pods' servers`, async () => {
      const bin = bins[v]!;
      const [p1, p2] = [await freePort(), await freePort()];
      // -v=4 says whether the WebSocket tunnel was used or kubectl fell back to SPDY.
      const pf = await kubectl(bin, ['port-forward', 'pod/web', `${p1}:80`, '-v=4'], new RegExp(`Forwarding from 127\\.0\\.0\\.1:${p1} -> 80`));
      const sf = await kubectl(bin, ['port-forward', 'svc/app', `${p2}:80`], new RegExp(`Forwarding from 127\\.0\\.0\\.1:${p2} -> 8080`));
      try {
        const page = await get(`http://127.0.0.1:${p1}/`);
        assert.equal(page.status, 200);
        assert.match(page.text, /Welcome to nginx!/);
        // Several connections at once, each its own stream pair.
        const many = await Promise.all(Array.from({ length: 5 }, (_, i) => fetch(`http://127.0.0.1:${p2}/n/${i}`).then((r) => r.json() as Promise<Obj>)));
        assert.deepEqual(
          many.map((m) => m.url),
          [0, 1, 2, 3, 4].map((i) => `/n/${i}`),
        );
        const big = 'x'.repeat(3 << 20);
        const echoed = (await (await fetch(`http://127.0.0.1:${p2}/big`, { method: 'POST', body: big })).json()) as Obj;
        assert.equal(echoed.body.length, big.length);
        assert.match(pf.output(), new RegExp(`Handling connection for ${p1}`));
        if (v !== '1.30') {
          // kubectl 1.31+ tunnels SPDY through the WebSocket, without falling back.
          assert.match(pf.output(), /negotiated protocol: portforward\.k8s\.io|Negotiation complete/);
          assert.doesNotMatch(pf.output(), /fallback/i);
        }
      } finally {
        await pf.stop();
        await sf.stop();
      }
    });
  }

  test('SPDY (the fallback and older kubectls) forwards as well', async () => {
    const bin = bins['1.33'] ?? bins.default!;
    const p = await freePort();
    const pf = await kubectl(bin, ['port-forward', 'pod/app', `${p}:8080`], /Forwarding from/, { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' });
    try {
      assert.equal(((await (await fetch(`http://127.0.0.1:${p}/spdy`)).json()) as Obj).url, '/spdy');
    } finally {
      await pf.stop();
    }
  });

  test('a port nothing listens on: the error comes back on the error stream and kubectl gives up', async () => {
    const bin = bins['1.33'] ?? bins.default!;
    const p = await freePort();
    const pf = await kubectl(bin, ['port-forward', 'pod/web', `${p}:81`], /Forwarding from/);
    try {
      await assert.rejects(fetch(`http://127.0.0.1:${p}/`));
      await waitFor(
        async () => /error forwarding port 81 to pod [0-9a-f]+, uid : dial tcp4 127\.7\.12\.\d+:81: connect: connection refused/.test(pf.output()),
        10_000,
        'the error',
      );
    } finally {
      await pf.stop();
    }
  });

  test("RBAC: without create on pods/portforward, kubectl is refused with upstream's message", async () => {
    const jane = await env.pki!.client('jane-pf');
    await admin.post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'pf-get' },
      rules: [{ apiGroups: [''], resources: ['pods', 'pods/portforward'], verbs: ['get'] }],
    });
    await admin.post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'pf-get' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pf-get' },
      subjects: [{ kind: 'User', name: 'jane-pf', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const k = new Kubectl(env.url, bins['1.33'] ?? bins.default!, { namespace: NS, caPem: env.pki!.caPem, certPem: jane.certPem, keyPem: jane.keyPem });
    try {
      const r = await k.run(['port-forward', 'pod/web', `${await freePort()}:80`], { timeoutMs: 30_000 });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /User \\?"jane-pf\\?" cannot create resource \\?"pods\/portforward\\?" in API group \\?"\\?" in the namespace \\?"pf\\?"/);
    } finally {
      k.cleanup();
    }
  });
});

describe('kubectl proxy', { skip: bins.default ? false : 'kubectl is not installed' }, () => {
  test('a browser-style GET through services/<name>:<port>/proxy/ gets the page; redirects and links stay inside the proxy', async () => {
    const port = await freePort();
    const kp = await kubectl(bins['1.33'] ?? bins.default!, ['proxy', `--port=${port}`, '--address=127.0.0.1'], /Starting to serve on 127\.0\.0\.1/);
    const base = `http://127.0.0.1:${port}/api/v1/namespaces/${NS}/services`;
    try {
      const r = await fetch(`${base}/web:80/proxy/`, { headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
      assert.equal(r.status, 200);
      assert.match(await r.text(), /Welcome to nginx!/);
      const noSlash = await get(`${base}/web:80/proxy`);
      assert.equal(noSlash.status, 301);
      assert.equal(noSlash.headers.get('location'), `/api/v1/namespaces/${NS}/services/web:80/proxy/`);
      const redirect = await get(`${base}/app:80/proxy/redirect`);
      assert.equal(redirect.status, 302);
      assert.equal(redirect.headers.get('location'), `/api/v1/namespaces/${NS}/services/app:80/proxy/target?from=redirect`);
      // Following it lands on the app again, through the proxy.
      const followed = (await (await fetch(`${base}/app:80/proxy/redirect`)).json()) as Obj;
      assert.equal(followed.url, '/target?from=redirect');
      assert.equal(followed.headers['x-forwarded-uri'], `/api/v1/namespaces/${NS}/services/app:80/proxy/target`);
      const page = await get(`${base}/app:web/proxy/page`);
      assert.equal(
        page.text,
        `<html><body><a href="/api/v1/namespaces/${NS}/services/app:web/proxy/docs/">docs</a><img src="logo.png"><a href="http://example.com/">out</a></body></html>`,
      );
    } finally {
      await kp.stop();
    }
  });
});

describe('the subresources spoken directly', () => {
  /** Two HTTP exchanges with nginx and one refused port, over one session. */
  async function exercise(conn: SpdyConnection) {
    try {
      assert.ok((await conn.ping()) >= 0);
      const answers = await Promise.all(
        [0, 1].map(async (id) => {
          const { data, error } = await openPortForward(conn, 80, id);
          let text = '';
          data.on('data', (d: Buffer) => (text += d.toString()));
          const ended = new Promise((r) => data.once('end', r));
          data.end('GET / HTTP/1.0\r\nHost: x\r\n\r\n');
          await ended;
          return { text, error: await error };
        }),
      );
      for (const a of answers) {
        assert.match(a.text, /^HTTP\/1\.1 200 OK/);
        assert.match(a.text, /Welcome to nginx!/);
        assert.equal(a.error, '');
      }
      const refused = await openPortForward(conn, 81, 2);
      refused.data.resume();
      assert.match(await refused.error, /^error forwarding port 81 to pod [0-9a-f]+, uid : dial tcp4 127\.7\.12\.\d+:81: connect: connection refused$/);
    } finally {
      conn.close();
    }
  }

  const pfURL = (name: string) => `${env.url}/api/v1/namespaces/${NS}/pods/${name}/portforward?ports=80`;
  const creds = () => ({ ca: env.pki!.caPem, cert: adminCert.certPem, key: adminCert.keyPem });

  test('port-forward with our own SPDY client: through the WebSocket tunnel, and over a SPDY upgrade', async () => {
    await exercise(await dialPortForwardTunnel(pfURL('web'), creds()));
    await exercise(await dialPortForwardSpdy(pfURL('web'), creds()));
  });

  test('port-forward refusals: no upgrade, a missing pod', async () => {
    await assert.rejects(
      dialPortForwardTunnel(pfURL('ghost'), creds()),
      (e: Error & { code?: number }) => e.code === 404 && /pods \\"ghost\\" not found/.test(e.message),
    );
    const call = as(adminCert);
    const plain = await call('GET', `/api/v1/namespaces/${NS}/pods/web/portforward`);
    assert.equal(plain.status, 400);
    assert.equal(plain.body.message, 'Upgrade request required');
    const missing = await call('POST', `/api/v1/namespaces/${NS}/pods/ghost/portforward`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'pods "ghost" not found');
  });

  test('pods/proxy: any method, the body and query passed on, credentials not; the first container port by default', async () => {
    const call = as(adminCert);
    const r = await call('POST', `/api/v1/namespaces/${NS}/pods/app:8080/proxy/echo?x=1&y=2`, 'hello', { contentType: 'text/plain' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-app'), 'yes');
    const echoed = r.body as Obj;
    assert.deepEqual([echoed.method, echoed.url, echoed.body], ['POST', '/echo?x=1&y=2', 'hello']);
    assert.equal(echoed.headers.authorization, undefined);
    assert.equal(echoed.headers['x-forwarded-uri'], `/api/v1/namespaces/${NS}/pods/app:8080/proxy/echo`);
    for (const m of ['PUT', 'PATCH', 'DELETE']) {
      // (Node's client sends a DELETE body without a length unless told.)
      const x = await call(m, `/api/v1/namespaces/${NS}/pods/app/proxy/m`, 'b', { contentType: 'text/plain', headers: { 'content-length': '1' } });
      assert.deepEqual([x.status, (x.body as Obj).method, (x.body as Obj).body], [200, m, 'b'], x.text);
    }
    const head = await call('HEAD', `/api/v1/namespaces/${NS}/pods/app/proxy/`);
    assert.equal(head.status, 200);
    const abs = await call('GET', `/api/v1/namespaces/${NS}/pods/app/proxy/absolute`);
    assert.equal(abs.status, 301);
    assert.equal(abs.headers.get('location'), `/api/v1/namespaces/${NS}/pods/app/proxy/elsewhere/`);
    const away = await call('GET', `/api/v1/namespaces/${NS}/pods/app/proxy/away`);
    assert.equal(away.headers.get('location'), 'http://example.com/x');
    const gz = await call('GET', `/api/v1/namespaces/${NS}/pods/app/proxy/gzpage`, undefined, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    const page = await call('GET', `/api/v1/namespaces/${NS}/pods/app/proxy/page`);
    assert.equal(page.headers.get('access-control-allow-origin'), null);
    assert.match(page.text, new RegExp(`href="/api/v1/namespaces/${NS}/pods/app/proxy/docs/"`));
  });

  test('an upgrade through pods/proxy is joined to the pod byte for byte', async () => {
    const u = new URL(`${env.url}/api/v1/namespaces/${NS}/pods/app/proxy/ws`);
    const echoed = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest({
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        ca: env.pki!.caPem,
        cert: adminCert.certPem,
        key: adminCert.keyPem,
        headers: { connection: 'Upgrade', upgrade: 'echo' },
      });
      req.on('upgrade', (res, sock) => {
        assert.equal(res.statusCode, 101);
        let got = '';
        sock.on('data', (d: Buffer) => {
          got += d.toString();
          if (got === 'ping-pong') {
            sock.destroy();
            resolve(got);
          }
        });
        sock.write('ping-');
        sock.write('pong');
      });
      req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    assert.equal(echoed, 'ping-pong');
  });

  test('services/proxy: endpoints from the slices, refusals as upstream says them', async () => {
    const call = as(adminCert);
    const ok = await call('GET', `/api/v1/namespaces/${NS}/services/http:app:80/proxy/svc`);
    assert.equal((ok.body as Obj).url, '/svc');
    const none = await call('GET', `/api/v1/namespaces/${NS}/services/nothing:80/proxy/`);
    assert.equal(none.status, 503);
    assert.equal(none.body.message, 'no endpoints available for service "nothing"');
    const noPort = await call('GET', `/api/v1/namespaces/${NS}/services/app:81/proxy/`);
    assert.equal(noPort.status, 503);
    assert.equal(noPort.body.message, 'no service port 81 found for service "app"');
    const bad = await call('GET', `/api/v1/namespaces/${NS}/services/a:b:c:d/proxy/`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'invalid service request "a:b:c:d"');
    const missing = await call('GET', `/api/v1/namespaces/${NS}/services/ghost/proxy/`);
    assert.equal(missing.status, 404);
    // A slice naming an address no pod has is not followed.
    await call('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'nothing-forged', labels: { 'kubernetes.io/service-name': 'nothing' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', namespace: NS, name: 'web' } }],
      ports: [{ name: '', port: 6443, protocol: 'TCP' }],
    });
    const forged = await call('GET', `/api/v1/namespaces/${NS}/services/nothing:80/proxy/`);
    assert.equal(forged.status, 503);
    assert.equal(forged.body.message, 'no endpoints available for service "nothing:80"');
  });

  test('nodes/proxy reaches the kubelet with the apiserver kubelet client certificate', async () => {
    const call = as(adminCert);
    const health = await call('GET', `/api/v1/nodes/${NODE}/proxy/healthz`);
    assert.deepEqual([health.status, health.text], [200, 'ok']);
    const pods = await call('GET', `/api/v1/nodes/${NODE}/proxy/pods`);
    assert.deepEqual(((pods.body as Obj).items as Obj[]).map((p) => p.metadata.name).sort(), ['app', 'web']);
    const missing = await call('GET', '/api/v1/nodes/ghost/proxy/healthz');
    assert.equal(missing.status, 404);
  });

  test('authorization by method: get on services/proxy reads, create is needed to POST', async () => {
    const user = await env.pki!.client('proxy-reader');
    await admin.post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'proxy-get' },
      rules: [{ apiGroups: [''], resources: ['services/proxy'], verbs: ['get'] }],
    });
    await admin.post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'proxy-get' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'proxy-get' },
      subjects: [{ kind: 'User', name: 'proxy-reader', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const call = as(user);
    await waitFor(async () => (await call('GET', `/api/v1/namespaces/${NS}/services/app:80/proxy/r`)).status === 200, 10_000, 'the role to apply');
    const post = await call('POST', `/api/v1/namespaces/${NS}/services/app:80/proxy/r`, 'x', { contentType: 'text/plain' });
    assert.equal(post.status, 403);
    assert.equal(
      post.body.message,
      `services "app:80" is forbidden: User "proxy-reader" cannot create resource "services/proxy" in API group "" in the namespace "${NS}"`,
    );
    const podProxy = await call('GET', `/api/v1/namespaces/${NS}/pods/app/proxy/r`);
    assert.equal(podProxy.status, 403);
  });
});
