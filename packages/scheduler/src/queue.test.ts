import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makePod } from './framework/testing.js';
import { SchedulingQueue } from './queue.js';

test('activeQ pops by priority, then by age', async () => {
  let t = 0;
  const q = new SchedulingQueue({ now: () => ++t });
  q.add(makePod('low', { priority: 0 }));
  q.add(makePod('high', { priority: 100 }));
  q.add(makePod('low2', { priority: 0 }));
  const order = [];
  for (let i = 0; i < 3; i++) order.push((await q.pop())!.info.pod.metadata.name);
  assert.deepEqual(order, ['high', 'low', 'low2']);
});

test('a failed pod is parked until an event that could help it, then backs off exponentially', async () => {
  let now = 1000;
  const q = new SchedulingQueue({ now: () => now, initialBackoffMs: 1000, maxBackoffMs: 4000 });
  q.add(makePod('p'));
  let item = (await q.pop())!;
  const cycle = q.schedulingCycle;
  q.addUnschedulable(item, cycle, ['NodeResourcesFit']);
  assert.deepEqual(q.pending, { active: 0, backoff: 0, unschedulable: 1 });
  q.moveAllToActiveOrBackoff('AssignedPodAdd'); // does not help a resources failure
  assert.equal(q.pending.unschedulable, 1);
  q.moveAllToActiveOrBackoff('AssignedPodDelete');
  assert.deepEqual(q.pending, { active: 0, backoff: 1, unschedulable: 0 }, 'still inside its 1 s backoff');
  now += 1000;
  q.flushBackoff();
  assert.equal(q.pending.active, 1);
  item = (await q.pop())!;
  assert.equal(item.attempts, 1);
  q.addUnschedulable(item, q.schedulingCycle, ['NodeResourcesFit']);
  const second = q.backoffExpiry({ ...item, attempts: 2, lastFailure: now });
  assert.equal(second - now, 2000, 'doubles');
  assert.equal(q.backoffExpiry({ ...item, attempts: 9, lastFailure: now }) - now, 4000, 'capped');
});

test('an event during the attempt sends the pod to backoff instead of parking it', async () => {
  const q = new SchedulingQueue();
  q.add(makePod('p'));
  const item = (await q.pop())!;
  const cycle = q.schedulingCycle;
  q.moveAllToActiveOrBackoff('NodeAdd');
  q.addUnschedulable(item, cycle, ['NodeResourcesFit']);
  assert.deepEqual(q.pending, { active: 0, backoff: 1, unschedulable: 0 });
});

test('pop waits for an add; deleted pods leave every queue; close releases waiters', async () => {
  const q = new SchedulingQueue();
  const waiting = q.pop();
  q.add(makePod('late'));
  assert.equal((await waiting)!.info.key, 'default/late');
  q.add(makePod('gone'));
  q.delete(makePod('gone'));
  assert.equal(q.pending.active, 0);
  const w2 = q.pop();
  q.close();
  assert.equal(await w2, undefined);
});

test('storage events move only the pods the volume plugins rejected', async () => {
  let now = 1000;
  const q = new SchedulingQueue({ now: () => now, initialBackoffMs: 1 });
  for (const [name, plugin] of [
    ['binding', 'VolumeBinding'],
    ['limits', 'NodeVolumeLimits'],
    ['cpu', 'NodeResourcesFit'],
  ] as const) {
    q.add(makePod(name));
    q.addUnschedulable((await q.pop())!, q.schedulingCycle, [plugin]);
  }
  now += 10;
  q.moveAllToActiveOrBackoff('PvUpdate');
  assert.deepEqual(q.pending, { active: 1, backoff: 0, unschedulable: 2 }, 'a PV change helps VolumeBinding only');
  assert.equal((await q.pop())!.info.key, 'default/binding');
  q.moveAllToActiveOrBackoff('CSINodeUpdate');
  assert.equal((await q.pop())!.info.key, 'default/limits');
  q.moveAllToActiveOrBackoff('CSIStorageCapacityAdd');
  assert.equal(q.pending.unschedulable, 1, 'NodeResourcesFit stays parked');
});
