/**
 * Image references as Docker normalizes them, shared by the kubelet (which
 * refuses a malformed image before asking the runtime) and the runtimes.
 */

export interface ImageRef {
  /** registry/path without tag or digest. */
  repository: string;
  tag?: string;
  digest?: string;
  /** The full normalized reference (repository:tag or repository@digest). */
  full: string;
}

const REF =
  /^(?:([a-zA-Z0-9.-]+(?::[0-9]+)?)\/)?([a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[a-f0-9]{64}))?$/;

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
