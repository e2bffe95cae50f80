/**
 * Storage end to end, through the real kubectl, every component as its own
 * identity: the controller-manager (PV binder, protection, attach/detach), the
 * scheduler (VolumeBinding), two kubelets in this process and a
 * `kubeling-csi-driver` process per node (the hostpath driver with its
 * provisioner, attacher, resizer and registrar sidecars), with the add-on
 * objects `npm run up` installs (CSIDriver, default StorageClass `standard`).
 *
 * A claim of the default class is provisioned where its first pod is scheduled;
 * a second pod reads what the first wrote; a claim in use stays Terminating
 * until its pod is gone, and Delete reclaim removes the volume's directory;
 * a StatefulSet's claims are bound, kept across pod deletion and scale-down;
 * a claim is expanded online; the corpus StatefulSets reach bound claims.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { parseAllDocuments, stringify } from 'yaml';
import { ControllerManager } from '@kubeling/controller-manager';
import { InformerFactory, RestClient, type ClientConfig } from '@kubeling/client';
import { serveCri, type CriServer } from '@kubeling/cri';
import { Kubelet } from '@kubeling/kubelet';
import { KubelingRuntime } from '@kubeling/runtime';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { Kubectl, kubectlBinaries, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { CSI_DRIVER_GROUP, csiDriverUser, storageObjects } from '@kubeling/testenv/storage';
import { Processes } from './cluster.js';

type Obj = Record<string, any>;
const kubectlBin = kubectlBinaries().default;
const CORPUS = new URL('../../../shared/corpus/kubernetes-examples/', import.meta.url);
const NODES = ['stor-1', 'stor-2'];

let env: TestEnv;
let dir: string;
let mgr: ControllerManager;
let schedClient: RestClient;
let admin: RestClient;
let informers: InformerFactory;
let scheduler: Scheduler;
let k: Kubectl;
const kubelets: Kubelet[] = [];
const runtimes: { rt: KubelingRuntime; server: CriServer }[] = [];
const procs = new Processes();

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

const kc = async (args: string[], timeoutMs = 30_000) => {
  const r = await k.run(args, { timeoutMs });
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
};
const getJSON = async (args: string[]): Promise<Obj> => JSON.parse(await kc(['get', ...args, '-o', 'json']));
const applyYAML = async (yaml: string) => {
  const f = join(dir, `m-${Date.now()}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(f, yaml);
  return kc(['apply', '-f', f]);
};
const podPhase = async (name: string) => (await k.run(['get', 'pod', name, '-o', 'jsonpath={.status.phase}'])).stdout;
/** The claim's volume directory, on whichever node's driver state holds it. */
const volumeDirs = () =>
  NODES.flatMap((n) =>
    existsSync(join(dir, `csi-${n}`, 'volumes')) ? readdirSync(join(dir, `csi-${n}`, 'volumes')).map((v) => join(dir, `csi-${n}`, 'volumes', v)) : [],
  );

const pod = (name: string, claim: string, cmd: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: busybox
    command: [sh, -c, '${cmd}']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: ${claim}}
