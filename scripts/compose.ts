/**
 * `npm run compose:prepare`: what docker-compose.yml needs, under
 * .kubeling/compose/ (or `--dir`): the cluster PKI (the apiserver's
 * certificate names `kubernetes`, the alias it has on the compose network, and
 * 127.0.0.1 for the host), a kubeconfig per component, `kubeconfig` for the
 * host's kubectl; and .kubeling/compose/rootfs.tar — the image's whole filesystem, made from
 * this machine's Node binary and the libraries it links, etcd, busybox and the
 * repository with its node_modules, so that no base image is pulled.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureClusterPKI, ensureFrontProxyPKI, ensureServingCert } from '@kubeling/pki';
import { METRICS_SERVER_USER } from './addons.js';
import { CSI_DRIVER_GROUP, csiDriverUser } from '@kubeling/testenv/storage';
import { ROOT, STATE } from './cluster.js';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: join(STATE, 'compose') },
    port: { type: 'string', default: process.env.KUBELING_COMPOSE_PORT ?? '16443' },
    nodes: { type: 'string', default: '2' },
    'skip-rootfs': { type: 'boolean', default: false },
  },
  strict: true,
});
const dir = values.dir!;
export const ROOTFS = join(STATE, 'compose', 'rootfs.tar');

function which(cmd: string): string {
  for (const d of (process.env.PATH ?? '').split(':')) if (d && existsSync(join(d, cmd))) return join(d, cmd);
  throw new Error(`${cmd} not found on PATH (npm run up installs etcd; busybox comes from Debian's busybox-static)`);
}

/** The shared libraries a binary links (`ldd`), the loader included; none for a static binary. */
function libraries(binary: string): string[] {
  let out = '';
  try {
    out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  } catch {
    return [];
  }
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
  }
  return libs;
}

function kubeconfig(server: string, ca: string, cert: string, key: string, user: string): string {
  const b64 = (f: string) => readFileSync(f).toString('base64');
  return `apiVersion: v1\nkind: Config\nclusters:\n- name: kubeling\n  cluster:\n    server: ${server}\n    certificate-authority-data: ${b64(ca)}\nusers:\n- name: ${user}\n  user:\n    client-certificate-data: ${b64(cert)}\n    client-key-data: ${b64(key)}\ncontexts:\n- name: kubeling-compose\n  context: {cluster: kubeling, user: ${user}, namespace: default}\ncurrent-context: kubeling-compose\n`;
}

