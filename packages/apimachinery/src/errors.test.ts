import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { codeForReason, conflict, invalid, notFound, OPTIMISTIC_LOCK_MESSAGE } from './errors.js';

test('docs/errors.md documents every reason with its code, and nothing else', () => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `(\w+)` \| (\d+) \|/gm)].map((m) => [m[1]!, Number(m[2])] as const);
  const documented = Object.fromEntries(rows);
  assert.deepEqual(documented, codeForReason);
});

test('message formats match upstream', () => {
  assert.equal(notFound({ group: 'apps', resource: 'deployments' }, 'web').message, 'deployments.apps "web" not found');
  assert.equal(notFound({ group: '', resource: 'pods' }, 'x').status.details?.kind, 'pods');
  assert.equal(
    conflict({ group: '', resource: 'configmaps' }, 'c', OPTIMISTIC_LOCK_MESSAGE).message,
    'Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again',
  );
  const inv = invalid({ group: 'apps', kind: 'Deployment' }, 'web', [], 'spec.replicas: Invalid value: -1: must be greater than or equal to 0');
  assert.equal(inv.status.code, 422);
  assert.equal(inv.message, 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
});
