/**
 * The seeds' story, end to end: the real kubectl applies
 * examples/nginx-deployment.yaml over HTTPS with a client certificate, and the
 * apiserver's audit log and the objects' histories show each step in order —
 * authentication and authorization of kubectl's request, admission, the etcd
 * write, the ReplicaSet made by the controller-manager, Pods created in
 * slow-start batches, Bindings by the scheduler, and the kubelets reporting the
 * pods Running — each component acting as its own identity.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Etcd3 } from 'etcd3';
import { ControllerManager } from '@kubeling/controller-manager';
import { InformerFactory, RestClient, type ClientConfig } from '@kubeling/client';
import { serveCri, type CriServer } from '@kubeling/cri';
import { Kubelet } from '@kubeling/kubelet';
import { KubelingRuntime } from '@kubeling/runtime';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { Kubectl, kubectlBinaries, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { run } from '@kubeling/kubectl';
import { writeFileSync } from 'node:fs';

type Obj = Record<string, any>;
const EXAMPLE = fileURLToPath(new URL('../../examples/nginx-deployment.yaml', import.meta.url));
const kubectlBin = kubectlBinaries().default;

let env: TestEnv;
let dir: string;
const audit: Obj[] = [];
let mgr: ControllerManager;
let schedClient: RestClient;
let informers: InformerFactory;
let scheduler: Scheduler;
const kubelets: Kubelet[] = [];
const runtimes: { rt: KubelingRuntime; server: CriServer }[] = [];

async function identity(cn: string, orgs: string[] = []): Promise<ClientConfig> {
  const c = await env.pki!.client(cn, orgs);
  return {
    server: env.url,
    namespace: 'default',
    insecureSkipTLSVerify: false,
    ca: Buffer.from(env.pki!.caPem),
    cert: Buffer.from(c.certPem),
    key: Buffer.from(c.keyPem),
  };
}

before(async () => {
  if (!kubectlBin) return;
  dir = mkdtempSync(join(tmpdir(), 'e2e-story-'));
  const sink = new Writable({
    write: (chunk, _e, cb) => {
      audit.push(
        ...chunk
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((l: string) => JSON.parse(l)),
      );
      cb();
    },
  });
  // Every default controller runs, the node lifecycle one among them: TaintNodesByCondition on, as in a cluster.
  env = await startTestEnv({ secure: true, server: { audit: pino({ level: 'info' }, sink), admission: { enable: ['TaintNodesByCondition'] } } });
  mgr = new ControllerManager({
    config: await identity('system:kube-controller-manager'),
    controllers: ['*'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
  });
  await mgr.start();
  schedClient = new RestClient(await identity('system:kube-scheduler'));
  informers = new InformerFactory(schedClient);
  scheduler = new Scheduler({ client: schedClient, informers, config: buildConfig(), log: pino({ level: 'silent' }) });
  scheduler.init();
  informers.start();
  await scheduler.run();
  for (const [i, node] of ['story-1', 'story-2'].entries()) {
    const rt = new KubelingRuntime({ backend: 'process', root: join(dir, `rt-${i}`), podCIDR: `127.7.${i + 1}.0/24` });
    const endpoint = `unix://${join(dir, `rt-${i}.sock`)}`;
    runtimes.push({ rt, server: await serveCri(rt, endpoint) });
    const k = new Kubelet({
      config: await identity(`system:node:${node}`, ['system:nodes']),
      nodeName: node,
      runtime: endpoint,
      rootDir: join(dir, node),
      port: 0,
      capacity: { cpu: '4', memory: '8Gi', pods: '20' },
      log: pino({ level: 'silent' }),
    });
    await k.start();
    kubelets.push(k);
  }
  // The default ServiceAccount the pods need comes from the controller-manager.
  await waitFor(
    async () => audit.some((a) => a.verb === 'create' && a.resource === 'serviceaccounts' && a.namespace === 'default' && a.code === 201),
    20_000,
    'the default ServiceAccount',
  );
});
after(async () => {
  for (const k of kubelets) await k.stop();
  for (const r of runtimes) {
    await r.rt.shutdown();
    r.server.forceShutdown();
  }
  await scheduler?.stop();
  informers?.stop();
  schedClient?.close();
  await mgr?.stop();
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('kubectl apply -f examples/nginx-deployment.yaml: every hop happens, in order, as its own identity', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const k = new Kubectl(env.url, kubectlBin!, { caPem: env.pki!.caPem, ...admin });
  try {
    const start = audit.length;
    const a = await k.run(['apply', '-f', EXAMPLE]);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /deployment.apps\/nginx-deployment created/);
    const rs = await k.run(['rollout', 'status', 'deployment/nginx-deployment', '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(rs.code, 0, rs.stderr + rs.stdout);
    let pods: Obj[] = [];
    await waitFor(
      async () =>
        (pods = JSON.parse((await k.run(['get', 'pods', '-l', 'app=nginx', '-o', 'json'])).stdout).items).length === 3 &&
        pods.every((p) => p.status.phase === 'Running'),
      30_000,
      '3 Running pods',
    );
    await new Promise((r) => setTimeout(r, 300));
    const log = audit.slice(start);
    const at = (pred: (x: Obj) => boolean, what: string) => {
      const i = log.findIndex(pred);
      assert.ok(i >= 0, `audit has ${what}`);
      return { i, rec: log[i]! };
    };

    // 1–4. kubectl's request: authenticated as the certificate's user, authorized, admitted, written.
    const create = at(
      (x) => x.verb === 'create' && x.resource === 'deployments' && x.name === 'nginx-deployment' && x.code === 201,
      "kubectl's create of the Deployment",
    );
    assert.equal(create.rec.user, 'kubernetes-admin');
    assert.deepEqual(create.rec.groups, ['system:masters', 'system:authenticated']);
    assert.match(create.rec.userAgent, /^kubectl/);
    const deploy = JSON.parse((await k.run(['get', 'deployment', 'nginx-deployment', '-o', 'json', '--show-managed-fields'])).stdout);
    assert.equal(deploy.metadata.managedFields[0].manager, 'kubectl-client-side-apply', 'recorded by field management on the way in');
    assert.ok(deploy.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    const etcd = new Etcd3({ hosts: env.etcd.endpoint });
    try {
      const kv = await etcd.get('/registry/deployments/default/nginx-deployment').exec();
      assert.equal(kv.kvs.length, 1, 'stored in etcd at the registry key');
      assert.ok(Number(kv.kvs[0]!.create_revision) <= Number(deploy.metadata.resourceVersion));
    } finally {
      etcd.close();
    }

    // 5. The ReplicaSet, made by the controller-manager after the Deployment.
    const rsCreate = at((x) => x.verb === 'create' && x.resource === 'replicasets' && x.code === 201, 'the ReplicaSet create');
    assert.equal(rsCreate.rec.user, 'system:kube-controller-manager');
    assert.ok(rsCreate.i > create.i);

    // 6. Pods by the controller-manager, in slow-start batches: 1, then 2.
    const podCreates = log.filter((x) => x.verb === 'create' && x.resource === 'pods' && !x.subresource && x.code === 201);
    assert.equal(podCreates.length, 3);
    for (const p of podCreates) assert.equal(p.user, 'system:kube-controller-manager');
    const [first, ...rest] = podCreates.sort((x, y) => x.requestReceivedTimestamp.localeCompare(y.requestReceivedTimestamp));
    for (const r of rest) assert.ok(r.requestReceivedTimestamp >= first!.stageTimestamp, 'the second batch starts after the first pod is created');
    assert.ok(log.indexOf(first!) > rsCreate.i);

    // 7. Bindings by the scheduler, each after its pod was created.
    const bindings = log.filter((x) => x.resource === 'pods' && x.subresource === 'binding' && x.code === 201);
    assert.equal(bindings.length, 3);
    for (const b of bindings) {
      assert.equal(b.user, 'system:kube-scheduler');
      // The scheduler may see the pod (a watch event) before its create's response has gone out.
      const created = podCreates.find((p) => p.name === b.name);
      assert.ok(created, `the create of ${b.name} is audited with its name`);
      assert.ok(b.requestReceivedTimestamp >= created.requestReceivedTimestamp);
    }

    // 8. The kubelets report status as their nodes, after the binding; the pods are Running.
    for (const p of pods) {
      const node = p.spec.nodeName as string;
      const bound = bindings.find((b) => b.name === p.metadata.name)!;
      const status = log.find(
        (x) => x.resource === 'pods' && x.subresource === 'status' && x.name === p.metadata.name && x.code === 200 && x.user === `system:node:${node}`,
      );
      assert.ok(status, `${p.metadata.name}: a status write by system:node:${node}`);
      assert.ok(status.requestReceivedTimestamp >= bound.stageTimestamp);
      assert.equal(p.status.phase, 'Running');
      assert.equal(p.spec.serviceAccountName, 'default', 'ServiceAccount admission');
      assert.ok(
        p.spec.tolerations.some((t: Obj) => t.key === 'node.kubernetes.io/not-ready' && t.tolerationSeconds === 300),
        'DefaultTolerationSeconds admission',
      );
    }
    assert.deepEqual([...new Set(pods.map((p) => p.spec.nodeName))].sort(), ['story-1', 'story-2'], 'spread over both nodes');
  } finally {
    k.cleanup();
  }
});

test('our kubectl against the same cluster: logs and logs -f of the nginx pods', { skip: kubectlBin ? false : 'kubectl is not installed' }, async () => {
  const admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const b64 = (x: string) => Buffer.from(x).toString('base64');
  const kubeconfig = join(dir, 'ours.kubeconfig');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: ${env.url}, certificate-authority-data: ${b64(env.pki!.caPem)}}\nusers:\n- name: u\n  user: {client-certificate-data: ${b64(admin.certPem)}, client-key-data: ${b64(admin.keyPem)}}\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: x\n`,
  );
  const ours = async (argv: string[], signal?: AbortSignal) => {
    let out = '';
    let err = '';
    const code = await run(['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'ours-cache'), ...argv], {
      out: (x) => (out += x),
      err: (x) => (err += x),
      env: { HOME: dir },
      ...(signal ? { signal } : {}),
    });
    return { code, out, err };
  };
  const logs = await ours(['logs', 'deployment/nginx-deployment']);
  assert.equal(logs.code, 0, logs.err);
  assert.match(logs.out, /nginx: listening on 127\.7\.\d+\.\d+:80/);
  assert.match(logs.err, /^Found 3 pods, using pod\//);
  const pods = JSON.parse((await ours(['get', 'pods', '-l', 'app=nginx', '-o', 'json'])).out).items;
  const ctl = new AbortController();
  let followed = '';
  const following = run(['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'ours-cache'), 'logs', '-f', pods[0].metadata.name, '--tail=0'], {
    out: (x) => (followed += x),
    err: () => undefined,
    env: { HOME: dir },
    signal: ctl.signal,
  });
  // With --tail=0 a request made before the stream is up never shows: ask again until one does.
  await waitFor(
    async () => {
      await fetch(`http://${pods[0].status.podIP}:80/followed-by-ours`).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
      return /GET \/followed-by-ours HTTP\/1\.1" 404/.test(followed);
    },
    20_000,
    'our logs -f to show the request',
  );
  ctl.abort();
  await following;
});
