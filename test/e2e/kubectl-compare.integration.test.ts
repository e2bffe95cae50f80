/**
 * Our kubectl against the real one: the same scenario runs twice on one
 * cluster (etcd, apiserver, controller-manager, scheduler, a kubelet on
 * kubeling's runtime) — once with bin/kubectl's code in the namespace `ours`,
 * once with the real kubectl in `real` — and the effects (objects, statuses,
 * field managers) and the key lines of output must match. Client-side
 * validation is shown to send nothing, by the apiserver's request counter.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { ControllerManager } from '@kubeling/controller-manager';
import { InformerFactory, RestClient } from '@kubeling/client';
import { run as ourKubectl } from '@kubeling/kubectl';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { freePort, Kubectl, kubectlBinaries, nodeArgs, packageMain, startTestEnv, stopChild, waitFor, type TestEnv } from '@kubeling/testenv';

type Obj = Record<string, any>;
type Result = { code: number; stdout: string; stderr: string };
type Runner = (args: string[], opts?: { timeoutMs?: number; input?: string }) => Promise<Result>;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const kubectlBin = kubectlBinaries().default;

let env: TestEnv;
let dir: string;
let mgr: ControllerManager;
let client: RestClient;
let informers: InformerFactory;
let scheduler: Scheduler;
let real: Kubectl;
const children: ChildProcess[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-compare-'));
  env = await startTestEnv();
  const config = { server: env.url, namespace: 'default', insecureSkipTLSVerify: false };
  mgr = new ControllerManager({ config, controllers: ['deployment', 'replicaset', 'garbagecollector', 'serviceaccount', 'namespace', 'endpoints'], leaderElect: false, log: pino({ level: 'silent' }), qps: 200, burst: 400 });
  await mgr.start();
  client = new RestClient(config, { qps: 200, burst: 400 });
  informers = new InformerFactory(client);
  scheduler = new Scheduler({ client, informers, config: buildConfig({ podInitialBackoffSeconds: 1, podMaxBackoffSeconds: 2 }), log: pino({ level: 'silent' }) });
  scheduler.init();
  informers.start();
  await scheduler.run();
  const sock = join(dir, 'rt.sock');
  const spawnChild = (pkg: string, args: string[]) => {
    const c = spawn(process.execPath, nodeArgs(packageMain(pkg), args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(c);
  };
  spawnChild('runtime', [`--listen=unix://${sock}`, `--root=${join(dir, 'rt')}`, '--pod-cidr=127.7.1.0/24']);
  await waitFor(async () => existsSync(sock), 30_000, 'runtime');
  const port = await freePort();
  spawnChild('kubelet', ['--node-name=cmp-1', `--master=${env.url}`, `--container-runtime-endpoint=unix://${sock}`, `--root-dir=${join(dir, 'kubelet')}`, `--port=${port}`, '--capacity=cpu=8,memory=16Gi', '--node-status-update-frequency=1', '--log-level=warn']);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000, 'kubelet');
  if (kubectlBin) real = new Kubectl(env.url, kubectlBin, { namespace: 'default' });
});

after(async () => {
  for (const c of children.reverse()) await stopChild(c);
  await scheduler?.stop();
  informers?.stop();
  client?.close();
  await mgr?.stop();
  await env?.stop();
  real?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Our kubectl, in this process, with the same kubeconfig and a cache dir of its own. */
const ours: Runner = async (args, opts = {}) => {
  let stdout = '';
  let stderr = '';
  const signal = AbortSignal.timeout(opts.timeoutMs ?? 60_000);
  const code = await ourKubectl([`--kubeconfig=${real.kubeconfig}`, `--cache-dir=${join(dir, 'our-cache')}`, ...args], { out: (s) => (stdout += s), err: (s) => (stderr += s), env: { HOME: dir }, signal, ...(opts.input !== undefined ? { stdin: () => opts.input! } : {}) });
  return { code, stdout, stderr };
};

