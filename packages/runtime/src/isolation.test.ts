/**
 * Containers in namespaces of their own (when the runtime is root): their
 * hostname, /etc files and volumes at their real paths, a root whose writes
 * stay in the container, a PID namespace, the security context's user and
 * read-only root, and exec inside the same namespaces. Path resolution inside
 * the root is tested with injected file-system functions.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCriLine, type ContainerConfig, type LinuxContainerSecurityContext, type PodSandboxConfig } from '@kubeling/cri';
import { resolveInRoot, shq } from './isolation.js';
import { KubelingRuntime } from './runtime.js';

test('paths resolve inside the root: links followed, absolute ones from the root, never above it, /proc /sys /dev left alone', () => {
  const links: Record<string, string> = { '/etc/resolv.conf': '../run/resolv.conf', '/var/run': '/run', '/up': '../../..', '/dev/fd': '/proc/self/fd' };
  const lstat = (p: string) => ({ isSymbolicLink: () => p in links });
  const readlink = (p: string) => links[p]!;
  assert.equal(resolveInRoot('/etc/resolv.conf', lstat, readlink), '/run/resolv.conf');
  assert.equal(resolveInRoot('/var/run/x/y', lstat, readlink), '/run/x/y');
  assert.equal(resolveInRoot('/up/etc', lstat, readlink), '/etc');
  assert.equal(resolveInRoot('/a/../../b/./c', lstat, readlink), '/b/c');
  assert.equal(resolveInRoot('/dev/fd', lstat, readlink), '/dev/fd');
  assert.equal(resolveInRoot('/', lstat, readlink), '/');
  const loop = { '/l': '/l' } as Record<string, string>;
  assert.equal(
    resolveInRoot(
      '/l',
      (p) => ({ isSymbolicLink: () => p in loop }),
      (p) => loop[p]!,
    ),
    '/l',
  );
  assert.equal(shq("it's"), `'it'\\''s'`);
});

let dir: string;
let runtime: KubelingRuntime;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kubeling-iso-'));
  runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'state', 'root'), podCIDR: '127.3.10.0/24' });
});
after(async () => {
  await runtime?.shutdown();
  rmSync(dir, { recursive: true, force: true });
});

const sandbox = (name: string): PodSandboxConfig => ({
  metadata: { name, uid: `uid-${name}`, namespace: 'default', attempt: 0 },
  hostname: name,
  log_directory: join(dir, 'logs', name),
  dns_config: { servers: ['127.1.0.10'], searches: ['default.svc.cluster.local', 'svc.cluster.local'], options: ['ndots:5'] },
});

async function run(sb: string, cfg: PodSandboxConfig, c: Omit<ContainerConfig, 'image' | 'log_path'>): Promise<{ id: string; out: string; exit: number }> {
  const id = await runtime.createContainer(sb, { ...c, image: { image: 'busybox' }, log_path: `${c.metadata.name}.log` }, cfg);
  await runtime.startContainer(id);
  for (let i = 0; i < 200; i++) {
    const s = await runtime.containerStatus(id);
    if (s.state === 'CONTAINER_EXITED') {
      const log = readFileSync(join(dir, 'logs', cfg.metadata.name, `${c.metadata.name}.log`), 'utf8');
      const out = log
        .split('\n')
        .filter(Boolean)
        .map((l) => parseCriLine(l)?.content ?? '')
        .join('\n');
      return { id, out, exit: s.exit_code };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('container did not exit');
}

test('an isolated container: its hostname, /etc files, volumes at their paths, its own root, /proc and PID 1', async (t) => {
  if (!runtime.isolated) return t.skip('containers are isolated only when the runtime is root');
  await runtime.pullImage({ image: 'busybox' });
  const cfg = sandbox('iso-pod');
  const sb = await runtime.runPodSandbox(cfg);
  const vol = join(dir, 'vol');
  mkdirSync(vol);
  writeFileSync(join(vol, 'in'), 'from-host\n');
  const conf = join(dir, 'app.conf');
  writeFileSync(conf, 'setting=1\n');
  const term = join(dir, 'termination-log');
  writeFileSync(term, '');
  const marker = `/tmp/kubeling-iso-${process.pid}`;
  const wd = `/kubeling-wd-${process.pid}/dir`;
  const r = await run(sb, cfg, {
    metadata: { name: 'main', attempt: 0 },
    command: [
      'sh',
      '-c',
      [
        'hostname',
        'cat /etc/hostname /etc/resolv.conf /data/in /etc/config/app.conf',
        'echo out > /data/out',
        'echo done > /dev/termination-log',
        '(echo x > /etc/config/app.conf) 2>/dev/null && echo conf-writable || echo conf-readonly',
        `echo mine > ${marker} && cat ${marker}`,
        'echo "pid=$$ cwd=$(pwd) root=${KUBELING_ROOT-unset}"',
        'ls /proc | grep -c "^[0-9]"',
      ].join('; '),
    ],
    working_dir: wd,
    mounts: [
      { container_path: '/data', host_path: vol },
      { container_path: '/etc/config/app.conf', host_path: conf, readonly: true },
      { container_path: '/dev/termination-log', host_path: term },
    ],
  });
  assert.equal(r.exit, 0, r.out);
  const lines = r.out.split('\n');
  assert.deepEqual(lines.slice(0, 6), [
    'iso-pod',
    'iso-pod',
    'search default.svc.cluster.local svc.cluster.local',
    'nameserver 127.1.0.10',
    'options ndots:5',
    'from-host',
  ]);
  assert.deepEqual(lines.slice(6, 10), ['setting=1', 'conf-readonly', 'mine', `pid=2 cwd=${wd} root=unset`]);
  // Its own PID namespace: the init, the shell, ls and grep at most.
  assert.ok(Number(lines[10]) <= 4, lines[10]);
  assert.equal(readFileSync(join(vol, 'out'), 'utf8'), 'out\n');
  assert.equal(readFileSync(term, 'utf8'), 'done\n');
  assert.equal(existsSync(marker), false, "the container's writes to its root stay in it");
  assert.equal(existsSync(wd), false, 'nor does its working directory');
  await runtime.removePodSandbox(sb);
});

test("an isolated container runs as its security context's user and groups; a read-only root refuses writes but volumes take them", async (t) => {
  if (!runtime.isolated) return t.skip('containers are isolated only when the runtime is root');
  await runtime.pullImage({ image: 'busybox' });
  const cfg = sandbox('iso-user');
  const sb = await runtime.runPodSandbox(cfg);
  const vol = join(dir, 'vol-user');
  mkdirSync(vol);
  chmodSync(vol, 0o777);
  const r = await run(sb, cfg, {
    metadata: { name: 'user', attempt: 0 },
    command: ['sh', '-c', 'id -u; id -g; id -G; touch /rootfile 2>/dev/null && echo root-writable || echo root-readonly; echo v > /vol/f && echo vol-writable'],
    mounts: [{ container_path: '/vol', host_path: vol }],
    linux: { security_context: { run_as_user: { value: 1234 }, run_as_group: { value: 5678 }, supplemental_groups: [42], readonly_rootfs: true } },
  });
  assert.equal(r.exit, 0, r.out);
  assert.deepEqual(r.out.split('\n'), ['1234', '5678', '5678 42', 'root-readonly', 'vol-writable']);
  await runtime.removePodSandbox(sb);
});

test('exec joins the running container: its files, hostname and PID namespace; a missing command is not found', async (t) => {
  if (!runtime.isolated) return t.skip('containers are isolated only when the runtime is root');
  await runtime.pullImage({ image: 'busybox' });
  const cfg = sandbox('iso-exec');
  const sb = await runtime.runPodSandbox(cfg);
  const id = await runtime.createContainer(
    sb,
    {
      metadata: { name: 'long', attempt: 0 },
      image: { image: 'busybox' },
      command: ['sh', '-c', 'echo inside > /marker; exec sleep 60'],
      log_path: 'long.log',
    },
    cfg,
  );
  await runtime.startContainer(id);
  let out = '';
  for (let i = 0; i < 100 && !out.includes('inside'); i++) {
    const e = await runtime.execSync(id, ['sh', '-c', 'cat /marker 2>/dev/null; hostname; pwd'], 5);
    out = e.stdout.toString();
    if (!out.includes('inside')) await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(out.trim().split('\n'), ['inside', 'iso-exec', '/']);
  // PID 2 is the command, once its shell has exec'd sleep (the marker is written just before).
  let cmdline = '';
  for (let i = 0; i < 100 && cmdline !== 'sleep 60'; i++) {
    const ps = await runtime.execSync(id, ['sh', '-c', 'cat /proc/2/cmdline | tr "\\0" " "'], 5);
    cmdline = ps.stdout.toString().trim();
    if (cmdline !== 'sleep 60') await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(cmdline, 'sleep 60');
  const missing = await runtime.execSync(id, ['no-such-command'], 5);
  assert.equal(missing.exit_code, 126);
  assert.match(missing.stderr.toString(), /executable file not found in \$PATH/);
  const t0 = Date.now();
  await runtime.stopContainer(id, 5);
  assert.equal((await runtime.containerStatus(id)).exit_code, 143);
  assert.ok(Date.now() - t0 < 4000, 'the command is not PID 1: SIGTERM ends it at once');
  await runtime.removePodSandbox(sb);
});

test("busybox's /bin/sh is busybox's ash where the host has busybox, with its messages", async (t) => {
  if (!runtime.isolated) return t.skip('containers are isolated only when the runtime is root');
  if (!existsSync('/usr/bin/busybox') && !existsSync('/bin/busybox')) return t.skip('the host has no busybox');
  await runtime.pullImage({ image: 'busybox' });
  const cfg = sandbox('iso-ash');
  const sb = await runtime.runPodSandbox(cfg);
  const r = await run(sb, cfg, {
    metadata: { name: 'ro', attempt: 0 },
    command: ['/bin/sh', '-c', 'echo test > /file'],
    linux: { security_context: { readonly_rootfs: true } },
  });
  assert.equal(r.exit, 1);
  assert.equal(r.out, "/bin/sh: can't create /file: Read-only file system");
  await runtime.removePodSandbox(sb);
});

test("capabilities: the runtime default set, adds and drops, all when privileged; a user's are gone", async (t) => {
  if (!runtime.isolated) return t.skip('containers are isolated only when the runtime is root');
  await runtime.pullImage({ image: 'busybox' });
  const cfg = sandbox('iso-caps');
  const sb = await runtime.runPodSandbox(cfg);
  const capEff = async (name: string, sc: LinuxContainerSecurityContext) => {
    const r = await run(sb, cfg, { metadata: { name, attempt: 0 }, command: ['sh', '-c', 'grep CapEff /proc/self/status'], linux: { security_context: sc } });
    assert.equal(r.exit, 0, r.out);
    return BigInt(`0x${r.out.split(/\s+/)[1]}`);
  };
  const bit = (n: number) => 1n << BigInt(n);
  // Docker's and containerd's default: CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE NET_RAW SYS_CHROOT MKNOD AUDIT_WRITE SETFCAP.
  assert.equal(await capEff('default', {}), 0xa80425fbn);
  const NET_ADMIN = 12;
  assert.equal(
    await capEff('add-drop', { capabilities: { add_capabilities: ['NET_ADMIN'], drop_capabilities: ['CHOWN'] } }),
    (0xa80425fbn | bit(NET_ADMIN)) & ~bit(0),
  );
  assert.equal(await capEff('none', { capabilities: { drop_capabilities: ['ALL'] } }), 0n);
  assert.ok((await capEff('privileged', { privileged: true })) & bit(21), 'SYS_ADMIN when privileged');
  assert.equal(await capEff('user', { run_as_user: { value: 1000 } }), 0n);
  await runtime.removePodSandbox(sb);
});

test("httpd serves its DocumentRoot's index.html, the container's own to move away", async (t) => {
  if (!runtime.isolated) return t.skip('containers are isolated only when the runtime is root');
  await runtime.pullImage({ image: 'httpd:2.4.38-alpine' });
  const cfg = sandbox('iso-httpd');
  const sb = await runtime.runPodSandbox(cfg);
  const ip = (await runtime.podSandboxStatus(sb)).network!.ip;
  const id = await runtime.createContainer(
    sb,
    { metadata: { name: 'web', attempt: 0 }, image: { image: 'httpd:2.4.38-alpine' }, envs: [{ key: 'NGINX_PORT', value: '8091' }], log_path: 'web.log' },
    cfg,
  );
  await runtime.startContainer(id);
  const get = () =>
    fetch(`http://${ip}:8091/index.html`).then(
      (r) => r.status,
      () => 0,
    );
  for (let i = 0; i < 100 && (await get()) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await get(), 200);
  const mv = await runtime.execSync(id, ['sh', '-c', 'mv /usr/local/apache2/htdocs/index.html /tmp/'], 5);
  assert.equal(mv.exit_code, 0, mv.stderr.toString());
  assert.equal(await get(), 404);
  assert.ok(existsSync(fileURLToPath(new URL('../images/httpd/default-page', import.meta.url))), "the image's file stays");
  await runtime.removePodSandbox(sb);
});
