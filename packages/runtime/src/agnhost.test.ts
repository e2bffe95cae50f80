/**
 * The built-in agnhost image's subcommands, run as the runtime runs them
 * (node and the script, POD_IP and HOSTNAME in the environment), checked
 * against what the conformance suite reads of them.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, get as httpsGet } from 'node:https';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const AGNHOST = fileURLToPath(new URL('../images/agnhost.mjs', import.meta.url));

/** A port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls `ok` every 100 ms until it holds, or fails after `ms`. */
async function waitFor(ok: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}
const env = { ...process.env, POD_IP: '127.0.0.1', HOSTNAME: 'agnhost-pod' };
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'agnhost-'));

after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function start(args: string[], extraEnv: Record<string, string> = {}): ChildProcess & { out: () => string } {
  const c = spawn(process.execPath, [AGNHOST, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(c);
  let out = '';
  c.stdout!.on('data', (d) => (out += d));
  c.stderr!.on('data', (d) => (out += d));
  return Object.assign(c, { out: () => out });
}

/** Runs a subcommand to its end: its output and exit code. */
function run(args: string[]): Promise<{ out: string; code: number | null }> {
  return new Promise((resolve) => {
    const c = start(args);
    c.on('exit', (code) => setImmediate(() => resolve({ out: c.out(), code })));
  });
}

async function get(port: number, path: string, host = '127.0.0.1'): Promise<{ status: number; body: string }> {
  const r = await fetch(`http://${host}:${port}${path}`).catch(() => undefined);
  return r ? { status: r.status, body: await r.text() } : { status: 0, body: '' };
}

function udp(port: number, msg: string): Promise<string> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => {
      s.close();
      resolve('');
    }, 500);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(m.toString());
    });
    s.send(msg, port, '127.0.0.1');
  });
}

test('netexec: HTTP endpoints, UDP commands, dial and shell', async () => {
  const [http, u] = [await freePort(), await freePort()];
  start(['netexec', `--http-port=${http}`, `--udp-port=${u}`]);
  await waitFor(async () => (await get(http, '/hostname')).status === 200, 10_000, 'netexec to listen');
  assert.deepEqual(await get(http, '/hostname'), { status: 200, body: 'agnhost-pod' });
  assert.match((await get(http, '/')).body, /^NOW: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \+0000 UTC$/);
  assert.match((await get(http, '/anything-else')).body, /^NOW: /, 'unregistered paths are the root');
  assert.match((await get(http, '/clientip')).body, /^127\.0\.0\.1:\d+$/);
  assert.deepEqual(await get(http, '/echo?msg=hello'), { status: 200, body: 'hello' });
  assert.deepEqual(await get(http, '/echo?msg=teapot&code=418'), { status: 418, body: 'teapot' });
  assert.deepEqual(await get(http, '/healthz'), { status: 200, body: '' });
  const shell = JSON.parse((await get(http, `/shell?shellCommand=${encodeURIComponent('echo $HOSTNAME; echo err >&2')}`)).body);
  assert.deepEqual(shell, { output: 'agnhost-pod\nerr\n' });
  assert.deepEqual(JSON.parse((await get(http, `/shell?cmd=${encodeURIComponent('exit 3')}`)).body), { error: 'exit status 3' });
  assert.equal(await udp(u, 'hostname'), 'agnhost-pod');
  assert.equal(await udp(u, 'echo ABC'), 'abc', 'commands are read lower-cased');
  assert.equal(await udp(u, 'nonsense'), '', 'unknown commands get no reply');
  // dial: through this same server, over HTTP and UDP.
  const viaHttp = JSON.parse((await get(http, `/dial?request=hostname&protocol=http&host=127.0.0.1&port=${http}&tries=2`)).body);
  assert.deepEqual(viaHttp, { responses: ['agnhost-pod', 'agnhost-pod'] });
  const viaUdp = JSON.parse((await get(http, `/dial?request=hostname&protocol=udp&host=127.0.0.1&port=${u}&tries=1`)).body);
  assert.deepEqual(viaUdp.responses, ['agnhost-pod']);
  const closed = await freePort();
  const failed = await get(http, `/dial?request=hostname&protocol=http&host=127.0.0.1&port=${closed}&tries=1`);
  assert.equal(failed.status, 200, 'a failed dial is still 200, as agnhost 2.21 answers');
  assert.deepEqual(JSON.parse(failed.body), {
    errors: [`Get "http://127.0.0.1:${closed}/hostname": dial tcp 127.0.0.1:${closed}: connect: connection refused`],
  });
  assert.deepEqual(await get(http, '/dial?request=hostname&protocol=sctp&host=127.0.0.1&port=1'), { status: 400, body: 'unsupported protocol. sctp\n' });
  assert.deepEqual(await get(http, '/dial?protocol=http&host=127.0.0.1&port=1'), { status: 400, body: 'request parameter not specified. <nil>\n' });
});

