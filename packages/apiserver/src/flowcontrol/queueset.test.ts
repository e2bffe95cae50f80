/**
 * The fair queues of one priority level, driven by a fake clock: seats, queue
 * length limits, fair dispatching between flows, virtual time, wait limits,
 * cancellation, Reject and exempt levels, reconfiguration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './fakeclock.js';
import { QueueSet, type QueueSetObserver, type RejectReason, type RequestDescr, type Ticket } from './queueset.js';

const descr = (flowSchema: string, user: string): RequestDescr => ({
  flowSchema,
  flowDistinguisher: user,
  user,
  verb: 'list',
  path: '/api/v1/configmaps',
  namespace: '',
  name: '',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'configmaps',
  subresource: '',
});

const ticket = (r: Ticket | { rejected: RejectReason }): Ticket => {
  assert.ok(!('rejected' in r), `unexpectedly rejected: ${'rejected' in r ? r.rejected : ''}`);
  return r as Ticket;
};

/** Resolves whether each ticket has been admitted yet (after the promise callbacks have run). */
async function states(ts: Ticket[]): Promise<(boolean | 'waiting')[]> {
  const out: (boolean | 'waiting')[] = ts.map(() => 'waiting');
  ts.forEach((t, i) => {
    void t.admitted.then((ok) => {
      out[i] = ok;
    });
  });
  await new Promise((r) => setImmediate(r));
  return out;
}

// One queue per flow: with handSize 1 the hash modulo the number of queues is the queue.
const A = 0n;
const B = 1n;

test('a free seat executes at once; the next waits and goes when the seat is released', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 4, queueLengthLimit: 10, handSize: 1 }, 1, clock);
  const t1 = ticket(qs.start(descr('fs', 'a'), A, 10_000));
  const t2 = ticket(qs.start(descr('fs', 'a'), A, 10_000));
  assert.deepEqual(await states([t1, t2]), [true, 'waiting']);
  assert.equal(qs.dump().waiting, 1);
  clock.advance(5);
  t1.finish();
  t1.finish(); // idempotent: releases one seat only
  assert.deepEqual(await states([t2]), [true]);
  assert.deepEqual([qs.dump().executing, qs.dump().waiting, qs.dump().dispatched], [1, 0, 2]);
  t2.finish();
  assert.ok(qs.isIdle);
});

test('a full queue refuses (queue-full) only while every seat is taken', () => {
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 2, handSize: 1 }, 1, new FakeClock());
  ticket(qs.start(descr('fs', 'a'), A, 1000));
  ticket(qs.start(descr('fs', 'a'), A, 1000));
  ticket(qs.start(descr('fs', 'a'), A, 1000));
  assert.deepEqual(qs.start(descr('fs', 'a'), A, 1000), { rejected: 'queue-full' });
  // Another flow's queue still has room.
  ticket(qs.start(descr('fs', 'b'), B, 1000));
  assert.deepEqual([qs.dump().rejected, qs.dump().waiting, qs.dump().executing], [1, 3, 1]);
  // With a free seat nothing is refused, however long the queue.
  const roomy = new QueueSet({ name: 'pl', desiredNumQueues: 1, queueLengthLimit: 1, handSize: 1 }, 3, new FakeClock());
  for (let i = 0; i < 3; i++) ticket(roomy.start(descr('fs', 'a'), A, 1000));
});

test('fair queuing: a light flow is served before the backlog of a heavy one', () => {
  const clock = new FakeClock();
  const order: string[] = [];
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 100, handSize: 1 }, 1, clock, { dispatched: (fs) => order.push(fs) });
  const heavy = Array.from({ length: 20 }, () => ticket(qs.start(descr('A', 'a'), A, 60_000)));
  let light: Ticket | undefined;
  // One seat: finish whatever runs (heads of A's queue in order, or B's request), 10 ms each.
  let nextA = 0;
  for (let served = 0; served < order.length && served < 25; served++) {
    if (served === 3) light = ticket(qs.start(descr('B', 'b'), B, 60_000));
    clock.advance(10);
    (order[served] === 'A' ? heavy[nextA++]! : light!).finish();
  }
  assert.equal(order.length, 21);
  const at = order.indexOf('B');
  // B arrived while A's fourth request ran: it goes right after it.
  assert.equal(at, 4, order.join(''));
});

test('two equally busy flows alternate', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 100, handSize: 1 }, 1, clock);
  const running = ticket(qs.start(descr('fs', 'x'), A, 60_000));
  const ts: [string, Ticket][] = [];
  for (let i = 0; i < 5; i++) ts.push(['a', ticket(qs.start(descr('fs', 'a'), A, 60_000))], ['b', ticket(qs.start(descr('fs', 'b'), B, 60_000))]);
  const order: string[] = [];
  await running.admitted;
  clock.advance(10);
  running.finish();
  await Promise.all(
    ts.map(async ([who, t]) => {
      await t.admitted;
      order.push(who);
      clock.advance(10);
      t.finish();
    }),
  );
  for (let i = 0; i + 1 < order.length; i += 2) assert.notEqual(order[i], order[i + 1], order.join(''));
});

