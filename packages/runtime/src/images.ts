/**
 * The runtime's image catalog: images it can "pull" without a registry. Each
 * names what a container of it runs when the pod gives no command: `pause`
 * sleeps, `busybox` is the host's shell tools (its default command is `sh`),
 * `nginx` is a static HTTP server on the pod IP. Anything else fails to pull as
 * a registry's "not found" would.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseImageRef, type ImageRef } from '@kubeling/cri';

export { parseImageRef, type ImageRef };

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

export function catalogImage(ref: ImageRef): CatalogImage | undefined {
  return CATALOG.find((c) => c.repository === ref.repository);
}

/** A stable image id for a reference (sha256 of the repository: tags share the image). */
export function imageId(ref: ImageRef): string {
  return `sha256:${createHash('sha256').update(ref.repository).digest('hex')}`;
}
