/**
 * Two small controllers against a real etcd and apiserver: EndpointSlice
 * mirroring (Endpoints of a Service without a selector become EndpointSlices,
 * kept in step and removed when mirroring stops) and ephemeral volumes (a
 * generic ephemeral volume's claim made from its template, owned by the pod).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { eventually, request, startTestEnv, type TestEnv } from '@kubeling/testenv';
import { ControllerManager } from './manager.js';

let env: TestEnv;
let mgr: ControllerManager;

before(async () => {
  env = await startTestEnv();
  mgr = new ControllerManager({
    config: { server: env.url, namespace: 'default', insecureSkipTLSVerify: false },
    controllers: ['endpointslicemirroring', 'ephemeral-volume'],
    leaderElect: false,
    log: pino({ level: 'silent' }),
  });
  await mgr.start();
});
after(async () => {
  await mgr?.stop();
  await env?.stop();
});

const get = async (path: string) => (await request(env.url, 'GET', path)).body;
const mirrored = async (svc: string) =>
  (
    await get(
      `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${svc},endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io`)}`,
    )
  ).items as any[];

test('Endpoints of a Service without a selector are mirrored into EndpointSlices', async () => {
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext' }, spec: { ports: [{ name: 'http', port: 80 }] } };
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/services', svc)).status, 201);
  const ep = {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'ext', labels: { team: 'a' } },
    subsets: [{ addresses: [{ ip: '127.9.0.1' }, { ip: '127.9.0.2' }], notReadyAddresses: [{ ip: '127.9.0.3' }], ports: [{ name: 'http', port: 8080 }] }],
  };
  const c = await request(env.url, 'POST', '/api/v1/namespaces/default/endpoints', ep);
  assert.equal(c.status, 201, c.text);
  const slices = await eventually(async () => {
    const s = await mirrored('ext');
    return s.length === 1 && s;
  });
  const s = slices[0];
  assert.equal(s.addressType, 'IPv4');
  assert.equal(s.metadata.labels.team, 'a');
  assert.deepEqual(s.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  assert.deepEqual(
    s.endpoints.map((e: any) => [e.addresses[0], e.conditions.ready]),
    [
      ['127.9.0.1', true],
      ['127.9.0.2', true],
      ['127.9.0.3', false],
    ],
  );
  assert.equal(s.metadata.ownerReferences[0].kind, 'Endpoints');
  assert.equal(s.metadata.ownerReferences[0].uid, c.body.metadata.uid);
  // Changes follow; the skip label stops mirroring.
  const cur = await get('/api/v1/namespaces/default/endpoints/ext');
  cur.subsets[0].addresses = [{ ip: '127.9.0.9' }];
  cur.subsets[0].notReadyAddresses = [];
  assert.equal((await request(env.url, 'PUT', '/api/v1/namespaces/default/endpoints/ext', cur)).status, 200);
  await eventually(async () => {
    const x = await mirrored('ext');
    return x.length === 1 && x[0].endpoints.length === 1 && x[0].endpoints[0].addresses[0] === '127.9.0.9';
  });
  const skip = await get('/api/v1/namespaces/default/endpoints/ext');
  skip.metadata.labels['endpointslice.kubernetes.io/skip-mirror'] = 'true';
  assert.equal((await request(env.url, 'PUT', '/api/v1/namespaces/default/endpoints/ext', skip)).status, 200);
  await eventually(async () => (await mirrored('ext')).length === 0);
});

test('Endpoints of a Service with a selector are not mirrored', async () => {
  const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'sel' }, spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } };
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/services', svc)).status, 201);
  const ep = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'sel' }, subsets: [{ addresses: [{ ip: '127.9.1.1' }], ports: [{ port: 80 }] }] };
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/endpoints', ep)).status, 201);
  // Give the controller a moment to (not) act, then check against a mirrored witness.
  const witness = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'witness' }, spec: { ports: [{ port: 80 }] } };
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/services', witness)).status, 201);
  const wep = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'witness' }, subsets: [{ addresses: [{ ip: '127.9.2.1' }], ports: [{ port: 80 }] }] };
  assert.equal((await request(env.url, 'POST', '/api/v1/namespaces/default/endpoints', wep)).status, 201);
  await eventually(async () => (await mirrored('witness')).length === 1);
  assert.equal((await mirrored('sel')).length, 0);
});

test('a generic ephemeral volume gets its claim, owned by the pod', async () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'eph' },
    spec: {
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
      volumes: [
        {
          name: 'scratch',
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { labels: { kind: 'scratch' } },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          },
        },
      ],
    },
  };
  const c = await request(env.url, 'POST', '/api/v1/namespaces/default/pods', pod);
  assert.equal(c.status, 201, c.text);
  const claim = await eventually(async () => {
    const r = await request(env.url, 'GET', '/api/v1/namespaces/default/persistentvolumeclaims/eph-scratch');
    return r.status === 200 && r.body;
  });
  assert.equal(claim.metadata.labels.kind, 'scratch');
  assert.equal(claim.metadata.ownerReferences[0].uid, c.body.metadata.uid);
  assert.equal(claim.metadata.ownerReferences[0].controller, true);
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteOnce']);
});
