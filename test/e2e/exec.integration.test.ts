/**
 * exec and attach end to end on a secure cluster (HTTPS apiserver with RBAC,
 * a scheduler, a kubelet on its secure port with webhook authorization,
 * kubeling's runtime over CRI): the WebSocket goes client → apiserver →
 * kubelet → the runtime's streaming server, and the real kubectl, our
 * kubectl, @kubernetes/client-node and the Python client each get stdout,
 * stderr, stdin and the exit code through it; `run -i --rm` and `attach` join
 * a container's own stdio. kubectl 1.29 exec's over SPDY/3.1, which the
 * kubelet bridges to the same WebSocket streaming server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import pino from 'pino';
import * as k8s from '@kubernetes/client-node';
import { createCA, issue } from '@kubeling/pki';
import { InformerFactory, RestClient } from '@kubeling/client';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { Kubelet } from '@kubeling/kubelet';
import { run as ourKubectl } from '@kubeling/kubectl';
import { Kubectl, kubectlBinaries, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes } from './cluster.js';

type Obj = Record<string, any>;

const bins = kubectlBinaries();
const hasPython = existsSync('/usr/bin/python3') && spawnSync('/usr/bin/python3', ['-c', 'import kubernetes, websocket']).status === 0;
const NS = 'ex';
let env: TestEnv;
let dir: string;
let admin: RestClient;
let kubelet: Kubelet;
let real: Kubectl | undefined;
let adminCert: { certPem: string; keyPem: string };
let informers: InformerFactory;
let scheduler: Scheduler;
const procs = new Processes();

const pod = (name: string, spec: Obj, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels },
  spec: { nodeName: 'exec-1', automountServiceAccountToken: false, ...spec },
});

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-exec-'));
  const kubeletCA = await createCA('kubelet-ca');
  const apiClient = await issue(kubeletCA, { commonName: 'kube-apiserver-kubelet-client', usage: 'client' });
  env = await startTestEnv({ secure: true, server: { kubeletClient: { cert: apiClient.certPem, key: apiClient.keyPem, ca: kubeletCA.certPem } } });
  adminCert = await env.pki!.client('kubernetes-admin', ['system:masters']);
  admin = new RestClient({
    server: env.url,
    namespace: 'default',
    ca: Buffer.from(env.pki!.caPem),
    cert: Buffer.from(adminCert.certPem),
    key: Buffer.from(adminCert.keyPem),
    insecureSkipTLSVerify: false,
  });
  const node = await env.pki!.client('system:node:exec-1', ['system:nodes']);
  const serving = await issue(kubeletCA, { commonName: 'exec-1', ips: ['127.0.0.1'], usage: 'server' });
  const sock = await procs.runtime(dir, 'exec-1', '127.7.9.0/24');
  kubelet = new Kubelet({
    config: {
      server: env.url,
      namespace: 'default',
      ca: Buffer.from(env.pki!.caPem),
      cert: Buffer.from(node.certPem),
      key: Buffer.from(node.keyPem),
      insecureSkipTLSVerify: false,
    },
    nodeName: 'exec-1',
    runtime: `unix://${sock}`,
    rootDir: join(dir, 'exec-1'),
    port: 0,
    tls: { cert: serving.certPem, key: serving.keyPem, clientCA: kubeletCA.certPem },
    authorizationWebhook: true,
    log: pino({ level: 'silent' }),
    leaseRenewMs: 1000,
    statusUpdateMs: 1000,
  });
  await kubelet.start();
  informers = new InformerFactory(admin);
  scheduler = new Scheduler({ client: admin, informers, config: buildConfig(), log: pino({ level: 'silent' }) });
  scheduler.init();
  informers.start();
  await scheduler.run();
  await admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await admin.post(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  // What the controller-manager would publish: pods of `run` mount it with their token.
  await admin.post(`/api/v1/namespaces/${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'kube-root-ca.crt' },
    data: { 'ca.crt': env.pki!.caPem },
  });
  await admin.post(
    `/api/v1/namespaces/${NS}/pods`,
    pod('sh', { containers: [{ name: 'sh', image: 'busybox', command: ['sleep', '3600'], env: [{ name: 'GREETING', value: 'hi there' }] }] }, { app: 'sh' }),
  );
  await admin.post(
    `/api/v1/namespaces/${NS}/pods`,
    pod('two', {
      containers: [
        { name: 'first', image: 'busybox', command: ['sleep', '3600'] },
        { name: 'second', image: 'busybox', command: ['sleep', '3600'] },
      ],
    }),
  );
  await admin.post(`/api/v1/namespaces/${NS}/pods`, pod('done', { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] }));
  for (const n of ['echo-real', 'echo-ours']) {
    await admin.post(
      `/api/v1/namespaces/${NS}/pods`,
      pod(n, {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox', stdin: true, stdinOnce: true, command: ['sh', '-c', 'while read l; do echo "echo: $l"; done; echo bye'] }],
      }),
    );
  }
  await admin.post(`/api/v1/namespaces/${NS}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'sh' },
    spec: { selector: { app: 'sh' }, ports: [{ port: 80 }] },
  });
  const phase = async (n: string) => (await admin.get<Obj>(`/api/v1/namespaces/${NS}/pods/${n}`)).status?.phase;
  await waitFor(
    async () =>
      (await phase('sh')) === 'Running' &&
      (await phase('two')) === 'Running' &&
      (await phase('done')) === 'Succeeded' &&
      (await phase('echo-real')) === 'Running' &&
      (await phase('echo-ours')) === 'Running',
    60_000,
    'the pods to run',
  );
  if (bins.default) real = new Kubectl(env.url, bins.default, { namespace: NS, caPem: env.pki!.caPem, certPem: adminCert.certPem, keyPem: adminCert.keyPem });
});

after(async () => {
  await scheduler?.stop();
  informers?.stop();
  await kubelet?.stop();
  await procs.stop();
  admin?.close();
  await env?.stop();
  real?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('the real kubectl', { skip: bins.default ? false : 'kubectl is not installed' }, () => {
  test('stdout and stderr apart, the exit code passed on, stdin with -i, the environment of the container', async () => {
    const r = await real!.run(['exec', 'sh', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\ncommand terminated with exit code 3\n');
    assert.equal(r.code, 3);
    assert.deepEqual(await real!.run(['exec', '-i', 'sh', '--', 'sh', '-c', 'cat; echo " [$GREETING]"'], { input: 'from stdin' }), {
      code: 0,
      stdout: 'from stdin [hi there]\n',
      stderr: '',
    });
    assert.deepEqual(await real!.run(['exec', 'two', '-c', 'second', '--', 'echo', 'second']), { code: 0, stdout: 'second\n', stderr: '' });
  });

  test('refusals: a missing command, a completed pod, a container that is not there; SPDY from older kubectl works', async () => {
    const missing = await real!.run(['exec', 'sh', '--', 'no-such-command']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /exec: "no-such-command": executable file not found in \$PATH/);
    const done = await real!.run(['exec', 'done', '--', 'true']);
    assert.equal(done.code, 1);
    assert.match(done.stderr, /cannot exec into a container in a completed pod; current phase is Succeeded/);
    const nope = await real!.run(['exec', 'sh', '-c', 'nope', '--', 'true']);
    assert.equal(nope.code, 1);
    assert.match(nope.stderr, /container nope is not valid for pod sh|container nope not found in pod sh/);
    const old = bins['1.29'];
    if (old) {
      const k = new Kubectl(env.url, old, { namespace: NS, caPem: env.pki!.caPem, certPem: adminCert.certPem, keyPem: adminCert.keyPem });
      try {
        // kubectl before 1.30 speaks SPDY/3.1 (v4.channel.k8s.io): stdin, stdout, stderr and the exit code go through it.
        const r = await k.run(['exec', '-i', 'sh', '--', 'sh', '-c', 'cat; echo oops >&2; exit 3'], { input: 'over spdy' });
        assert.deepEqual(r, { code: 3, stdout: 'over spdy', stderr: 'oops\ncommand terminated with exit code 3\n' });
        assert.deepEqual(await k.run(['exec', 'sh', '--', 'echo', 'done']), { code: 0, stdout: 'done\n', stderr: '' });
      } finally {
        k.cleanup();
      }
    }
  });

  test("attach -i joins the container's stdin and output; run -i --rm attaches, deletes the pod and passes on its exit code", async () => {
    assert.deepEqual(await real!.run(['attach', '-i', 'echo-real'], { input: 'a\nb\n' }), {
      code: 0,
      stdout: 'echo: a\necho: b\nbye\n',
      stderr: "If you don't see a command prompt, try pressing enter.\n",
    });
    const r = await real!.run(['run', '-i', '--rm', 'once-real', '--image=busybox', '--restart=Never', '--', 'sh', '-c', 'read x; echo "got $x"; exit 2'], {
      input: 'line\n',
    });
    assert.equal(r.stdout, 'got line\npod "once-real" deleted\n');
    assert.match(r.stderr, /pod ex\/once-real terminated \(Error\)/);
    assert.equal(r.code, 2);
    await waitFor(async () => (await admin.raw({ path: `/api/v1/namespaces/${NS}/pods/once-real` })).status === 404, 20_000, 'the pod to be gone');
  });

  test('RBAC: get on pods/exec is not enough for a WebSocket exec; create is', async () => {
    await admin.post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'exec-get' },
      rules: [{ apiGroups: [''], resources: ['pods', 'pods/exec'], verbs: ['get'] }],
    });
    await admin.post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'exec-get' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'exec-get' },
      subjects: [{ kind: 'User', name: 'jane', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const jane = await env.pki!.client('jane');
    const k = new Kubectl(env.url, bins.default!, { namespace: NS, caPem: env.pki!.caPem, certPem: jane.certPem, keyPem: jane.keyPem });
    try {
      const refused = await k.run(['exec', 'sh', '--', 'echo', 'in']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /pods "sh" is forbidden: User "jane" cannot create resource "pods\/exec" in API group "" in the namespace "ex"/);
      await admin.patch(
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/exec-get`,
        { rules: [{ apiGroups: [''], resources: ['pods', 'pods/exec'], verbs: ['get', 'create'] }] },
        'application/merge-patch+json',
      );
      await waitFor(async () => (await k.run(['exec', 'sh', '--', 'echo', 'in'])).stdout === 'in\n', 10_000, 'the widened role to take effect');
    } finally {
      k.cleanup();
    }
  });
});

describe('our kubectl', () => {
  const ours = async (args: string[], input?: string) => {
    let stdout = '';
    let stderr = '';
    const stdinStream = input === undefined ? new PassThrough() : Readable.from([Buffer.from(input)]);
    const code = await ourKubectl(args, {
      out: (s) => (stdout += s),
      err: (s) => (stderr += s),
      env: { HOME: dir },
      signal: AbortSignal.timeout(30_000),
      stdinStream,
    });
    return { code, stdout, stderr };
  };

  test('the same streams and exit code; -i; TYPE/NAME; the default container said', {
    skip: bins.default ? false : 'kubectl is not installed (its kubeconfig is used)',
  }, async () => {
    const base = [`--kubeconfig=${real!.kubeconfig}`, '-n', NS];
    const r = await ours([...base, 'exec', 'sh', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.deepEqual(r, { code: 3, stdout: 'out\n', stderr: 'err\ncommand terminated with exit code 3\n' });
    assert.deepEqual(await ours([...base, 'exec', '-i', 'sh', '--', 'cat'], 'piped\n'), { code: 0, stdout: 'piped\n', stderr: '' });
    assert.deepEqual(await ours([...base, 'exec', 'svc/sh', '--', 'printenv', 'GREETING']), { code: 0, stdout: 'hi there\n', stderr: '' });
    assert.deepEqual(await ours([...base, 'exec', 'two', '--', 'echo', 'x']), {
      code: 0,
      stdout: 'x\n',
      stderr: 'Defaulted container "first" out of: first, second\n',
    });
    const old = await ours([...base, 'exec', 'sh', 'ls']);
    assert.equal(old.code, 1);
    assert.match(old.stderr, /^error: exec \[POD\] \[COMMAND\] is not supported anymore/);
    const done = await ours([...base, 'exec', 'done', '--', 'true']);
    assert.deepEqual(done, { code: 1, stdout: '', stderr: 'error: cannot exec into a container in a completed pod; current phase is Succeeded\n' });
  });

  test("attach -i and run -i --rm, with the real kubectl's output", {
    skip: bins.default ? false : 'kubectl is not installed (its kubeconfig is used)',
  }, async () => {
    const base = [`--kubeconfig=${real!.kubeconfig}`, '-n', NS];
    assert.deepEqual(await ours([...base, 'attach', '-i', 'echo-ours'], 'a\nb\n'), {
      code: 0,
      stdout: 'echo: a\necho: b\nbye\n',
      stderr: "If you don't see a command prompt, try pressing enter.\n",
    });
    const r = await ours(
      [...base, 'run', '-i', '--rm', 'once-ours', '--image=busybox', '--restart=Never', '--', 'sh', '-c', 'read x; echo "got $x"; exit 2'],
      'line\n',
    );
    assert.deepEqual(r, {
      code: 2,
      stdout: 'got line\npod "once-ours" deleted\n',
      stderr: "If you don't see a command prompt, try pressing enter.\npod ex/once-ours terminated (Error)\n",
    });
    const fast = await ours([...base, 'run', '-i', '--rm', 'fast-ours', '--image=busybox', '--restart=Never', '--', 'echo', 'quick'], '');
    // Output from before the attach is lost, as with kubectl (a pod already done shows its logs instead).
    assert.equal(fast.code, 0, fast.stderr);
    assert.match(fast.stdout, /^(quick\n)?pod "fast-ours" deleted\n$/);
    assert.deepEqual(await ours([...base, 'run', 'x', '--image=busybox', '--rm']), {
      code: 1,
      stdout: '',
      stderr: 'error: --rm should only be used for attached containers\n',
    });
  });
});

describe('official clients', () => {
  test('@kubernetes/client-node Exec: output and the final Status with the exit code', {
    skip: bins.default ? false : 'kubectl is not installed (its kubeconfig is used)',
  }, async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(real!.kubeconfig);
    const chunks: Buffer[] = [];
    const out = new Writable({
      write: (c: Buffer, _e, cb) => {
        chunks.push(c);
        cb();
      },
    });
    const status = await new Promise<k8s.V1Status>((resolve, reject) => {
      new k8s.Exec(kc).exec(NS, 'sh', 'sh', ['sh', '-c', 'echo from-node; exit 4'], out, null, null, false, (s) => resolve(s)).catch(reject);
    });
    assert.equal(Buffer.concat(chunks).toString(), 'from-node\n');
    assert.equal(status.status, 'Failure');
    assert.equal(status.reason, 'NonZeroExitCode');
    assert.deepEqual(status.details?.causes, [{ reason: 'ExitCode', message: '4' }]);
  });

  test('python3-kubernetes stream(): output and the return code', {
    skip: !bins.default
      ? 'kubectl is not installed (its kubeconfig is used)'
      : hasPython
        ? false
        : "Debian's python3-kubernetes and python3-websocket are not installed",
  }, async () => {
    const script = `
import sys
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
print(repr(stream(v1.connect_get_namespaced_pod_exec, 'sh', '${NS}', command=['echo', 'from-python'], stderr=True, stdin=False, stdout=True, tty=False)))
r = stream(v1.connect_get_namespaced_pod_exec, 'sh', '${NS}', command=['sh', '-c', 'exit 5'], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
r.run_forever(timeout=20)
print(r.returncode)
`;
    const res = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('/usr/bin/python3', ['-c', script, real!.kubeconfig], { timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? 1 : 0, stdout, stderr }),
      );
    });
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.stdout.trim().split('\n'), ["'from-python\\n'", '5']);
  });
});
