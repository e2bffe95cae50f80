import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, makePod, nodeInfo, podInfo } from '../../framework/testing.js';
import { PodInfo } from '../../framework/types.js';
import { ERR_REASON, NodePorts } from './index.js';

const withPort = (name: string, port: number, hostIP?: string, protocol?: string) =>
  makePod(name, {
    spec: {
      containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80, hostPort: port, ...(hostIP ? { hostIP } : {}), ...(protocol ? { protocol } : {}) }] }],
    },
  });

test('host ports conflict by protocol and address, 0.0.0.0 with everything', () => {
  const p = new NodePorts();
  const node = nodeInfo(makeNode('n1'), [withPort('a', 8080, '127.0.0.1')]);
  assert.deepEqual(p.filter(null, podInfo('x'), node), null, 'no host ports');
  assert.deepEqual(p.filter(null, new PodInfo(withPort('b', 8080, '127.0.0.1')), node)?.reasons, [ERR_REASON]);
  assert.equal(p.filter(null, new PodInfo(withPort('b', 8080, '127.0.0.2')), node), null, 'another address');
  assert.equal(p.filter(null, new PodInfo(withPort('b', 8080, '127.0.0.1', 'UDP')), node), null, 'another protocol');
  assert.equal(p.filter(null, new PodInfo(withPort('b', 8080)), node)?.code, 'Unschedulable', '0.0.0.0 takes every address');
});
