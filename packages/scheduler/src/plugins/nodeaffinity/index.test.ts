import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, nodeInfo, podInfo } from '../../framework/testing.js';
import { ERR_REASON, NodeAffinity } from './index.js';

test('nodeSelector and required affinity filter; preferred terms score, normalized to 100', () => {
  const p = new NodeAffinity();
  const ssd = nodeInfo(makeNode('n1', { labels: { disk: 'ssd', zone: 'a' } }));
  const hdd = nodeInfo(makeNode('n2', { labels: { disk: 'hdd', zone: 'a' } }));
  const bySelector = podInfo('a', { spec: { nodeSelector: { disk: 'ssd' } } });
  assert.equal(p.filter(null, bySelector, ssd), null);
  assert.deepEqual(p.filter(null, bySelector, hdd)?.reasons, [ERR_REASON]);
  const preferring = podInfo('b', {
    spec: {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 40, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
            { weight: 10, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
          ],
        },
      },
    },
  });
  const scores = [p.score(null, preferring, ssd), p.score(null, preferring, hdd)];
  assert.deepEqual(scores, [50, 10]);
  p.normalize(null, preferring, scores);
  assert.deepEqual(scores, [100, 20]);
});