test('netexec over HTTPS with --tls-* files; klog flags are accepted', {
  skip: existsSync('/usr/bin/openssl') ? false : 'openssl is not installed',
}, async () => {
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  execFileSync(
    '/usr/bin/openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', key, '-out', cert],
    { stdio: 'ignore' },
  );
  const port = await freePort();
  start(['netexec', `--http-port=${port}`, '--udp-port=-1', `--tls-cert-file=${cert}`, `--tls-private-key-file=${key}`, '--v=2']);
  const ask = () =>
    new Promise<string>((resolve) => {
      const r = httpsGet({ host: '127.0.0.1', port, path: '/hostname', ca: readFileSync(cert), checkServerIdentity: () => undefined }, (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(b));
      });
      r.on('error', () => resolve(''));
    });
  await waitFor(async () => (await ask()) === 'agnhost-pod', 10_000, 'netexec to answer over HTTPS');
});

test('netexec /exit ends the process with the code asked for', async () => {
  const port = await freePort();
  const c = start(['netexec', `--http-port=${port}`, '--udp-port=-1']);
  await waitFor(async () => (await get(port, '/hostname')).status === 200, 10_000, 'netexec to listen');
  const exited = new Promise<number | null>((r) => c.on('exit', (code) => r(code)));
  await get(port, '/exit?code=3');
  // (No timeout: the process exits with the request unanswered.)
  assert.equal(await exited, 3);
});

test('serve-hostname over HTTP, TCP and UDP', async () => {
  const h = await freePort();
  start(['serve-hostname', `--port=${h}`]);
  await waitFor(async () => (await get(h, '/')).status === 200, 10_000, 'serve-hostname to listen');
  assert.equal((await get(h, '/anything')).body, 'agnhost-pod');
  const t = await freePort();
  start(['serve-hostname', '--http=false', '--tcp', '--udp', `--port=${t}`]);
  const tcp = () =>
    new Promise<string>((resolve) => {
      let b = '';
      const s = connect({ host: '127.0.0.1', port: t });
      s.on('data', (d) => (b += d));
      s.on('end', () => resolve(b));
      s.on('error', () => resolve(''));
    });
  await waitFor(async () => (await tcp()) === 'agnhost-pod', 10_000, 'the TCP answer');
  assert.equal(await udp(t, 'x'), 'agnhost-pod');
  const both = await run(['serve-hostname', '--tcp']);
  assert.notEqual(both.code, 0, '--http with --tcp is refused');
});

