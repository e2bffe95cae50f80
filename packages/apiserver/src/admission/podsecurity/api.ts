/**
 * Pod Security levels, policy versions and the namespace labels that choose
 * them (k8s.io/pod-security-admission api/constants.go, helpers.go).
 *
 * - A level is `privileged`, `baseline` or `restricted`; a version `latest` or
 *   `v1.<minor>` (no leading zeros).
 * - `policyToEvaluate(labels, defaults)` always returns a usable policy: a
 *   label that does not parse becomes `restricted`/`latest` for enforce (fail
 *   closed) and `privileged` for audit and warn (fail open), and is reported as
 *   an `Invalid` field error on `metadata.labels[<label>]`.
 */
import { field, type FieldError } from '@kubeling/apimachinery';

export type Level = 'privileged' | 'baseline' | 'restricted';

/** A policy version: a minor of v1, or `latest` (newer than every version). */
export type Version = number | 'latest';

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const ENFORCE_LEVEL_LABEL = `${LABEL_PREFIX}enforce`;
export const ENFORCE_VERSION_LABEL = `${LABEL_PREFIX}enforce-version`;
export const AUDIT_LEVEL_LABEL = `${LABEL_PREFIX}audit`;
export const AUDIT_VERSION_LABEL = `${LABEL_PREFIX}audit-version`;
export const WARN_LEVEL_LABEL = `${LABEL_PREFIX}warn`;
export const WARN_VERSION_LABEL = `${LABEL_PREFIX}warn-version`;
/** Audit annotations carry the same prefix (`pod-security.kubernetes.io/audit-violations`, ...). */
export const AUDIT_ANNOTATION_PREFIX = LABEL_PREFIX;

const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

export const versionString = (v: Version): string => (v === 'latest' ? 'latest' : `v1.${v}`);

/** `restricted:latest`, `baseline:v1.25`. */
export const lvString = (lv: LevelVersion): string => `${lv.level}:${versionString(lv.version)}`;

/** Whether `a` is older than `b` (`latest` is newer than everything, even future versions). */
export function older(a: Version, b: Version): boolean {
  if (a === 'latest') return false;
  if (b === 'latest') return true;
  return a < b;
}

export const sameLevelVersion = (a: LevelVersion, b: LevelVersion): boolean => a.level === b.level && a.version === b.version;

/** ParseLevel: the level, or an error message (the caller falls back). */
export function parseLevel(s: string): { level: Level; error?: string } {
  if ((LEVELS as readonly string[]).includes(s)) return { level: s as Level };
  return { level: 'restricted', error: `must be one of ${LEVELS.join(', ')}` };
}

const VERSION_RE = /^v1\.([0-9]|[1-9][0-9]*)$/;

/** ParseVersion: `latest` or `v1.x`; anything else is `latest` with an error. */
export function parseVersion(s: string): { version: Version; error?: string } {
  if (s === 'latest') return { version: 'latest' };
  const m = VERSION_RE.exec(s);
  const n = m ? Number(m[1]) : Number.NaN;
  // Go's Atoi refuses what does not fit an int64; a safe integer is the same bound in practice.
  if (!Number.isSafeInteger(n)) return { version: 'latest', error: 'must be "latest" or "v1.x"' };
  return { version: n };
}

/** CompareLevels: -1 when `a` is less strict than `b`, 0 when equal, +1 when stricter. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

export const fullyPrivileged = (p: Policy): boolean => p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';

/** Two level-versions mean the same thing (any version of privileged is privileged). */
const equivalentLV = (a: LevelVersion, b: LevelVersion): boolean => a.level === b.level && (a.level === 'privileged' || a.version === b.version);

export const equivalentPolicy = (a: Policy, b: Policy): boolean =>
  equivalentLV(a.enforce, b.enforce) && equivalentLV(a.audit, b.audit) && equivalentLV(a.warn, b.warn);

export const DEFAULT_POLICY: Policy = {
  enforce: { level: 'privileged', version: 'latest' },
  audit: { level: 'privileged', version: 'latest' },
  warn: { level: 'privileged', version: 'latest' },
};

/**
 * PolicyToEvaluate: the namespace's labels over the configured defaults. The
 * errors are `Invalid` on `metadata.labels[<label>]`, in upstream's order
 * (enforce, enforce-version, audit, audit-version, warn, warn-version).
 */
export function policyToEvaluate(labels: Readonly<Record<string, string>> | null | undefined, defaults: Policy): { policy: Policy; errors: FieldError[] } {
  const p: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  if (!labels) return { policy: p, errors };
  const bad = (label: string, value: string, error: string | undefined) => {
    if (error) errors.push(field.invalid(field.path('metadata', 'labels').key(label), value, error));
    return !!error;
  };
  const modes = [
    ['enforce', ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL],
    ['audit', AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL],
    ['warn', WARN_LEVEL_LABEL, WARN_VERSION_LABEL],
  ] as const;
  for (const [mode, levelLabel, versionLabel] of modes) {
    const level = labels[levelLabel];
    if (typeof level === 'string') {
      const r = parseLevel(level);
      p[mode].level = r.level;
      // Audit and warn fail open; enforce fails closed (restricted).
      if (bad(levelLabel, level, r.error) && mode !== 'enforce') p[mode].level = 'privileged';
    }
    const version = labels[versionLabel];
    if (typeof version === 'string') {
      const r = parseVersion(version);
      p[mode].version = r.version;
      bad(versionLabel, version, r.error);
    }
  }
  return { policy: p, errors };
}
