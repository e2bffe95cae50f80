import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, nodeInfo, podInfo } from '../../framework/testing.js';
import { ERR_REASON, NodeName } from './index.js';

test('NodeName passes any node when unset and only the named node otherwise', () => {
  const p = new NodeName();
  assert.equal(p.filter(null, podInfo('a'), nodeInfo(makeNode('n1'))), null);
  assert.equal(p.filter(null, podInfo('a', { spec: { nodeName: 'n1' } }), nodeInfo(makeNode('n1'))), null);
  assert.deepEqual(p.filter(null, podInfo('a', { spec: { nodeName: 'n2' } }), nodeInfo(makeNode('n1')))?.reasons, [ERR_REASON]);
});
