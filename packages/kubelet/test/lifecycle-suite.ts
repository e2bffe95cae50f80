/**
 * The kubelet lifecycle suite, run against any CRI runtime: two kubelets (each
 * with its own runtime endpoint) against a real etcd + apiserver + scheduler.
 * Pods run and answer on their IPs, logs come through pods/log, crashes back
 * off, bad images back off, readiness gates Ready, deletion runs preStop within
 * the grace period, init containers run first, and env and volumes reach the
 * process. Paths inside containers are written `${KUBELING_ROOT:-}/path` so the
 * same commands work on kubeling's runtime (mounts under $KUBELING_ROOT) and on
 * containerd (real mounts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { GrpcRuntime, parseImageRef } from '@kubeling/cri';
import { InformerFactory, RestClient, type ClientConfig } from '@kubeling/client';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { request, startTestEnv, waitFor, type TestEnv } from '@kubeling/testenv';
import { Kubelet } from '../src/kubelet.js';

export interface SuiteRuntime {
  /** CRI endpoints, one per node. */
  endpoints: string[];
  images: { busybox: string; nginx: string; missing: string };
  /** containerID prefix, e.g. kubeling or containerd. */
  runtimeName: string;
  podIP: RegExp;
  /** What the nginx image logs for a served GET /. */
  accessLog: RegExp;
  stop(): Promise<void>;
}

