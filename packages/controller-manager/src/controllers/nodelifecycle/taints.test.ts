import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DISK_PRESSURE,
  MEMORY_PRESSURE,
  NETWORK_UNAVAILABLE,
  NOT_READY,
  noExecuteKey,
  noScheduleTaints,
  PID_PRESSURE,
  UNREACHABLE,
  UNSCHEDULABLE,
  withAllTaints,
  withNoScheduleTaints,
} from './taints.js';

const NOW = '2026-01-01T00:00:00Z';
const node = (conditions: Record<string, string>, spec: Record<string, unknown> = {}) =>
  ({
    metadata: { name: 'n1' },
    spec,
    status: { conditions: Object.entries(conditions).map(([type, status]) => ({ type, status })) },
  }) as never;
const keys = (taints: { key: string; effect: string }[]) => taints.map((t) => `${t.key}:${t.effect}`);

test('conditions map to NoSchedule taint keys as upstream nodeConditionToTaintKeyStatusMap', () => {
  assert.deepEqual(keys(noScheduleTaints(node({ Ready: 'True' }))), []);
  assert.deepEqual(keys(noScheduleTaints(node({ Ready: 'False' }))), [`${NOT_READY}:NoSchedule`]);
  assert.deepEqual(keys(noScheduleTaints(node({ Ready: 'Unknown' }))), [`${UNREACHABLE}:NoSchedule`]);
  assert.deepEqual(
    keys(noScheduleTaints(node({ Ready: 'True', MemoryPressure: 'True', DiskPressure: 'True', PIDPressure: 'True', NetworkUnavailable: 'True' }))),
    [MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE, NETWORK_UNAVAILABLE].map((k) => `${k}:NoSchedule`),
  );
  // Pressure Unknown or False, and NetworkUnavailable False, taint nothing.
  assert.deepEqual(keys(noScheduleTaints(node({ MemoryPressure: 'Unknown', DiskPressure: 'False', NetworkUnavailable: 'False' }))), []);
  assert.deepEqual(keys(noScheduleTaints(node({ Ready: 'True' }, { unschedulable: true }))), [`${UNSCHEDULABLE}:NoSchedule`]);
  // A node with no conditions yet is tainted by none (upstream's pass maps only the conditions there are).
  assert.deepEqual(keys(noScheduleTaints({ metadata: { name: 'n' } } as never)), []);
});

test('Ready picks the NoExecute key', () => {
  assert.equal(noExecuteKey(node({ Ready: 'False' })), NOT_READY);
  assert.equal(noExecuteKey(node({ Ready: 'Unknown' })), UNREACHABLE);
  assert.equal(noExecuteKey(node({ Ready: 'True' })), undefined);
  assert.equal(noExecuteKey(node({})), undefined);
});

test('the NoSchedule pass swaps only its own NoSchedule taints, keeping the rest and what is still wanted', () => {
  const admitted = { key: NOT_READY, effect: 'NoSchedule' }; // TaintNodesByCondition's, without timeAdded
  const user = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  const noExec = { key: NOT_READY, effect: 'NoExecute', timeAdded: '2025-12-31T00:00:00Z' };
  const custom = { key: NOT_READY, effect: 'PreferNoSchedule' };
  // Ready: the not-ready NoSchedule taint goes; the NoExecute one is the monitor pass's business.
  assert.deepEqual(withNoScheduleTaints(node({ Ready: 'True' }, { taints: [user, admitted, noExec, custom] }), NOW), [user, noExec, custom]);
  // Still not ready: the taint stays as it was (no timeAdded churn), nothing to write.
  assert.deepEqual(withNoScheduleTaints(node({ Ready: 'False' }, { taints: [user, admitted] }), NOW), [user, admitted]);
  // Unknown: not-ready swapped for unreachable, stamped now.
  assert.deepEqual(withNoScheduleTaints(node({ Ready: 'Unknown' }, { taints: [admitted] }), NOW), [{ key: UNREACHABLE, effect: 'NoSchedule', timeAdded: NOW }]);
  // Cordoned under memory pressure.
  assert.deepEqual(keys(withNoScheduleTaints(node({ Ready: 'True', MemoryPressure: 'True' }, { unschedulable: true, taints: [user] }), NOW)), [
    'dedicated:NoSchedule',
    `${MEMORY_PRESSURE}:NoSchedule`,
    `${UNSCHEDULABLE}:NoSchedule`,
  ]);
  // A value on a wanted taint is kept (MatchTaint ignores values).
  const valued = { key: UNSCHEDULABLE, value: 'x', effect: 'NoSchedule' };
  assert.deepEqual(withNoScheduleTaints(node({ Ready: 'True' }, { unschedulable: true, taints: [valued] }), NOW), [valued]);
});

test('the monitor pass computes the same NoSchedule taints and adds the NoExecute one', () => {
  for (const [conds, spec] of [
    [{ Ready: 'False' }, {}],
    [{ Ready: 'Unknown', DiskPressure: 'True' }, { unschedulable: true }],
    [{ Ready: 'True' }, { taints: [{ key: UNREACHABLE, effect: 'NoSchedule' }] }],
  ] as const) {
    const n = node(conds, spec);
    const all = withAllTaints(n, NOW);
    assert.deepEqual(
      all.filter((t) => t.effect === 'NoSchedule'),
      withNoScheduleTaints(n, NOW).filter((t) => t.effect === 'NoSchedule'),
    );
  }
  assert.deepEqual(keys(withAllTaints(node({ Ready: 'Unknown' }, { taints: [{ key: NOT_READY, effect: 'NoExecute' }] }), NOW)), [
    `${UNREACHABLE}:NoSchedule`,
    `${UNREACHABLE}:NoExecute`,
  ]);
  assert.deepEqual(withAllTaints(node({ Ready: 'True' }, { taints: [{ key: UNREACHABLE, effect: 'NoExecute' }] }), NOW), []);
  // Applying either pass to what the other wrote changes nothing: they do not undo each other.
  const n = node({ Ready: 'False', PIDPressure: 'True' });
  const written = withAllTaints(n, NOW);
  const again = node({ Ready: 'False', PIDPressure: 'True' }, { taints: written });
  assert.deepEqual(withNoScheduleTaints(again, '2030-01-01T00:00:00Z'), written);
  assert.deepEqual(withAllTaints(again, '2030-01-01T00:00:00Z'), written);
});
