/**
 * The runtime's image catalog: images it can "pull" without a registry. Each
 * names what a container of it runs when the pod gives no command: `pause`
 * sleeps, `busybox` is the host's shell tools (its default command is `sh`),
 * `nginx` is a static HTTP server on the pod IP. Anything else fails to pull as
 * a registry's "not found" would. Pulled images are kept in memory by id (one
 * per repository: its tags share it).
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriError, GRPC_UNKNOWN, parseImageRef, type Image, type ImageRef, type ImageSpec } from '@kubeling/cri';

export { parseImageRef, type ImageRef };

export interface CatalogImage {
  /** Repository as normalized, e.g. docker.io/library/busybox. */
  repository: string;
  entrypoint: string[];
  cmd: string[];
  env: Record<string, string>;
  /** Bytes reported as the image size. */
  size: number;
  /** Other repositories that name the same image (a registry's older or mirrored names). */
  aliases?: string[];
  /** Programs at paths inside the image, for commands that name them (`/agnhost netexec`): what runs instead. */
  binaries?: Record<string, string[]>;
  /** Host files that stand for the image's own at these paths in an isolated container's root. */
  files?: Record<string, string>;
  /** The image's content an isolated container may change (copied into its root): container path → host file. */
  copies?: Record<string, string>;
}

/** The host's busybox, when it has one: the busybox image's /bin/sh is busybox's ash, as in the real image. */
const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find((p) => existsSync(p));

/** The directory of the scripts that stand for images' programs. */
export const IMAGES_DIR = fileURLToPath(new URL('../images/', import.meta.url)).replace(/\/$/, '');
const NGINX = `${IMAGES_DIR}/nginx.mjs`;
const AGNHOST = `${IMAGES_DIR}/agnhost.mjs`;
const HTTPD = `${IMAGES_DIR}/httpd.mjs`;