`;

before(async () => {
  if (!kubectlBin) return;
  dir = mkdtempSync(join(tmpdir(), 'e2e-st-'));
  env = await startTestEnv({ secure: true, server: { admission: { enable: ['TaintNodesByCondition'] } } });
  admin = new RestClient(await identity('kubernetes-admin', ['system:masters']));
  for (const o of storageObjects()) await admin.request({ method: 'POST', path: pathOf(o), body: o });
  mgr = new ControllerManager({
    config: await identity('system:kube-controller-manager'),
    controllers: ['*'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
  });
  await mgr.start();
  schedClient = new RestClient(await identity('system:kube-scheduler'));
  informers = new InformerFactory(schedClient);
  scheduler = new Scheduler({
    client: schedClient,
    informers,
    config: buildConfig({ podInitialBackoffSeconds: 1, podMaxBackoffSeconds: 2 }),
    log: pino({ level: 'silent' }),
  });
  scheduler.init();
  informers.start();
  await scheduler.run();
  for (const [i, node] of NODES.entries()) {
    const rt = new KubelingRuntime({ backend: 'process', root: join(dir, `rt-${i}`), podCIDR: `127.8.${i + 1}.0/24` });
    const endpoint = `unix://${join(dir, `rt-${i}.sock`)}`;
    runtimes.push({ rt, server: await serveCri(rt, endpoint) });
    const kubelet = new Kubelet({
      config: await identity(`system:node:${node}`, ['system:nodes']),
      nodeName: node,
      runtime: endpoint,
      rootDir: join(dir, node),
      port: 0,
      capacity: { cpu: '4', memory: '8Gi', pods: '20' },
      log: pino({ level: 'silent' }),
    });
    await kubelet.start();
    kubelets.push(kubelet);
    const cert = await env.pki!.client(csiDriverUser(node), [CSI_DRIVER_GROUP]);
    const driverKubeconfig = new Kubectl(env.url, kubectlBin, { caPem: env.pki!.caPem, certPem: cert.certPem, keyPem: cert.keyPem }).kubeconfig;
    const registration = join(dir, node, 'plugins_registry');
    procs.spawn('csi-driver', [
      `--kubeconfig=${driverKubeconfig}`,
      `--node-id=${node}`,
      `--endpoint=unix://${join(dir, `csi-${i}.sock`)}`,
      `--state-dir=${join(dir, `csi-${node}`)}`,
      `--registration-dir=${registration}`,
      '--log-level=warn',
    ]);
  }
  const c = await env.pki!.client('kubernetes-admin', ['system:masters']);
  k = new Kubectl(env.url, kubectlBin, { caPem: env.pki!.caPem, certPem: c.certPem, keyPem: c.keyPem });
  // Each node's driver registered with its kubelet: the CSINode lists it.
  await waitFor(
    async () => {
      const r = await admin.request<Obj>({ path: '/apis/storage.k8s.io/v1/csinodes' }).catch(() => undefined);
      return (r?.items ?? []).filter((n: Obj) => (n.spec?.drivers ?? []).some((d: Obj) => d.name === 'hostpath.csi.kubeling.io')).length === NODES.length;
    },
    60_000,
    'the CSI driver registered on every node',
  );
  await waitFor(
    async () => !!(await admin.request({ path: '/api/v1/namespaces/default/serviceaccounts/default' }).catch(() => undefined)),
    20_000,
    'the default ServiceAccount',
  );
});