test('liveness: healthy, then failing after 10 s', async () => {
  // Only the first answer is checked here (the switch to 500 comes 10 s in).
  // Its port is fixed (8080): a pod IP of its own keeps it clear of anything else on the machine.
  const ip = `127.88.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;
  start(['liveness'], { POD_IP: ip });
  await waitFor(async () => (await get(8080, '/healthz', ip)).status !== 0, 10_000, 'liveness to listen');
  assert.deepEqual(await get(8080, '/healthz', ip), { status: 200, body: 'ok' });
  assert.match((await get(8080, '/started', ip)).body, /^\d+(\.\d+)?s$/);
});

test('test-webserver, porter, pause', async () => {
  const port = await freePort();
  // The container's filesystem, which here is its working directory.
  const root = mkdtempSync(join(dir, 'root-'));
  writeFileSync(join(root, 'index.txt'), 'served');
  const web = spawn(process.execPath, [AGNHOST, 'test-webserver', `--port=${port}`], { env, cwd: root, stdio: 'ignore' });
  children.push(web);
  await waitFor(async () => (await get(port, '/')).status === 200, 10_000, 'test-webserver');
  assert.match((await get(port, '/')).body, /<a href="index.txt">index.txt<\/a>/);
  assert.deepEqual(await get(port, '/index.txt'), { status: 200, body: 'served' });
  assert.equal((await get(port, '/../../etc/passwd')).status, 404, 'nothing above its root');
  const cors = await fetch(`http://127.0.0.1:${port}/index.txt`);
  assert.equal(cors.headers.get('access-control-allow-origin'), '*');
  const p = await freePort();
  const [html, tls] = [await freePort(), await freePort()];
  start(['porter'], { [`SERVE_PORT_${p}`]: 'foo', [`SERVE_PORT_${html}`]: '<a href="/rewriteme">test</a>', [`SERVE_TLS_PORT_${tls}`]: 'tls baz' });
  await waitFor(async () => (await get(p, '/')).body === 'foo', 10_000, 'porter');
  // Go's content sniffing: HTML by its tag (which the apiserver's proxy rewrites), else plain text.
  assert.equal((await fetch(`http://127.0.0.1:${p}/`)).headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal((await fetch(`http://127.0.0.1:${html}/`)).headers.get('content-type'), 'text/html; charset=utf-8');
  // TLS ports with the image's localhost certificate (for 127.0.0.1 and ::1).
  const ca = readFileSync(fileURLToPath(new URL('../images/porter/localhost.crt', import.meta.url)));
  const tlsBody = await new Promise<string>((resolve, reject) =>
    httpsGet({ host: '127.0.0.1', port: tls, path: '/', ca }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    }).on('error', reject),
  );
  assert.equal(tlsBody, 'tls baz');
  const json = await freePort();
  start(['porter', '--json-response'], { [`SERVE_PORT_${json}`]: 'foo' });
  await waitFor(async () => (await get(json, '/')).status === 200, 10_000, 'porter --json-response');
  assert.deepEqual(JSON.parse((await get(json, '/')).body), { Method: 'GET', Body: 'foo' });
  const pause = start(['pause']);
  await waitFor(async () => pause.out().includes('Paused'), 10_000, 'pause to start');
  const exited = new Promise<number | null>((r) => pause.on('exit', (code) => r(code)));
  pause.kill('SIGTERM');
  assert.equal(await exited, 2, 'SIGTERM ends pause with status 2');
});

test('entrypoint-tester prints its arguments as the image binary got them', async () => {
  const r = await run(['entrypoint-tester', 'override', 'arguments']);
  assert.equal(r.out, '[/agnhost entrypoint-tester override arguments]\n');
});

test('mounttest: content, mode, perms, owner and new files, in the suite format', async () => {
  const f = join(dir, 'file');
  writeFileSync(f, 'mount-tester content');
  chmodSync(f, 0o640);
  const r = await run(['mounttest', `--file_content=${f}`, `--file_mode=${f}`, `--file_perm=${f}`, `--fs_type=${dir}`]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, new RegExp(`content of file "${f}": mount-tester content\\n`));
  assert.match(r.out, new RegExp(`mode of file "${f}": -rw-r-----\\n`));
  assert.match(r.out, new RegExp(`perms of file "${f}": -rw-r-----\\n`));
  assert.match(r.out, new RegExp(`mount type of "${dir}": \\d+\\n`), 'the filesystem magic number, as statfs gives it');
  assert.match((await run(['mounttest', `--file_mode=${dir}`])).out, new RegExp(`mode of file "${dir}": d[-rwx]{9}\\n`));
  const n = join(dir, 'new');
  const made = await run(['mounttest', `--new_file_0644=${n}`, `--file_perm=${n}`]);
  assert.match(made.out, new RegExp(`content of file "${n}": mount-tester new file\\n`));
  assert.match(made.out, new RegExp(`perms of file "${n}": -rw-r--r--\\n`));
  const missing = await run(['mounttest', `--file_content=${join(dir, 'nope')}`]);
  assert.equal(missing.code, 1);
  assert.match(missing.out, /error reading file content for/);
  assert.equal(statSync(n).mode & 0o777, 0o644);
});

