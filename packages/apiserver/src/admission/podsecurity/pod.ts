/**
 * The parts of a pod the Pod Security Standards look at, as they arrive in
 * JSON (a `null` is an unset pointer), and the helpers upstream's checks share
 * (k8s.io/pod-security-admission policy/helpers.go, visitor.go): the container
 * visitor (init, then regular, then ephemeral containers), `joinQuote`,
 * `pluralize`, and Go's ordering of string sets.
 */

export interface Capabilities {
  add?: string[] | null;
  drop?: string[] | null;
}

export interface SELinuxOptions {
  user?: string | null;
  role?: string | null;
  type?: string | null;
}

export interface ProfileType {
  type?: string | null;
}

export interface WindowsOptions {
  hostProcess?: boolean | null;
}

export interface SecurityContext {
  privileged?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  capabilities?: Capabilities | null;
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  seccompProfile?: ProfileType | null;
  appArmorProfile?: ProfileType | null;
  seLinuxOptions?: SELinuxOptions | null;
  procMount?: string | null;
  windowsOptions?: WindowsOptions | null;
}

export interface PodSecurityContext {
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  seccompProfile?: ProfileType | null;
  appArmorProfile?: ProfileType | null;
  seLinuxOptions?: SELinuxOptions | null;
  sysctls?: { name?: string | null }[] | null;
  windowsOptions?: WindowsOptions | null;
}

export interface Container {
  name?: string;
  image?: string;
  ports?: { hostPort?: number | null }[] | null;
  securityContext?: SecurityContext | null;
}

export type Volume = { name?: string } & Record<string, unknown>;

export interface PodSpec {
  hostNetwork?: boolean | null;
  hostPID?: boolean | null;
  hostIPC?: boolean | null;
  os?: { name?: string | null } | null;
  runtimeClassName?: string | null;
  securityContext?: PodSecurityContext | null;
  initContainers?: Container[] | null;
  containers?: Container[] | null;
  ephemeralContainers?: Container[] | null;
  volumes?: Volume[] | null;
}

export interface PodMeta {
  name?: string;
  annotations?: Record<string, string> | null;
  ownerReferences?: { uid?: string; controller?: boolean | null }[] | null;
}

/** Every container of the pod: init containers, then containers, then ephemeral containers. */
export function containersOf(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

/** `"a", "b"` (upstream's joinQuote: no escaping). */
export const joinQuote = (items: readonly string[]): string => (items.length ? `"${items.join('", "')}"` : '');

export const pluralize = (singular: string, plural: string, count: number): string => (count === 1 ? singular : plural);

/** Go's byte-wise string order (sort.Strings, sets.String.List). */
export function goCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The distinct values, sorted as Go's sets.String.List. */
export const sortedSet = (values: Iterable<string>): string[] => [...new Set(values)].sort(goCompare);

/** A container's name as upstream prints it (the empty string when unset). */
export const nameOf = (c: { name?: string | null }): string => c.name ?? '';

/** One check's verdict; a forbidden one says why briefly (reason) and, optionally, in detail. */
export interface CheckResult {
  allowed: boolean;
  forbiddenReason?: string;
  forbiddenDetail?: string;
}

export type CheckPodFn = (meta: PodMeta, spec: PodSpec) => CheckResult;

export const ALLOWED: CheckResult = { allowed: true };

export const forbiddenResult = (reason: string, detail: string): CheckResult => ({ allowed: false, forbiddenReason: reason, forbiddenDetail: detail });

export interface VersionedCheck {
  /** The first policy minor (of v1) this revision applies to. */
  minimumVersion: number;
  checkPod: CheckPodFn;
  /** Baseline checks this restricted check replaces at restricted level. */
  overrideCheckIDs?: string[];
}

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** Strictly increasing minimum versions. */
  versions: VersionedCheck[];
}

/** `container "a"` / `containers "a", "b"`. */
export const containersPhrase = (names: readonly string[]): string => `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
