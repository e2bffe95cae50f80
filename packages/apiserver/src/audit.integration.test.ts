/**
 * The audit log in blocking mode, as upstream's: the record of a request is
 * written before its response goes out, so a client that hangs up still
 * leaves one, and a kill -9 right after a response loses none. Records of
 * creates carry the name of the object made.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { clientFor, startTestEnv, waitFor, type Credentials, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
let admin: Credentials;
let dir: string;
let auditFile: string;

const NS = 'audited';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeling-audit-'));
  auditFile = join(dir, 'audit.log');
  env = await startTestEnv({ apiserverProcess: true, secure: true, processArgs: [`--audit-log-path=${auditFile}`] });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const r = await clientFor(env, admin)('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  assert.equal(r.status, 201, r.text);
});

after(async () => {
  await env?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function records(): { verb: string; resource?: string; namespace?: string; name?: string; code: number; stage: string }[] {
  return readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** A create whose client hangs up as soon as the request is written, never reading the answer. */
function createAndHangUp(name: string): Promise<void> {
  const u = new URL(env.url);
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { hangup: 'yes' } } });
  const req = `POST /api/v1/namespaces/${NS}/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return new Promise((resolve, reject) => {
    const sock = tlsConnect(
      { host: u.hostname, port: Number(u.port), ca: env.pki!.caPem, cert: admin.certPem, key: admin.keyPem, servername: 'localhost' },
      () => {
        sock.write(req, () => {
          sock.destroy();
          resolve();
        });
      },
    );
    sock.on('error', reject);
  });
}

test('a create whose client hangs up is audited, with the name of what it made', async () => {
  const names = Array.from({ length: 30 }, (_, i) => `hangup-${i}`);
  await Promise.all(names.map(createAndHangUp));
  const call = clientFor(env, admin);
  // Whatever the server carried out has a record (some requests may never have been read).
  let made: string[] = [];
  await waitFor(
    async () => {
      const list = await call('GET', `/api/v1/namespaces/${NS}/configmaps?labelSelector=hangup%3Dyes`);
      made = list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
      const recorded = new Set(
        records()
          .filter((r) => r.verb === 'create' && r.resource === 'configmaps' && r.code === 201)
          .map((r) => r.name),
      );
      return made.length > 0 && made.every((n) => recorded.has(n));
    },
    10_000,
    'an audit record for every object made',
  );
  assert.ok(made.length > 0);
});

test('no acknowledged write loses its record to a kill -9', async () => {
  const call = clientFor(env, admin);
  const acknowledged: string[] = [];
  for (let i = 0; i < 40; i++) {
    const r = await call('POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'acked-' } });
    assert.equal(r.status, 201, r.text);
    acknowledged.push(r.body.metadata.name);
  }
  env.child!.kill('SIGKILL');
  await new Promise((r) => env.child!.once('exit', r));
  const recorded = new Set(
    records()
      .filter((r) => r.verb === 'create' && r.code === 201 && r.stage === 'ResponseComplete')
      .map((r) => r.name),
  );
  const missing = acknowledged.filter((n) => !recorded.has(n));
  assert.deepEqual(missing, []);
});