after(async () => {
  await procs.stop();
  for (const kl of kubelets) await kl.stop();
  for (const r of runtimes) {
    await r.rt.shutdown();
    r.server.forceShutdown();
  }
  await scheduler?.stop();
  informers?.stop();
  schedClient?.close();
  admin?.close();
  await mgr?.stop();
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function pathOf(o: Obj): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const kind = String(o.kind).toLowerCase();
  const plural = kind.endsWith('ss') ? `${kind}es` : `${kind}s`;
  return `${group ? `/apis/${group}` : '/api'}/${version}/${plural}`;
}

const skip = { skip: kubectlBin ? false : 'kubectl is not installed', timeout: 180_000 };

test(
  'a claim of the default class: provisioned for its first pod, read back by a second, Terminating while used, deleted with its directory',
  skip,
  async () => {
    await applyYAML(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`);
    const claim = await getJSON(['pvc', 'data']);
    assert.equal(claim.spec.storageClassName, 'standard', 'DefaultStorageClass set the class');
    assert.deepEqual(claim.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    assert.equal(claim.status.phase, 'Pending', 'WaitForFirstConsumer: nothing is provisioned before a pod uses it');

    await applyYAML(pod('writer', 'data', 'echo kept-across-pods > data/f'));
    await waitFor(async () => (await podPhase('writer')) === 'Succeeded', 60_000, 'the writer pod to succeed');
    const bound = await getJSON(['pvc', 'data']);
    assert.equal(bound.status.phase, 'Bound');
    const pvName = bound.spec.volumeName as string;
    const pv = await getJSON(['pv', pvName]);
    assert.equal(pv.spec.csi.driver, 'hostpath.csi.kubeling.io');
    assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(pv.metadata.annotations['pv.kubernetes.io/provisioned-by'], 'hostpath.csi.kubeling.io');
    const writerNode = (await getJSON(['pod', 'writer'])).spec.nodeName;
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values, [writerNode]);
    const table = await kc(['get', 'pv,pvc,sc']);
    assert.match(table, new RegExp(`persistentvolume/${pvName}\\s+1Gi\\s+RWO\\s+Delete\\s+Bound\\s+default/data\\s+standard`));
    assert.match(table, new RegExp(`persistentvolumeclaim/data\\s+Bound\\s+${pvName}\\s+1Gi\\s+RWO\\s+standard`));
    assert.match(table, /storageclass.storage.k8s.io\/standard \(default\)\s+hostpath.csi.kubeling.io\s+Delete\s+WaitForFirstConsumer\s+true/);

    await kc(['delete', 'pod', 'writer']);
    await applyYAML(pod('reader', 'data', 'cat data/f; sleep 3600'));
    await waitFor(async () => (await podPhase('reader')) === 'Running', 60_000, 'the reader pod to run');
    assert.equal((await getJSON(['pod', 'reader'])).spec.nodeName, writerNode, 'the volume keeps the pod on its node');
    await waitFor(async () => (await k.run(['logs', 'reader'])).stdout.includes('kept-across-pods'), 20_000, 'the reader to print the file');
    const described = await kc(['describe', 'pvc', 'data']);
    assert.match(described, /Used By:\s+reader/);
    assert.match(described, /ProvisioningSucceeded/);

    // Deleting the claim while the reader uses it: the protection finalizer keeps it Terminating.
    const del = await k.run(['delete', 'pvc', 'data', '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    await new Promise((r) => setTimeout(r, 1500));
    const terminating = await getJSON(['pvc', 'data']);
    assert.ok(terminating.metadata.deletionTimestamp, 'the claim is being deleted');
    assert.match(await kc(['get', 'pvc', 'data']), /data\s+Terminating/);
    const volumeDir = volumeDirs().find((d) => existsSync(join(d, 'f')) && readFileSync(join(d, 'f'), 'utf8').includes('kept-across-pods'));
    assert.ok(volumeDir, 'the volume directory holds the file');

    await kc(['delete', 'pod', 'reader', '--grace-period=1'], 60_000);
    await waitFor(async () => (await k.run(['get', 'pvc', 'data'])).code !== 0, 30_000, 'the claim to go once its pod is gone');
    await waitFor(async () => (await k.run(['get', 'pv', pvName])).code !== 0, 30_000, 'Delete reclaim to remove the PV');
    assert.equal(existsSync(volumeDir), false, 'Delete reclaim removed the directory');
  },
);

test('a StatefulSet: three bound claims, each read back after its pod is deleted, kept when scaled to 1 and back', skip, async () => {
  await applyYAML(`apiVersion: v1
kind: Service
metadata: {name: db}
spec: {clusterIP: None, selector: {app: db}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: busybox
        command: [sh, -c, 'test -f data/who || echo "$HOSTNAME" > data/who; cat data/who; sleep 3600']
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 100Mi}}
`);
  await kc(['rollout', 'status', 'statefulset/db', '--timeout=120s'], 130_000);
  const claims = (await getJSON(['pvc', '-l', 'app=db'])).items as Obj[];
  assert.deepEqual(claims.map((c) => [c.metadata.name, c.status.phase]).sort(), [
    ['data-db-0', 'Bound'],
    ['data-db-1', 'Bound'],
    ['data-db-2', 'Bound'],
  ]);
  const volumes = Object.fromEntries(claims.map((c) => [c.metadata.name, c.spec.volumeName]));
  await kc(['delete', 'pod', 'db-1']);
  await waitFor(
    async () => (await podPhase('db-1')) === 'Running' && (await k.run(['logs', 'db-1'])).stdout.trim() === 'db-1',
    60_000,
    'db-1 back, reading its own file',
  );

  await kc(['scale', 'statefulset/db', '--replicas=1']);
  await waitFor(async () => (await k.run(['get', 'pod', 'db-2'])).code !== 0 && (await k.run(['get', 'pod', 'db-1'])).code !== 0, 60_000, 'scale down to 1');
  assert.equal(((await getJSON(['pvc', '-l', 'app=db'])).items as Obj[]).length, 3, 'Retain keeps the claims of removed pods');
  await kc(['scale', 'statefulset/db', '--replicas=3']);
  await kc(['rollout', 'status', 'statefulset/db', '--timeout=120s'], 130_000);
  for (const n of ['db-0', 'db-1', 'db-2']) {
    await waitFor(async () => (await k.run(['logs', n])).stdout.trim() === n, 20_000, `${n} reads its own file`);
  }
  const after = Object.fromEntries(((await getJSON(['pvc', '-l', 'app=db'])).items as Obj[]).map((c) => [c.metadata.name, c.spec.volumeName]));
  assert.deepEqual(after, volumes, 'the same volumes');
});

test('expansion: a larger request grows the volume and the claim status follows', skip, async () => {
  await applyYAML(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: grow}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`);
  await applyYAML(pod('grower', 'grow', 'sleep 3600'));
  await waitFor(async () => (await podPhase('grower')) === 'Running', 60_000, 'the pod using the claim');
  await kc(['patch', 'pvc', 'grow', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']);
  const pvName = (await getJSON(['pvc', 'grow'])).spec.volumeName;
  await waitFor(async () => (await getJSON(['pv', pvName])).spec.capacity.storage === '2Gi', 30_000, 'the PV to report 2Gi');
  await waitFor(async () => (await getJSON(['pvc', 'grow'])).status.capacity?.storage === '2Gi', 30_000, 'the claim status to follow');
  const claim = await getJSON(['pvc', 'grow']);
  assert.deepEqual(claim.status.conditions ?? [], []);
  await kc(['delete', 'pod', 'grower', '--grace-period=1'], 60_000);
});

const corpusFiles = [
  'databases/cassandra/cassandra-statefulset.yaml',
  '_archived/cockroachdb/cockroachdb-statefulset.yaml',
  '_archived/storage/minio/minio-distributed-headless-service.yaml',
  '_archived/storage/minio/minio-distributed-statefulset.yaml',
];
const haveCorpus = corpusFiles.every((f) => existsSync(new URL(f, CORPUS)));

test('the corpus StatefulSets reach bound claims', {
  ...skip,
  skip: skip.skip || (haveCorpus ? false : 'the manifest corpus is not beside the repository'),
}, async () => {
  // cassandra's class `fast` names minikube's provisioner; here it is the node's CSI driver.
  await applyYAML(`apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: hostpath.csi.kubeling.io
volumeBindingMode: WaitForFirstConsumer
`);
  const docs = (file: string) =>
    parseAllDocuments(readFileSync(new URL(file, CORPUS), 'utf8'))
      .map((d) => d.toJSON() as Obj)
      // Their Services and StatefulSets (cockroachdb's PodDisruptionBudget is policy/v1beta1, which 1.25 removed).
      .filter((o) => o && (o.kind === 'Service' || o.kind === 'StatefulSet'));
  const objects = corpusFiles.flatMap(docs);
  await applyYAML(objects.map((o) => stringify(o)).join('---\n'));
  // Ordered sets wait for each pod to be Ready; their images are not kubeling's, so the first claim of each is what binds.
  // minio's claims name the class `standard`, which is kubeling's default as well.
  for (const claim of ['cassandra-data-cassandra-0', 'datadir-cockroachdb-0', 'data-minio-0']) {
    await waitFor(async () => (await k.run(['get', 'pvc', claim, '-o', 'jsonpath={.status.phase}'])).stdout === 'Bound', 60_000, `${claim} Bound`);
  }
});
