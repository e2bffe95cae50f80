/**
 * The controller-manager against a real etcd and apiserver: ReplicaSets create,
 * adopt and remove pods; namespaces empty themselves when deleted; every
 * namespace gets a default ServiceAccount; only the leader acts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { eventually, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;
const log = pino({ level: 'silent' });

const rs = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

const podsOf = async (ns: string, app: string) =>
  (await request(env.url, 'GET', `/api/v1/namespaces/${ns}/pods?labelSelector=app%3D${app}`)).body.items as any[];

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['*'],
    leaderElect: false,
    log,
    qps: 100,
    burst: 200,
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

describe('replicaset controller', () => {
  test('creates pods from the template, owned by the ReplicaSet, and reports status', async () => {
    const c = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/replicasets', rs('web', 3));
    assert.equal(c.status, 201, c.text);
    const pods = await eventually(async () => {
      const p = await podsOf('default', 'web');
      return p.length === 3 && p;
    });
    for (const p of pods) {
      assert.match(p.metadata.name, /^web-[a-z0-9]{5}$/);
      assert.deepEqual(p.metadata.ownerReferences, [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: c.body.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
    }
    await eventually(async () => (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/replicasets/web')).body.status?.replicas === 3);
    // and nothing more arrives later
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await podsOf('default', 'web')).length, 3);
  });

  test('scaling down deletes pods; ready pods are counted', async () => {
    const pods = await podsOf('default', 'web');
    // mark one pod ready through the status subresource, as a kubelet would
    const ready = pods[0];
    ready.status = {
      ...ready.status,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z/, 'Z') }],
    };
    assert.equal((await request(env.url, 'PUT', `/api/v1/namespaces/default/pods/${ready.metadata.name}/status`, ready)).status, 200);
    const scaled = await request(
      env.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/replicasets/web',
      { spec: { replicas: 1 } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(scaled.status, 200, scaled.text);
    const left = await eventually(async () => {
      const p = await podsOf('default', 'web');
      return p.length === 1 && p;
    });
    assert.equal(left[0].metadata.name, ready.metadata.name, 'the ready pod is kept');
    await eventually(async () => {
      const s = (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/replicasets/web')).body.status;
      return s?.replicas === 1 && s.readyReplicas === 1 && s.observedGeneration === 2;
    });
  });

  test('adopts a matching orphan instead of creating a pod, and releases a pod that stops matching', async () => {
    const orphan = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    };
    assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/pods', orphan)).status, 201);
    const c = await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/replicasets', rs('adopt', 1));
    const adopted = await eventually(async () => {
      const p = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/orphan')).body;
      return p.metadata.ownerReferences?.[0]?.uid === c.body.metadata.uid && p;
    });
    assert.equal(adopted.metadata.ownerReferences.length, 1);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await podsOf('default', 'adopt')).length, 1, 'no extra pod');
    // relabel: released, and a replacement is created
    const relabelled = await request(
      env.url,
      'PATCH',
      '/api/v1/namespaces/default/pods/orphan',
      { metadata: { labels: { app: 'gone' } } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(relabelled.status, 200);
    await eventually(async () => !(await request(env.url, 'GET', '/api/v1/namespaces/default/pods/orphan')).body.metadata.ownerReferences?.length);
    await eventually(async () => (await podsOf('default', 'adopt')).length === 1);
  });
});

describe('namespace and serviceaccount controllers', () => {
  test('a new namespace gets a default ServiceAccount; a deleted one empties itself and goes away', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'temp' } });
    await eventually(async () => (await request(env.url, 'GET', '/api/v1/namespaces/temp/serviceaccounts/default')).status === 200);
    await request(env.url, 'POST', '/api/v1/namespaces/temp/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/temp/replicasets', rs('inner', 2));
    await eventually(async () => (await podsOf('temp', 'inner')).length === 2);
    const del = await request(env.url, 'DELETE', '/api/v1/namespaces/temp');
    assert.equal(del.body.status.phase, 'Terminating');
    await eventually(async () => (await request(env.url, 'GET', '/api/v1/namespaces/temp')).status === 404, 20_000);
    assert.equal((await request(env.url, 'GET', '/api/v1/namespaces/temp/configmaps')).body.items.length, 0);
  });
});

describe('leader election', () => {
  test('of two managers only the leader acts; the other takes over when it stops', async () => {
    const opts = {
      config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
      controllers: ['serviceaccount'],
      leaderElect: true,
      log,
      leaseDurationMs: 2000,
      renewDeadlineMs: 1500,
      retryPeriodMs: 300,
    };
    const a = new ControllerManager({ ...opts, identity: 'a' });
    const b = new ControllerManager({ ...opts, identity: 'b' });
    await a.start();
    await eventually(async () => a.leading);
    await b.start();
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(a.leading, true);
    assert.equal(b.leading, false);
    const lease = await request(env.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager');
    assert.equal(lease.body.spec.holderIdentity, 'a');
    await a.stop();
    await eventually(async () => b.leading, 10_000);
    const after = await request(env.url, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager');
    assert.equal(after.body.spec.holderIdentity, 'b');
    assert.equal(after.body.spec.leaseTransitions, 1);
    await b.stop();
  });
});

describe('endpoints and job controllers', () => {
  const setPod = async (p: any, status: any) => {
    p.status = { ...p.status, ...status };
    return request(env.url, 'PUT', `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}/status`, p);
  };
  const now = () => new Date().toISOString().replace(/\.\d+Z/, 'Z');

  test('a Service gets Endpoints of its ready pods, with named target ports resolved', async () => {
    await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc' },
      spec: { selector: { app: 'ep' }, ports: [{ name: 'http', port: 80, targetPort: 'web' }] },
    });
    // ep-1's subdomain is the Service: its address carries its hostname; ep-2's is another one.
    for (const [n, subdomain] of [
      ['ep-1', 'svc'],
      ['ep-2', 'elsewhere'],
    ]) {
      await request(env.url, 'POST', '/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: n, labels: { app: 'ep' } },
        spec: { hostname: `host-${n}`, subdomain, containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'web', containerPort: 8080 }] }] },
      });
    }
    const p1 = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/ep-1')).body;
    const p2 = (await request(env.url, 'GET', '/api/v1/namespaces/default/pods/ep-2')).body;
    await setPod(p1, { phase: 'Running', podIP: '127.20.0.1', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now() }] });
    await setPod(p2, { phase: 'Running', podIP: '127.20.0.2', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: now() }] });
    const ep = await eventually(async () => {
      const e = (await request(env.url, 'GET', '/api/v1/namespaces/default/endpoints/svc')).body;
      return e.subsets?.[0]?.addresses?.length === 1 && e.subsets[0].notReadyAddresses?.length === 1 && e;
    });
    assert.equal(ep.subsets[0].addresses[0].ip, '127.20.0.1');
    assert.equal(ep.subsets[0].addresses[0].hostname, 'host-ep-1');
    assert.equal(ep.subsets[0].notReadyAddresses[0].hostname, undefined);
    assert.deepEqual(ep.subsets[0].ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  });

  test('EndpointSlices: the pods with ready, serving and terminating conditions; a placeholder for a Service without pods; gone with their Service', async () => {
    const slicesOf = async (svc: string) =>
      (await request(env.url, 'GET', `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D${svc}`)).body
        .items as any[];
    const [slice] = await eventually(async () => {
      const l = await slicesOf('svc');
      return l.length === 1 && l[0].endpoints?.length === 2 && l;
    });
    assert.match(slice.metadata.name, /^svc-[a-z0-9]{5}$/);
    assert.equal(slice.metadata.labels['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
    assert.deepEqual(
      slice.metadata.ownerReferences.map((r: any) => [r.kind, r.name, r.controller]),
      [['Service', 'svc', true]],
    );
    assert.equal(slice.addressType, 'IPv4');
    assert.deepEqual(slice.ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
    assert.deepEqual(
      slice.endpoints.map((e: any) => [e.addresses[0], e.conditions, e.targetRef.name, e.hostname]),
      [
        ['127.20.0.1', { ready: true, serving: true, terminating: false }, 'ep-1', 'host-ep-1'],
        ['127.20.0.2', { ready: false, serving: false, terminating: false }, 'ep-2', undefined],
      ],
    );
    // Another client's change is put back.
    await request(
      env.url,
      'PATCH',
      `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${slice.metadata.name}`,
      { endpoints: [] },
      { contentType: 'application/merge-patch+json' },
    );
    await eventually(async () => (await slicesOf('svc'))[0]?.endpoints?.length === 2);
    await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'lonely' },
      spec: { selector: { app: 'nobody' }, ports: [{ port: 80 }] },
    });
    const placeholder = await eventually(async () => {
      const l = await slicesOf('lonely');
      return l.length === 1 && l[0];
    });
    assert.deepEqual([placeholder.endpoints ?? [], placeholder.ports ?? []], [[], []]);
    await request(env.url, 'DELETE', '/api/v1/namespaces/default/services/lonely');
    await eventually(async () => (await slicesOf('lonely')).length === 0);
    assert.equal((await slicesOf('svc')).length, 1, 'one slice, never two');
  });

  test('a Job runs its pods one at a time to its completions and records events', async () => {
    await request(env.url, 'POST', '/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'work' },
      spec: { completions: 2, parallelism: 1, backoffLimit: 3, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    const jobPods = async () => (await request(env.url, 'GET', '/api/v1/namespaces/default/pods?labelSelector=job-name%3Dwork')).body.items as any[];
    const first = await eventually(async () => {
      const p = await jobPods();
      return p.length === 1 && p[0];
    });
    await setPod(first, { phase: 'Succeeded' });
    const second = await eventually(async () => {
      const p = (await jobPods()).filter((x) => x.metadata.name !== first.metadata.name);
      return p.length === 1 && p[0];
    });
    await setPod(second, { phase: 'Succeeded' });
    const job = await eventually(async () => {
      const j = (await request(env.url, 'GET', '/apis/batch/v1/namespaces/default/jobs/work')).body;
      return j.status?.conditions?.some((c: any) => c.type === 'Complete' && c.status === 'True') && j;
    });
    assert.equal(job.status.succeeded, 2);
    assert.ok(job.status.completionTime);
    const events = (await request(env.url, 'GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dwork')).body.items as any[];
    assert.ok(
      events.some((e) => e.reason === 'SuccessfulCreate'),
      'SuccessfulCreate events',
    );
    assert.ok(events.some((e) => e.reason === 'Completed'));
  });

  test('a Job adopts its orphaned pod again and releases a pod whose labels stop matching', async () => {
    const created = await request(env.url, 'POST', '/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'adopter' },
      spec: { parallelism: 1, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    assert.equal(created.status, 201, created.text);
    const uid = created.body.metadata.uid as string;
    const path = '/api/v1/namespaces/default/pods';
    const pod = await eventually(async () => ((await request(env.url, 'GET', `${path}?labelSelector=job-name%3Dadopter`)).body.items as any[])[0]);
    const ownerOf = async () => (await request(env.url, 'GET', `${path}/${pod.metadata.name}`)).body.metadata.ownerReferences?.find((r: any) => r.controller);
    const merge = { contentType: 'application/merge-patch+json' };
    assert.equal((await request(env.url, 'PATCH', `${path}/${pod.metadata.name}`, { metadata: { ownerReferences: null } }, merge)).status, 200);
    const adopted = await eventually(async () => (await ownerOf())?.uid === uid && (await ownerOf()));
    assert.deepEqual(adopted, { apiVersion: 'batch/v1', kind: 'Job', name: 'adopter', uid, controller: true, blockOwnerDeletion: true });
    assert.equal((await request(env.url, 'PATCH', `${path}/${pod.metadata.name}`, { metadata: { labels: null } }, merge)).status, 200);
    await eventually(async () => (await ownerOf()) === undefined);
  });
});

describe('cronjob controller', () => {
  test('a due schedule creates a Job from the template and records it in status', async () => {
    const c = await request(env.url, 'POST', '/apis/batch/v1/namespaces/default/cronjobs', {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tick' },
      spec: {
        schedule: '*/1 * * * *',
        concurrencyPolicy: 'Forbid',
        jobTemplate: {
          metadata: { labels: { from: 'tick' } },
          spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } },
        },
      },
    });
    assert.equal(c.status, 201, c.text);
    // Pretend the last run was two minutes ago: a run is due now.
    const cur = (await request(env.url, 'GET', '/apis/batch/v1/namespaces/default/cronjobs/tick')).body;
    const past = new Date(Date.now() - 120_000).toISOString().replace(/\.\d+Z/, 'Z');
    const st = await request(env.url, 'PUT', '/apis/batch/v1/namespaces/default/cronjobs/tick/status', { ...cur, status: { lastScheduleTime: past } });
    assert.equal(st.status, 200, st.text);
    const jobs = await eventually(async () => {
      const j = (await request(env.url, 'GET', '/apis/batch/v1/namespaces/default/jobs?labelSelector=from%3Dtick')).body.items as any[];
      return j.length >= 1 && j;
    });
    assert.match(jobs[0].metadata.name, /^tick-\d+$/);
    assert.equal(jobs[0].metadata.ownerReferences[0].kind, 'CronJob');
    const cj = await eventually(async () => {
      const x = (await request(env.url, 'GET', '/apis/batch/v1/namespaces/default/cronjobs/tick')).body;
      return x.status?.active?.length === 1 && x.status.lastScheduleTime !== past && x;
    });
    assert.equal(cj.status.active[0].name, jobs[0].metadata.name);
  });
});

