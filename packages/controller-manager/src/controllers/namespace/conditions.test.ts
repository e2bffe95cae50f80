import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NamespaceConditionUpdater, type NamespaceCondition } from './conditions.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const byType = (cs: NamespaceCondition[]) => Object.fromEntries(cs.map((c) => [c.type, [c.status, c.reason, c.message]]));

test('a clean pass sets the five conditions False with their ok reasons and messages', () => {
  const { conditions, changed } = new NamespaceConditionUpdater(() => T0).update([]);
  assert.equal(changed, true);
  assert.deepEqual(byType(conditions), {
    NamespaceDeletionDiscoveryFailure: ['False', 'ResourcesDiscovered', 'All resources successfully discovered'],
    NamespaceDeletionGroupVersionParsingFailure: ['False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
    NamespaceDeletionContentFailure: ['False', 'ContentDeleted', 'All content successfully deleted, may be waiting on finalization'],
    NamespaceContentRemaining: ['False', 'ContentRemoved', 'All content successfully removed'],
    NamespaceFinalizersRemaining: ['False', 'ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
  });
  assert.ok(conditions.every((c) => c.lastTransitionTime === T0));
  // The same pass again changes nothing.
  assert.equal(new NamespaceConditionUpdater(() => T1).update(conditions).changed, false);
});

test('discovery failures, content errors, what remains and the finalizers holding it, as upstream words them', () => {
  const u = new NamespaceConditionUpdater(() => T1);
  u.discoveryFailed('unable to retrieve the complete list of server APIs: example.com/v1: the server is currently unable to handle the request', 1);
  u.deleteContentFailed('b failed');
  u.deleteContentFailed('a failed');
  u.contentTotals(
    new Map([
      ['pods.', 2],
      ['foos.example.com', 1],
    ]),
    new Map([['example.com/hold', 1]]),
  );
  const old = new NamespaceConditionUpdater(() => T0).update([]).conditions;
  const { conditions, changed } = u.update(old);
  assert.equal(changed, true);
  assert.deepEqual(byType(conditions), {
    NamespaceDeletionDiscoveryFailure: [
      'True',
      'DiscoveryFailed',
      'Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: example.com/v1: the server is currently unable to handle the request',
    ],
    NamespaceDeletionGroupVersionParsingFailure: ['False', 'ParsedGroupVersions', 'All legacy kube types successfully parsed'],
    NamespaceDeletionContentFailure: ['True', 'ContentDeletionFailed', 'Failed to delete all resource types, 2 remaining: a failed, b failed'],
    NamespaceContentRemaining: [
      'True',
      'SomeResourcesRemain',
      'Some resources are remaining: foos.example.com has 1 resource instances, pods. has 2 resource instances',
    ],
    NamespaceFinalizersRemaining: [
      'True',
      'SomeFinalizersRemain',
      'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    ],
  });
  // Only the conditions whose status flipped moved their transition time.
  const moved = conditions.filter((c) => c.lastTransitionTime === T1).map((c) => c.type);
  assert.deepEqual(moved.sort(), [
    'NamespaceContentRemaining',
    'NamespaceDeletionContentFailure',
    'NamespaceDeletionDiscoveryFailure',
    'NamespaceFinalizersRemaining',
  ]);
});

test('a discovery that failed outright keeps its own message', () => {
  const u = new NamespaceConditionUpdater(() => T0);
  u.discoveryFailed('connect ECONNREFUSED');
  assert.deepEqual(byType(u.update([]).conditions).NamespaceDeletionDiscoveryFailure, ['True', 'DiscoveryFailed', 'connect ECONNREFUSED']);
});
