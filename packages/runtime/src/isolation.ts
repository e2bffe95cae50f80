/**
 * Pod isolation for the `process` backend when the runtime runs as root: each
 * container gets its own mount, UTS, IPC and PID namespaces, as a container
 * runtime gives them, so that its processes see
 *
 * - a root filesystem of their own: the host's `/` as the lower layer of an
 *   overlay whose upper layer is the container's directory (writes stay there,
 *   and `readonly_rootfs` makes it read-only), with the host's other mounts
 *   read-only beside it;
 * - a `/proc` of their own (their processes only), a `/dev` of the usual devices
 *   with its own `pts` and `shm`, and `/sys` read-only;
 * - every CRI mount at its real path (`/etc/hosts`, `/dev/termination-log`,
 *   volumes), read-only where asked, and the sandbox's `/etc/resolv.conf` and
 *   `/etc/hostname`;
 * - the pod's hostname;
 * - the uid, gid and supplementary groups of the container's security context.
 *
 * The container is started through `unshare`; a small shell stays PID 1 of the
 * new namespace (as `docker --init` does) so the command itself keeps the
 * default signal dispositions, relays the signals a runtime sends, and exits
 * with the command's status. `exec` enters the same namespaces with `nsenter`.
 *
 * This is fidelity, not a security boundary: the container's root is the
 * host's root with every capability, and it shares the host's network.
 *
 * Paths are resolved inside the container's root (symbolic links followed the
 * way the container will see them, never out of it) before anything is made.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import type { ContainerConfig, Mount } from '@kubeling/cri';
import { IMAGES_DIR } from './images.js';

/** The host programs isolation runs, by absolute path. */
export interface IsolationTools {
  unshare: string;
  nsenter: string;
  mount: string;
  mkdir: string;
  touch: string;
  ln: string;
  cp: string;
  chroot: string;
  /** util-linux setpriv, which sets the user and limits capabilities; without it, chroot sets the user and capabilities stay whole. */
  setpriv?: string | undefined;
  env: string;
}

/** The user a container's processes run as. */
export interface ContainerUser {
  uid: number;
  gid: number;
  groups: number[];
}

export interface ContainerRoot {
  /** The container's directory: holds upper/, work/ and rootfs/. */
  dir: string;
  hostname: string;
  mounts: Mount[];
  /** Files bound over paths in the root (the sandbox's resolv.conf and hostname): container path → host file. */
  files: Record<string, string>;
  readonlyRoot: boolean;
  user?: ContainerUser | undefined;
  caps: Capabilities;
  workingDir: string;
  /** Host files and directories bound read-only at paths any user may reach (the runtime's image programs): container path → host path. */
  extra: Record<string, string>;
  /** Host files copied into the container's root, its own to change (an image's content): container path → host path. */
  copies?: Record<string, string> | undefined;
}

const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
/** The PATH a container gets when its image and pod name none (runc's default). */
export const DEFAULT_PATH = SYSTEM_DIRS.join(':');

