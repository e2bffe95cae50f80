/**
 * OCI images without a registry on the internet: a root filesystem made from
 * the host's static busybox (every applet a symlink), packed as an uncompressed
 * tar layer, with an image config and manifest; and a small registry on
 * 127.0.0.1 serving them (`/v2/`, manifests by tag or digest, blobs) so that a
 * container runtime's PullImage really pulls.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';

interface TarEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  data?: Buffer;
  target?: string;
  mode?: number;
}

function octal(n: number, len: number): string {
  return n.toString(8).padStart(len - 1, '0') + '\0';
}

/** A POSIX ustar archive (numeric owner 0, mtime 0), as image layers want. */
export function tar(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of [...entries].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const h = Buffer.alloc(512);
    let name = e.path + (e.type === 'dir' && !e.path.endsWith('/') ? '/' : '');
    let prefix = '';
    if (name.length > 100) {
      const cut = name.lastIndexOf('/', 154);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    }
    h.write(name, 0, 100, 'utf8');
    h.write(octal(e.mode ?? (e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : 0o644), 8), 100);
    h.write(octal(0, 8), 108);
    h.write(octal(0, 8), 116);
    h.write(octal(e.type === 'file' ? (e.data?.length ?? 0) : 0, 12), 124);
    h.write(octal(0, 12), 136);
    h.write('        ', 148);
    h.write(e.type === 'file' ? '0' : e.type === 'dir' ? '5' : '2', 156);
    if (e.target) h.write(e.target, 157, 100, 'utf8');
    h.write('ustar\0', 257);
    h.write('00', 263);
    h.write(prefix, 345, 155, 'utf8');
    let sum = 0;
    for (const b of h) sum += b;
    h.write(octal(sum, 7) + ' ', 148);
    blocks.push(h);
    if (e.type === 'file' && e.data?.length) {
      blocks.push(e.data);
      const pad = (512 - (e.data.length % 512)) % 512;
      if (pad) blocks.push(Buffer.alloc(pad));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

const sha = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** The busybox root filesystem as tar entries, plus extra files. */
export function busyboxRootfs(extra: Record<string, string> = {}): TarEntry[] {
  const bin = readFileSync('/bin/busybox');
  const applets = execFileSync('/bin/busybox', ['--list'], { encoding: 'utf8' })
    .split('\n')
    .filter((a) => a && a !== 'busybox');
  const entries: TarEntry[] = [
    { path: 'bin', type: 'dir' },
    { path: 'bin/busybox', type: 'file', data: bin, mode: 0o755 },
    { path: 'sbin', type: 'symlink', target: 'bin' },
    { path: 'usr', type: 'dir' },
    { path: 'usr/bin', type: 'symlink', target: '../bin' },
    { path: 'etc', type: 'dir' },
    { path: 'etc/passwd', type: 'file', data: Buffer.from('root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n') },
    { path: 'etc/group', type: 'file', data: Buffer.from('root:x:0:\nnogroup:x:65534:\n') },
    { path: 'tmp', type: 'dir', mode: 0o1777 },
    { path: 'var', type: 'dir' },
    { path: 'root', type: 'dir', mode: 0o700 },
    ...applets.map((a) => ({ path: `bin/${a}`, type: 'symlink' as const, target: 'busybox' })),
  ];
  for (const [p, content] of Object.entries(extra)) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if (!entries.some((e) => e.path === d)) entries.push({ path: d, type: 'dir' });
    }
    entries.push({ path: p, type: 'file', data: Buffer.from(content) });
  }
  return entries;
}

export interface OciImage {
  manifest: Buffer;
  manifestDigest: string;
  blobs: Map<string, Buffer>;
}

/** One image: a single layer plus a config with entrypoint/cmd/env. */
export function ociImage(layer: Buffer, config: { Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; WorkingDir?: string }): OciImage {
  const layerDigest = sha(layer);
  const cfg = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Env: ['PATH=/bin:/sbin:/usr/bin'], ...config },
      rootfs: { type: 'layers', diff_ids: [layerDigest] },
    }),
  );
  const cfgDigest = sha(cfg);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: cfgDigest, size: cfg.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerDigest, size: layer.length }],
    }),
  );
  return {
    manifest,
    manifestDigest: sha(manifest),
    blobs: new Map([
      [layerDigest, layer],
      [cfgDigest, cfg],
    ]),
  };
}

export interface Registry {
  /** host:port, e.g. localhost:41234 */
  host: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves `images` (name:tag → image) on 127.0.0.1 with the registry v2 API. */
export async function startRegistry(images: Record<string, OciImage>): Promise<Registry> {
  const byRepo = new Map<string, Map<string, OciImage>>();
  for (const [ref, img] of Object.entries(images)) {
    const i = ref.lastIndexOf(':');
    const repo = ref.slice(0, i);
    const tag = ref.slice(i + 1);
    const m = byRepo.get(repo) ?? new Map<string, OciImage>();
    m.set(tag, img);
    m.set(img.manifestDigest, img);
    byRepo.set(repo, m);
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://registry');
    if (url.pathname === '/v2/' || url.pathname === '/v2') {
      res.writeHead(200, { 'docker-distribution-api-version': 'registry/2.0' }).end('{}');
      return;
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    const repo = m && byRepo.get(m[1]!);
    if (!m || !repo) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry' }] }));
      return;
    }
    if (m[2] === 'manifests') {
      const img = repo.get(m[3]!);
      if (!img) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] }));
        return;
      }
      res.writeHead(200, {
        'content-type': 'application/vnd.oci.image.manifest.v1+json',
        'docker-content-digest': img.manifestDigest,
        'content-length': String(img.manifest.length),
      });
      res.end(req.method === 'HEAD' ? undefined : img.manifest);
      return;
    }
    for (const img of repo.values()) {
      const blob = img.blobs.get(m[3]!);
      if (blob) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'docker-content-digest': m[3]!, 'content-length': String(blob.length) });
        res.end(req.method === 'HEAD' ? undefined : blob);
        return;
      }
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { host: `localhost:${port}`, server, close: () => new Promise((r) => server.close(() => r())) };
}
