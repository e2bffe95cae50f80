/** The apiserver as its own process (as `npm run up` runs it): starts, serves, stops on SIGTERM. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv } from '@kubeling/testenv';

test('main.ts starts a listening apiserver that stops on SIGTERM', async () => {
  const env = await startTestEnv({ apiserverProcess: true });
  try {
    const ns = await request(env.url, 'GET', '/api/v1/namespaces/kube-system');
    assert.equal(ns.status, 200);
    assert.equal(ns.body.metadata.name, 'kube-system');
  } finally {
    await env.stop();
  }
  assert.ok(env.child!.exitCode === 0 || env.child!.signalCode !== null, `exit ${env.child!.exitCode}`);
});
