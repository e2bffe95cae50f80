import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { desiredListeners } from './proxier.js';

const svc = (name: string, spec: object): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec });
const slice = (name: string, service: string, body: object): KubeObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
  addressType: 'IPv4',
  ...body,
});

test('a listener per TCP and UDP port of each Service with a cluster IP, backed by the ready endpoints of its slices with the same port name', () => {
  const want = desiredListeners(
    [
      svc('web', {
        clusterIP: '127.1.0.10',
        ports: [
          { name: 'http', port: 80 },
          { name: 'metrics', port: 9090 },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
      }),
      svc('headless', { clusterIP: 'None', ports: [{ port: 80 }] }),
      svc('ext', { type: 'ExternalName', externalName: 'example.com' }),
      svc('empty', { clusterIP: '127.1.0.11', ports: [{ port: 8080 }] }),
      svc('outside', { clusterIP: '10.96.0.10', ports: [{ port: 53 }] }),
    ],
    [
      slice('web-a', 'web', {
        endpoints: [
          { addresses: ['127.2.1.5'], conditions: { ready: true } },
          { addresses: ['127.2.1.6'], conditions: { ready: false } },
        ],
        ports: [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 9100 },
        ],
      }),
      slice('web-b', 'web', {
        endpoints: [{ addresses: ['127.2.2.7'] }],
        ports: [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 9100 },
        ],
      }),
      slice('other', 'nothing-here', { endpoints: [{ addresses: ['127.2.3.1'] }], ports: [{ name: '', port: 1 }] }),
    ],
  );
  assert.deepEqual([...want.keys()].sort(), ['127.1.0.10:53/UDP', '127.1.0.10:80', '127.1.0.10:9090', '127.1.0.11:8080']);
  assert.deepEqual(want.get('127.1.0.10:53/UDP')!.backends, [], 'no slice has a UDP port named dns');
  assert.deepEqual(want.get('127.1.0.10:80')!.backends, [
    { ip: '127.2.1.5', port: 8080 },
    { ip: '127.2.2.7', port: 8080 },
  ]);
  assert.deepEqual(
    want.get('127.1.0.10:9090')!.backends.map((b) => b.port),
    [9100, 9100],
  );
  assert.deepEqual(want.get('127.1.0.11:8080')!.backends, []);
});
