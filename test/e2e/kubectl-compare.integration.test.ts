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
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RestClient } from '@kubeling/client';
import { run as ourKubectl } from '@kubeling/kubectl';
import { freePort, Kubectl, kubectlBinaries, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes, startControlPlane, type ControlPlane } from './cluster.js';

type Obj = Record<string, any>;
type Result = { code: number; stdout: string; stderr: string };
type Runner = (args: string[], opts?: { timeoutMs?: number; input?: string }) => Promise<Result>;

const kubectlBin = kubectlBinaries().default;

let env: TestEnv;
let dir: string;
let plane: ControlPlane;
let client: RestClient;
let real: Kubectl;
const procs = new Processes();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-compare-'));
  env = await startTestEnv();
  plane = await startControlPlane(env, [
    'deployment',
    'replicaset',
    'garbagecollector',
    'serviceaccount',
    'namespace',
    'endpoints',
    'endpointslice',
    'statefulset',
    'daemonset',
  ]);
  client = plane.client;
  const sock = await procs.runtime(dir, 'cmp-1', '127.7.1.0/24');
  await procs.kubelet(env, dir, 'cmp-1', sock, await freePort(), ['--capacity=cpu=8,memory=16Gi']);
  if (kubectlBin) real = new Kubectl(env.url, kubectlBin, { namespace: 'default' });
});

after(async () => {
  await procs.stop();
  await plane?.stop();
  await env?.stop();
  real?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Our kubectl, in this process, with the same kubeconfig and a cache dir of its own. */
const ours: Runner = async (args, opts = {}) => {
  let stdout = '';
  let stderr = '';
  const signal = AbortSignal.timeout(opts.timeoutMs ?? 60_000);
  const code = await ourKubectl([`--kubeconfig=${real.kubeconfig}`, `--cache-dir=${join(dir, 'our-cache')}`, ...args], {
    out: (s) => (stdout += s),
    err: (s) => (stderr += s),
    env: { HOME: dir },
    signal,
    ...(opts.input !== undefined ? { stdin: () => opts.input! } : {}),
  });
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
  const drop = new Set([
    'uid',
    'resourceVersion',
    'creationTimestamp',
    'namespace',
    'podIP',
    'podIPs',
    'hostIP',
    'hostIPs',
    'clusterIP',
    'clusterIPs',
    'containerID',
    'imageID',
    'startedAt',
    'finishedAt',
    'nodeName',
    'startTime',
    'observedGeneration',
    'restartCount',
  ]);
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') {
      const out: Obj = {};
      for (const k of Object.keys(v).sort()) {
        if (drop.has(k) || /Time$|Timestamp$|^time$/.test(k)) continue;
        // Field managers: who wrote, how, through which subresource (the sets' contents follow from the objects).
        if (key === 'metadata' && k === 'managedFields')
          out[k] = ((v as Obj)[k] as Obj[]).map((m) => `${m.manager} ${m.operation} ${m.subresource ?? ''}`.trim()).sort();
        else out[k] = walk((v as Obj)[k], k);
      }
      if (key === 'metadata' && out.annotations?.['kubectl.kubernetes.io/restartedAt']) out.annotations['kubectl.kubernetes.io/restartedAt'] = 'T';
      return out;
    }
    if (typeof v === 'string')
      return v
        .replaceAll(ns, 'NS')
        .replace(/-[a-z0-9]{5}$/, '-xxxxx')
        .replace(/^kube-api-access-[a-z0-9]{5}$/, 'kube-api-access-xxxxx');
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
    // A ReplicaSet's generation counts the scaling steps of rollouts, which follow pod readiness timing: not compared.
    if (name === 'replicasets') for (const o of items) delete o.metadata.generation;
    out[name] = items.map((o) => canonical(o, ns)).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  const pods = ((await client.get<Obj>(`/api/v1/namespaces/${ns}/pods`)).items as Obj[]).filter((p) => !p.metadata.deletionTimestamp);
  // Pods: which templates run and how many are Ready; their random names and timings differ.
  out.pods = pods
    .map(
      (p) =>
        `${p.metadata.labels?.app ?? ''} ${p.spec.containers[0].image} ${p.status?.phase} ${p.status?.conditions?.find((c: Obj) => c.type === 'Ready')?.status}`,
    )
    .sort();
  return out;
}

test('the same scenario with our kubectl and the real one: same objects, statuses, field managers and key output lines', {
  skip: kubectlBin ? false : 'kubectl is not installed',
  timeout: 600_000,
}, async () => {
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
  for (const kind of Object.keys(b))
    assert.deepEqual(
      a[kind],
      b[kind],
      `${kind} differ: ${JSON.stringify(a[kind]?.map((x: any) => x.metadata?.managedFields))} vs ${JSON.stringify(b[kind]?.map((x: any) => x.metadata?.managedFields))}`,
    );
});

test('client-side validation errors send nothing: the apiserver request counter stays still', { timeout: 60_000 }, async (t) => {
  // An apiserver of its own, so that no controller or kubelet moves the counter.
  const quiet = await startTestEnv();
  t.after(() => quiet.stop());
  const kubeconfig = join(dir, 'quiet-kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: q, cluster: {server: "${quiet.url}"}}]\nusers: [{name: q, user: {}}]\ncontexts: [{name: q, context: {cluster: q, user: q, namespace: default}}]\ncurrent-context: q\n`,
  );
  const total = async () => {
    const text = await (await fetch(`${quiet.url}/metrics`)).text();
    return text
      .split('\n')
      .filter((l) => l.startsWith('apiserver_request_total{'))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  };
  const bad = join(dir, 'bad.yaml');
  const cases: [string[], string, RegExp][] = [
    [
      ['create', '-f', bad],
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: -3}\n',
      /spec\.replicas: Invalid value: -3: must be greater than or equal to 0/,
    ],
    [
      ['apply', '-f', bad],
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: "NGINX:latest"}]}\n',
      /image: Invalid value: "NGINX:latest": invalid reference format/,
    ],
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

