/**
 * The runtime through CRI over gRPC on a unix socket: images, sandboxes with
 * pod IPs, processes with exit codes and CRI logs, stop with SIGTERM/SIGKILL,
 * exec (ExecSync, and Exec through the streaming server), and the hollow backend.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { type CriError, GrpcRuntime, parseCriLine, serveCri, type CriServer, type PodSandboxConfig } from '@kubeling/cri';
import WebSocket from 'ws';
import { KubelingRuntime } from './runtime.js';
import { parseImageRef } from './images.js';

let dir: string;
let server: CriServer;
let runtime: KubelingRuntime;
let cri: GrpcRuntime;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kubeling-rt-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'root'), podCIDR: '127.3.7.0/24' });
  server = await serveCri(runtime, `unix://${join(dir, 'rt.sock')}`);
  cri = new GrpcRuntime(`unix://${join(dir, 'rt.sock')}`);
});
after(async () => {
  cri?.close();
  await runtime?.shutdown();
  server?.forceShutdown();
  rmSync(dir, { recursive: true, force: true });
});

const sandboxConfig = (name: string, port?: number): PodSandboxConfig => ({
  metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt: 0 },
  hostname: name,
  log_directory: join(dir, 'logs', name),
  port_mappings: port ? [{ protocol: 'TCP', container_port: port }] : [],
  labels: { 'io.kubernetes.pod.name': name },
});

async function waitExited(id: string) {
  for (let i = 0; i < 100; i++) {
    const s = await cri.containerStatus(id);
    if (s.state === 'CONTAINER_EXITED') return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('container did not exit');
}

test('image references normalize as docker does', () => {
  assert.equal(parseImageRef('nginx')?.full, 'docker.io/library/nginx:latest');
  assert.equal(parseImageRef('busybox:1.36')?.full, 'docker.io/library/busybox:1.36');
  assert.equal(parseImageRef('me/app:v1')?.full, 'docker.io/me/app:v1');
  assert.equal(parseImageRef('localhost:5000/x/y')?.full, 'localhost:5000/x/y:latest');
  assert.equal(parseImageRef('registry.k8s.io/pause:3.9')?.repository, 'registry.k8s.io/pause');
  assert.equal(parseImageRef('Bad Image'), undefined);
});

test('version and status over gRPC; unknown images fail to pull as a registry would', async () => {
  const v = await cri.version();
  assert.equal(v.runtime_name, 'kubeling');
  assert.equal(v.runtime_api_version, 'v1');
  assert.deepEqual(
    (await cri.status()).map((c) => [c.type, c.status]),
    [
      ['RuntimeReady', true],
      ['NetworkReady', true],
    ],
  );
  assert.equal(await cri.imageStatus({ image: 'busybox' }), undefined);
  const ref = await cri.pullImage({ image: 'busybox' });
  assert.match(ref, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual((await cri.imageStatus({ image: 'docker.io/library/busybox:latest' }))?.repo_tags, ['docker.io/library/busybox:latest']);
  await assert.rejects(cri.pullImage({ image: 'example.invalid/nope:1' }), (e: CriError) => e.code === 2 && /not found/.test(e.message));
});

test('a container runs its command with env and POD_IP, logs in CRI format, and reports its exit code', async () => {
  await cri.pullImage({ image: 'busybox' });
  const sb = await cri.runPodSandbox(sandboxConfig('job'));
  const st = await cri.podSandboxStatus(sb);
  assert.equal(st.state, 'SANDBOX_READY');
  assert.match(st.network!.ip, /^127\.3\.7\.\d+$/);
  const id = await cri.createContainer(
    sb,
    {
      metadata: { name: 'main', attempt: 0 },
      image: { image: 'busybox' },
      command: ['sh', '-c', 'echo "hello $GREETING from $POD_IP"; echo oops >&2; exit 3'],
      envs: [{ key: 'GREETING', value: Buffer.from('world') }],
      log_path: 'main/0.log',
    },
    sandboxConfig('job'),
  );
  await cri.startContainer(id);
  const s = await waitExited(id);
  assert.equal(s.exit_code, 3);
  assert.equal(s.reason, 'Error');
  const lines = readFileSync(s.log_path, 'utf8').trim().split('\n').map(parseCriLine);
  assert.deepEqual(lines.map((l) => [l?.stream, l?.tag, l?.content]).sort(), [
    ['stderr', 'F', 'oops'],
    ['stdout', 'F', `hello world from ${st.network!.ip}`],
  ]);
  const ok = await cri.createContainer(sb, { metadata: { name: 'ok', attempt: 0 }, image: { image: 'busybox' }, command: ['true'] }, sandboxConfig('job'));
  await cri.startContainer(ok);
  assert.deepEqual([(await waitExited(ok)).exit_code, (await cri.containerStatus(ok)).reason], [0, 'Completed']);
  const missing = await cri.createContainer(
    sb,
    { metadata: { name: 'missing', attempt: 0 }, image: { image: 'busybox' }, command: ['no-such-binary-here'] },
    sandboxConfig('job'),
  );
  await assert.rejects(cri.startContainer(missing), /executable file not found/);
  assert.equal((await cri.containerStatus(missing)).reason, 'StartError');
  await cri.removePodSandbox(sb);
  assert.equal((await cri.listContainers({ pod_sandbox_id: sb })).length, 0);
});

test("the conformance suite's agnhost, under v1.20's name too: /agnhost in a command runs the image's program; resolv.conf and hostname in its root", async () => {
  for (const image of [
    'registry.k8s.io/e2e-test-images/agnhost:2.21',
    'k8s.gcr.io/e2e-test-images/agnhost:2.21',
    'k8s.gcr.io/pause:3.2',
    'httpd:2.4.38-alpine',
  ]) {
    assert.match(await cri.pullImage({ image }), /^sha256:/, image);
  }
  const config = {
    ...sandboxConfig('agn'),
    hostname: 'agn-host',
    dns_config: { servers: ['127.1.0.10'], searches: ['ns.svc.cluster.local'], options: ['ndots:5'] },
  };
  const sb = await cri.runPodSandbox(config);
  const run = async (name: string, c: { command?: string[]; args?: string[] }) => {
    const id = await cri.createContainer(
      sb,
      { metadata: { name, attempt: 0 }, image: { image: 'k8s.gcr.io/e2e-test-images/agnhost:2.21' }, ...c, log_path: `${name}/0.log` },
      config,
    );
    await cri.startContainer(id);
    const s = await waitExited(id);
    return readFileSync(s.log_path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => parseCriLine(l)?.content)
      .join('\n');
  };
  assert.equal(await run('args', { args: ['entrypoint-tester', 'a', 'b'] }), '[/agnhost entrypoint-tester a b]', 'the image entrypoint with the pod args');
  assert.equal(
    await run('cmd', { command: ['/agnhost-2', 'entrypoint-tester', 'c'] }),
    '[/agnhost-2 entrypoint-tester c]',
    'a command naming the image binary',
  );
  const files = await run('files', { command: ['/agnhost', 'mounttest', '--file_content=etc/resolv.conf', '--file_content=etc/hostname'] });
  assert.match(files, /content of file "etc\/hostname": agn-host/);
  const resolv = await run('resolv', { command: ['/agnhost', 'mounttest', '--file_content=etc/resolv.conf'] });
  assert.equal(
    resolv,
    'content of file "etc/resolv.conf": search ns.svc.cluster.local\nnameserver 127.1.0.10\noptions ndots:5\n',
    'the file ends with a newline, so a blank line follows',
  );
  // An exec naming the image's program runs it too: the DNS test reads the pod's resolv.conf this way.
  const pause = await cri.createContainer(
    sb,
    { metadata: { name: 'pause', attempt: 0 }, image: { image: 'k8s.gcr.io/e2e-test-images/agnhost:2.21' }, args: ['pause'] },
    config,
  );
  await cri.startContainer(pause);
  const exec = async (...cmd: string[]) => {
    const r = await cri.execSync(pause, cmd, 10);
    return [r.exit_code, Buffer.from(r.stdout).toString()];
  };
  assert.deepEqual(await exec('/agnhost', 'dns-suffix'), [0, 'ns.svc.cluster.local\n']);
  assert.deepEqual(await exec('/agnhost', 'dns-server-list'), [0, '127.1.0.10\n']);
  // kubectl's update demo: test-webserver serving the image's data.json.
  assert.match(await cri.pullImage({ image: 'gcr.io/kubernetes-e2e-test-images/nautilus:1.0' }), /^sha256:/);
  const port = await new Promise<number>((resolve) => {
    const srv = createNetServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  const web = await cri.createContainer(
    sb,
    {
      metadata: { name: 'nautilus', attempt: 0 },
      image: { image: 'gcr.io/kubernetes-e2e-test-images/nautilus:1.0' },
      args: ['test-webserver', `--port=${port}`],
    },
    config,
  );
  await cri.startContainer(web);
  const ip = (await cri.podSandboxStatus(sb)).network!.ip;
  let data: unknown;
  for (let i = 0; i < 100 && data === undefined; i++) {
    data = await fetch(`http://${ip}:${port}/data.json`)
      .then((r) => r.json())
      .catch(() => undefined);
    if (data === undefined) await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(data, { image: 'nautilus.jpg' });
  await cri.removePodSandbox(sb);
});

test('an exit is reported once the output is all in the log', async () => {
  await cri.pullImage({ image: 'busybox' });
  const cfg = sandboxConfig('flush');
  const sb = await cri.runPodSandbox(cfg);
  for (let attempt = 0; attempt < 5; attempt++) {
    const id = await runtime.createContainer(
      sb,
      { metadata: { name: 'many', attempt }, image: { image: 'busybox' }, command: ['seq', '1', '20000'], log_path: `many/${attempt}.log` },
      cfg,
    );
    await runtime.startContainer(id);
    // Polled as often as the event loop allows: the first status that says exited must find the last line in the log.
    let s = await runtime.containerStatus(id);
    for (let i = 0; i < 200_000 && s.state !== 'CONTAINER_EXITED'; i++) {
      await new Promise((r) => setImmediate(r));
      s = await runtime.containerStatus(id);
    }
    assert.equal(s.state, 'CONTAINER_EXITED');
    const lines = readFileSync(s.log_path, 'utf8').trim().split('\n');
    assert.equal(lines.length, 20000);
    assert.equal(parseCriLine(lines.at(-1)!)?.content, '20000');
  }
  await cri.removePodSandbox(sb);
});

test('the nginx image serves on the pod IP; stop sends SIGTERM then SIGKILL (143 when not caught)', async () => {
  await cri.pullImage({ image: 'nginx:1.27' });
  await cri.pullImage({ image: 'busybox' });
  const cfg = sandboxConfig('web', 8080);
  const sb = await cri.runPodSandbox(cfg);
  const ip = (await cri.podSandboxStatus(sb)).network!.ip;
  const web = await cri.createContainer(sb, { metadata: { name: 'nginx', attempt: 0 }, image: { image: 'nginx:1.27' }, log_path: 'nginx/0.log' }, cfg);
  await cri.startContainer(web);
  let body = '';
  for (let i = 0; i < 100 && !body; i++) {
    body = await fetch(`http://${ip}:8080/`).then(
      (r) => r.text(),
      () => '',
    );
    if (!body) await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(body, /Welcome to nginx!/);
  const sleeper = await cri.createContainer(sb, { metadata: { name: 'sleeper', attempt: 0 }, image: { image: 'busybox' }, command: ['sleep', '30'] }, cfg);
  await cri.startContainer(sleeper);
  const exec = await cri.execSync(sleeper, ['sh', '-c', 'echo $HOSTNAME; exit 4'], 5);
  assert.deepEqual([exec.stdout.toString().trim(), exec.exit_code], ['web', 4]);
  const t0 = Date.now();
  await cri.stopContainer(sleeper, 5);
  assert.equal((await cri.containerStatus(sleeper)).exit_code, 143);
  assert.ok(Date.now() - t0 < 4000, 'sleep dies on SIGTERM at once');
  await cri.stopContainer(web, 5);
  assert.equal((await cri.containerStatus(web)).exit_code, 0, 'nginx exits cleanly on SIGTERM');
  const trap = await cri.createContainer(
    sb,
    { metadata: { name: 'trap', attempt: 0 }, image: { image: 'busybox' }, command: ['sh', '-c', 'trap "" TERM; while true; do sleep 0.1; done'] },
    cfg,
  );
  await cri.startContainer(trap);
  await new Promise((r) => setTimeout(r, 200));
  const t1 = Date.now();
  await cri.stopContainer(trap, 1);
  assert.equal((await cri.containerStatus(trap)).exit_code, 137, 'SIGKILL after the timeout');
  assert.ok(Date.now() - t1 >= 900);
  await cri.removePodSandbox(sb);
});

/** Runs one exec over the streaming server: each channel's bytes, and the final Status. */
async function streamExec(
  url: string,
  protocol: string,
  stdin?: string,
): Promise<{ channels: Record<number, string>; status: Record<string, any> | undefined }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), [protocol]);
  const channels: Record<number, string> = {};
  let status: Record<string, any> | undefined;
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => {
      assert.equal(ws.protocol, protocol);
      if (stdin !== undefined) {
        ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(stdin)]));
        ws.send(Buffer.from([255, 0]));
      }
    });
    ws.on('message', (d: Buffer) => {
      if (d[0] === 3) status = JSON.parse(d.subarray(1).toString());
      else channels[d[0]!] = (channels[d[0]!] ?? '') + d.subarray(1).toString();
    });
    ws.on('close', () => resolve());
    ws.on('error', reject);
  });
  return { channels, status };
}

