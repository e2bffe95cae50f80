/** MergeTolerations: a toleration another one covers is dropped. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeTolerations } from './runtimeclass.js';

test('tolerations merge as upstream: supersets win, equal ones once', () => {
  const exists = { key: 'a', operator: 'Exists' };
  const equal = { key: 'a', operator: 'Equal', value: 'x', effect: 'NoSchedule' };
  const other = { key: 'b', operator: 'Equal', value: 'y' };
  assert.deepEqual(mergeTolerations([equal], [exists]), [exists]);
  assert.deepEqual(mergeTolerations([exists, other], [equal, other]), [exists, other]);
  assert.deepEqual(mergeTolerations([], [{ operator: 'Exists' }, other]), [{ operator: 'Exists' }]);
  const ne = { key: 'n', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
  // The longer NoExecute toleration covers the shorter one.
  assert.deepEqual(mergeTolerations([ne], [{ ...ne, tolerationSeconds: 20 }]), [{ ...ne, tolerationSeconds: 20 }]);
  assert.deepEqual(mergeTolerations([ne], [{ ...ne, tolerationSeconds: 5 }]), [ne]);
});
