/**
 * The built-in agnhost image's `webhook` and `crd-conversion-webhook`
 * subcommands, run as the runtime runs them (node and the script, POD_IP in
 * the environment), checked against what agnhost 2.21 answers: AdmissionReviews
 * and ConversionReviews posted over HTTPS to a loopback port.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const AGNHOST = fileURLToPath(new URL('../images/agnhost.mjs', import.meta.url));
const OPENSSL = '/usr/bin/openssl';
const skip = existsSync(OPENSSL) ? false : 'openssl is not installed';
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'agnhost-webhook-'));
const cert = join(dir, 'tls.crt');
const key = join(dir, 'tls.key');

after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Reply {
  /** 0: the connection was dropped unanswered; -1: no answer within the timeout. */
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function call(port: number, path: string, o: { method?: string; body?: string; headers?: Record<string, string>; timeout?: number } = {}): Promise<Reply> {
  return new Promise((resolve) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, method: o.method ?? 'POST', headers: o.headers ?? {}, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    if (o.timeout) req.setTimeout(o.timeout, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: e.code === 'TIMEOUT' ? -1 : 0, body: '', headers: {} }));
    req.end(o.body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** Starts a subcommand with the test certificate on a free port; resolves once /readyz answers "ok". */
async function start(subcommand: string, extra: string[] = []): Promise<number> {
  if (!existsSync(cert)) {
    const subj = ['-subj', '/CN=127.0.0.1', '-keyout', key, '-out', cert];
    execFileSync(OPENSSL, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', ...subj], { stdio: 'ignore' });
  }
  const port = await freePort();
  const args = [AGNHOST, subcommand, `--tls-cert-file=${cert}`, `--tls-private-key-file=${key}`, `--port=${port}`, ...extra];
  const c = spawn(process.execPath, args, { env: { ...process.env, POD_IP: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(c);
  let stderr = '';
  c.stderr!.on('data', (d) => (stderr += d));
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const r = await call(port, '/readyz', { method: 'GET' });
    if (r.status === 200) {
      assert.equal(r.body, 'ok');
      return port;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${subcommand} did not become ready (exit ${c.exitCode}): ${stderr}`);
}

const review = (request: Record<string, unknown>, version = 'v1') =>
  JSON.stringify({ apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request: { uid: 'uid-1', ...request } });
const patchOf = (response: { patch?: string; patchType?: string }) => {
  assert.equal(response.patchType, 'JSONPatch');
  return JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString());
};
const PODS = { group: '', version: 'v1', resource: 'pods' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const pod = (name: string, labels: Record<string, string> = {}, containers = ['c']) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: containers.map((n) => ({ name: n, image: 'x' })) },
});
const cm = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data });

test('webhook: every path upstream serves, in admission.k8s.io v1 and v1beta1', { skip }, async () => {
  const port = await start('webhook', ['--alsologtostderr', '-v=4']);
  /** Posts a review to `path`: the response, checked to be in the version asked with the request's uid. */
  const admit = async (path: string, request: Record<string, unknown>, version = 'v1') => {
    const r = await call(port, path, { body: review(request, version), headers: JSON_TYPE });
    assert.equal(r.status, 200, `${path}: ${r.body}`);
    assert.equal(r.headers['content-type'], 'application/json');
    const out = JSON.parse(r.body);
    assert.equal(out.kind, 'AdmissionReview');
    assert.equal(out.apiVersion, `admission.k8s.io/${version}`);
    assert.equal(out.response.uid, 'uid-1');
    return out.response;
  };
  // The five-second allow runs alongside the rest.
  const started = Date.now();
  const slow = admit('/always-allow-delay-5s', { operation: 'CREATE' });

  for (const v of ['v1', 'v1beta1']) {
    assert.deepEqual(await admit('/always-deny', { operation: 'CREATE' }, v), {
      uid: 'uid-1',
      allowed: false,
      status: { metadata: {}, message: 'this webhook denies all requests' },
    });
  }

  // add-label: the first label, another label, a corrected value, or nothing to do.
  const label = (labels?: Record<string, string>) => admit('/add-label', { object: { metadata: labels ? { labels } : {} } });
  assert.deepEqual(patchOf(await label()), [{ op: 'add', path: '/metadata/labels', value: { 'added-label': 'yes' } }]);
  assert.deepEqual(patchOf(await label({ a: 'b' })), [{ op: 'add', path: '/metadata/labels/added-label', value: 'yes' }]);
  assert.deepEqual(patchOf(await label({ 'added-label': 'no' })), [{ op: 'replace', path: '/metadata/labels/added-label', value: 'yes' }]);
  assert.deepEqual(await label({ 'added-label': 'yes' }), { uid: 'uid-1', allowed: true });
  const first = await admit('/add-label', { object: { metadata: {} } }, 'v1beta1');
  assert.equal(
    Buffer.from(first.patch, 'base64').toString(),
    '[\n         { "op": "add", "path": "/metadata/labels", "value": {"added-label": "yes"}}\n     ]',
  );
  assert.deepEqual(await admit('/add-label', { operation: 'DELETE' }), {
    uid: 'uid-1',
    allowed: false,
    status: { metadata: {}, message: 'unexpected end of JSON input' },
  });

  // pods: the unwanted label and container names, the resource checked.
  assert.deepEqual(await admit('/pods', { resource: PODS, object: pod('p') }), { uid: 'uid-1', allowed: true });
  const both = await admit('/pods', { resource: PODS, object: pod('p', { 'webhook-e2e-test': 'webhook-disallow' }, ['webhook-disallow']) });
  assert.deepEqual(both, {
    uid: 'uid-1',
    allowed: false,
    status: { metadata: {}, message: 'the pod contains unwanted label; the pod contains unwanted container name;' },
  });
  assert.equal((await admit('/pods', { resource: CONFIGMAPS, object: pod('p') })).status.message, 'expect resource to be { v1 pods}');
  const forever = await call(port, '/pods', {
    body: review({ resource: PODS, object: pod('p', { 'webhook-e2e-test': 'wait-forever' }) }),
    headers: JSON_TYPE,
    timeout: 500,
  });
  assert.equal(forever.status, -1, 'a wait-forever pod is never answered');

  // pods/attach: only `attach -i -c container1` to to-be-attached-pod is denied.
  const attach = (name: string, options: Record<string, unknown>, subResource = 'attach') =>
    admit('/pods/attach', { name, resource: PODS, subResource, operation: 'CONNECT', object: { kind: 'PodAttachOptions', apiVersion: 'v1', ...options } });
  assert.deepEqual(await attach('to-be-attached-pod', { stdin: true, container: 'container1' }), {
    uid: 'uid-1',
    allowed: false,
    status: { metadata: {}, message: "attaching to pod 'to-be-attached-pod' is not allowed" },
  });
  assert.equal((await attach('to-be-attached-pod', { stdin: false, container: 'container1' })).allowed, true);
  assert.equal((await attach('other', { stdin: true, container: 'container1' })).allowed, true);
  assert.equal((await attach('to-be-attached-pod', {}, 'exec')).status.message, 'expect subresource to be attach, got exec');

  // mutating-pods: the init container for webhook-to-be-mutated only.
  const initContainer = [
    { op: 'add', path: '/spec/initContainers', value: [{ image: 'webhook-added-image', name: 'webhook-added-init-container', resources: {} }] },
  ];
  assert.deepEqual(patchOf(await admit('/mutating-pods', { resource: PODS, object: pod('webhook-to-be-mutated') })), initContainer);
  assert.deepEqual(await admit('/mutating-pods', { resource: PODS, object: pod('other') }), { uid: 'uid-1', allowed: true });

  // configmaps: unwanted data on create/update, nondeletable on delete (from the old object); reasons, not messages.
  const cmCheck = (operation: string, data: Record<string, string>) =>
    admit('/configmaps', { resource: CONFIGMAPS, operation, [operation === 'DELETE' ? 'oldObject' : 'object']: cm(data) });
  assert.deepEqual(await cmCheck('CREATE', { 'webhook-e2e-test': 'webhook-disallow' }), {
    uid: 'uid-1',
    allowed: false,
    status: { metadata: {}, reason: 'the configmap contains unwanted key and value' },
  });
  assert.equal((await cmCheck('DELETE', { 'webhook-e2e-test': 'webhook-disallow' })).allowed, true);
  assert.equal(
    (await cmCheck('DELETE', { 'webhook-e2e-test': 'webhook-nondeletable' })).status.reason,
    'the configmap cannot be deleted because it contains unwanted key and value',
  );
  assert.equal((await cmCheck('UPDATE', { 'webhook-e2e-test': 'webhook-nondeletable' })).allowed, true);
  // Another resource makes upstream's handler return nil and panic: the connection is dropped.
  const wrong = await call(port, '/configmaps', { body: review({ resource: PODS, object: cm({}) }), headers: JSON_TYPE });
  assert.equal(wrong.status, 0);

  // mutating-configmaps and mutating-custom-resource: stage 1, then stage 2, and no patchType without a patch.
  for (const [path, resource] of [
    ['/mutating-configmaps', CONFIGMAPS],
    ['/mutating-custom-resource', { group: 'stable.example.com', version: 'v1', resource: 'e2e-test-crds' }],
  ] as const) {
    const obj = (data: Record<string, string>) => ({ ...cm(data), apiVersion: resource.group ? 'stable.example.com/v1' : 'v1' });
    assert.deepEqual(patchOf(await admit(path, { resource, object: obj({ 'mutation-start': 'yes' }) })), [
      { op: 'add', path: '/data/mutation-stage-1', value: 'yes' },
    ]);
    assert.deepEqual(patchOf(await admit(path, { resource, object: obj({ 'mutation-start': 'yes', 'mutation-stage-1': 'yes' }) })), [
      { op: 'add', path: '/data/mutation-stage-2', value: 'yes' },
    ]);
    assert.deepEqual(await admit(path, { resource, object: obj({}) }, 'v1beta1'), { uid: 'uid-1', allowed: true });
  }

  // custom-resource: as configmaps, with its own reasons.
  const cr = (data: Record<string, unknown>) => ({ apiVersion: 'stable.example.com/v1', kind: 'E2eTestCrd', metadata: { name: 'cr' }, data });
  assert.equal(
    (await admit('/custom-resource', { operation: 'CREATE', object: cr({ 'webhook-e2e-test': 'webhook-disallow' }) })).status.reason,
    'the custom resource contains unwanted data',
  );
  assert.equal(
    (await admit('/custom-resource', { operation: 'DELETE', oldObject: cr({ 'webhook-e2e-test': 'webhook-nondeletable' }) })).status.reason,
    'the custom resource cannot be deleted because it contains unwanted key and value',
  );
  assert.equal((await admit('/custom-resource', { operation: 'CREATE', object: cr({ a: 'b' }) })).allowed, true);
  assert.equal(
    (await admit('/custom-resource', { operation: 'CREATE', object: cr({ a: 1 }) })).status.message,
    'json: cannot unmarshal number into Go struct field .Data of type string',
  );

  // crd: the unwanted label, for CRDs of apiextensions v1 and v1beta1 only.
  const crdResource = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
  const crd = (labels: Record<string, string>) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'x', labels },
  });
  assert.deepEqual(await admit('/crd', { resource: crdResource, object: crd({ 'webhook-e2e-test': 'webhook-disallow' }) }), {
    uid: 'uid-1',
    allowed: false,
    status: { metadata: {}, message: 'the crd contains unwanted label' },
  });
  assert.equal((await admit('/crd', { resource: { ...crdResource, version: 'v1beta1' }, object: crd({}) })).allowed, true);
  assert.equal(
    (await admit('/crd', { resource: PODS, object: crd({}) })).status.message,
    'expect resource to be one of [{apiextensions.k8s.io v1beta1 customresourcedefinitions}, {apiextensions.k8s.io v1 customresourcedefinitions}] but got { v1 pods}',
  );

  // What is not an AdmissionReview in JSON.
  const plain = await call(port, '/always-deny', { body: review({}), headers: { 'content-type': 'text/plain' } });
  assert.deepEqual([plain.status, plain.body], [200, ''], 'another content type: logged, and an empty 200');
  const pod400 = await call(port, '/always-deny', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod' }), headers: JSON_TYPE });
  assert.deepEqual([pod400.status, pod400.body], [400, 'Unsupported group version kind: /v1, Kind=Pod\n']);
  const noKind = await call(port, '/always-deny', { body: '{"apiVersion":"admission.k8s.io/v1"}', headers: JSON_TYPE });
  assert.deepEqual([noKind.status, noKind.body], [400, `Request could not be decoded: Object 'Kind' is missing in '{"apiVersion":"admission.k8s.io/v1"}'\n`]);
  const noRequest = await call(port, '/always-deny', { body: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', headers: JSON_TYPE });
  assert.equal(noRequest.status, 0, 'a review without a request panics upstream');
  const sidecar = await call(port, '/mutating-pods-sidecar', { body: review({}), headers: JSON_TYPE });
  assert.deepEqual([sidecar.status, sidecar.body], [404, '404 page not found\n'], 'not served before agnhost 2.4x');

  assert.deepEqual(await slow, { uid: 'uid-1', allowed: true, status: { metadata: {}, message: 'this webhook allows all requests' } });
  assert.ok(Date.now() - started >= 5000, 'always-allow-delay-5s answers after five seconds');
});

test('crd-conversion-webhook: the example converter, in apiextensions v1 and v1beta1', { skip }, async () => {
  const port = await start('crd-conversion-webhook');
  const convert = async (objects: unknown[], desiredAPIVersion: string, version = 'v1') => {
    const body = JSON.stringify({
      apiVersion: `apiextensions.k8s.io/${version}`,
      kind: 'ConversionReview',
      request: { uid: 'c-1', desiredAPIVersion, objects },
    });
    const r = await call(port, '/crdconvert', { body, headers: JSON_TYPE });
    assert.equal(r.status, 200, r.body);
    assert.ok(r.body.endsWith('}\n'));
    const out = JSON.parse(r.body);
    assert.equal(out.apiVersion, `apiextensions.k8s.io/${version}`);
    assert.deepEqual(out.request, { uid: '', desiredAPIVersion: '', objects: null }, 'the request is emptied');
    assert.equal(out.response.uid, 'c-1');
    return out.response;
  };
  const v1 = { apiVersion: 'stable.example.com/v1', kind: 'E2e-test-crd', metadata: { name: 'cr1' }, hostPort: 'localhost:8080' };
  const v2 = { apiVersion: 'stable.example.com/v2', kind: 'E2e-test-crd', metadata: { name: 'cr1' }, host: 'localhost', port: '8080' };
  const success = { metadata: {}, status: 'Success' };
  for (const version of ['v1', 'v1beta1']) {
    assert.deepEqual(await convert([v1], 'stable.example.com/v2', version), { uid: 'c-1', convertedObjects: [v2], result: success });
    assert.deepEqual(await convert([v2], 'stable.example.com/v1', version), { uid: 'c-1', convertedObjects: [v1], result: success });
  }
  // Objects without the fields convert as they are; an empty request has no converted objects at all.
  const bare = { apiVersion: 'stable.example.com/v2', kind: 'E2e-test-crd', metadata: { name: 'b' } };
  assert.deepEqual((await convert([bare], 'stable.example.com/v1')).convertedObjects, [{ ...bare, apiVersion: 'stable.example.com/v1' }]);
  assert.deepEqual((await convert([{ ...bare, host: 'h' }], 'stable.example.com/v1')).convertedObjects[0].hostPort, 'h:');
  assert.equal((await convert([], 'stable.example.com/v1')).convertedObjects, null);
  const converted = (await convert([{ ...v1, z: 1, a: { y: 1, b: 2 } }], 'stable.example.com/v2')).convertedObjects[0];
  assert.deepEqual(Object.keys(converted), ['a', 'apiVersion', 'host', 'kind', 'metadata', 'port', 'z'], 'keys sorted as Go marshals a map');

  const failure = (message: string) => ({ uid: 'c-1', convertedObjects: null, result: { metadata: {}, status: 'Failure', message } });
  assert.deepEqual(await convert([{ ...v1, hostPort: 'localhost' }], 'stable.example.com/v2'), failure('invalid hostPort value `localhost`'));
  assert.deepEqual(
    await convert([v1], 'stable.example.com/v1'),
    failure('conversion from a version to itself should not call the webhook: stable.example.com/v1'),
  );
  assert.deepEqual(await convert([v1], 'stable.example.com/v3'), failure('unexpected conversion version "stable.example.com/v3"'));
  assert.deepEqual(await convert([{ ...v1, apiVersion: 'other/v1' }], 'stable.example.com/v2'), failure('unexpected conversion version "other/v1"'));
  const noKind = { apiVersion: 'stable.example.com/v1' };
  assert.deepEqual(
    await convert([noKind], 'stable.example.com/v2'),
    failure(
      `failed to unmarshall object ({"apiVersion":"stable.example.com/v1"}) with error: Object 'Kind' is missing in '{"apiVersion":"stable.example.com/v1"}'`,
    ),
  );

  const badType = await call(port, '/crdconvert', { body: '{}', headers: { 'content-type': 'text/plain' } });
  assert.deepEqual([badType.status, badType.body], [400, 'invalid Content-Type header `text/plain`\n']);
  const notReview = await call(port, '/crdconvert', { body: '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"}', headers: JSON_TYPE });
  assert.deepEqual([notReview.status, notReview.body], [400, 'Unsupported group version kind: apiextensions.k8s.io/v1, Kind=CustomResourceDefinition\n']);
  const empty = await call(port, '/crdconvert', { body: '', headers: JSON_TYPE });
  assert.deepEqual(
    [empty.status, empty.body],
    [400, "failed to deserialize body () with error couldn't get version/kind; json parse error: unexpected end of JSON input\n"],
  );
  const body = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'c-1', desiredAPIVersion: 'x', objects: [] },
  });
  const badAccept = await call(port, '/crdconvert', { body, headers: { ...JSON_TYPE, accept: 'text/html' } });
  assert.deepEqual([badAccept.status, badAccept.body], [400, 'invalid accept header `text/html`\n']);
  assert.equal((await call(port, '/crdconvert', { body, headers: { ...JSON_TYPE, accept: 'text/html, */*;q=0.1' } })).status, 200);
  // A hostPort that is not a string panics upstream: the connection is dropped.
  const panic = JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: 'c', desiredAPIVersion: 'stable.example.com/v2', objects: [{ ...v1, hostPort: 5 }] },
  });
  assert.equal((await call(port, '/crdconvert', { body: panic, headers: JSON_TYPE })).status, 0);
});

test('a certificate that cannot be read is fatal (klog.Fatal, status 255)', async () => {
  const c = spawn(process.execPath, [AGNHOST, 'webhook', `--tls-cert-file=${join(dir, 'missing.crt')}`, '--port=1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(c);
  let err = '';
  c.stderr!.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => c.on('exit', (n) => r(n)));
  assert.equal(code, 255);
  assert.match(err, new RegExp(`^F\\d{4} [\\d:.]+ +\\d+ config\\.go\\] open ${join(dir, 'missing.crt')}: no such file or directory\\n$`));
});