test('Exec and Attach: a single-use streaming URL; stdout and stderr on their channels, stdin closed by v5, exit codes in the final Status', async () => {
  await cri.pullImage({ image: 'busybox' });
  const cfg = sandboxConfig('shell');
  const sb = await cri.runPodSandbox(cfg);
  const c = await cri.createContainer(
    sb,
    { metadata: { name: 'sh', attempt: 0 }, image: { image: 'busybox' }, command: ['sleep', '30'], envs: [{ key: 'WHO', value: Buffer.from('me') }] },
    cfg,
  );
  await cri.startContainer(c);
  const { url } = await cri.exec({
    container_id: c,
    cmd: ['sh', '-c', 'echo "$WHO"; echo oops >&2; exit 2'],
    tty: false,
    stdin: false,
    stdout: true,
    stderr: true,
  });
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/exec\/[\w-]+$/);
  const r = await streamExec(url, 'v4.channel.k8s.io');
  assert.deepEqual(r.channels, { 1: 'me\n', 2: 'oops\n' });
  assert.equal(r.status?.reason, 'NonZeroExitCode');
  assert.deepEqual(r.status?.details?.causes, [{ reason: 'ExitCode', message: '2' }]);
  // The token was used: a second connection is refused.
  await assert.rejects(streamExec(url, 'v4.channel.k8s.io'), /Unexpected server response: 404/);
  const cat = await cri.exec({ container_id: c, cmd: ['cat'], tty: false, stdin: true, stdout: true, stderr: true });
  assert.deepEqual(await streamExec(cat.url, 'v5.channel.k8s.io', 'typed'), { channels: { 1: 'typed' }, status: { metadata: {}, status: 'Success' } });
  // A tty has no stderr of its own: it comes on stdout.
  const tty = await cri.exec({ container_id: c, cmd: ['sh', '-c', 'echo e >&2'], tty: true, stdin: false, stdout: true, stderr: false });
  assert.deepEqual((await streamExec(tty.url, 'v5.channel.k8s.io')).channels, { 1: 'e\n' });
  await assert.rejects(cri.exec({ container_id: c, cmd: [], tty: false, stdin: false, stdout: true, stderr: false }), /cmd must not be empty/);
  // Attach joins the container's own stdin and output; with stdin_once its stdin closes when the attach ends it.
  const reader = await cri.createContainer(
    sb,
    {
      metadata: { name: 'reader', attempt: 0 },
      image: { image: 'busybox' },
      command: ['sh', '-c', 'while read l; do echo "echo: $l"; done; echo bye'],
      stdin: true,
      stdin_once: true,
    },
    cfg,
  );
  await cri.startContainer(reader);
  const att = await cri.attach({ container_id: reader, stdin: true, stdout: true, stderr: true, tty: false });
  assert.match(att.url, /\/attach\/[\w-]+$/);
  assert.deepEqual(await streamExec(att.url, 'v5.channel.k8s.io', 'one\n'), {
    channels: { 1: 'echo: one\nbye\n' },
    status: { metadata: {}, status: 'Success' },
  });
  await cri.stopContainer(c, 0);
  await assert.rejects(cri.exec({ container_id: c, cmd: ['true'], tty: false, stdin: false, stdout: true, stderr: false }), /is not running/);
  await cri.removePodSandbox(sb);
});

test('the hollow backend runs nothing and reports Running at once', async () => {
  const hollow = new KubelingRuntime({ backend: 'hollow', root: join(dir, 'hollow'), podCIDR: '127.3.8.0/24' });
  await hollow.pullImage({ image: 'nginx' });
  const sb = await hollow.runPodSandbox(sandboxConfig('h'));
  const id = await hollow.createContainer(
    sb,
    { metadata: { name: 'c', attempt: 0 }, image: { image: 'nginx' }, command: ['definitely-not-a-binary'] },
    sandboxConfig('h'),
  );
  await hollow.startContainer(id);
  assert.equal((await hollow.containerStatus(id)).state, 'CONTAINER_RUNNING');
  await hollow.stopContainer(id, 30);
  assert.equal((await hollow.containerStatus(id)).state, 'CONTAINER_EXITED');
});