test('virtual time runs at min(seats wanted, limit) per active queue', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 4, queueLengthLimit: 10, handSize: 1 }, 2, clock);
  ticket(qs.start(descr('fs', 'a'), A, 60_000));
  ticket(qs.start(descr('fs', 'a'), A, 60_000));
  clock.advance(1000);
  assert.ok(Math.abs(qs.currentR() - 2) < 1e-9, `R=${qs.currentR()}`);
  ticket(qs.start(descr('fs', 'b'), B, 60_000)); // waits: two active queues share the two seats
  clock.advance(1000);
  assert.ok(Math.abs(qs.currentR() - 3) < 1e-9, `R=${qs.currentR()}`);
});

test('a request that waits past its limit is taken out of its queue (time-out)', async () => {
  const clock = new FakeClock();
  const rejected: RejectReason[] = [];
  const waited: [boolean, number][] = [];
  const observer: QueueSetObserver = { rejected: (_fs, r) => rejected.push(r), waited: (_fs, ok, s) => waited.push([ok, s]) };
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 10, handSize: 1 }, 1, clock, observer);
  ticket(qs.start(descr('fs', 'a'), A, 100));
  const late = ticket(qs.start(descr('fs', 'a'), A, 100));
  clock.advance(99);
  assert.deepEqual(await states([late]), ['waiting']);
  clock.advance(1);
  assert.deepEqual(await states([late]), [false]);
  assert.equal(late.reason, 'time-out');
  assert.deepEqual(rejected, ['time-out']);
  assert.deepEqual(waited, [
    [true, 0],
    [false, 0.1],
  ]);
  assert.deepEqual([qs.dump().waiting, qs.dump().cancelled, qs.dump().rejected], [0, 1, 1]);
});

test('a client that goes away leaves the queue (cancelled); the timer is dropped', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 10, handSize: 1 }, 1, clock);
  const first = ticket(qs.start(descr('fs', 'a'), A, 1000));
  const gone = ticket(qs.start(descr('fs', 'a'), A, 1000));
  gone.cancel();
  assert.deepEqual(await states([gone]), [false]);
  assert.equal(gone.reason, 'cancelled');
  assert.equal(clock.pendingTimers, 0);
  first.finish();
  assert.ok(qs.isIdle);
});

test('a Reject level refuses at once when full (concurrency-limit)', () => {
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 0, queueLengthLimit: 0, handSize: 0 }, 2, new FakeClock());
  const a = ticket(qs.start(descr('fs', 'a'), A, 1000));
  ticket(qs.start(descr('fs', 'a'), A, 1000));
  assert.deepEqual(qs.start(descr('fs', 'a'), A, 1000), { rejected: 'concurrency-limit' });
  a.finish();
  ticket(qs.start(descr('fs', 'a'), A, 1000));
});

test('the exempt level never holds a request back', async () => {
  const qs = new QueueSet({ name: 'exempt', desiredNumQueues: -1, queueLengthLimit: 0, handSize: 0 }, 0, new FakeClock());
  const ts = Array.from({ length: 50 }, () => ticket(qs.start(descr('exempt', ''), A, 0)));
  assert.ok((await states(ts)).every((s) => s === true));
  assert.equal(qs.dump().queueless.length, 50);
});

test('a zero limit jails its requests; raising the limit dispatches them', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 10, handSize: 1 }, 0, clock);
  const t = ticket(qs.start(descr('fs', 'a'), A, 1000));
  assert.deepEqual(await states([t]), ['waiting']);
  qs.setConfiguration({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 10, handSize: 1 }, 1);
  assert.deepEqual(await states([t]), [true]);
});

test('shrinking the number of queues keeps the requests of the queues that go', async () => {
  const clock = new FakeClock();
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 4, queueLengthLimit: 10, handSize: 1 }, 1, clock);
  const running = ticket(qs.start(descr('fs', 'a'), 0n, 1000));
  const waiting = ticket(qs.start(descr('fs', 'd'), 3n, 1000));
  qs.setConfiguration({ name: 'pl', desiredNumQueues: 1, queueLengthLimit: 10, handSize: 1 }, 1);
  assert.equal(qs.dump().queues.length, 2, 'the empty queues went; the two busy ones stay');
  running.finish();
  assert.deepEqual(await states([waiting]), [true]);
  waiting.finish();
  assert.equal(qs.dump().queues.length, 1);
});

test('the observer sees queue and execution counts come and go', async () => {
  const counts = { inQueue: 0, executing: 0, dispatched: 0 };
  const observer: QueueSetObserver = {
    inQueue: (_fs, d) => (counts.inQueue += d),
    executing: (_fs, d) => (counts.executing += d),
    dispatched: () => counts.dispatched++,
  };
  const qs = new QueueSet({ name: 'pl', desiredNumQueues: 2, queueLengthLimit: 10, handSize: 1 }, 1, new FakeClock(), observer);
  const a = ticket(qs.start(descr('fs', 'a'), A, 1000));
  const b = ticket(qs.start(descr('fs', 'a'), A, 1000));
  assert.deepEqual(counts, { inQueue: 1, executing: 1, dispatched: 1 });
  a.finish();
  await b.admitted;
  b.finish();
  assert.deepEqual(counts, { inQueue: 0, executing: 0, dispatched: 2 });
});
