/** The /debug/api_priority_and_fairness dumps: Go's tabwriter alignment, time and seat-second formats, rows. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlowControl } from './controller.js';
import { dumpPriorityLevels, dumpQueues, dumpRequests, goTime, seatSeconds, tabwrite } from './debug.js';
import { FakeClock } from './fakeclock.js';
import type { RequestDigest } from './rule.js';

test('cells end at tabs and are padded to the widest of their column (at least 8), the last cell as is', () => {
  assert.equal(tabwrite('a,\tbb,\tc\nlonger-cell,\tx,\ty\n'), `a,${' '.repeat(11)}bb,     c\nlonger-cell, x,      y\n`);
});

test("times as Go's RFC3339Nano in UTC; virtual times as seat-seconds", () => {
  assert.equal(goTime(undefined), '0001-01-01T00:00:00Z');
  assert.equal(goTime(Date.UTC(2025, 0, 2, 3, 4, 5)), '2025-01-02T03:04:05Z');
  assert.equal(goTime(Date.UTC(2025, 0, 2, 3, 4, 5) + 120.5), '2025-01-02T03:04:05.1205Z');
  assert.equal(seatSeconds(0), '0.00000000ss');
  assert.equal(seatSeconds(1.5), '1.50000000ss');
  assert.equal(seatSeconds(0.003), '0.00300000ss');
});

test('the dumps list levels, queues and requests', () => {
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const fc = new FlowControl({ serverConcurrencyLimit: 1, clock });
  const d: RequestDigest = {
    user: { name: 'alice', groups: ['system:authenticated'] },
    isResourceRequest: true,
    verb: 'list',
    path: '/api/v1/namespaces/ns/pods',
    apiGroup: '',
    namespace: 'ns',
    resource: 'pods',
    subresource: '',
  };
  const descr = { user: 'alice', verb: 'list', path: d.path, namespace: 'ns', name: '', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '' };
  // Only the imagined mandatory objects: alice is in catch-all, a Reject level with one seat.
  const a = fc.admit(d, descr, 1000);
  assert.ok('ticket' in a);
  assert.deepEqual('rejected' in fc.admit(d, descr, 1000) ? 'rejected' : 'admitted', 'rejected');
  const levels = dumpPriorityLevels(fc).split('\n');
  assert.match(
    levels[0]!,
    /^PriorityLevelName, ActiveQueues, IsIdle, +IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests$/,
  );
  assert.match(levels[1]!, /^catch-all, +0, +false, +false, +0, +1, +1, +1, +0, +0$/);
  assert.match(levels[2]!, /^exempt, +0, +true, +false, +0, +0, +0, +0, +0, +0$/);
  assert.equal(dumpQueues(fc).split('\n').length, 2, 'header only: neither level has queues');
  const reqs = dumpRequests(fc, true).split('\n');
  assert.match(reqs[0]!, /FlowDistingsher, +ArriveTime, +InitialSeats, +FinalSeats, +AdditionalLatency, +StartTime, +UserName, +Verb/);
  assert.match(
    reqs[1]!,
    /^catch-all, +catch-all, +-1, +-1, +alice, +2025-01-01T00:00:00Z, +1, +0, +0s, +2025-01-01T00:00:00Z, +alice, +list, +\/api\/v1\/namespaces\/ns\/pods, +ns, +, +v1, +pods, *$/,
  );
});