test('our kubectl: run generators and dry runs, go-template, describe, get -w, edit, wait, delete -l/--all/--force, apply -R and stdin, explain, cluster-info', {
  timeout: 300_000,
}, async () => {
  const ns = 'gen';
  const k = (...args: string[]) => ours(['-n', ns, ...args]);
  const json = async (...args: string[]) => {
    const r = await k(...args, '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Obj;
  };
  assert.equal((await ours(['create', 'namespace', ns])).stdout, 'namespace/gen created\n');
  await waitFor(async () => (await client.get<Obj>(`/api/v1/namespaces/${ns}/serviceaccounts`)).items.length > 0, 20_000, 'default ServiceAccount');

  // The generators of older kubectl.
  assert.equal((await k('run', 'web', '--image=nginx:1.27', '--replicas=3', '--port=8080', '--env=NGINX_PORT=8080')).stdout, 'deployment.apps/web created\n');
  const web = await json('get', 'deployment', 'web');
  assert.deepEqual(
    [web.spec.replicas, web.metadata.labels, web.spec.selector.matchLabels, web.spec.template.metadata.labels],
    [3, { run: 'web' }, { run: 'web' }, { run: 'web' }],
  );
  assert.equal((await k('run', 'once', '--image=busybox', '--restart=OnFailure', '--', 'echo', 'hi')).stdout, 'job.batch/once created\n');
  const job = await json('get', 'job', 'once');
  assert.deepEqual(
    [job.spec.template.spec.restartPolicy, job.spec.template.spec.containers[0].args, job.metadata.labels],
    ['OnFailure', ['echo', 'hi'], { run: 'once' }],
  );
  assert.equal((await k('run', 'tick', '--image=busybox', '--schedule=*/1 * * * *')).stdout, 'cronjob.batch/tick created\n');
  const cj = await json('get', 'cronjob', 'tick');
  assert.deepEqual([cj.spec.schedule, cj.spec.jobTemplate.spec.template.spec.restartPolicy], ['*/1 * * * *', 'OnFailure']);
  assert.equal((await k('run', 'explicit', '--image=busybox', '--generator=job/v1', '--restart=Never')).stdout, 'job.batch/explicit created\n');
  assert.equal((await k('run', 'solo', '--image=nginx:1.27', '--port=8080', '--env=NGINX_PORT=8080')).stdout, 'pod/solo created\n');
  assert.equal((await k('run', 'p2', '--image=busybox', '--restart=Never', '--', 'sleep', '3600')).stdout, 'pod/p2 created\n');
  const dry = await k('run', 'dry', '--image=nginx', '--replicas=2', '--dry-run=client', '-o', 'yaml');
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /^apiVersion: apps\/v1\nkind: Deployment\nmetadata:\n {2}creationTimestamp: null\n {2}labels:\n {4}run: dry\n {2}name: dry\n {2}namespace: gen\nspec:\n {2}replicas: 2\n/,
  );
  assert.match(dry.stdout, /\nstatus: \{\}\n$/);
  const sdry = await k('run', 'sdry', '--image=nginx', '--restart=OnFailure', '--dry-run=server', '-o', 'yaml');
  assert.match(sdry.stdout, /kind: Job\n/);
  assert.match(sdry.stdout, /uid: /, 'a server dry run shows what the server would store');
  assert.equal((await k('get', 'deployment', 'dry')).code, 1);
  assert.equal((await k('get', 'job', 'sdry')).code, 1);
  assert.match((await k('run', 'bad', '--image=busybox', '--generator=nope')).stderr, /generator "nope" not found/);

  // go-template over a running pod.
  const w = await k('wait', '--for=condition=Ready', 'pod/solo', '--timeout=60s');
  assert.equal(w.stdout, 'pod/solo condition met\n', w.stderr);
  assert.equal(
    (await k('get', 'pod', 'solo', '-o', 'go-template={{range .status.conditions}}{{if eq .type "Ready"}}{{.status}}{{end}}{{end}}')).stdout,
    'True',
  );
  assert.equal(
    (await k('get', 'pod', 'solo', '-o', 'go-template={{range .status.conditions}}{{if eq .type "PodScheduled"}}{{.status}}{{end}}{{end}}')).stdout,
    'True',
  );
  const tpl = join(dir, 'names.tmpl');
  writeFileSync(tpl, '{{range .items}}{{.metadata.name}}:{{len .spec.containers}} {{end}}');
  assert.equal((await k('get', 'pods', '-l', 'run=solo', '-o', `go-template-file=${tpl}`)).stdout, 'solo:1 ');
  assert.equal((await k('get', 'pods', 'solo', '-o', 'jsonpath={.status.phase}')).stdout, 'Running');

  // describe, with Events.
  const d = (await k('describe', 'pod', 'solo')).stdout;
  assert.match(d, /^Name: +solo\nNamespace: +gen\n/);
  assert.match(d, /\nStatus: +Running\n/);
  assert.match(d, /\nContainers:\n {2}solo:\n/);
  // Events in the same second keep the order they were written in, and the kubelet's may come before the scheduler's.
  assert.match(
    d,
    /\nEvents:\n {2}Type +Reason +Age +From +Message\n {2}---- +------ +---- +---- +-------\n( {2}\S.*\n)*? {2}Normal +Scheduled +\S+ +default-scheduler +Successfully assigned gen\/solo to cmp-1\n/,
  );
  await waitFor(async () => (await json('get', 'deployment', 'web')).status?.availableReplicas === 3, 60_000, 'web available');
  assert.match(
    (await k('describe', 'deployment', 'web')).stdout,
    /\nReplicas: +3 desired \| 3 updated \| 3 total \| 3 available \| 0 unavailable\n[\s\S]*\nNewReplicaSet: +web-\w+ \(3\/3 replicas created\)\n[\s\S]*ScalingReplicaSet/,
  );

  // get -w: the rows now, then one per change, until stopped.
  let watchOut = '';
  const stop = new AbortController();
  const watching = ourKubectl([`--kubeconfig=${real.kubeconfig}`, `--cache-dir=${join(dir, 'our-cache')}`, 'get', 'deployment', 'web', '-w', '-n', ns], {
    out: (s) => (watchOut += s),
    err: (s) => (watchOut += s),
    env: { HOME: dir },
    signal: stop.signal,
  });
  await waitFor(async () => /^NAME +READY/.test(watchOut), 10_000, 'the first rows');
  // edit through $EDITOR: replicas 3 → 2.
  const edited = await ourKubectl([`--kubeconfig=${real.kubeconfig}`, 'edit', 'deployment/web', '-n', ns], {
    out: () => (watchOut += ''),
    err: () => undefined,
    env: { HOME: dir },
    edit: (file) => {
      writeFileSync(file, readFileSync(file, 'utf8').replace(/\n {2}replicas: 3\n/, '\n  replicas: 2\n'));
      return 0;
    },
  });
  assert.equal(edited, 0);
  assert.equal((await json('get', 'deployment', 'web')).spec.replicas, 2);
  await waitFor(async () => /web +\d\/2/.test(watchOut), 20_000, 'get -w to show the change');
  stop.abort();
  assert.equal(await watching, 0);
  assert.equal(watchOut.match(/NAME/g)?.length, 1, 'one header');

  // wait --for=delete, delete --wait=false, -l, --all, --force.
  assert.match((await k('delete', 'pod', 'p2', '--wait=false')).stdout, /^pod "p2" deleted/);
  assert.equal((await k('wait', '--for=delete', 'pod/p2', '--timeout=30s')).code, 0);
  assert.equal((await k('get', 'pod', 'p2')).code, 1);
  assert.equal((await k('delete', 'deployment', '-l', 'run=web')).stdout, 'deployment.apps "web" deleted\n');
  assert.equal((await k('delete', 'cronjob', '--all')).stdout, 'cronjob.batch "tick" deleted\n');
  assert.match((await k('delete', 'deployment')).stderr, /resource\(s\) were provided, but no name was specified/);
  const forced = await k('delete', 'pod', 'solo', '--grace-period=0', '--force');
  assert.match(forced.stderr, /Immediate deletion does not wait/);
  assert.equal(forced.stdout, 'pod "solo" deleted\n');

  // apply -R over a directory tree and from stdin.
  const tree = join(dir, 'tree');
  mkdirSync(join(tree, 'sub'), { recursive: true });
  writeFileSync(join(tree, 'a.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: top}\n');
  writeFileSync(join(tree, 'sub', 'b.json'), '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"}}');
  writeFileSync(join(tree, 'notes.txt'), 'not a manifest');
  assert.equal((await k('apply', '-f', tree)).stdout, 'configmap/top created\n');
  assert.equal((await k('apply', '-R', '-f', tree)).stdout, 'configmap/top unchanged\nconfigmap/deep created\n');
  assert.equal(
    (
      await ours(['apply', '-f', '-', '-n', ns], {
        input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: piped}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: piped2}\n',
      })
    ).stdout,
    'configmap/piped created\nconfigmap/piped2 created\n',
  );

  // get all, explain, cluster-info.
  assert.match((await k('get', 'all')).stdout, /job\.batch\/once/);
  const ex = await ours(['explain', 'deployment.spec.replicas']);
  assert.match(ex.stdout, /^GROUP: +apps\nKIND: +Deployment\nVERSION: +v1\n\nFIELD: replicas <integer>\n/);
  assert.match((await ours(['explain', 'pods'])).stdout, /\nFIELDS:\n {2}apiVersion\t<string>\n/);
  assert.match((await ours(['cluster-info'])).stdout, /Kubernetes control plane\S* is running at \S*http:\/\/127\.0\.0\.1:\d+/);
});

