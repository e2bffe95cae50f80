/**
 * `kubectl debug` end to end on a secure cluster (HTTPS apiserver with RBAC,
 * a kubelet on its secure port with webhook authorization, kubeling's runtime
 * over CRI as its own process): the real kubectl adds an ephemeral container
 * through pods/ephemeralcontainers, waits for its status, attaches to it
 * (or, once it has exited, reads its logs), and `kubectl logs -c` reads a
 * detached one. With kubeling's runtime `busybox` is the host's shell tools
 * (its default command `sh`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createCA, issue } from '@kubeling/pki';
import { RestClient } from '@kubeling/client';
import { Kubelet } from '@kubeling/kubelet';
import { Kubectl, kubectlBinaries, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Processes } from './cluster.js';

type Obj = Record<string, any>;

const bins = kubectlBinaries();
// kubectl 1.33 where installed (the version the apiserver answers as), else the default one.
const binary = bins['1.33'] ?? bins.default;
const NS = 'dbg';
const NODE = 'debug-1';
let env: TestEnv;
let dir: string;
let admin: RestClient;
let kubelet: Kubelet;
let kubectl: Kubectl | undefined;
const procs = new Processes();

const getPod = (name: string) => admin.get<Obj>(`/api/v1/namespaces/${NS}/pods/${name}`);
const ephStatus = (p: Obj, name: string): Obj | undefined => (p.status?.ephemeralContainerStatuses as Obj[] | undefined)?.find((s) => s.name === name);
/** The name kubectl debug chose, from its "Defaulting debug container name to …" line. */
const debuggerName = (stdout: string): string => {
  const m = /Defaulting debug container name to (debugger-[a-z0-9]{5})\./.exec(stdout);
  assert.ok(m, stdout);
  return m[1]!;
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-debug-'));
  const kubeletCA = await createCA('kubelet-ca');
  const apiClient = await issue(kubeletCA, { commonName: 'kube-apiserver-kubelet-client', usage: 'client' });
  env = await startTestEnv({ secure: true, server: { kubeletClient: { cert: apiClient.certPem, key: apiClient.keyPem, ca: kubeletCA.certPem } } });
  const adminCert = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const tls = { ca: Buffer.from(env.pki!.caPem), insecureSkipTLSVerify: false };
  admin = new RestClient({ server: env.url, namespace: 'default', ...tls, cert: Buffer.from(adminCert.certPem), key: Buffer.from(adminCert.keyPem) });
  const nodeCert = await env.pki!.client(`system:node:${NODE}`, ['system:nodes']);
  const serving = await issue(kubeletCA, { commonName: NODE, ips: ['127.0.0.1'], usage: 'server' });
  const sock = await procs.runtime(dir, NODE, '127.7.11.0/24');
  kubelet = new Kubelet({
    config: { server: env.url, namespace: 'default', ...tls, cert: Buffer.from(nodeCert.certPem), key: Buffer.from(nodeCert.keyPem) },
    nodeName: NODE,
    runtime: `unix://${sock}`,
    rootDir: join(dir, NODE),
    port: 0,
    tls: { cert: serving.certPem, key: serving.keyPem, clientCA: kubeletCA.certPem },
    authorizationWebhook: true,
    log: pino({ level: 'silent' }),
    leaseRenewMs: 1000,
    statusUpdateMs: 1000,
    plegPeriodMs: 300,
  });
  await kubelet.start();
  await admin.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await admin.post(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  await admin.post(`/api/v1/namespaces/${NS}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: NS },
    spec: { nodeName: NODE, automountServiceAccountToken: false, containers: [{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }] },
  });
  await waitFor(async () => (await getPod('web')).status?.phase === 'Running', 60_000, 'the pod to run');
  if (binary) kubectl = new Kubectl(env.url, binary, { namespace: NS, caPem: env.pki!.caPem, certPem: adminCert.certPem, keyPem: adminCert.keyPem });
});

after(async () => {
  await kubelet?.stop();
  await procs.stop();
  admin?.close();
  await env?.stop();
  kubectl?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('kubectl debug', { skip: binary ? false : 'kubectl is not installed' }, () => {
  test('-it with stdin piped: the debug container gets the input, its output comes back, and the pod reports its status', async () => {
    const r = await kubectl!.run(['debug', 'web', '--image=busybox', '-it', '--attach=true', '--', 'sh'], { input: 'echo hello-from-debug\nexit\n' });
    assert.equal(r.code, 0, r.stderr);
    const name = debuggerName(r.stdout);
    assert.match(r.stdout, /^hello-from-debug$/m);
    assert.match(r.stderr, /Unable to use a TTY - input is not a terminal or the right kind of file/);
    // Attached, not fallen back to the logs.
    assert.doesNotMatch(r.stderr, /falling back to streaming logs/);
    const p = await getPod('web');
    const ec = (p.spec.ephemeralContainers as Obj[]).find((c) => c.name === name)!;
    assert.deepEqual([ec.image, ec.stdin, ec.tty, ec.command], ['busybox', true, true, ['sh']]);
    await waitFor(async () => !!ephStatus(await getPod('web'), name)?.state?.terminated, 10_000, 'the terminated status');
    const st = ephStatus(await getPod('web'), name)!;
    assert.deepEqual([st.state.terminated.exitCode, st.restartCount, st.ready], [0, 0, false]);
    assert.equal((await getPod('web')).status.phase, 'Running');
  });

  test("-it with a command that is done before the attach: kubectl shows the container's output", async () => {
    const r = await kubectl!.run(['debug', 'web', '--image=busybox', '-it', '--attach=true', '--', 'sh', '-c', 'echo hello-from-debug'], { input: '' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^hello-from-debug$/m);
    const name = debuggerName(r.stdout);
    await waitFor(async () => ephStatus(await getPod('web'), name)?.state?.terminated?.exitCode === 0, 10_000, 'the terminated status');
  });

  test('without -it: the container runs detached, and kubectl logs -c reads it; --target and --profile=general reach the spec', async () => {
    const r = await kubectl!.run([
      'debug',
      'web',
      '--image=busybox',
      '--target=app',
      '--profile=general',
      '--',
      'sh',
      '-c',
      'echo from-logs; echo "pod ip $POD_IP"',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const name = debuggerName(r.stdout);
    assert.doesNotMatch(r.stdout, /from-logs/);
    await waitFor(async () => !!ephStatus(await getPod('web'), name)?.state?.terminated, 20_000, 'the terminated status');
    const p = await getPod('web');
    const ec = (p.spec.ephemeralContainers as Obj[]).find((c) => c.name === name)!;
    assert.equal(ec.targetContainerName, 'app');
    // The general profile lets the debugger trace the target's processes.
    assert.deepEqual(ec.securityContext, { capabilities: { add: ['SYS_PTRACE'] } });
    const logs = await kubectl!.run(['logs', 'web', '-c', name]);
    assert.deepEqual(logs, { code: 0, stdout: `from-logs\npod ip ${p.status.podIP}\n`, stderr: '' });
    const names = await kubectl!.run(['get', 'pod', 'web', '-o', 'jsonpath={.status.ephemeralContainerStatuses[*].name}']);
    assert.ok(names.stdout.split(' ').includes(name), names.stdout);
  });

  test("exec reaches a running debug container; the same name again changes nothing; a container's name is refused", async () => {
    const r = await kubectl!.run(['debug', 'web', '--image=busybox', '-c', 'keeper', '--', 'sleep', '3600']);
    assert.equal(r.code, 0, r.stderr);
    await waitFor(async () => !!ephStatus(await getPod('web'), 'keeper')?.state?.running, 20_000, 'the debug container running');
    assert.deepEqual(await kubectl!.run(['exec', 'web', '-c', 'keeper', '--', 'sh', '-c', 'echo in-keeper']), { code: 0, stdout: 'in-keeper\n', stderr: '' });
    // The same name again: kubectl's patch names "keeper" twice, and the server's merge leaves it as it was, as upstream's does.
    const again = await kubectl!.run(['debug', 'web', '--image=busybox', '-c', 'keeper', '--', 'true']);
    assert.equal(again.code, 0, again.stderr);
    const keeper = ((await getPod('web')).spec.ephemeralContainers as Obj[]).filter((c) => c.name === 'keeper');
    assert.deepEqual(
      keeper.map((c) => c.command),
      [['sleep', '3600']],
    );
    // A regular container's name is refused.
    const taken = await kubectl!.run(['debug', 'web', '--image=busybox', '-c', 'app', '--', 'true']);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /The Pod "web" is invalid: spec\.ephemeralContainers\[\d+\]\.name: Duplicate value: "app"/);
  });
});
