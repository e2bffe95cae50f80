/**
 * node.k8s.io/v1 RuntimeClass against a real etcd and apiserver: create,
 * upstream's validation errors, the immutable handler, merge patch, Table;
 * and the RuntimeClass admission plugin: a pod naming a class gets its
 * overhead, node selector and tolerations; an unknown class, a conflicting
 * node selector or a stated overhead that differs is Forbidden.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

const RC = '/apis/node.k8s.io/v1/runtimeclasses';
const rc = (name: string, extra: object) => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, ...extra });
const causes = (r: { body: { details?: { causes?: { field: string; message: string }[] } } }) =>
  (r.body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
const pod = (name: string, spec: object) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});
const createPod = (body: object) => request(env.url, 'POST', '/api/v1/namespaces/default/pods', body);

test('RuntimeClass: create, validation, immutable handler, patch, Table', async () => {
  const c = await request(
    env.url,
    'POST',
    RC,
    rc('gvisor', {
      handler: 'runsc',
      overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
      scheduling: { nodeSelector: { sandbox: 'gvisor' }, tolerations: [{ key: 'sandbox', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }] },
    }),
  );
  assert.equal(c.status, 201, c.text);

  const bad = await request(
    env.url,
    'POST',
    RC,
    rc('bad', {
      handler: 'Run_SC',
      overhead: { podFixed: { cpu: '-1' } },
      scheduling: {
        tolerations: [
          { key: 'a', operator: 'Exists' },
          { key: 'a', operator: 'Exists', tolerationSeconds: 5, effect: 'NoExecute' },
          { key: 'a', operator: 'Exists' },
        ],
      },
    }),
  );
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(causes(bad), [
    "handler: Invalid value: \"Run_SC\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    'scheduling.tolerations[2]: Duplicate value: core.Toleration{Key:"a", Operator:"Exists", Value:"", Effect:"", TolerationSeconds:(*int64)(nil)}',
  ]);
  const missing = await request(env.url, 'POST', RC, rc('nohandler', {}));
  assert.equal(missing.status, 422);
  assert.match(missing.body.message, /^RuntimeClass.node.k8s.io "nohandler" is invalid: handler: Invalid value: "": /);

  const changed = await request(env.url, 'PUT', RC + '/gvisor', { ...c.body, handler: 'kata' });
  assert.equal(changed.status, 422);
  assert.deepEqual(causes(changed), ['handler: Invalid value: "kata": field is immutable']);
  const patched = await request(
    env.url,
    'PATCH',
    RC + '/gvisor',
    { metadata: { labels: { tier: 'sandbox' } } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.metadata.labels.tier, 'sandbox');

  const t = await request(env.url, 'GET', RC, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(
    t.body.columnDefinitions.map((d: { name: string }) => d.name),
    ['Name', 'Handler', 'Age'],
  );
  assert.deepEqual(t.body.rows[0].cells.slice(0, 2), ['gvisor', 'runsc']);
});

test('RuntimeClass admission: overhead, node selector and tolerations come from the class', async () => {
  const p = await createPod(
    pod('sandboxed', {
      runtimeClassName: 'gvisor',
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'sandbox', operator: 'Exists' }],
    }),
  );
  assert.equal(p.status, 201, p.text);
  assert.deepEqual(p.body.spec.overhead, { cpu: '250m', memory: '64Mi' });
  assert.deepEqual(p.body.spec.nodeSelector, { disk: 'ssd', sandbox: 'gvisor' });
  // The pod's `sandbox Exists` toleration covers the class's `sandbox=gvisor:NoSchedule`.
  const sandbox = p.body.spec.tolerations.filter((t: { key?: string }) => t.key === 'sandbox');
  assert.deepEqual(sandbox, [{ key: 'sandbox', operator: 'Exists' }]);

  const same = await createPod(pod('same-overhead', { runtimeClassName: 'gvisor', overhead: { cpu: '0.25', memory: '64Mi' } }));
  assert.equal(same.status, 201, same.text);
});

test('RuntimeClass admission refuses an unknown class, a conflicting selector, a different or orphan overhead', async () => {
  const unknown = await createPod(pod('nope', { runtimeClassName: 'missing' }));
  assert.equal(unknown.status, 403, unknown.text);
  assert.equal(unknown.body.reason, 'Forbidden');
  assert.equal(unknown.body.message, 'pods "nope" is forbidden: pod rejected: RuntimeClass "missing" not found');

  const conflict = await createPod(pod('conflict', { runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'kata' } }));
  assert.equal(conflict.status, 403);
  assert.equal(
    conflict.body.message,
    'pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = gvisor; pod.spec.nodeSelector[sandbox] = kata',
  );
  const differs = await createPod(pod('differs', { runtimeClassName: 'gvisor', overhead: { cpu: '1' } }));
  assert.equal(differs.status, 403);
  assert.equal(differs.body.message, "pods \"differs\" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  const orphan = await createPod(pod('orphan', { overhead: { cpu: '1' } }));
  assert.equal(orphan.status, 403);
  assert.equal(orphan.body.message, 'pods "orphan" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
});
