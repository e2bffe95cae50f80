/**
 * Resource metrics end to end, with the real kubectl: a kubelet measures a
 * container that burns CPU, the metrics server scrapes it and serves
 * metrics.k8s.io behind its APIService, `kubectl top` shows figures that
 * match /proc, and a HorizontalPodAutoscaler made by `kubectl autoscale`
 * scales the Deployment out past its CPU target and back in once the load
 * stops (the scale-down stabilization window shortened through `behavior`,
 * the sync period and metric resolution to 1 s) — the events on
 * `kubectl describe hpa`.
 */
import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { createCA, issue } from '@kubeling/pki';
import { MetricsServer, REQUEST_HEADER_DEFAULTS } from '@kubeling/metrics-server';
import { freePort, Kubectl, kubectlBinaries, request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes, startControlPlane, type ControlPlane } from './cluster.js';

const kubectlBin = kubectlBinaries()['1.33'];
let env: TestEnv;
let plane: ControlPlane;
let metrics: MetricsServer;
const procs = new Processes();
let dir: string;
let k: Kubectl;

before(async () => {
  if (!kubectlBin) return;
  dir = mkdtempSync(join(tmpdir(), 'kubeling-hpa-'));
  const frontProxyCA = await createCA('front-proxy-ca');
  const proxyClient = await issue(frontProxyCA, { commonName: 'front-proxy-client', usage: 'client' });
  env = await startTestEnv({ server: { aggregation: { proxyClient: { cert: proxyClient.certPem, key: proxyClient.keyPem }, resyncMs: 1000 } } });
  plane = await startControlPlane(env, ['deployment', 'replicaset', 'horizontalpodautoscaling'], { hpa: { syncPeriodMs: 1000 } });
  const sock = await procs.runtime(dir, 'hpa-1', '127.7.31.0/24');
  await procs.kubelet(env, dir, 'hpa-1', sock, await freePort());
  // The metrics server with a serving certificate the APIService's caBundle vouches for.
  const servingCA = await createCA('metrics-serving-ca');
  const serving = await issue(servingCA, { commonName: 'metrics-server', dnsNames: ['metrics-server.kube-system.svc'], usage: 'server' });
  metrics = new MetricsServer({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    port: 0,
    tls: { certPem: serving.certPem, keyPem: serving.keyPem },
    resolutionMs: 1000,
    kubelet: { scheme: 'http' },
    requestHeader: { clientCA: frontProxyCA.certPem, allowedNames: ['front-proxy-client'], ...REQUEST_HEADER_DEFAULTS },
    log: pino({ level: 'silent' }),
  });
  await metrics.start();
  const port = metrics.address!.port;
  const post = async (path: string, body: object) => assert.equal((await request(env.url, 'POST', path, body)).status, 201, path);
  await post('/api/v1/namespaces/kube-system/services', {
    metadata: { name: 'metrics-server' },
    spec: { ports: [{ name: 'https', port: 443, targetPort: port }] },
  });
  await post('/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices', {
    metadata: { name: 'metrics-server-1', labels: { 'kubernetes.io/service-name': 'metrics-server' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'] }],
    ports: [{ name: 'https', port }],
  });
  await post('/apis/apiregistration.k8s.io/v1/apiservices', {
    metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: {
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      groupPriorityMinimum: 100,
      versionPriority: 100,
      caBundle: Buffer.from(servingCA.certPem).toString('base64'),
      service: { namespace: 'kube-system', name: 'metrics-server' },
    },
  });
  k = new Kubectl(env.url, kubectlBin);
});

after(async () => {
  if (!kubectlBin) return;
  if (dir) writeFileSync(join(dir, 'stop'), '');
  await metrics?.stop();
  await plane?.stop();
  await procs.stop();
  await env?.stop();
  k?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Millicores of the busy shell, from /proc over `ms` (utime + stime of every process running the loop). */
async function procMillicores(marker: string, ms: number): Promise<number> {
  const ticks = () => {
    let sum = 0;
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) continue;
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        sum += Number(fields[11]) + Number(fields[12]);
      } catch {
        // gone meanwhile
      }
    }
    return sum;
  };
  const t0 = ticks();
  await new Promise((r) => setTimeout(r, ms));
  return ((ticks() - t0) / 100 / (ms / 1000)) * 1000;
}

const millicores = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);