/** The PATH of images whose tools are the host's, with the programs kubeling adds (dig, nc, nslookup) first. */
const TOOLS_PATH = `${IMAGES_DIR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

const CATALOG: CatalogImage[] = [
  { repository: 'registry.k8s.io/pause', aliases: ['k8s.gcr.io/pause'], entrypoint: ['sleep'], cmd: ['infinity'], env: {}, size: 311_000 },
  {
    // The conformance suite's test server (its ENTRYPOINT /agnhost, CMD pause), under v1.20's names too.
    repository: 'registry.k8s.io/e2e-test-images/agnhost',
    aliases: ['k8s.gcr.io/e2e-test-images/agnhost', 'gcr.io/kubernetes-e2e-test-images/agnhost', 'us.gcr.io/k8s-artifacts-prod/e2e-test-images/agnhost'],
    entrypoint: [process.execPath, AGNHOST],
    cmd: ['pause'],
    // Alpine with bind-tools and netcat upstream: dig, nslookup and nc beside the host's tools.
    env: { PATH: TOOLS_PATH },
    size: 52_000_000,
    binaries: { '/agnhost': [process.execPath, AGNHOST], '/agnhost-2': [process.execPath, AGNHOST] },
  },
  // The update demo of kubectl's conformance tests: agnhost's test-webserver serving a data.json that names the picture.
  ...['nautilus', 'kitten'].map(
    (name): CatalogImage => ({
      repository: `registry.k8s.io/e2e-test-images/${name}`,
      aliases: [`k8s.gcr.io/e2e-test-images/${name}`, `gcr.io/kubernetes-e2e-test-images/${name}`],
      entrypoint: [process.execPath, AGNHOST],
      cmd: ['test-webserver'],
      env: { PATH: TOOLS_PATH },
      copies: { '/data.json': `${IMAGES_DIR}/update-demo/${name}.json` },
      size: 53_000_000,
      binaries: { '/agnhost': [process.execPath, AGNHOST] },
    }),
  ),
  {
    // The DNS tests' querier: Debian's dnsutils (dig) beside the host's tools.
    repository: 'registry.k8s.io/e2e-test-images/jessie-dnsutils',
    aliases: ['k8s.gcr.io/e2e-test-images/jessie-dnsutils', 'gcr.io/kubernetes-e2e-test-images/jessie-dnsutils'],
    entrypoint: [],
    cmd: ['sh'],
    env: { PATH: TOOLS_PATH },
    size: 93_000_000,
  },
  {
    repository: 'docker.io/library/httpd',
    entrypoint: [process.execPath, HTTPD],
    cmd: [],
    env: { HTTPD_VERSION: '2.4.38', HTTPD_PREFIX: '/usr/local/apache2' },
    // Its DocumentRoot's page, which the StatefulSet tests move away to make a pod unready.
    copies: { '/usr/local/apache2/htdocs/index.html': `${IMAGES_DIR}/httpd/default-page` },
    size: 32_000_000,
  },
  {
    repository: 'docker.io/library/busybox',
    entrypoint: [],
    cmd: ['sh'],
    env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
    ...(BUSYBOX ? { files: { '/bin/sh': BUSYBOX } } : {}),
    size: 2_140_979,
  },
  { repository: 'docker.io/library/nginx', entrypoint: [process.execPath, NGINX], cmd: [], env: { NGINX_VERSION: '1.27.0' }, size: 67_000_000 },
];

export function catalogImage(ref: ImageRef): CatalogImage | undefined {
  return CATALOG.find((c) => c.repository === ref.repository || c.aliases?.includes(ref.repository));
}

/** A stable image id for a reference (sha256 of the repository: tags share the image). */
export function imageId(ref: ImageRef): string {
  return `sha256:${createHash('sha256').update(ref.repository).digest('hex')}`;
}

/** The images pulled so far. */
export class ImageStore {
  private readonly images = new Map<string, Image>();

  /** The pulled image a reference names. */
  get(ref: ImageRef): Image | undefined {
    return this.images.get(imageId(ref));
  }

  list(): Image[] {
    return [...this.images.values()];
  }

  /** The image a reference names, or one whose id is given. */
  status(image: ImageSpec): Image | undefined {
    const ref = parseImageRef(image?.image ?? '');
    if (!ref) {
      // An id asks by id.
      return [...this.images.values()].find((i) => i.id === image?.image);
    }
    return this.images.get(imageId(ref));
  }

  /** "Pulls" a catalog image (adding the tag to an image already there); returns its id. */
  pull(image: ImageSpec): string {
    const name = image?.image ?? '';
    const ref = parseImageRef(name);
    if (!ref) throw new CriError(GRPC_UNKNOWN, `failed to pull and unpack image "${name}": invalid reference format`);
    const cat = catalogImage(ref);
    if (!cat) {
      throw new CriError(GRPC_UNKNOWN, `failed to pull and unpack image "${ref.full}": failed to resolve reference "${ref.full}": ${ref.full}: not found`);
    }
    const id = imageId(ref);
    const cur = this.images.get(id);
    const tags = new Set([...(cur?.repo_tags ?? []), ...(ref.tag ? [`${ref.repository}:${ref.tag}`] : [])]);
    this.images.set(id, {
      id,
      repo_tags: [...tags],
      repo_digests: [`${ref.repository}@${id}`],
      size: cat.size,
      username: '',
      spec: { image: id },
      pinned: cat.repository.endsWith('/pause'),
    });
    return id;
  }

  remove(image: ImageSpec): void {
    const img = this.status(image);
    if (img) this.images.delete(img.id);
  }
}

/**
 * A container without namespaces of its own has a directory for its root: the
 * image's content is copied in, and each mount is a symlink at its path there.
 */
export function fillDirectoryRoot(
  rootDir: string,
  copies: Record<string, string> | undefined,
  mounts: readonly { container_path: string; host_path: string }[],
): void {
  for (const [path, src] of Object.entries(copies ?? {})) {
    mkdirSync(dirname(join(rootDir, path)), { recursive: true });
    copyFileSync(src, join(rootDir, path));
  }
  for (const m of mounts) {
    const link = join(rootDir, m.container_path);
    mkdirSync(dirname(link), { recursive: true });
    try {
      symlinkSync(m.host_path, link);
    } catch {
      // already linked (same attempt recreated)
    }
  }
}