export function lifecycleSuite(startRuntime: (dir: string) => Promise<SuiteRuntime>): void {
  type Obj = Record<string, any>;

  let env: TestEnv;
  let dir: string;
  let rt: SuiteRuntime;
  let schedClient: RestClient;
  let informers: InformerFactory;
  let scheduler: Scheduler;
  const kubelets: Kubelet[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-it-'));
    rt = await startRuntime(dir);
    env = await startTestEnv();
    schedClient = new RestClient({ server: env.url, namespace: 'default', insecureSkipTLSVerify: false });
    informers = new InformerFactory(schedClient);
    scheduler = new Scheduler({ client: schedClient, informers, config: buildConfig(), log: pino({ level: 'silent' }) });
    scheduler.init();
    informers.start();
    await scheduler.run();
    for (const [i, endpoint] of rt.endpoints.entries()) {
      const name = `node-${'ab'[i]}`;
      const config: ClientConfig = { server: env.url, namespace: 'default', insecureSkipTLSVerify: false };
      const k = new Kubelet({
        config,
        nodeName: name,
        runtime: endpoint,
        rootDir: join(dir, name),
        port: 0,
        capacity: { cpu: '4', memory: '8Gi', pods: '20' },
        log: pino({ level: 'silent' }),
        backoffInitialMs: 1000,
        backoffMaxMs: 4000,
        statusUpdateMs: 1000,
        leaseRenewMs: 1000,
        plegPeriodMs: 300,
      });
      await k.start();
      kubelets.push(k);
    }
  });
  after(async () => {
    for (const k of kubelets) await k.stop();
    // Whatever still runs goes before the runtime does.
    for (const endpoint of rt?.endpoints ?? []) {
      const cri = new GrpcRuntime(endpoint);
      for (const sb of await cri.listPodSandbox().catch(() => [])) await cri.removePodSandbox(sb.id).catch(() => undefined);
      cri.close();
    }
    await scheduler?.stop();
    informers?.stop();
    schedClient?.close();
    await env?.stop();
    await rt?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const getPod = async (name: string): Promise<Obj> => (await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${name}`)).body;

  async function createPod(name: string, spec: Obj, labels: Record<string, string> = {}): Promise<void> {
    const r = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }

  async function until(name: string, pred: (p: Obj) => boolean, what: string, ms = 20_000): Promise<Obj> {
    let last: Obj = {};
    await waitFor(async () => pred((last = await getPod(name))), ms, `${name}: ${what}`).catch((e) => {
      throw new Error(`${(e as Error).message}; last status ${JSON.stringify(last.status)}`);
    });
    return last;
  }

  const ready = (p: Obj) => p.status?.conditions?.some((c: Obj) => c.type === 'Ready' && c.status === 'True');

  test('nodes register with capacity, addresses and a kubelet endpoint, and keep their Lease', async () => {
    const n = (await request(env.url, 'GET', '/api/v1/nodes/node-a')).body;
    assert.equal(n.status.capacity.cpu, '4');
    assert.deepEqual(n.status.addresses, [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: 'node-a' },
    ]);
    assert.ok(n.status.daemonEndpoints.kubeletEndpoint.Port > 0);
    assert.equal(n.status.conditions.find((c: Obj) => c.type === 'Ready').status, 'True');
    assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.32.0');
    assert.match(n.status.nodeInfo.containerRuntimeVersion, new RegExp(`^${rt.runtimeName}://`));
    assert.equal(n.metadata.labels['kubernetes.io/hostname'], 'node-a');
    const lease = (await request(env.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a')).body;
    assert.equal(lease.spec.holderIdentity, 'node-a');
  });

  test('an nginx pod runs, becomes Ready, answers on its pod IP, and its logs come through pods/log', async () => {
    await createPod('web', {
      containers: [
        {
          name: 'nginx',
          image: rt.images.nginx,
          env: [{ name: 'NGINX_PORT', value: '8080' }],
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
        },
      ],
    });
    const p = await until('web', (x) => x.status?.phase === 'Running' && ready(x), 'Running and Ready');
    assert.match(p.status.podIP, rt.podIP);
    assert.equal(p.status.hostIP, '127.0.0.1');
    const cs = p.status.containerStatuses[0];
    assert.equal(cs.ready, true);
    assert.equal(cs.restartCount, 0);
    assert.ok(cs.state.running.startedAt);
    assert.match(cs.containerID, new RegExp(`^${rt.runtimeName}://[0-9a-f]{64}$`));
    assert.equal(cs.image, parseImageRef(rt.images.nginx)!.full);
    assert.deepEqual(p.status.conditions.map((c: Obj) => `${c.type}=${c.status}`).sort(), [
      'ContainersReady=True',
      'Initialized=True',
      'PodReadyToStartContainers=True',
      'PodScheduled=True',
      'Ready=True',
    ]);
    const body = await (await fetch(`http://${p.status.podIP}:8080/`)).text();
    assert.match(body, /Welcome to nginx!/);
    const logs = await request(env.url, 'GET', '/api/v1/namespaces/default/pods/web/log');
    assert.equal(logs.status, 200);
    assert.match(logs.text, rt.accessLog);
    const tail = await request(env.url, 'GET', '/api/v1/namespaces/default/pods/web/log?tailLines=1&timestamps=true');
    assert.equal(tail.text.trim().split('\n').length, 1);
    assert.match(tail.text, /^\d{4}-\d\d-\d\dT\S+Z /);
    const evs = (await request(env.url, 'GET', '/api/v1/namespaces/default/events')).body.items as Obj[];
    for (const reason of ['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started'])
      assert.ok(
        evs.some((e) => e.involvedObject.name === 'web' && e.reason === reason),
        reason,
      );
  });

  /** One exec through pods/exec on v5.channel.k8s.io: each channel's text and the final Status. */
  async function execV5(pod: string, command: string[], stdin?: string): Promise<{ out: string; err: string; status: Obj | undefined }> {
    const q = new URLSearchParams();
    for (const c of command) q.append('command', c);
    q.set('stdout', 'true');
    q.set('stderr', 'true');
    if (stdin !== undefined) q.set('stdin', 'true');
    const r = { out: '', err: '', status: undefined as Obj | undefined };
    const ws = await schedClient.websocket(`/api/v1/namespaces/default/pods/${pod}/exec`, q, ['v5.channel.k8s.io'], (d) => {
      if (d[0] === 1) r.out += d.subarray(1).toString();
      else if (d[0] === 2) r.err += d.subarray(1).toString();
      else if (d[0] === 3) r.status = JSON.parse(d.subarray(1).toString());
    });
    assert.equal(ws.protocol, 'v5.channel.k8s.io');
    const closed =
      ws.readyState === ws.CLOSED ? Promise.resolve() : new Promise<void>((resolve, reject) => ws.on('close', () => resolve()).on('error', reject));
    if (stdin !== undefined) {
      ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(stdin)]));
      ws.send(Buffer.from([255, 0]));
    }
    await closed;
    return r;
  }

  test('exec through the apiserver and the kubelet to the runtime: output, stderr, the exit code, a refusal for an unknown container', async () => {
    await createPod('shell', { containers: [{ name: 'sh', image: rt.images.busybox, command: ['sleep', '3600'], env: [{ name: 'WHO', value: 'exec' }] }] });
    await until('shell', (x) => x.status?.phase === 'Running', 'Running');
    const r = await execV5('shell', ['sh', '-c', 'echo "hi $WHO"; echo err >&2; exit 7']);
    assert.deepEqual(
      [r.out, r.err, r.status?.reason, r.status?.details?.causes],
      ['hi exec\n', 'err\n', 'NonZeroExitCode', [{ reason: 'ExitCode', message: '7' }]],
    );
    const ok = await execV5('shell', ['head', '-c', '5'], 'typed');
    assert.deepEqual([ok.out, ok.status?.status], ['typed', 'Success']);
    const bad = await request(env.url, 'GET', '/api/v1/namespaces/default/pods/shell/exec?command=true&stdout=true&container=nope');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'container nope is not valid for pod shell');
    const plain = await request(env.url, 'POST', '/api/v1/namespaces/default/pods/shell/exec?command=true&stdout=true');
    assert.deepEqual([plain.status, plain.body.message], [400, 'Upgrade request required']);
    await request(env.url, 'DELETE', '/api/v1/namespaces/default/pods/shell?gracePeriodSeconds=0');
  });

  test('env from values, fieldRef and a ConfigMap, volumes, and an init container that runs first', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg' },
      data: { greeting: 'hello', 'app.conf': 'x=1' },
    });
    await createPod('init', {
      restartPolicy: 'Never',
      volumes: [
        { name: 'work', emptyDir: {} },
        { name: 'conf', configMap: { name: 'cfg' } },
      ],
      initContainers: [
        {
          name: 'prepare',
          image: rt.images.busybox,
          command: ['sh', '-c', 'echo prepared > ${KUBELING_ROOT:-}/work/ready'],
          volumeMounts: [{ name: 'work', mountPath: '/work' }],
        },
      ],
      containers: [
        {
          name: 'main',
          image: rt.images.busybox,
          command: ['sh', '-c', 'cat ${KUBELING_ROOT:-}/work/ready; cat ${KUBELING_ROOT:-}/conf/app.conf; echo; echo "$(GREETING) $POD_NAME $MY_NS"'],
          env: [
            { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'MY_NS', value: 'ns-$(POD_NAME)' },
          ],
          volumeMounts: [
            { name: 'work', mountPath: '/work' },
            { name: 'conf', mountPath: '/conf' },
          ],
        },
      ],
    });
    const p = await until('init', (x) => x.status?.phase === 'Succeeded', 'Succeeded');
    assert.equal(p.status.initContainerStatuses[0].state.terminated.reason, 'Completed');
    assert.equal(p.status.containerStatuses[0].state.terminated.exitCode, 0);
    const logs = await request(env.url, 'GET', '/api/v1/namespaces/default/pods/init/log?container=main');
    assert.equal(logs.text, 'prepared\nx=1\nhello init ns-init\n');
    const ready = p.status.conditions.find((c: Obj) => c.type === 'Ready');
    assert.deepEqual([ready.status, ready.reason], ['False', 'PodCompleted']);
  });

  test('a crashing container goes to CrashLoopBackOff with a growing restartCount', async () => {
    await createPod('crash', { containers: [{ name: 'c', image: rt.images.busybox, command: ['sh', '-c', 'echo boom; exit 2'] }] });
    const p = await until(
      'crash',
      (x) => x.status?.containerStatuses?.[0]?.restartCount >= 2 && x.status.containerStatuses[0].state.waiting?.reason === 'CrashLoopBackOff',
      'CrashLoopBackOff after 2 restarts',
      30_000,
    );
    const cs = p.status.containerStatuses[0];
    assert.match(cs.state.waiting.message, /^back-off \d+s restarting failed container=c pod=crash_default\(/);
    assert.equal(cs.lastState.terminated.exitCode, 2);
    assert.equal(cs.lastState.terminated.reason, 'Error');
    assert.equal(p.status.phase, 'Running');
    const prev = await request(env.url, 'GET', '/api/v1/namespaces/default/pods/crash/log?previous=true');
    assert.equal(prev.text, 'boom\n');
  });

  test('an unknown image shows ErrImagePull, then ImagePullBackOff', async () => {
    await createPod('badimg', { containers: [{ name: 'c', image: rt.images.missing }] });
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const r = (await getPod('badimg')).status?.containerStatuses?.[0]?.state?.waiting?.reason;
        if (r) seen.add(r);
        return seen.has('ErrImagePull') && seen.has('ImagePullBackOff');
      },
      20_000,
      'ErrImagePull then ImagePullBackOff',
    );
    const p = await getPod('badimg');
    assert.equal(p.status.phase, 'Pending');
  });

  test('a failing readiness probe keeps the pod not Ready', async () => {
    await createPod('unready', {
      containers: [{ name: 'c', image: rt.images.busybox, command: ['sleep', '300'], readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1 } }],
    });
    await until('unready', (x) => x.status?.phase === 'Running', 'Running');
    await new Promise((r) => setTimeout(r, 2500));
    const p = await getPod('unready');
    assert.equal(p.status.containerStatuses[0].ready, false);
    const c = p.status.conditions.find((x: Obj) => x.type === 'Ready');
    assert.deepEqual([c.status, c.reason, c.message], ['False', 'ContainersNotReady', 'containers with unready status: [c]']);
  });

  test('a failing liveness probe restarts the container; a startup probe holds readiness until it passes', async () => {
    await createPod('live', {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: rt.images.busybox,
          command: ['sleep', '300'],
          livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 },
        },
      ],
    });
    await until('live', (x) => x.status?.containerStatuses?.[0]?.restartCount >= 1, 'restarted by liveness', 30_000);
    await waitFor(
      async () =>
        ((await request(env.url, 'GET', '/api/v1/namespaces/default/events')).body.items as Obj[]).some(
          (e) => e.involvedObject.name === 'live' && e.reason === 'Killing' && e.message === 'Container c failed liveness probe, will be restarted',
        ),
      10_000,
      'the Killing event',
    );
    await createPod('slowstart', {
      containers: [
        {
          name: 'c',
          image: rt.images.busybox,
          command: ['sh', '-c', 'sleep 2; touch ${KUBELING_ROOT:-/tmp}/started; sleep 300'],
          startupProbe: { exec: { command: ['sh', '-c', 'test -f ${KUBELING_ROOT:-/tmp}/started'] }, periodSeconds: 1, failureThreshold: 30 },
        },
      ],
    });
    const running = await until('slowstart', (x) => x.status?.phase === 'Running', 'Running');
    assert.equal(running.status.containerStatuses[0].started, false);
    const p = await until('slowstart', ready, 'Ready after the startup probe', 20_000);
    assert.equal(p.status.containerStatuses[0].started, true);
  });

  test('delete runs preStop, stops within the grace period, and the pod is gone', async () => {
    const markerDir = join(dir, 'marker');
    mkdirSync(markerDir, { recursive: true });
    const marker = join(markerDir, 'prestop');
    await createPod('graceful', {
      terminationGracePeriodSeconds: 5,
      volumes: [{ name: 'marker', hostPath: { path: markerDir } }],
      containers: [
        {
          name: 'c',
          image: rt.images.busybox,
          command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'],
          volumeMounts: [{ name: 'marker', mountPath: '/marker' }],
          lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo bye > ${KUBELING_ROOT:-}/marker/prestop'] } } },
        },
      ],
    });
    await until('graceful', (x) => x.status?.phase === 'Running', 'Running');
    const t0 = Date.now();
    const del = await request(env.url, 'DELETE', '/api/v1/namespaces/default/pods/graceful');
    assert.equal(del.status, 200);
    await waitFor(async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/graceful')).status === 404, 10_000, 'the pod to be gone');
    assert.ok(Date.now() - t0 < 5000, `gone in ${Date.now() - t0} ms`);
    assert.ok(existsSync(marker) && readFileSync(marker, 'utf8') === 'bye\n', 'preStop ran');
  });
}