function findTool(name: string): string | undefined {
  for (const d of SYSTEM_DIRS) {
    const p = join(d, name);
    try {
      accessSync(p, fsConstants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Single-quotes a word for sh. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The tools, when this process may isolate containers: it is root, the tools
 * are there, namespaces can be made, and an overlay with its upper layer under
 * `root` can be mounted. Undefined otherwise (the rootless mode).
 */
export function probeIsolation(root: string): IsolationTools | undefined {
  if (process.getuid?.() !== 0 || process.platform !== 'linux') return undefined;
  const names = ['unshare', 'nsenter', 'mount', 'mkdir', 'touch', 'ln', 'cp', 'chroot', 'env'] as const;
  const tools: Partial<IsolationTools> = {};
  for (const n of names) {
    const p = findTool(n);
    if (!p) return undefined;
    tools[n] = p;
  }
  const t = tools as IsolationTools;
  t.setpriv = findTool('setpriv');
  const dir = join(root, `.probe-${process.pid}`);
  try {
    for (const d of ['upper', 'work', 'rootfs']) mkdirSync(join(dir, d), { recursive: true });
    const overlay = `${t.mount} -t overlay overlay -o ${shq(`lowerdir=/,upperdir=${dir}/upper,workdir=${dir}/work`)} ${shq(`${dir}/rootfs`)}`;
    const pidns = `${t.unshare} --pid --fork --kill-child --mount-proc=${shq(`${dir}/rootfs/proc`)} /bin/true`;
    const r = spawnSync(t.unshare, ['--mount', '--uts', '--ipc', '/bin/sh', '-c', `${overlay} && exec ${pidns}`], { stdio: 'ignore', timeout: 10_000 });
    return r.status === 0 ? t : undefined;
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Mount points of the host (from mountinfo), unescaped. */
function hostMounts(): string[] {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4])
      .filter((p): p is string => !!p)
      .map((p) => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  } catch {
    return [];
  }
}

const under = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/**
 * The host's mounts other than `/` that a container sees read-only: not the
 * kernel's (/proc, /sys, /dev, /run), and nothing under `privateDir` (the
 * cluster's own state: other pods' volumes are mounted there).
 */
export function sharedHostMounts(privateDir: string): string[] {
  const seen = new Set<string>();
  for (const p of hostMounts()) {
    if (p === '/' || ['/proc', '/sys', '/dev', '/run'].some((d) => under(p, d)) || under(p, privateDir)) continue;
    seen.add(p);
  }
  return [...seen].sort();
}

/**
 * `path` as the container sees it, every symbolic link followed inside the
 * container's root (whose lower layer is the host's `/`): an absolute path
 * that never leaves the root.
 */
export function resolveInRoot(
  path: string,
  lstat: (p: string) => { isSymbolicLink(): boolean } = lstatSync,
  readlink: (p: string) => string = readlinkSync,
): string {
  const todo = path.split('/').filter(Boolean);
  const parts: string[] = [];
  let hops = 0;
  while (todo.length) {
    const part = todo.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      parts.pop();
      continue;
    }
    const next = `/${[...parts, part].join('/')}`;
    let link = false;
    try {
      link = lstat(next).isSymbolicLink();
    } catch {
      // not there (yet): made as a directory or file
    }
    // The container's own /proc, /sys and /dev are not the host's: their links are not followed.
    const own = ['proc', 'sys', 'dev'].includes(parts[0] ?? part);
    if (link && !own && ++hops <= 40) {
      const target = readlink(next);
      if (target.startsWith('/')) parts.length = 0;
      todo.unshift(...target.split('/').filter(Boolean));
      continue;
    }
    parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** Where a path of the container is on the host, for checking it: under the mount that holds it, or the host's own. */
function hostPathOf(p: string, mounts: Pick<Mount, 'container_path' | 'host_path'>[]): string {
  let best: Pick<Mount, 'container_path' | 'host_path'> | undefined;
  for (const m of mounts) if (under(p, m.container_path) && (!best || m.container_path.length > best.container_path.length)) best = m;
  return best ? join(best.host_path, p.slice(best.container_path.length)) : p;
}

/** Whether the container can run `cmd` (looked up in its PATH as execvp does). */
export function commandExists(cmd: string, path: string | undefined, c: ContainerRoot): boolean {
  const mounts = [...c.mounts, ...Object.entries(c.extra).map(([container_path, host_path]) => ({ container_path, host_path }))];
  const workingDir = c.workingDir;
  const runnable = (p: string) => {
    try {
      const h = hostPathOf(p, mounts);
      if (!statSync(h).isFile()) return false;
      accessSync(h, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return runnable(resolvePath(workingDir, cmd));
  return (path ?? DEFAULT_PATH).split(':').some((d) => runnable(join(resolvePath('/', d || '.'), cmd)));
}

/** The arguments that make `chroot` enter the root as the container's user. */
function chrootArgs(t: IsolationTools, rootfs: string, user: ContainerUser | undefined, caps: Capabilities): string[] {
  if (!t.setpriv) {
    const spec = user ? [`--userspec=${user.uid}:${user.gid}`, `--groups=${[user.gid, ...user.groups].join(',')}`] : [];
    return [t.chroot, ...spec, rootfs];
  }
  // chroot as root, then setpriv: the user and groups, and (unless privileged) the bounding set the command's capabilities come from.
  const who = user ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, user.groups.length ? `--groups=${user.groups.join(',')}` : '--clear-groups'] : [];
  const bounding = caps.all ? [] : [`--bounding-set=-all${caps.keep.map((c) => `,+${c.toLowerCase()}`).join('')}`, '--inh-caps=-all'];
  return [t.chroot, rootfs, t.setpriv, ...who, ...bounding, ...(caps.noNewPrivs ? ['--no-new-privs'] : []), '--'];
}

/** The capabilities a container keeps: all (privileged), or these (lower-case names without CAP_). */
export interface Capabilities {
  all: boolean;
  keep: string[];
  noNewPrivs: boolean;
}

/** What a container runtime grants by default (containerd's and Docker's list). */
export const DEFAULT_CAPABILITIES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
];

/** The capabilities of a container's security context: privileged keeps all; otherwise the default set with its adds and drops. */
export function containerCapabilities(config: ContainerConfig): Capabilities {
  const sc = config.linux?.security_context;
  const norm = (c: string) => c.toUpperCase().replace(/^CAP_/, '');
  const add = (sc?.capabilities?.add_capabilities ?? []).map(norm);
  const drop = (sc?.capabilities?.drop_capabilities ?? []).map(norm);
  const noNewPrivs = !!sc?.no_new_privs;
  if (sc?.privileged || add.includes('ALL')) return { all: true, keep: [], noNewPrivs };
  const keep = new Set(drop.includes('ALL') ? [] : DEFAULT_CAPABILITIES.filter((c) => !drop.includes(c)));
  for (const c of add) keep.add(c);
  return { all: false, keep: [...keep], noNewPrivs };
}

/** The shell lines that build a container's root inside its new mount namespace. */
export function setupScript(t: IsolationTools, c: ContainerRoot, shared: string[]): string {
  const R = join(c.dir, 'rootfs');
  const at = (p: string) => shq(join(R, p));
  const L: string[] = ['set -e'];
  const mount = (...a: string[]) => L.push(`${t.mount} ${a.join(' ')}`);
  const made = new Set<string>();
  const mkdir = (p: string) => {
    if (!made.has(p)) L.push(`${t.mkdir} -p ${at(p)}`);
    made.add(p);
  };
  const touch = (p: string) => {
    mkdir(dirname(p));
    L.push(`[ -e ${at(p)} ] || ${t.touch} ${at(p)}`);
  };
  const bind = (src: string, target: string, dir: boolean, ro: boolean) => {
    if (dir) mkdir(target);
    else touch(target);
    mount('--bind', shq(src), at(target));
    if (ro) mount('-o', 'remount,bind,ro', at(target));
  };
  mount('-t', 'overlay', 'overlay', '-o', shq(`lowerdir=/,upperdir=${c.dir}/upper,workdir=${c.dir}/work`), shq(R));
  // The host's other filesystems, read-only.
  for (const p of shared) {
    if (!existsSync(p)) continue;
    bind(p, p, statSync(p).isDirectory(), true);
  }
  mount('-o', 'bind,ro', '/sys', at('/sys'));
  mount('-t', 'tmpfs', '-o', 'nosuid,mode=755', 'tmpfs', at('/dev'));
  for (const d of ['null', 'zero', 'full', 'random', 'urandom', 'tty']) {
    L.push(`${t.touch} ${at(`/dev/${d}`)}`);
    mount('--bind', `/dev/${d}`, at(`/dev/${d}`));
  }
  L.push(`${t.mkdir} ${at('/dev/pts')} ${at('/dev/shm')} ${at('/dev/mqueue')}`);
  made.add('/dev');
  made.add('/dev/pts');
  made.add('/dev/shm');
  mount('-t', 'devpts', '-o', 'newinstance,ptmxmode=0666,mode=0620', 'devpts', at('/dev/pts'));
  mount('-t', 'tmpfs', '-o', 'nosuid,nodev,mode=1777', 'shm', at('/dev/shm'));
  L.push(`${t.ln} -s pts/ptmx ${at('/dev/ptmx')}`);
  L.push(`${t.ln} -s /proc/self/fd ${at('/dev/fd')}`);
  for (const [i, n] of ['stdin', 'stdout', 'stderr'].entries()) L.push(`${t.ln} -s /proc/self/fd/${i} ${at(`/dev/${n}`)}`);
  // Programs of the runtime's images (node and its scripts), at paths any user may reach.
  for (const [target, src] of Object.entries(c.extra)) bind(src, resolveInRoot(target), statSync(src).isDirectory(), true);
  for (const [path, src] of Object.entries(c.copies ?? {})) {
    const target = resolveInRoot(path);
    mkdir(dirname(target));
    L.push(`${t.cp} ${shq(src)} ${at(target)}`);
  }
  for (const [path, src] of Object.entries(c.files)) {
    if (c.mounts.some((m) => m.container_path === path)) continue;
    bind(src, resolveInRoot(path), false, false);
  }
  for (const m of c.mounts) {
    let dir = true;
    try {
      dir = statSync(m.host_path).isDirectory();
    } catch {
      // a missing source mounts as a directory
    }
    bind(m.host_path, resolveInRoot(m.container_path), dir, !!m.readonly);
  }
  L.push(`echo ${shq(c.hostname)} > /proc/sys/kernel/hostname`);
  mkdir(resolveInRoot(c.workingDir));
  if (c.readonlyRoot) mount('-o', 'remount,bind,ro', shq(R));
  return L.join('\n');
}

/**
 * The rest of PID 1's script: start the command in the root as the
 * container's user (stdin passed on explicitly: a background command would
 * get /dev/null), relay signals to it, and exit with its status.
 */
function initScript(t: IsolationTools, c: ContainerRoot): string {
  const relay = ['TERM', 'INT', 'HUP', 'QUIT', 'USR1', 'USR2'].map((s) => `trap 'kill -${s} $c 2>/dev/null; t=1' ${s}`);
  return [
    'set +e',
    'exec 3<&0',
    `${chrootArgs(t, join(c.dir, 'rootfs'), c.user, c.caps).map(shq).join(' ')} ${t.env} --chdir=${shq(c.workingDir)} -- "$@" 0<&3 3<&- &`,
    'c=$!',
    'exec 3<&-',
    ...relay,
    // A relayed signal interrupts wait (status > 128, t set): wait again for the command's own status.
    's=',
    'while :; do t=; wait $c; r=$?; if [ -n "$t" ] && [ $r -gt 128 ]; then s=$r; continue; fi; [ $r -eq 127 ] && [ -n "$s" ] && exit $s; exit $r; done',
  ].join('\n');
}

/** The argv that starts `argv` isolated in `c` (the directories are made here). */
export function isolatedArgv(t: IsolationTools, c: ContainerRoot, shared: string[], argv: string[]): string[] {
  for (const d of ['upper', 'work', 'rootfs']) mkdirSync(join(c.dir, d), { recursive: true });
  // The PID namespace is made last, so that the init is its PID 1 and the command its PID 2; its /proc is mounted as it is made.
  const pidns = [
    t.unshare,
    '--pid',
    '--fork',
    '--kill-child',
    `--mount-proc=${join(c.dir, 'rootfs', 'proc')}`,
    '/bin/sh',
    '-c',
    initScript(t, c),
    'kubeling-init',
  ];
  const script = `${setupScript(t, c, shared)}\nexec ${pidns.map(shq).join(' ')} "$@"`;
  return [t.unshare, '--mount', '--uts', '--ipc', '/bin/sh', '-c', script, 'kubeling-setup', ...argv];
}

/** The argv that runs `argv` in a running isolated container whose PID 1 is `initPid` (a host pid). */
export function enterArgv(t: IsolationTools, c: ContainerRoot, initPid: number, argv: string[]): string[] {
  return [
    t.nsenter,
    `--target=${initPid}`,
    '--mount',
    '--uts',
    '--ipc',
    '--pid',
    '--',
    ...chrootArgs(t, join(c.dir, 'rootfs'), c.user, c.caps),
    t.env,
    `--chdir=${c.workingDir}`,
    '--',
    ...argv,
  ];
}

/**
 * PID 1 of an isolated container, as the host numbers it: the child of its
 * (second) `unshare`, which has the first's pid, once it is in a PID
 * namespace of its own (before that, the children are the setup's commands).
 */
export function initPidOf(unsharePid: number): number | undefined {
  try {
    const kids = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    const pid = kids.length === 1 ? Number(kids[0]) : undefined;
    if (pid === undefined || readlinkSync(`/proc/${pid}/ns/pid`) === readlinkSync('/proc/self/ns/pid')) return undefined;
    return pid;
  } catch {
    return undefined;
  }
}

/** Waits (polling, up to `timeoutMs`) until an isolated container's PID 1 runs; undefined when it does not. */
export async function waitForInit(unsharePid: number, gone: () => boolean, timeoutMs = 10_000): Promise<number | undefined> {
  for (let waited = 0; waited < timeoutMs && !gone(); waited += 5) {
    const pid = initPidOf(unsharePid);
    if (pid !== undefined) return pid;
    await new Promise((r) => setTimeout(r, 5));
  }
  return undefined;
}

/** Where an isolated container finds the runtime's image programs (node and its scripts). */
const IMAGE_PROGRAMS = '/usr/lib/kubeling';

/** The user of the container's security context (runc's: gid 0 unless named), or none to stay root. */
function containerUser(config: ContainerConfig): ContainerUser | undefined {
  const sc = config.linux?.security_context;
  const uid = sc?.run_as_user ? Number(sc.run_as_user.value) : undefined;
  const gid = sc?.run_as_group ? Number(sc.run_as_group.value) : undefined;
  const groups = (sc?.supplemental_groups ?? []).map(Number);
  if (uid === undefined && gid === undefined && !groups.length) return undefined;
  return { uid: uid ?? 0, gid: gid ?? 0, groups };
}

/**
 * A created container, isolated: its root, what starts it (`argv`, empty when
 * there is no command) and what it runs (`command`, the image programs at the
 * paths an isolated container reaches them, whatever its user).
 */
export function isolateContainer(
  tools: IsolationTools,
  shared: string[],
  c: {
    dir: string;
    hostname: string;
    config: ContainerConfig;
    files: Record<string, string>;
    argv: string[];
    env: Record<string, string>;
    /** The image's own files (`CatalogImage.files`), bound read-only. */
    imageFiles?: Record<string, string> | undefined;
    /** The image's content (`CatalogImage.copies`), copied into the root. */
    imageCopies?: Record<string, string> | undefined;
  },
): { argv: string[]; isolation: { tools: IsolationTools; root: ContainerRoot; command: string[] } } {
  const programs = (a: string) =>
    a === process.execPath ? `${IMAGE_PROGRAMS}/node` : a.startsWith(`${IMAGES_DIR}/`) ? `${IMAGE_PROGRAMS}/images/${a.slice(IMAGES_DIR.length + 1)}` : a;
  const command = c.argv.map(programs);
  // The image's PATH names its programs where the container sees them.
  if (c.env.PATH) c.env.PATH = c.env.PATH.split(':').map(programs).join(':');
  const root: ContainerRoot = {
    dir: c.dir,
    hostname: c.hostname,
    mounts: c.config.mounts ?? [],
    files: c.files,
    readonlyRoot: !!c.config.linux?.security_context?.readonly_rootfs,
    user: containerUser(c.config),
    caps: containerCapabilities(c.config),
    workingDir: c.config.working_dir || '/',
    extra: { ...c.imageFiles, [`${IMAGE_PROGRAMS}/node`]: process.execPath, [`${IMAGE_PROGRAMS}/images`]: IMAGES_DIR },
    copies: c.imageCopies,
  };
  return { argv: command.length ? isolatedArgv(tools, root, shared, command) : [], isolation: { tools, root, command } };
}