test("one discovery cache in kubectl's layout: the real kubectl reads what ours wrote, and ours reads what it wrote", {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const host = `127.0.0.1_${new URL(env.url).port}`;
  const mark = (cacheDir: string, shortName: string) => {
    // A short name only the cache knows: a command that resolves it read the file.
    const f = join(cacheDir, 'discovery', host, 'apps', 'v1', 'serverresources.json');
    const list = JSON.parse(readFileSync(f, 'utf8')) as Obj;
    assert.equal(list.kind, 'APIResourceList');
    const d = (list.resources as Obj[]).find((r) => r.name === 'deployments')!;
    d.shortNames = [...(d.shortNames ?? []), shortName];
    writeFileSync(f, JSON.stringify(list));
  };
  const ourCache = join(dir, 'our-cache');
  assert.ok(existsSync(join(ourCache, 'discovery', host, 'servergroups.json')));
  mark(ourCache, 'ourdeploy');
  const r = await real.run([`--cache-dir=${ourCache}`, 'get', 'ourdeploy', '-n', 'ours', '-o', 'name']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'deployment.apps/app\n');
  mark(real.cacheDir, 'realdeploy');
  let out = '';
  const code = await ourKubectl([`--kubeconfig=${real.kubeconfig}`, `--cache-dir=${real.cacheDir}`, 'get', 'realdeploy', '-n', 'real', '-o', 'name'], {
    out: (s) => (out += s),
    err: (s) => (out += s),
    env: { HOME: dir },
  });
  assert.equal(code, 0, out);
  assert.equal(out, 'deployment.apps/app\n');
});