const manifest = (image: string, replicas: number, extraEnv: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, labels: {app: app}}
data: {mode: "${extraEnv ? 'a' : 'b'}"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, labels: {app: app}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: ${image}
        ports: [{containerPort: 8080}]
        env: [{name: NGINX_PORT, value: "8080"}${extraEnv}]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
`;

interface Step {
  args: string[];
  result: Result;
}

/** The scenario, with one CLI in one namespace. */
async function scenario(k: Runner, ns: string): Promise<Step[]> {
  const steps: Step[] = [];
  const f = join(dir, `${ns}-app.yaml`);
  const step = async (args: string[], timeoutMs = 60_000) => {
    const result = await k(args, { timeoutMs });
    steps.push({ args, result });
    return result;
  };
  await step(['create', 'namespace', ns]);
  await waitFor(async () => (await client.get<Obj>(`/api/v1/namespaces/${ns}/serviceaccounts`)).items.length > 0, 20_000, `default ServiceAccount in ${ns}`);
  const n = ['-n', ns];
  await step(['run', 'nginx', '--image=nginx:1.27', '--port=8080', '--env=NGINX_PORT=8080', '--labels=app=single', ...n]);
  await step(['wait', '--for=condition=Ready', 'pod/nginx', '--timeout=60s', ...n]);
  await step(['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=2', ...n]);
  writeFileSync(f, manifest('nginx:1.27', 2, ', {name: EXTRA, value: "1"}'));
  await step(['apply', '-f', f, ...n]);
  writeFileSync(f, manifest('nginx:1.27', 2, ''));
  await step(['apply', '-f', f, ...n]);
  await step(['apply', '-f', f, ...n]);
  await step(['scale', 'deployment/app', '--replicas=3', ...n]);
  await step(['rollout', 'status', 'deployment/app', '--timeout=90s', ...n], 100_000);
  await step(['set', 'image', 'deployment/app', 'app=nginx:1.26', ...n]);
  await step(['rollout', 'status', 'deployment/app', '--timeout=90s', ...n], 100_000);
  await step(['rollout', 'history', 'deployment/app', ...n]);
  await step(['rollout', 'undo', 'deployment/app', ...n]);
  await step(['rollout', 'status', 'deployment/app', '--timeout=90s', ...n], 100_000);
  await step(['label', 'deployment', 'app', 'tier=web', ...n]);
  await step(['annotate', 'deployment/app', 'note=compared', ...n]);
  await step(['patch', 'deployment', 'app', '-p', '{"spec":{"revisionHistoryLimit":5}}', ...n]);
  await step(['patch', 'configmap', 'app-config', '--type=merge', '-p', '{"data":{"mode":"c"}}', ...n]);
  await step(['patch', 'configmap', 'app-config', '--type=merge', '-p', '{"data":{"mode":"c"}}', ...n]);
  await step(['expose', 'deployment', 'app', '--port=80', '--target-port=8080', ...n]);
  await step(['get', 'deployments,services', '-o', 'name', ...n]);
  await step(['get', 'deployment', 'app', '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.spec.replicas}', ...n]);
  await step(['get', 'pod', 'nginx', '-o', 'custom-columns=NAME:.metadata.name,PHASE:.status.phase,IMAGE:.spec.containers[*].image', ...n]);
  await step(['get', 'deployment', 'app', ...n]);
  await step(['auth', 'can-i', 'create', 'pods', ...n]);
  await step(['delete', 'deployment', 'web', '--cascade=orphan', ...n]);
  await step(['delete', 'pod', 'nginx', ...n]);
  await step(['get', 'pod', 'nginx', ...n]);
  await step(['delete', 'configmap', '-l', 'app=app', ...n]);
  return steps;
}

/** Output with what differs by namespace or by clock made equal. */
function normalize(s: string, ns: string): string {
  return s
    .replaceAll(ns, 'NS')
    .replace(/\b\d+(ms|s|m|h|d)(\d+(s|m|h))?\b/g, 'AGE')
    .replace(/[ \t]+/g, ' ')
    .replace(/ +$/gm, '')
    .trim();
}

/** An object with what differs between two runs (ids, times, addresses, random suffixes) taken out. */
function canonical(o: Obj, ns: string): unknown {
  const drop = new Set(['uid', 'resourceVersion', 'creationTimestamp', 'namespace', 'podIP', 'podIPs', 'hostIP', 'hostIPs', 'clusterIP', 'clusterIPs', 'containerID', 'imageID', 'startedAt', 'finishedAt', 'nodeName', 'startTime', 'observedGeneration', 'restartCount']);
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') {
      const out: Obj = {};
      for (const k of Object.keys(v).sort()) {
        if (drop.has(k) || /Time$|Timestamp$|^time$/.test(k)) continue;
        // Field managers: who wrote, how, through which subresource (the sets' contents follow from the objects).
        if (key === 'metadata' && k === 'managedFields') out[k] = ((v as Obj)[k] as Obj[]).map((m) => `${m.manager} ${m.operation} ${m.subresource ?? ''}`.trim()).sort();
        else out[k] = walk((v as Obj)[k], k);
      }
      if (key === 'metadata' && out.annotations?.['kubectl.kubernetes.io/restartedAt']) out.annotations['kubectl.kubernetes.io/restartedAt'] = 'T';
      return out;
    }
    if (typeof v === 'string') return v.replaceAll(ns, 'NS').replace(/-[a-z0-9]{5}$/, '-xxxxx').replace(/^kube-api-access-[a-z0-9]{5}$/, 'kube-api-access-xxxxx');
    return v;
  };
  return walk(o);
}

async function objects(ns: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [name, path] of [
    ['deployments', `/apis/apps/v1/namespaces/${ns}/deployments`],
    ['replicasets', `/apis/apps/v1/namespaces/${ns}/replicasets`],
    ['services', `/api/v1/namespaces/${ns}/services`],
    ['configmaps', `/api/v1/namespaces/${ns}/configmaps`],
  ] as const) {
    const items = ((await client.get<Obj>(path)).items as Obj[]).filter((o) => o.metadata.name !== 'kube-root-ca.crt');
    out[name] = items.map((o) => canonical(o, ns)).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  const pods = ((await client.get<Obj>(`/api/v1/namespaces/${ns}/pods`)).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
  // Pods: which templates run and how many are Ready; their random names and timings differ.
  out.pods = pods.map((p) => `${p.metadata.labels?.app ?? ''} ${p.spec.containers[0].image} ${p.status?.phase} ${p.status?.conditions?.find((c: Obj) => c.type === 'Ready')?.status}`).sort();
  return out;
}

test('the same scenario with our kubectl and the real one: same objects, statuses, field managers and key output lines', { skip: kubectlBin ? false : 'kubectl is not installed', timeout: 600_000 }, async () => {
  const ourSteps = await scenario(ours, 'ours');
  const realSteps = await scenario((args, opts) => real.run(args, opts), 'real');
  for (const [i, r] of realSteps.entries()) {
    const o = ourSteps[i]!;
    const what = `kubectl ${r.args.join(' ')}`;
    assert.equal(o.result.code, r.result.code, `${what}: exit code (ours: ${o.result.stderr}; real: ${r.result.stderr})`);
    // rollout status prints a line per watch event, and how many events come differs run to run: its last line counts.
    const key = (out: string, ns: string) => (r.args[0] === 'rollout' && r.args[1] === 'status' ? normalize(out, ns).split('\n').pop()! : normalize(out, ns));
    assert.equal(key(o.result.stdout, 'ours'), key(r.result.stdout, 'real'), `${what}: stdout`);
    assert.equal(normalize(o.result.stderr, 'ours'), normalize(r.result.stderr, 'real'), `${what}: stderr`);
  }
  // Let the last deletions and controllers settle before comparing the cluster.
  // app's 3 pods and the 2 the orphaned ReplicaSet of web keeps.
  await waitFor(async () => (await objects('ours')).pods!.length === 5 && (await objects('real')).pods!.length === 5, 60_000, 'pods to settle');
  await new Promise((r) => setTimeout(r, 2000));
  const [a, b] = [await objects('ours'), await objects('real')];
  for (const kind of Object.keys(b)) assert.deepEqual(a[kind], b[kind], `${kind} differ: ${JSON.stringify(a[kind]?.map((x: any) => x.metadata?.managedFields))} vs ${JSON.stringify(b[kind]?.map((x: any) => x.metadata?.managedFields))}`);
});

test('client-side validation errors send nothing: the apiserver request counter stays still', { timeout: 60_000 }, async (t) => {
  // An apiserver of its own, so that no controller or kubelet moves the counter.
  const quiet = await startTestEnv();
  t.after(() => quiet.stop());
  const kubeconfig = join(dir, 'quiet-kubeconfig');
  writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: q, cluster: {server: "${quiet.url}"}}]\nusers: [{name: q, user: {}}]\ncontexts: [{name: q, context: {cluster: q, user: q, namespace: default}}]\ncurrent-context: q\n`);
  const total = async () => {
    const text = await (await fetch(`${quiet.url}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('apiserver_request_total{'))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  };
  const bad = join(dir, 'bad.yaml');
  const cases: [string[], string, RegExp][] = [
    [['create', '-f', bad], 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: -3}\n', /spec\.replicas: Invalid value: -3: must be greater than or equal to 0/],
    [['apply', '-f', bad], 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: "NGINX:latest"}]}\n', /image: Invalid value: "NGINX:latest": invalid reference format/],
    [['apply', '-f', bad], 'apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: d}\n', /no matches for kind "Deploymnet" in version "apps\/v1"/],
    [['create', '-f', bad], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n', /metadata\.name: Invalid value: "Bad_Name"/],
    [['create', '-f', bad], 'kind: ConfigMap\nmetadata: {name: x}\n  bad-indent: [\n', /error (parsing|converting|validating)/],
    [['run', 'x', '--image=busybox', '--generator=nope/v9'], '', /generator "nope\/v9" not found/],
    [['run', 'x', '--image=Busy Box'], '', /invalid reference format/],
  ];
  const base0 = await total();
  const base1 = await total();
  const perScrape = base1 - base0;
  let last = base1;
  for (const [args, content, expected] of cases) {
    writeFileSync(bad, content);
    let stderr = '';
    const code = await ourKubectl([`--kubeconfig=${kubeconfig}`, ...args], { out: () => undefined, err: (x) => (stderr += x), env: { HOME: dir } });
    const r = { code, stderr, stdout: '' };
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
    assert.match(r.stderr, expected);
    const now = await total();
    assert.equal(now - last, perScrape, `${args.join(' ')} sent ${now - last - perScrape} request(s)`);
    last = now;
  }
});