test('nettest: /write counts sources, /read the state, /status pass once it has sent to and heard from its peers (found through the API)', async (t) => {
  // The apiserver as the pod sees it: its service environment and service account files, the endpoints of --service.
  const port = await freePort();
  const root = mkdtempSync(join(dir, 'nettest-'));
  const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
  mkdirSync(sa, { recursive: true });
  const certFile = fileURLToPath(new URL('../images/porter/localhost.crt', import.meta.url));
  writeFileSync(join(sa, 'token'), 'the-token');
  writeFileSync(join(sa, 'ca.crt'), readFileSync(certFile));
  const seen: string[] = [];
  const api = createHttpsServer(
    { cert: readFileSync(certFile), key: readFileSync(fileURLToPath(new URL('../images/porter/localhost.key', import.meta.url))) },
    (req, res) => {
      seen.push(`${req.headers.authorization} ${req.url}`);
      if (req.url === '/version') return res.end(JSON.stringify({ major: '1', minor: '32' }));
      if (req.url === '/api/v1/namespaces/net/endpoints/peers')
        return res.end(JSON.stringify({ subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] }));
      res.writeHead(404).end('{}');
    },
  );
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', () => r()));
  t.after(() => api.close());
  const apiPort = (api.address() as { port: number }).port;
  start(['nettest', `--port=${port}`, '--peers=1', '--service=peers', '--namespace=net'], {
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: String(apiPort),
    KUBELING_ROOT: root,
  });
  await waitFor(async () => (await get(port, '/status')).body === 'pass', 15_000, 'nettest to pass');
  assert.ok(seen.includes('Bearer the-token /api/v1/namespaces/net/endpoints/peers'), seen.join('\n'));
  const post = await fetch(`http://127.0.0.1:${port}/write`, { method: 'POST', body: JSON.stringify({ Source: 'prestop' }) });
  assert.deepEqual(await post.json(), { Hostname: 'agnhost-pod' });
  const state = JSON.parse((await get(port, '/read')).body);
  assert.equal(state.Hostname, 'agnhost-pod');
  assert.equal(state.Received.prestop, 1);
  assert.ok(state.Received['agnhost-pod'] >= 1 && state.Sent['agnhost-pod'] >= 1, JSON.stringify(state));
  await fetch(`http://127.0.0.1:${port}/write`, { method: 'POST', body: '{}' });
  assert.deepEqual(JSON.parse((await get(port, '/read')).body).Errors, ['agnhost-pod: Got request with no source']);
});

test('logs-generator: N klog lines of made-up requests over the duration, then exits', async () => {
  const started = Date.now();
  const r = await run(['logs-generator', '--log-lines-total', '5', '--run-duration', '500ms']);
  assert.equal(r.code, 0);
  assert.ok(Date.now() - started >= 400, 'spread over the duration');
  const lines = r.out.trimEnd().split('\n');
  assert.equal(lines.length, 5, r.out);
  lines.forEach((l, i) =>
    assert.match(
      l,
      new RegExp(
        `^I\\d{4} \\d\\d:\\d\\d:\\d\\d\\.\\d{6} +\\d+ logs_generator\\.go:67\\] ${i} (GET|POST|PUT) /api/v1/namespaces/(kube-system|default|ns)/pods/\\w{3,4} \\d{3}$`,
      ),
    ),
  );
  const bad = await run(['logs-generator', '-t', '0', '-d', '1s']);
  assert.equal(bad.code, 255);
  assert.match(bad.out, /Invalid total number of lines: 0/);
});

test('guestbook: a replica registers with its primary, which pushes each set to it; the frontend refuses other commands', async () => {
  const backend = await freePort();
  start(['guestbook', `--http-port=${backend}`, `--backend-port=${backend}`], { POD_IP: '127.0.0.2' });
  await waitFor(async () => (await get(backend, '/get', '127.0.0.2')).status === 200, 10_000, 'the primary');
  assert.deepEqual(await get(backend, '/set?key=messages&value=first', '127.0.0.2'), { status: 200, body: '{"message":"Updated"}' });
  start(['guestbook', `--http-port=${backend}`, `--backend-port=${backend}`, '--replicaof=127.0.0.2'], { POD_IP: '127.0.0.3' });
  // Registered: it starts from the primary's store, and later sets reach it.
  await waitFor(async () => (await get(backend, '/get?key=messages', '127.0.0.3')).body === '{"data":"first"}', 10_000, 'the replica to register');
  assert.equal((await get(backend, '/set?key=messages&value=second', '127.0.0.2')).body, '{"message":"Updated"}');
  assert.equal((await get(backend, '/get?key=messages', '127.0.0.3')).body, '{"data":"second"}');
  assert.equal((await get(backend, '/get', '127.0.0.3')).body, '{"data":{"messages":"second"}}');
  assert.deepEqual(await get(backend, '/set?value=x', '127.0.0.2'), { status: 400, body: 'cannot set with empty key.\n' });
  const front = await freePort();
  start(['guestbook', `--http-port=${front}`, `--backend-port=${backend}`]);
  await waitFor(async () => (await get(front, '/guestbook?cmd=del')).status === 400, 10_000, 'the frontend');
  assert.equal((await get(front, '/guestbook?cmd=del')).body, "unsupported cmd: 'del'\n");
});