test('kubectl top and a HorizontalPodAutoscaler through the metrics server', {
  skip: kubectlBin ? false : 'kubectl 1.33 is not installed',
  timeout: 240_000,
}, async () => {
  const stop = join(dir, 'stop');
  const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: burn
        image: busybox
        command: [sh, -c, 'while [ ! -e ${stop} ]; do :; done; exec sleep 3600']
        resources: {requests: {cpu: 100m}}
        # The test's directory at its own path: where the test drops the file that stops the burn.
        volumeMounts: [{name: ctl, mountPath: ${dir}}]
      volumes: [{name: ctl, hostPath: {path: ${dir}}}]
`;
  const applied = await k.run(['apply', '-f', '-'], { input: manifest });
  assert.equal(applied.code, 0, applied.stderr);

  // kubectl top: figures once two scrapes have seen the pod, matching /proc within 20 %.
  let topOut = '';
  await waitFor(
    async () => {
      const r = await k.run(['top', 'pods', '-A', '--no-headers']);
      topOut = r.stdout;
      return r.code === 0 && /default\s+web-\S+\s+\d+m/.test(r.stdout);
    },
    60_000,
    'kubectl top pods -A',
  );
  let last = '';
  await waitFor(
    async () => {
      const fromProc = await procMillicores(stop, 3000);
      const r = await k.run(['top', 'pods', '--no-headers']);
      const shown = millicores(/web-\S+\s+(\S+)/.exec(r.stdout)?.[1] ?? '0');
      last = `top ${shown}m, /proc ${fromProc.toFixed(0)}m`;
      return shown > 0 && Math.abs(shown - fromProc) <= 0.2 * fromProc;
    },
    60_000,
    `top within 20% of /proc (${last}; ${topOut})`,
  );
  const nodes = await k.run(['top', 'nodes', '--no-headers']);
  assert.equal(nodes.code, 0, nodes.stderr);
  assert.match(nodes.stdout, /^hpa-1\s+[1-9]\d*m\s+\d+%\s+[1-9]\d*Mi\s+\d+%/m);

  // kubectl autoscale: 1 → 2 while it burns past 50 % of its request.
  const as = await k.run(['autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=2']);
  assert.equal(as.code, 0, as.stderr);
  assert.match(as.stdout, /horizontalpodautoscaler.autoscaling\/web autoscaled/);
  const patched = await k.run(['patch', 'hpa', 'web', '--type=merge', '-p', '{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":3}}}}']);
  assert.equal(patched.code, 0, patched.stderr);
  const replicas = async () => Number((await k.run(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'])).stdout);
  await waitFor(async () => (await replicas()) === 2, 90_000, 'scale out to 2');

  // The load stops: back to 1 after the (shortened) stabilization window.
  writeFileSync(stop, '');
  await waitFor(async () => (await replicas()) === 1, 90_000, 'scale in to 1').catch(async (e: Error) => {
    throw new Error(`${e.message}\n${(await k.run(['describe', 'hpa', 'web'])).stdout}\n${(await k.run(['top', 'pods'])).stdout}`);
  });
  const described = await k.run(['describe', 'hpa', 'web']);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /SuccessfulRescale\s+.*New size: 2; reason: cpu resource utilization \(percentage of request\) above target/);
  assert.match(described.stdout, /SuccessfulRescale\s+.*New size: 1; reason: All metrics below target/);
  assert.match(described.stdout, /Min replicas:\s+1/);
});
