import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue, runWorkers } from './workqueue.js';

test('dedups waiting keys and keeps order', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.length, 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
});

test('a key is never processed by two workers at once; re-adds run once after done', async () => {
  const q = new WorkQueue<string>();
  let running = 0;
  let maxRunning = 0;
  let runs = 0;
  q.add('k');
  const workers = runWorkers(q, 4, async () => {
    running++;
    runs++;
    maxRunning = Math.max(maxRunning, running);
    if (runs === 1) {
      q.add('k');
      q.add('k');
    }
    await new Promise((r) => setTimeout(r, 20));
    running--;
  });
  await new Promise((r) => setTimeout(r, 150));
  q.shutdown();
  await workers;
  assert.equal(maxRunning, 1);
  assert.equal(runs, 2);
});

test('failures back off exponentially and forget resets', async () => {
  const q = new WorkQueue<string>(10, 1000);
  const times: number[] = [];
  const start = Date.now();
  q.add('x');
  const workers = runWorkers(q, 1, async () => {
    times.push(Date.now() - start);
    if (times.length < 4) throw new Error('fail');
  });
  await new Promise((r) => setTimeout(r, 300));
  q.shutdown();
  await workers;
  assert.equal(times.length, 4);
  // delays 10, 20, 40 ms between attempts
  assert.ok(times[3]! - times[0]! >= 60, String(times));
  assert.equal(q.numRequeues('x'), 0);
});

test('addAfter delays', async () => {
  const q = new WorkQueue<string>();
  const t0 = Date.now();
  q.addAfter('later', 50);
  const k = await q.get();
  assert.equal(k, 'later');
  assert.ok(Date.now() - t0 >= 45);
  q.shutdown();
  assert.equal(await q.get(), undefined);
});
