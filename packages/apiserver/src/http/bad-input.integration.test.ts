/**
 * The bad-input corpus: several hundred malformed requests against a secure
 * apiserver process — bodies in JSON, YAML and protobuf, names, sizes,
 * selectors, resourceVersions, continue tokens, patches, content types,
 * methods, headers, query parameters. Each must answer a 4xx v1 Status with
 * kube-apiserver's reason, promptly; afterwards the same process serves, and
 * no etcd key of the target namespace has changed. The requests themselves are
 * in bad-input.corpus.ts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { Etcd3 } from 'etcd3';
import { clientFor, startTestEnv, type Credentials, type TestEnv } from '@kubeling/testenv';
import {
  CMS,
  DEPLOYS,
  JSON_T,
  NS,
  bodyCases,
  continueCases,
  deploy,
  fieldCases,
  patchCases,
  rawCases,
  requestCases,
  resourceVersionCases,
  selectorCases,
  sizeCases,
  type Case,
} from './bad-input.corpus.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

let env: TestEnv;
let admin: Credentials;
// Kept-alive connections: a server that refuses a body early still reads the rest, so the client sees the answer.
let agent: Agent;
let anonymousAgent: Agent;

/** One request over HTTPS; a streaming 200 is cut off after its head, every request after 10 s. */
function send(c: Omit<Case, 'code' | 'reason' | 'what'>): Promise<Answer> {
  const u = new URL(env.url);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: c.path,
        method: c.method,
        ca: env.pki!.caPem,
        ...(c.anonymous ? {} : { cert: admin.certPem, key: admin.keyPem }),
        agent: c.anonymous ? anonymousAgent : agent,
        headers: {
          accept: 'application/json',
          ...(c.body !== undefined ? { 'content-type': c.contentType ?? JSON_T, 'content-length': String(Buffer.byteLength(c.body)) } : {}),
          ...(c.headers ?? {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        if (res.statusCode === 200 && res.headers['transfer-encoding'] === 'chunked') {
          req.destroy();
          resolve({ status: 200, headers: res.headers, text: '(stream)' });
          return;
        }
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer in 10 s: ${c.method} ${c.path.slice(0, 200)}`)));
    req.on('error', reject);
    if (c.body !== undefined) req.write(c.body);
    req.end();
  });
}

/** Bytes written as they are (malformed HTTP); the answer read until the server closes or 10 s pass. */
function raw(bytes: string | Buffer): Promise<Answer> {
  const u = new URL(env.url);
  return new Promise((resolve, reject) => {
    const sock = tlsConnect(
      { host: u.hostname, port: Number(u.port), ca: env.pki!.caPem, cert: admin.certPem, key: admin.keyPem, servername: 'localhost' },
      () => sock.end(bytes),
    );
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => sock.destroy(), 10_000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    // A server that answers before reading everything may reset the connection: the answer counts.
    sock.on('error', (e) => (chunks.length ? undefined : reject(e)));
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const sep = text.indexOf('\r\n\r\n');
      const head = text.slice(0, sep);
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = text.slice(sep + 4);
      if (headers['transfer-encoding'] === 'chunked') body = body.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '');
      resolve({ status: Number(m[1]), headers, text: body });
    });
  });
}

function checkStatus(what: string, a: Answer, code: number, reason: string, message?: string | RegExp): void {
  const where = `${what}: ${a.status} ${a.text.slice(0, 400)}`;
  assert.equal(a.status, code, where);
  let s: any;
  try {
    s = JSON.parse(a.text);
  } catch {
    assert.fail(`${where}: not a JSON Status`);
  }
  assert.equal(s.kind, 'Status', where);
  assert.equal(s.apiVersion, 'v1', where);
  assert.equal(s.status, 'Failure', where);
  assert.equal(s.code, code, where);
  assert.equal(s.reason ?? '', reason, where);
  if (typeof message === 'string') assert.equal(s.message, message, where);
  else if (message) assert.match(s.message, message, where);
}

let etcd: Etcd3;
let pidBefore: number;

async function namespaceKeys(): Promise<Map<string, string>> {
  const res = await etcd.getAll().prefix('/registry/').exec();
  const out = new Map<string, string>();
  for (const kv of res.kvs) {
    const key = kv.key.toString();
    if (key.includes(`/${NS}/`) || key.endsWith(`/${NS}`)) out.set(key, String(kv.mod_revision));
  }
  return out;
}

before(async () => {
  env = await startTestEnv({ apiserverProcess: true, secure: true });
  admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  agent = new Agent({ keepAlive: true, maxSockets: 4 });
  anonymousAgent = new Agent({ keepAlive: true, maxSockets: 4 });
  pidBefore = env.child!.pid!;
  etcd = new Etcd3({ hosts: env.etcd.endpoint });
  const call = clientFor(env, admin);
  const ok = async (path: string, body: unknown) => {
    const r = await call('POST', path, body);
    assert.equal(r.status, 201, r.text);
  };
  await ok('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await ok(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  await ok(CMS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', finalizers: ['example.com/keep'] }, data: { a: 'b' } });
  await ok(DEPLOYS, JSON.parse(deploy({ replicas: 1 }).replace('"name":"d"', '"name":"web"')));
});

after(async () => {
  agent?.destroy();
  anonymousAgent?.destroy();
  etcd?.close();
  await env?.stop();
});

test('the bad-input corpus: every answer a 4xx v1 Status with the upstream reason, nothing stored', { timeout: 600_000 }, async () => {
  const before = await namespaceKeys();
  assert.ok(before.size >= 3, `namespace keys: ${[...before.keys()].join(', ')}`);
  const cases = [
    ...bodyCases(),
    ...fieldCases(),
    ...sizeCases(),
    ...selectorCases(),
    ...resourceVersionCases(),
    ...continueCases(),
    ...patchCases(),
    ...requestCases(),
  ];
  const failures: string[] = [];
  let fiveHundreds = 0;
  for (const c of cases) {
    try {
      const a = await send(c);
      if (a.status >= 500) fiveHundreds++;
      // Something made by mistake goes again, so that it spoils no later case (the failure stays).
      if (c.method === 'POST' && a.status === 201) {
        const made = JSON.parse(a.text) as { metadata: { name: string } };
        await send({ method: 'DELETE', path: `${c.path.split('?')[0]}/${made.metadata.name}` });
      }
      checkStatus(c.what, a, c.code, c.reason, c.message);
    } catch (e) {
      failures.push(`${c.what}: ${(e as Error).message.split('\n')[0]!}`);
    }
  }
  for (const c of rawCases) {
    try {
      const a = await raw(c.bytes());
      if (a.status >= 500) fiveHundreds++;
      checkStatus(c.what, a, c.code, c.reason);
    } catch (e) {
      failures.push(`${c.what}: ${(e as Error).message.split('\n')[0]!}`);
    }
  }
  const total = cases.length + rawCases.length;
  assert.ok(total >= 300, `the corpus has ${total} requests`);
  if (failures.length) assert.fail(`${failures.length} of ${total} requests answered otherwise (${fiveHundreds} × 5xx):\n${failures.join('\n')}`);
  assert.equal(fiveHundreds, 0);
  // The same process answers, and nothing in the namespace changed.
  assert.equal(env.child!.exitCode, null);
  assert.equal(env.child!.pid, pidBefore);
  const health = await send({ method: 'GET', path: '/readyz' });
  assert.equal(health.status, 200);
  assert.deepEqual(await namespaceKeys(), before);
});
