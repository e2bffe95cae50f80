import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LAST_APPLIED, threeWayMergePatch, withAnnotation } from './apply-merge.js';

test('three-way merge: changes, deletions of what the last manifest set, others left alone, defaults ignored', () => {
  const original = {
    spec: {
      replicas: 2,
      template: {
        spec: {
          containers: [
            {
              name: 'c',
              image: 'v1',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
            },
          ],
        },
      },
    },
    metadata: { labels: { app: 'x', old: 'y' } },
  };
  const modified = {
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'v2', env: [{ name: 'A', value: '1' }] }] } } },
    metadata: { labels: { app: 'x' } },
  };
  const current = {
    spec: {
      replicas: 5,
      template: {
        spec: {
          containers: [
            {
              name: 'c',
              image: 'v1',
              imagePullPolicy: 'IfNotPresent',
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
            },
          ],
        },
      },
    },
    metadata: { labels: { app: 'x', old: 'y', added: 'by-someone' } },
  };
  const patch = threeWayMergePatch(original, modified, current);
  assert.deepEqual(patch, {
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'c', image: 'v2', env: [{ name: 'A', value: '1' }] }] } } },
    metadata: { labels: { old: null } },
  });
  // Applying the same manifest onto a defaulted object changes nothing.
  assert.deepEqual(
    threeWayMergePatch(modified, modified, {
      ...modified,
      spec: {
        ...modified.spec,
        template: { spec: { containers: [{ ...modified.spec.template.spec.containers[0], terminationMessagePath: '/dev/termination-log' }] } },
      },
    }),
    {},
  );
});

test('the last-applied annotation holds the manifest without itself', () => {
  const m = withAnnotation({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: '1' } });
  assert.equal(m.metadata.annotations[LAST_APPLIED], '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"x"}}\n');
});

test('a list the last manifest had differently is sent whole, so fields dropped inside its items go', () => {
  const original = { spec: { containers: [{ name: 'c', image: 'a', args: ['--foo'] }] } };
  const modified = { spec: { containers: [{ name: 'c', image: 'a' }] } };
  const live = { spec: { containers: [{ name: 'c', image: 'a', args: ['--foo'], imagePullPolicy: 'Always' }] } };
  assert.deepEqual(threeWayMergePatch(original, modified, live), { spec: { containers: [{ name: 'c', image: 'a' }] } });
  // The same manifest again changes nothing, defaults or not.
  assert.deepEqual(threeWayMergePatch(modified, modified, { spec: { containers: [{ name: 'c', image: 'a', imagePullPolicy: 'Always' }] } }), {});
});

test('the last-applied copy (keys sorted) and the manifest (keys as written) are the same list', () => {
  const original = { spec: { ports: [{ name: 'http', port: 80 }] } };
  const modified = { spec: { ports: [{ port: 80, name: 'http' }] } };
  assert.deepEqual(threeWayMergePatch(original, modified, { spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } }), {});
});
