/** kubeling's kubectl against a real etcd + apiserver (HTTPS, client certificate): get, create -f, delete, errors. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { execFile } from 'node:child_process';
import { run } from './cli.js';
import { realKubectl } from '../test/compare.js';

let env: TestEnv;
let dir: string;
let kubeconfig: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubectl-cli-'));
  env = await startTestEnv({ secure: true });
  const admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: ${env.url}, certificate-authority-data: ${b64(env.pki!.caPem)}}\nusers:\n- name: u\n  user: {client-certificate-data: ${b64(admin.certPem)}, client-key-data: ${b64(admin.keyPem)}}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: x\n`,
  );
});
after(async () => {
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function k(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await run(['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...argv], {
    out: (s) => (out += s),
    err: (s) => (err += s),
    env: { HOME: dir },
  });
  return { code, out, err };
}

test('create -f, get as a Table / -o name / -o yaml, delete, and NotFound the kubectl way', async () => {
  const f = join(dir, 'cm.yaml');
  writeFileSync(
    f,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {app: web}\ndata: {a: "1"}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n',
  );
  const c = await k('create', '-f', f);
  assert.equal(c.code, 0, c.err);
  assert.equal(c.out, 'configmap/settings created\ndeployment.apps/web created\n');
  const t = await k('get', 'cm', 'settings');
  assert.match(t.out, /^NAME\s+DATA\s+AGE\nsettings\s+1\s+\S+\n$/);
  assert.match((await k('get', 'deploy', '-o', 'wide')).out, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\nweb\s+0\/2/);
  assert.equal((await k('get', 'configmaps', '-l', 'app=web', '-o', 'name')).out, 'configmap/settings\n');
  assert.match((await k('get', 'configmap/settings', '-o', 'yaml')).out, /^apiVersion: v1\ndata:\n {2}a: "1"\nkind: ConfigMap\n/);
  assert.match((await k('get', 'ns', '--show-labels')).out, /^NAME\s+STATUS\s+AGE\s+LABELS\n/);
  const d = await k('delete', 'deployment', 'web');
  assert.equal(d.out, 'deployment.apps "web" deleted\n');
  const nf = await k('get', 'deployment', 'web');
  assert.equal(nf.code, 1);
  assert.equal(nf.err, 'Error from server (NotFound): deployments.apps "web" not found\n');
  const empty = await k('get', 'pods');
  assert.equal(empty.err, 'No resources found in default namespace.\n');
  assert.match((await k('api-resources')).out, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
});

test('client-side validation fails before any request (no server listens at all)', async () => {
  const f = join(dir, 'bad.yaml');
  writeFileSync(f, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: -3}\n');
  let err = '';
  const code = await run(['create', '-f', f, '--server', `https://127.0.0.1:${await freePort()}`, '--kubeconfig', kubeconfig], {
    out: () => undefined,
    err: (s) => (err += s),
    env: { HOME: dir },
  });
  assert.equal(code, 1);
  assert.match(err, /spec\.replicas: Invalid value: -3: must be greater than or equal to 0/);
});

test('apply -f twice with an edited manifest (image changed, an env var removed): created, configured, unchanged; --server-side', async () => {
  const manifest = (image: string, env: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: app}}\n  template:\n    metadata: {labels: {app: app}}\n    spec:\n      containers:\n      - name: c\n        image: ${image}\n        ports: [{containerPort: 80}]\n        env: [${env}]\n`;
  const f = join(dir, 'app.yaml');
  writeFileSync(f, manifest('nginx:1.25', '{name: A, value: "1"}, {name: B, value: "2"}'));
  assert.equal((await k('apply', '-f', f)).out, 'deployment.apps/app created\n');
  writeFileSync(f, manifest('nginx:1.26', '{name: A, value: "1"}'));
  assert.equal((await k('apply', '-f', f)).out, 'deployment.apps/app configured\n');
  assert.equal((await k('apply', '-f', f)).out, 'deployment.apps/app unchanged\n');
  const got = JSON.parse((await k('get', 'deploy', 'app', '-o', 'json')).out);
  const c = got.spec.template.spec.containers[0];
  assert.equal(c.image, 'nginx:1.26');
  assert.deepEqual(c.env, [{ name: 'A', value: '1' }]);
  assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }]);
  const ss = join(dir, 'ss.yaml');
  writeFileSync(ss, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "1"}\n');
  assert.equal((await k('apply', '--server-side', '-f', ss)).out, 'configmap/ssa serverside-applied\n');
  const cm = JSON.parse((await k('get', 'cm', 'ssa', '-o', 'json', '--show-managed-fields')).out);
  assert.equal(cm.metadata.managedFields[0].manager, 'kubectl');
  assert.equal(cm.metadata.managedFields[0].operation, 'Apply');
});

test('run, scale, label, annotate', async () => {
  // No controller-manager here: the default ServiceAccount pods need is made by hand.
  const sa = join(dir, 'sa.yaml');
  writeFileSync(sa, 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default}\n');
  await k('create', '-f', sa);
  const r = await k('run', 'hello', '--image=busybox', '--restart=Never', '--env=GREETING=hi', '--port=8080', '--', 'sh', '-c', 'echo $GREETING');
  assert.equal(r.out, 'pod/hello created\n', r.err);
  const pod = JSON.parse((await k('get', 'pod', 'hello', '-o', 'json')).out);
  assert.deepEqual(pod.metadata.labels, { run: 'hello' });
  assert.equal(pod.spec.restartPolicy, 'Never');
  assert.deepEqual(pod.spec.containers[0].args, ['sh', '-c', 'echo $GREETING']);
  assert.deepEqual(pod.spec.containers[0].env, [{ name: 'GREETING', value: 'hi' }]);
  assert.match((await k('run', 'Bad_Name', '--image=busybox')).err, /metadata\.name: Invalid value: "Bad_Name"/);
  const f = join(dir, 'd.yaml');
  writeFileSync(
    f,
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: scaled}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: s}}\n  template:\n    metadata: {labels: {app: s}}\n    spec: {containers: [{name: c, image: nginx}]}\n',
  );
  await k('create', '-f', f);
  assert.equal((await k('scale', 'deployment/scaled', '--replicas=4')).out, 'deployment.apps/scaled scaled\n');
  assert.equal(JSON.parse((await k('get', 'deploy', 'scaled', '-o', 'json')).out).spec.replicas, 4);
  assert.equal((await k('label', 'deploy', 'scaled', 'tier=web')).out, 'deployment.apps/scaled labeled\n');
  assert.match((await k('label', 'deploy', 'scaled', 'tier=db')).err, /'tier' already has a value \(web\), and --overwrite is false/);
  assert.equal((await k('label', 'deploy', 'scaled', 'tier=db', '--overwrite')).code, 0);
  assert.equal((await k('annotate', 'deploy/scaled', 'note=hi')).out, 'deployment.apps/scaled annotated\n');
  const d = JSON.parse((await k('get', 'deploy', 'scaled', '-o', 'json')).out);
  assert.equal(d.metadata.labels.tier, 'db');
  assert.equal(d.metadata.annotations.note, 'hi');
  assert.equal((await k('label', 'deploy', 'scaled', 'tier-')).code, 0);
  assert.equal(JSON.parse((await k('get', 'deploy', 'scaled', '-o', 'json')).out).metadata.labels?.tier, undefined);
});

test('create <generator>: namespace, configmap --from-literal, secret generic, serviceaccount, deployment; get of several kinds', async () => {
  assert.equal((await k('create', 'namespace', 'gen')).out, 'namespace/gen created\n');
  assert.equal((await k('create', 'configmap', 'cfg', '--from-literal=a=1', '--from-literal=b=two', '-n', 'gen')).out, 'configmap/cfg created\n');
  assert.equal((await k('create', 'secret', 'generic', 'pw', '--from-literal=password=s3cret', '-n', 'gen')).out, 'secret/pw created\n');
  assert.equal((await k('create', 'serviceaccount', 'bot', '-n', 'gen')).out, 'serviceaccount/bot created\n');
  assert.equal((await k('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=3', '--port=80', '-n', 'gen')).out, 'deployment.apps/web created\n');
  const cm = JSON.parse((await k('get', 'cm', 'cfg', '-n', 'gen', '-o', 'json')).out);
  assert.deepEqual(cm.data, { a: '1', b: 'two' });
  const sec = JSON.parse((await k('get', 'secret', 'pw', '-n', 'gen', '-o', 'json')).out);
  assert.equal(Buffer.from(sec.data.password, 'base64').toString(), 's3cret');
  const d = JSON.parse((await k('get', 'deploy', 'web', '-n', 'gen', '-o', 'json')).out);
  assert.deepEqual(
    [d.spec.replicas, d.spec.selector.matchLabels, d.spec.template.spec.containers[0].name, d.spec.template.spec.containers[0].ports],
    [3, { app: 'web' }, 'nginx', [{ containerPort: 80, protocol: 'TCP' }]],
  );
  const both = (await k('get', 'deploy,cm', '-n', 'gen')).out;
  assert.match(both, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\ndeployment\.apps\/web\s+0\/3/);
  assert.match(both, /\n\nNAME\s+DATA\s+AGE\nconfigmap\/cfg\s+2\s/);
  assert.match((await k('create', 'deployment', 'noimage')).err, /required flag\(s\) "image" not set/);
});

test('bin/kubectl, the shim users run: a bundle rebuilt from the sources, the same answers and exit codes', async () => {
  const { execFile } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const bin = fileURLToPath(new URL('../../../bin/kubectl', import.meta.url));
  const sh = (...args: string[]) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) =>
      execFile(
        bin,
        [`--kubeconfig=${kubeconfig}`, `--cache-dir=${join(dir, 'bin-cache')}`, ...args],
        { env: { ...process.env, HOME: dir, KUBECONFIG: '' } },
        (e, out, err) => resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, out, err }),
      ),
    );
  const ns = await sh('get', 'namespace', 'default', '-o', 'name');
  assert.equal(ns.code, 0, ns.err);
  assert.equal(ns.out, 'namespace/default\n');
  const missing = await sh('get', 'deployment', 'nope');
  assert.equal(missing.code, 1);
  assert.equal(missing.err, 'Error from server (NotFound): deployments.apps "nope" not found\n');
});

test('--as and --as-group: impersonation headers, one per group; auth whoami and can-i answer for the impersonated user', async () => {
  const who = await k('auth', 'whoami', '--as=jane', '--as-group=devs', '--as-group=qa');
  assert.equal(who.code, 0, who.err);
  assert.match(who.out, /^ATTRIBUTE +VALUE\nUsername +jane\nGroups +\[devs qa system:authenticated\]\n$/);
  const can = await k('auth', 'can-i', 'list', 'pods', '--as=jane');
  assert.equal(can.code, 1);
  assert.equal(can.out, 'no\n');
  assert.equal((await k('auth', 'can-i', 'list', 'pods')).out, 'yes\n');
});

test('get --ignore-not-found and --sort-by; -n against a manifest namespace; patch --dry-run=client changes nothing; --validate=false', async () => {
  assert.deepEqual(await k('get', 'configmap', 'nope', '--ignore-not-found'), { code: 0, out: '', err: '' });
  for (const [name, n] of [
    ['zeta', '3'],
    ['alpha', '1'],
    ['mid', '2'],
  ] as const)
    await k('create', 'configmap', `sort-${name}`, `--from-literal=n=${n}`);
  const byName = (await k('get', 'configmaps', '--sort-by=.metadata.name', '-o', 'name')).out.split('\n').filter((l) => l.includes('sort-'));
  assert.deepEqual(byName, ['configmap/sort-alpha', 'configmap/sort-mid', 'configmap/sort-zeta']);
  const byData = (await k('get', 'configmaps', '--sort-by={.data.n}')).out
    .split('\n')
    .filter((l) => l.startsWith('sort-'))
    .map((l) => l.split(/\s+/)[0]);
  assert.deepEqual(byData, ['sort-alpha', 'sort-mid', 'sort-zeta']);
  const f = join(dir, 'ns.yaml');
  writeFileSync(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nsx, namespace: kube-public}\n');
  const mismatch = await k('apply', '-f', f, '-n', 'default');
  assert.equal(mismatch.code, 1);
  assert.equal(
    mismatch.err,
    `error: the namespace from the provided object "kube-public" does not match the namespace "default". You must pass '--namespace=kube-public' to perform this operation.\n`,
  );
  const dry = await k('patch', 'configmap', 'sort-mid', '--type=merge', '-p', '{"data":{"n":"9"}}', '--dry-run=client');
  assert.equal(dry.out, 'configmap/sort-mid patched (client dry run)\n');
  assert.equal(JSON.parse((await k('get', 'cm', 'sort-mid', '-o', 'json')).out).data.n, '2');
  const img = join(dir, 'img.yaml');
  writeFileSync(img, 'apiVersion: v1\nkind: Pod\nmetadata: {name: upper}\nspec: {containers: [{name: c, image: "MyReg/App:1"}]}\n');
  assert.match((await k('create', '-f', img, '--dry-run=server')).err, /invalid reference format/);
  assert.equal((await k('create', '-f', img, '--dry-run=server', '--validate=false')).out, 'pod/upper created (server dry run)\n');
  assert.match((await k('get', 'pods', '-n', '..')).err, /invalid namespace "\.\.": \[may not be '\.\.'\]/);
});

test('replace -f puts the object as written; --force deletes and creates it again; a missing one is NotFound', async () => {
  const f = join(dir, 'rep.yaml');
  writeFileSync(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rep}\ndata: {v: "1"}\n');
  await k('create', '-f', f);
  const uid = JSON.parse((await k('get', 'cm', 'rep', '-o', 'json')).out).metadata.uid;
  writeFileSync(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rep}\ndata: {w: "2"}\n');
  assert.equal((await k('replace', '-f', f)).out, 'configmap/rep replaced\n');
  const after = JSON.parse((await k('get', 'cm', 'rep', '-o', 'json')).out);
  assert.deepEqual([after.data, after.metadata.uid], [{ w: '2' }, uid]);
  const forced = await k('replace', '--force', '-f', f);
  assert.equal(forced.out, 'configmap "rep" deleted\nconfigmap/rep replaced\n', forced.err);
  assert.notEqual(JSON.parse((await k('get', 'cm', 'rep', '-o', 'json')).out).metadata.uid, uid);
  writeFileSync(f, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rep-missing}\ndata: {v: "1"}\n');
  const missing = await k('replace', '-f', f);
  assert.equal(missing.code, 1);
  assert.equal(missing.err, `Error from server (NotFound): error when replacing "${f}": configmaps "rep-missing" not found\n`);
});

test('diff -f: a unified diff of live and dry-run-merged objects, exit 1 on differences and 0 without; nothing changes', async () => {
  const f = join(dir, 'diff.yaml');
  const manifest = (replicas: number) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: differ}\nspec:\n  replicas: ${replicas}\n  selector: {matchLabels: {app: differ}}\n  template:\n    metadata: {labels: {app: differ}}\n    spec: {containers: [{name: c, image: nginx}]}\n`;
  writeFileSync(f, manifest(2));
  const fresh = await k('diff', '-f', f);
  assert.equal(fresh.code, 1, fresh.err);
  assert.match(fresh.out, /^\+ {2}name: differ$/m);
  assert.equal((await k('get', 'deploy', 'differ')).code, 1, 'a diff creates nothing');
  await k('apply', '-f', f);
  const same = await k('diff', '-f', f);
  assert.deepEqual([same.code, same.out], [0, '']);
  writeFileSync(f, manifest(3));
  const changed = await k('diff', '-f', f);
  assert.equal(changed.code, 1);
  assert.match(changed.out, /^diff -u -N \S+\/LIVE\/apps\.v1\.Deployment\.default\.differ \S+\/MERGED\/apps\.v1\.Deployment\.default\.differ$/m);
  assert.match(changed.out, /^- {2}replicas: 2$/m);
  assert.match(changed.out, /^\+ {2}replicas: 3$/m);
  assert.equal(JSON.parse((await k('get', 'deploy', 'differ', '-o', 'json')).out).spec.replicas, 2);
});

test('autoscale makes an autoscaling/v2 HPA the apiserver keeps; describe hpa prints it as the real kubectl does', async () => {
  const f = join(dir, 'autoscaled.yaml');
  writeFileSync(
    f,
    'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: busy}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: busy}}\n  template:\n    metadata: {labels: {app: busy}}\n    spec: {containers: [{name: c, image: nginx}]}\n',
  );
  const made = await k('create', '-f', f);
  assert.equal(made.code, 0, made.err);
  const a = await k('autoscale', 'deployment', 'busy', '--min=2', '--max=5', '--cpu-percent=50');
  assert.deepEqual(a, { code: 0, out: 'horizontalpodautoscaler.autoscaling/busy autoscaled\n', err: '' });
  const hpa = JSON.parse((await k('get', 'hpa', 'busy', '-o', 'json')).out);
  assert.equal(hpa.apiVersion, 'autoscaling/v2');
  assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
  assert.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas, hpa.spec.scaleTargetRef], [2, 5, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'busy' }]);
  const again = await k('autoscale', 'deployment', 'busy', '--max=5');
  assert.equal(again.err, 'Error from server (AlreadyExists): horizontalpodautoscalers.autoscaling "busy" already exists\n');
  const d = await k('describe', 'hpa', 'busy');
  assert.equal(d.code, 0, d.err);
  assert.match(d.out, /^Reference: +Deployment\/busy$/m);
  assert.match(d.out, /^ {2}resource cpu on pods {2}\(as a percentage of request\): +<unknown> \/ 50%$/m);
  assert.match(d.out, /^Min replicas: +2\nMax replicas: +5\n/m);
  if (realKubectl) {
    const real = await new Promise<string>((resolve) =>
      execFile(
        realKubectl!,
        [`--kubeconfig=${kubeconfig}`, `--cache-dir=${join(dir, 'real-cache')}`, 'describe', 'hpa', 'busy'],
        { env: { ...process.env, HOME: dir } },
        (_e, out) => resolve(String(out)),
      ),
    );
    assert.equal(d.out, real);
  }
});
