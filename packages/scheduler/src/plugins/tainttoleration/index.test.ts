import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, nodeInfo, podInfo } from '../../framework/testing.js';
import { TaintToleration } from './index.js';

test('untolerated NoSchedule taints filter with the taint in the reason; PreferNoSchedule lowers the score', () => {
  const p = new TaintToleration();
  const tainted = nodeInfo(makeNode('n1', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }));
  const st = p.filter(null, podInfo('a'), tainted);
  assert.equal(st?.code, 'UnschedulableAndUnresolvable');
  assert.deepEqual(st?.reasons, ['node(s) had untolerated taint {dedicated: gpu}']);
  assert.equal(
    p.filter(null, podInfo('a', { spec: { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] } }), tainted),
    null,
  );
  const soft = nodeInfo(
    makeNode('n2', {
      taints: [
        { key: 'a', effect: 'PreferNoSchedule' },
        { key: 'b', effect: 'PreferNoSchedule' },
      ],
    }),
  );
  const clean = nodeInfo(makeNode('n3'));
  assert.equal(p.filter(null, podInfo('a'), soft), null);
  const pod = podInfo('a', { spec: { tolerations: [{ key: 'a', operator: 'Exists', effect: 'PreferNoSchedule' }] } });
  const scores = [p.score(null, pod, soft), p.score(null, pod, clean)];
  assert.deepEqual(scores, [1, 0]);
  p.normalize(null, pod, scores);
  assert.deepEqual(scores, [0, 100]);
});