describe('daemonset controller', () => {
  test('one pod per eligible node, pinned by node affinity; a new node gets one too', async () => {
    for (const [name, labels, taints] of [
      ['dn-1', { disk: 'ssd' }, []],
      ['dn-2', { disk: 'ssd' }, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]],
      ['dn-3', { disk: 'hdd' }, []],
    ] as const) {
      await request(env.url, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { taints } });
    }
    await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/daemonsets', {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    const targets = async () =>
      ((await podsOf('default', 'agent')) as any[])
        .map((p) => p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0])
        .sort();
    await eventually(async () => JSON.stringify(await targets()) === '["dn-1"]');
    await request(env.url, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'dn-4', labels: { disk: 'ssd' } } });
    await eventually(async () => JSON.stringify(await targets()) === '["dn-1","dn-4"]');
    const ds = await eventually(async () => {
      const d = (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/daemonsets/agent')).body;
      return d.status?.desiredNumberScheduled === 2 && d.status.currentNumberScheduled === 2 && d;
    });
    assert.equal(ds.status.numberMisscheduled, 0);
  });
});

describe('statefulset controller', () => {
  const now = () => new Date().toISOString().replace(/\.\d+Z/, 'Z');
  const pod = async (n: string) => {
    const r = await request(env.url, 'GET', `/api/v1/namespaces/default/pods/${n}`);
    return r.status === 200 ? r.body : undefined;
  };
  const ready = async (n: string) => {
    const p = await eventually(() => pod(n));
    p.status = { ...p.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now() }] };
    assert.equal((await request(env.url, 'PUT', `/api/v1/namespaces/default/pods/${n}/status`, p)).status, 200);
  };

  test('pods one at a time in order with stable names; a template change rolls from the highest ordinal; scale-down from the top', async () => {
    const sts = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'ord' },
      spec: {
        serviceName: 'ord',
        replicas: 2,
        selector: { matchLabels: { app: 'ord' } },
        template: { metadata: { labels: { app: 'ord' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    };
    assert.equal((await request(env.url, 'POST', '/apis/apps/v1/namespaces/default/statefulsets', sts)).status, 201);
    const first = await eventually(() => pod('ord-0'));
    assert.deepEqual(
      [
        first.spec.hostname,
        first.spec.subdomain,
        first.metadata.labels['statefulset.kubernetes.io/pod-name'],
        first.metadata.labels['apps.kubernetes.io/pod-index'],
      ],
      ['ord-0', 'ord', 'ord-0', '0'],
    );
    assert.deepEqual(
      first.metadata.ownerReferences.map((r: any) => [r.kind, r.name, r.controller]),
      [['StatefulSet', 'ord', true]],
    );
    const rev1 = first.metadata.labels['controller-revision-hash'];
    assert.match(rev1, /^ord-[a-z0-9]+$/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await pod('ord-1'), undefined, 'ord-1 waits for ord-0 to be Running and Ready');
    await ready('ord-0');
    await ready('ord-1');
    const st = await eventually(async () => {
      const s = (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/statefulsets/ord')).body;
      return s.status?.readyReplicas === 2 && s.status;
    });
    assert.deepEqual([st.replicas, st.currentRevision, st.updateRevision, st.updatedReplicas], [2, rev1, rev1, 2]);
    const cr = (await request(env.url, 'GET', `/apis/apps/v1/namespaces/default/controllerrevisions/${rev1}`)).body;
    assert.equal(cr.revision, 1);
    // A new template: ord-1 goes first and comes back at the new revision, then ord-0.
    await request(
      env.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/statefulsets/ord',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } } } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    const second = await eventually(async () => {
      const p = await pod('ord-1');
      return p && p.metadata.labels['controller-revision-hash'] !== rev1 && p;
    });
    const rev2 = second.metadata.labels['controller-revision-hash'];
    assert.equal((await pod('ord-0')).metadata.labels['controller-revision-hash'], rev1, 'ord-0 waits for ord-1');
    await ready('ord-1');
    await eventually(async () => (await pod('ord-0'))?.metadata.labels['controller-revision-hash'] === rev2);
    await ready('ord-0');
    const done = await eventually(async () => {
      const s = (await request(env.url, 'GET', '/apis/apps/v1/namespaces/default/statefulsets/ord')).body;
      return s.status?.currentRevision === rev2 && s.status?.readyReplicas === 2 && s.status;
    });
    assert.equal(done.updatedReplicas, 2);
    await request(
      env.url,
      'PATCH',
      '/apis/apps/v1/namespaces/default/statefulsets/ord',
      { spec: { replicas: 1 } },
      { contentType: 'application/merge-patch+json' },
    );
    await eventually(async () => (await pod('ord-1')) === undefined);
    assert.ok(await pod('ord-0'), 'ord-0 stays');
  });
});