test('describe prints what the real kubectl prints: Pod, Deployment, ReplicaSet, Service (endpoints from EndpointSlices), ConfigMap, Secret, Namespace', {
  skip: kubectlBin ? false : 'kubectl is not installed',
  timeout: 120_000,
}, async () => {
  const ns = 'desc';
  const k = (...args: string[]) => ours(['-n', ns, ...args]);
  await ours(['create', 'namespace', ns]);
  await waitFor(async () => (await client.get<Obj>(`/api/v1/namespaces/${ns}/serviceaccounts`)).items.length > 0, 20_000, 'default ServiceAccount');
  await k('run', 'solo', '--image=busybox', '--labels=app=solo', '--env=A=1', '--', 'sh', '-c', 'sleep 3600');
  await k('create', 'deployment', 'web', '--image=busybox', '--replicas=2', '--', 'sleep', '3600');
  // One key: the real kubectl prints a ConfigMap's data in Go's map order, which changes from run to run.
  await k('create', 'configmap', 'cfg', '--from-literal=b=two');
  await k('create', 'secret', 'generic', 'pw', '--from-literal=password=s3cret');
  assert.equal((await k('wait', '--for=condition=Ready', 'pod/solo', '--timeout=60s')).code, 0);
  assert.equal((await k('wait', '--for=condition=Available', 'deployment/web', '--timeout=60s')).code, 0);
  await k('expose', 'deployment', 'web', '--port=8080', '--target-port=80');
  await waitFor(
    async () => (await client.get<Obj>(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`)).items?.[0]?.endpoints?.length === 2,
    20_000,
    "the Service's EndpointSlice",
  );
  await new Promise((r) => setTimeout(r, 1500)); // the last events settle
  const rs = JSON.parse((await k('get', 'rs', '-o', 'json')).stdout).items[0].metadata.name as string;
  // Ages move between the two runs; everything else must match.
  const norm = (s: string) => s.replace(/\b\d+(ms|s|m|h|d)(\d+(s|m|h))?\b/g, 'AGE');
  for (const target of [
    ['pod', 'solo'],
    ['deployment', 'web'],
    ['replicaset', rs],
    ['service', 'web'],
    ['configmap', 'cfg'],
    ['secret', 'pw'],
    ['namespace', ns],
  ]) {
    const r = await real.run(['describe', '-n', ns, ...target]);
    const o = await k('describe', ...target);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(norm(o.stdout), norm(r.stdout), `describe ${target.join(' ')}`);
  }
});

test('StatefulSets and DaemonSets: rollout status, history (and --revision) print what the real kubectl prints; undo goes back a revision', {
  skip: kubectlBin ? false : 'kubectl is not installed',
  timeout: 120_000,
}, async () => {
  const ns = 'sts';
  const k = (...args: string[]) => ours(['-n', ns, ...args]);
  await ours(['create', 'namespace', ns]);
  await waitFor(async () => (await client.get<Obj>(`/api/v1/namespaces/${ns}/serviceaccounts`)).items.length > 0, 20_000, 'default ServiceAccount');
  const file = join(dir, 'sts.yaml');
  writeFileSync(
    file,
    `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: c
        image: busybox
        command: [sleep, "3600"]
`,
  );
  assert.equal((await k('apply', '-f', file)).code, 0);
  const status = await k('rollout', 'status', 'sts/db', '--timeout=60s');
  assert.equal(status.code, 0, status.stderr);
  assert.equal(status.stdout.trim().split('\n').pop(), 'partitioned roll out complete: 2 new pods have been updated...');
  assert.equal((await k('set', 'image', 'sts/db', 'c=busybox:1.36')).code, 0);
  assert.equal((await k('rollout', 'status', 'sts/db', '--timeout=60s')).code, 0);
  for (const extra of [[], ['--revision=1'], ['--revision=2']]) {
    const r = await real.run(['-n', ns, 'rollout', 'history', 'sts/db', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await k('rollout', 'history', 'sts/db', ...extra)).stdout, r.stdout, `history ${extra.join(' ')}`);
  }
  assert.deepEqual(await k('rollout', 'undo', 'sts/db'), { code: 0, stdout: 'statefulset.apps/db rolled back\n', stderr: '' });
  const image = async () => (await client.get<Obj>(`/apis/apps/v1/namespaces/${ns}/statefulsets/db`)).spec.template.spec.containers[0].image;
  assert.equal(await image(), 'busybox');
  // The revision rolled back to becomes the newest.
  await waitFor(async () => (await k('rollout', 'history', 'sts/db')).stdout.includes('\n3 '), 20_000, 'revision 1 renumbered 3');
  assert.equal(
    (await k('rollout', 'undo', 'sts/db', '--to-revision=3')).stdout,
    'statefulset.apps/db skipped rollback (current template already matches revision 3)\n',
  );

  const dsFile = join(dir, 'ds.yaml');
  writeFileSync(
    dsFile,
    readFileSync(file, 'utf8')
      .replace('kind: StatefulSet', 'kind: DaemonSet')
      .replace('  serviceName: db\n  replicas: 2\n', '')
      .replace('name: db', 'name: agent'),
  );
  assert.equal((await k('apply', '-f', dsFile)).code, 0);
  assert.equal((await k('rollout', 'status', 'ds/agent', '--timeout=60s')).code, 0);
  assert.equal((await k('set', 'image', 'ds/agent', 'c=busybox:1.36')).code, 0);
  assert.equal((await k('rollout', 'status', 'ds/agent', '--timeout=60s')).code, 0);
  for (const extra of [[], ['--revision=2']]) {
    const r = await real.run(['-n', ns, 'rollout', 'history', 'ds/agent', ...extra]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await k('rollout', 'history', 'ds/agent', ...extra)).stdout, r.stdout, `ds history ${extra.join(' ')}`);
  }
  assert.deepEqual(await k('rollout', 'undo', 'ds/agent'), { code: 0, stdout: 'daemonset.apps/agent rolled back\n', stderr: '' });
  assert.equal((await client.get<Obj>(`/apis/apps/v1/namespaces/${ns}/daemonsets/agent`)).spec.template.spec.containers[0].image, 'busybox');
});
