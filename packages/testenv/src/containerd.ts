/**
 * A hermetic containerd for tests: its own root, state, sockets and CNI
 * configuration under a temp directory, a bridge network of its own with a
 * /24 the test picks, `restrict_oom_score_adj = true` (this kind of VM lacks
 * CAP_SYS_RESOURCE), and the sandbox image served by a local registry.
 * Available only as root on Linux with containerd, runc, the CNI plugins and
 * busybox-static installed; `containerdUnavailable()` says why not otherwise.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { busyboxRootfs, ociImage, startRegistry, tar, type Registry } from './oci.js';
import { stopChild, waitFor } from './etcd.js';

const BINARIES = ['/usr/bin/containerd', '/usr/sbin/runc', '/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback', '/bin/busybox'];

/** Why containerd tests cannot run here, or undefined when they can. */
export function containerdUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'containerd tests need Linux';
  if (process.getuid?.() !== 0) return 'containerd tests need root';
  const missing = BINARIES.filter((b) => !existsSync(b));
  if (missing.length) return `containerd tests need ${missing.join(', ')} (apt-get install containerd runc containernetworking-plugins busybox-static)`;
  return undefined;
}

export interface Containerd {
  endpoint: string;
  registry: Registry;
  /** Image references served by the registry: busybox, nginx (busybox httpd), pause. */
  images: { busybox: string; nginx: string; pause: string; missing: string };
  /** The pods' network, e.g. 10.244.7.0/24. */
  subnet: string;
  stop(): Promise<void>;
}

export interface ContainerdOptions {
  /** Where its root, state, sockets and configuration go (default: a new temp directory, removed on stop). */
  dir?: string;
  /** Serve docker.io references (`nginx`, `busybox`) from the local registry too, as a registry mirror. */
  mirrorDockerHub?: boolean;
  /** The /24 of the pods' bridge network (default: a random 10.244.x.0/24). */
  subnet?: string;
}

export async function startContainerd(opts: ContainerdOptions = {}): Promise<Containerd> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'kl-ctrd-'));
  mkdirSync(dir, { recursive: true });
  const layer = tar(
    busyboxRootfs({
      'var/www/index.html': '<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body><h1>Welcome to nginx!</h1></body></html>\n',
    }),
  );
  const busybox = ociImage(layer, { Cmd: ['sh'] });
  const pause = ociImage(layer, { Entrypoint: ['/bin/sleep'], Cmd: ['inf'] });
  // The "nginx" image: busybox httpd on $NGINX_PORT (80 by default), logging each request.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, for the image's shell
  const nginx = ociImage(layer, { Entrypoint: ['/bin/sh', '-c', 'exec httpd -f -v -p "${NGINX_PORT:-80}" -h /var/www'] });
  const registry = await startRegistry({ 'library/busybox:latest': busybox, 'library/nginx:1.27': nginx, 'library/nginx:latest': nginx, 'pause:3.10': pause });
  const n = opts.subnet ? Number(opts.subnet.split('.')[2]) : 100 + Math.floor(Math.random() * 150);
  const subnet = opts.subnet ?? `10.244.${n}.0/24`;
  const bridge = `klbr${n}`;
  const netd = join(dir, 'net.d');
  mkdirSync(netd, { recursive: true });
  writeFileSync(
    join(netd, '10-kubeling.conflist'),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: `kubeling-test-${n}`,
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet, gateway: `10.244.${n}.1` }]], dataDir: join(dir, 'ipam') },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
        { type: 'loopback' },
      ],
    }),
  );
  const sock = join(dir, 'containerd.sock');
  const config = `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
[grpc]
  address = "${sock}"
[ttrpc]
  address = "${join(dir, 'ttrpc.sock')}"
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "${registry.host}/pause:3.10"
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "${netd}"
${opts.mirrorDockerHub ? `    [plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]\n      endpoint = ["http://${registry.host}"]\n` : ''}`;
  writeFileSync(join(dir, 'config.toml'), config);
  const child: ChildProcess = spawn('/usr/bin/containerd', ['--config', join(dir, 'config.toml')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  try {
    await waitFor(async () => existsSync(sock), 20_000, 'containerd to listen');
  } catch (e) {
    await stopChild(child);
    await registry.close();
    throw new Error(`${(e as Error).message}: ${stderr}`);
  }
  return {
    endpoint: `unix://${sock}`,
    registry,
    images: {
      busybox: `${registry.host}/library/busybox:latest`,
      nginx: `${registry.host}/library/nginx:1.27`,
      pause: `${registry.host}/pause:3.10`,
      missing: `${registry.host}/library/no-such-image:1.0`,
    },
    subnet,
    stop: async () => {
      await stopChild(child);
      await new Promise<void>((r) =>
        spawn('ip', ['link', 'delete', bridge], { stdio: 'ignore' })
          .once('exit', () => r())
          .once('error', () => r()),
      );
      await registry.close();
      // Mounts under root/ go with containerd's shims; what is left is plain files.
      if (!opts.dir) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
