/**
 * The runtime's image catalog: images it can "pull" without a registry. Each
 * names what a container of it runs when the pod gives no command: `pause`
 * sleeps, `busybox` is the host's shell tools (its default command is `sh`),
 * `nginx` is a static HTTP server on the pod IP. Anything else fails to pull as
 * a registry's "not found" would.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export interface CatalogImage {
  /** Repository as normalized, e.g. docker.io/library/busybox. */
  repository: string;
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  /** Bytes reported as the image size. */
  size: number;
}

const NGINX = fileURLToPath(new URL('../images/nginx.mjs', import.meta.url));

const CATALOG: CatalogImage[] = [
  { repository: 'registry.k8s.io/pause', entrypoint: ['sleep'], cmd: ['infinity'], env: {}, size: 311_000 },
  { repository: 'docker.io/library/busybox', entrypoint: [], cmd: ['sh'], env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' }, size: 2_140_979 },
  { repository: 'docker.io/library/nginx', entrypoint: [process.execPath, NGINX], cmd: [], env: { NGINX_VERSION: '1.27.0' }, size: 67_000_000 },
];

export interface ImageRef {
  /** registry/path without tag or digest. */
  repository: string;
  tag?: string;
  digest?: string;
  /** The full normalized reference (repository:tag or repository@digest). */
  full: string;
}

const REF = /^(?:([a-zA-Z0-9.-]+(?::[0-9]+)?)\/)?([a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}))?$/;

/**
 * Docker's reference normalization: `nginx` → `docker.io/library/nginx:latest`,
 * `me/app:v1` → `docker.io/me/app:v1`, `localhost:5000/x` kept. Undefined when
 * the reference is malformed.
 */
export function parseImageRef(image: string): ImageRef | undefined {
  const m = REF.exec(image);
  if (!m) return undefined;
  let domain: string | undefined = m[1];
  let path = m[2]!;
  let tag: string | undefined = m[3];
  const digest: string | undefined = m[4];
  if (domain && !domain.includes('.') && !domain.includes(':') && domain !== 'localhost') {
    path = `${domain}/${path}`;
    domain = undefined;
  }
  domain ??= 'docker.io';
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  const repository = `${domain}/${path}`;
  if (!tag && !digest) tag = 'latest';
  const full = digest ? `${repository}@${digest}` : `${repository}:${tag}`;
  return { repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}), full };
}

export function catalogImage(ref: ImageRef): CatalogImage | undefined {
  return CATALOG.find((c) => c.repository === ref.repository);
}

/** A stable image id for a reference (sha256 of the repository: tags share the image). */
export function imageId(ref: ImageRef): string {
  return `sha256:${createHash('sha256').update(ref.repository).digest('hex')}`;
}