async function main(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const nodes = Array.from({ length: Number(values.nodes) }, (_, i) => `kubeling-node-${i + 1}`);
  const pki = await ensureClusterPKI(join(dir, 'pki'), {
    admin: { cn: 'kubernetes-admin', orgs: ['system:masters'] },
    'controller-manager': { cn: 'system:kube-controller-manager' },
    scheduler: { cn: 'system:kube-scheduler' },
    'metrics-server': { cn: METRICS_SERVER_USER },
    ...Object.fromEntries(nodes.map((n) => [`kubelet-${n}`, { cn: `system:node:${n}`, orgs: ['system:nodes'] }])),
    ...Object.fromEntries(nodes.map((n) => [`csi-${n}`, { cn: csiDriverUser(n), orgs: [CSI_DRIVER_GROUP] }])),
  });
  // Inside the compose network the apiserver answers as `kubernetes` (a name its certificate has).
  const inside = 'https://kubernetes:6443';
  mkdirSync(join(dir, 'kubeconfigs'), { recursive: true });
  const write = (name: string, user: string) =>
    writeFileSync(join(dir, 'kubeconfigs', `${name}.kubeconfig`), kubeconfig(inside, pki.ca, pki.clients[name]!.cert, pki.clients[name]!.key, user), {
      mode: 0o644,
    });
  write('controller-manager', 'system:kube-controller-manager');
  write('scheduler', 'system:kube-scheduler');
  write('metrics-server', METRICS_SERVER_USER);
  // The add-ons (the metrics server's Service, Endpoints and APIService) are applied from inside, as the admin.
  write('admin', 'kubernetes-admin');
  // The aggregation layer's front proxy, and the metrics server's serving certificate for its Service name.
  await ensureFrontProxyPKI(pki.dir);
  await ensureServingCert(pki.dir, 'metrics-server-serving', {
    commonName: 'metrics-server',
    ips: ['127.0.0.1'],
    dnsNames: ['metrics-server', 'metrics-server.kube-system.svc', 'localhost'],
  });
  for (const n of nodes) {
    write(`kubelet-${n}`, `system:node:${n}`);
    write(`csi-${n}`, csiDriverUser(n));
  }
  writeFileSync(
    join(dir, 'kubeconfig'),
    kubeconfig(`https://127.0.0.1:${values.port}`, pki.ca, pki.clients.admin!.cert, pki.clients.admin!.key, 'kubernetes-admin'),
    { mode: 0o600 },
  );
  // The containers read the keys as root from a read-only mount.
  for (const f of ['apiserver.key', 'sa.key', 'ca.key', 'front-proxy-client.key', 'metrics-server-serving.key', 'metrics-server.key', 'admin.key'])
    chmodSync(join(pki.dir, f), 0o644);
  console.log(`compose: PKI and kubeconfigs in ${dir}`);
  if (values['skip-rootfs']) return;

  const stage = join(dir, 'rootfs');
  rmSync(stage, { recursive: true, force: true });
  const put = (src: string, dest = src) => {
    mkdirSync(join(stage, dirname(dest)), { recursive: true });
    copyFileSync(src, join(stage, dest));
    chmodSync(join(stage, dest), 0o755);
  };
  const node = process.execPath;
  const etcd = which('etcd');
  const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((p) => existsSync(p)) ?? which('busybox');
  put(node, '/usr/local/bin/node');
  put(etcd, '/usr/bin/etcd');
  put(busybox, '/bin/busybox');
  for (const lib of new Set([...libraries(node), ...libraries(etcd), ...libraries(busybox)])) put(lib);
  for (const tool of [
    'sh',
    'wget',
    'hostname',
    'cut',
    'sleep',
    'cat',
    'ls',
    'echo',
    'env',
    'mkdir',
    'rm',
    'ps',
    'kill',
    'nc',
    'ip',
    'true',
    'false',
    'date',
    'head',
    'tail',
    'grep',
    'sed',
    'awk',
    'id',
    'uname',
  ]) {
    symlinkSync('busybox', join(stage, 'bin', tool));
  }
  mkdirSync(join(stage, 'etc'), { recursive: true });
  writeFileSync(join(stage, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n');
  writeFileSync(join(stage, 'etc', 'group'), 'root:x:0:\nnogroup:x:65534:\n');
  mkdirSync(join(stage, 'tmp'), { recursive: true, mode: 0o1777 });
  mkdirSync(join(stage, 'root'), { recursive: true });
  // The repository with its node_modules (pnpm's links are relative, so they survive the move).
  mkdirSync(join(stage, 'app'), { recursive: true });
  execFileSync('sh', ['-c', `tar -C "$1" --exclude=./.git --exclude=./.kubeling -cf - . | tar -C "$2" -xf -`, 'copy', ROOT, join(stage, 'app')]);
  // The image's filesystem always sits where the Dockerfile and .dockerignore expect it.
  const tar = ROOTFS;
  mkdirSync(dirname(tar), { recursive: true });
  execFileSync('tar', ['-C', stage, '-cf', tar, '.']);
  rmSync(stage, { recursive: true, force: true });
  console.log(`compose: image filesystem in ${tar}`);
  console.log(`\nNext:\n  docker-compose up -d --build\n  export KUBECONFIG=${join(dir, 'kubeconfig')}\n  kubectl get nodes`);
}

main().catch((e: Error) => {
  console.error(`compose: ${e.message}`);
  process.exit(1);
});
