/** The audit log: a JSON line per request with who/verb/what/code/latency, and no Secret data or tokens. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { request as httpsRequest } from 'node:https';
import pino from 'pino';
import { startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
const lines: string[] = [];
let admin: { certPem: string; keyPem: string };

before(async () => {
  const sink = new Writable({
    write: (chunk, _e, cb) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  env = await startTestEnv({ secure: true, server: { audit: pino({ level: 'info' }, sink) } });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
});
after(async () => {
  await env?.stop();
});

function call(method: string, path: string, body?: unknown, token?: string): Promise<number> {
  const u = new URL(env.url + path);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method,
        ca: env.pki!.caPem,
        ...(token
          ? { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }
          : { cert: admin.certPem, key: admin.keyPem, headers: { 'content-type': 'application/json' } }),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

test('each request is one audit line; secret values and bearer tokens never appear', async () => {
  assert.equal(
    await call('POST', '/api/v1/namespaces/default/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db' },
      stringData: { password: 'hunter2-very-secret' },
    }),
    201,
  );
  assert.equal(await call('GET', '/api/v1/namespaces/default/secrets/db'), 200);
  assert.equal(await call('GET', '/api/v1/namespaces/default/pods', undefined, 'not-a-real-token-abc123'), 401);
  await new Promise((r) => setTimeout(r, 100));
  const recs = lines.map((l) => JSON.parse(l));
  const create = recs.find((r) => r.verb === 'create' && r.resource === 'secrets');
  assert.deepEqual([create.user, create.namespace, create.code, create.msg], ['kubernetes-admin', 'default', 201, 'audit']);
  assert.ok(typeof create.latencyMs === 'number');
  assert.ok(recs.some((r) => r.verb === 'get' && r.name === 'db' && r.code === 200));
  assert.ok(recs.some((r) => r.code === 401 && r.user === 'system:anonymous'));
  const all = lines.join('\n');
  assert.ok(!all.includes('hunter2'), 'no secret data');
  assert.ok(!all.includes(Buffer.from('hunter2-very-secret').toString('base64')), 'no base64 secret data');
  assert.ok(!all.includes('not-a-real-token-abc123'), 'no tokens');
});
