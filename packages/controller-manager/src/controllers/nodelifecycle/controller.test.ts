import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tolerates } from '@kubeling/component-helpers';
import { evictionDelay, UNREACHABLE } from './controller.js';

const pod = (tolerations: unknown[]) => ({ metadata: { name: 'p' }, spec: { tolerations } }) as never;
const taint = { key: UNREACHABLE, effect: 'NoExecute', timeAdded: '2026-01-01T00:00:00Z' };
const t0 = Date.parse('2026-01-01T00:00:00Z');

test('tolerations match taints as upstream', () => {
  assert.equal(tolerates({ operator: 'Exists' }, taint), true);
  assert.equal(tolerates({ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute' }, taint), true);
  assert.equal(tolerates({ key: UNREACHABLE, operator: 'Exists', effect: 'NoSchedule' }, taint), false);
  assert.equal(tolerates({ key: 'other', operator: 'Exists' }, taint), false);
});

test('eviction delay: at once, after tolerationSeconds from timeAdded, or never', () => {
  assert.equal(evictionDelay(pod([]), [taint], t0), 0);
  assert.equal(evictionDelay(pod([{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]), [taint], t0 + 100_000), 200_000);
  assert.equal(evictionDelay(pod([{ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]), [taint], t0 + 400_000), 0);
  assert.equal(evictionDelay(pod([{ operator: 'Exists' }]), [taint], t0), undefined);
});
