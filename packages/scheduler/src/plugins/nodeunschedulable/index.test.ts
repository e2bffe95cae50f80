import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, nodeInfo, podInfo } from '../../framework/testing.js';
import { NodeUnschedulable, TAINT_UNSCHEDULABLE } from './index.js';

test('a cordoned node refuses pods unless they tolerate the unschedulable taint', () => {
  const p = new NodeUnschedulable();
  const cordoned = nodeInfo(makeNode('n1', { unschedulable: true }));
  assert.equal(p.filter(null, podInfo('a'), nodeInfo(makeNode('n2'))), null);
  const st = p.filter(null, podInfo('a'), cordoned);
  assert.equal(st?.code, 'UnschedulableAndUnresolvable');
  assert.deepEqual(st?.reasons, ['node(s) were unschedulable']);
  assert.equal(
    p.filter(null, podInfo('a', { spec: { tolerations: [{ key: TAINT_UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' }] } }), cordoned),
    null,
  );
});
