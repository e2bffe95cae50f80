/**
 * AlwaysAdmit changes nothing. (AlwaysDeny refuses every write, the
 * apiserver's own bootstrap objects included, so a server with it never
 * becomes ready, as upstream's post-start hooks never finish: its unit test
 * in simpleplugins.test.ts covers it.)
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const envs: TestEnv[] = [];
after(async () => {
  for (const e of envs) await e.stop();
});

test('AlwaysAdmit: writes pass unchanged', async () => {
  const env = await startTestEnv({ server: { admission: { enable: ['AlwaysAdmit'] } } });
  envs.push(env);
  const r = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'admitted' },
    data: { a: '1' },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.data, { a: '1' });
});
