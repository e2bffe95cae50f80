/**
 * The check registry and the aggregation of results (k8s.io/pod-security-admission
 * policy/registry.go, checks.go).
 *
 * - Every policy minor from v1.0 to the newest minimum version any check
 *   names gets, per check, the newest revision not newer than it; `latest`
 *   and versions past the newest are evaluated as the newest.
 * - Checks run baseline first then restricted, each group ordered by check ID
 *   (so messages list reasons in upstream's order); restricted drops the
 *   baseline checks its own checks override at that version.
 * - Privileged evaluates nothing.
 */
import type { LevelVersion } from './api.js';
import { BASELINE_CHECKS } from './checks-baseline.js';
import { RESTRICTED_CHECKS } from './checks-restricted.js';
import { type Check, type CheckPodFn, type CheckResult, type PodMeta, type PodSpec, type VersionedCheck, goCompare } from './pod.js';

export class Evaluator {
  private readonly baseline: CheckPodFn[][] = [];
  private readonly restricted: CheckPodFn[][] = [];
  /** The newest minor any check has a revision for: what `latest` means. */
  readonly maxVersion: number;

  constructor(checks: readonly Check[] = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS]) {
    this.maxVersion = Math.max(0, ...checks.map((c) => c.versions[c.versions.length - 1]!.minimumVersion));
    const ordered = (level: Check['level']) => checks.filter((c) => c.level === level).sort((a, b) => goCompare(a.id, b.id));
    const baselineIDs = ordered('baseline');
    const restrictedIDs = ordered('restricted');
    for (let v = 0; v <= this.maxVersion; v++) {
      const at = (c: Check): VersionedCheck | undefined => c.versions.filter((x) => x.minimumVersion <= v).pop();
      const overridden = new Set(restrictedIDs.flatMap((c) => at(c)?.overrideCheckIDs ?? []));
      const base = baselineIDs.map((c) => ({ id: c.id, vc: at(c) })).filter((x) => x.vc);
      const own = restrictedIDs.map((c) => at(c)).filter((x): x is VersionedCheck => !!x);
      this.baseline[v] = base.map((x) => x.vc!.checkPod);
      this.restricted[v] = [...base.filter((x) => !overridden.has(x.id)).map((x) => x.vc!.checkPod), ...own.map((x) => x.checkPod)];
    }
  }

  /** EvaluatePod: one result per check of the level at the version. */
  evaluatePod(lv: LevelVersion, meta: PodMeta, spec: PodSpec): CheckResult[] {
    if (lv.level === 'privileged') return [];
    const v = lv.version === 'latest' || lv.version > this.maxVersion ? this.maxVersion : lv.version;
    const checks = lv.level === 'baseline' ? this.baseline[v] : this.restricted[v];
    return (checks ?? []).map((check) => check(meta, spec));
  }
}

export interface AggregateResult {
  allowed: boolean;
  reasons: string[];
  /** Parallel to `reasons`; may hold empty strings. */
  details: string[];
}

export function aggregateCheckResults(results: readonly CheckResult[]): AggregateResult {
  const reasons: string[] = [];
  const details: string[] = [];
  for (const r of results) {
    if (r.allowed) continue;
    reasons.push(r.forbiddenReason || 'unknown forbidden reason');
    details.push(r.forbiddenDetail ?? '');
  }
  return { allowed: reasons.length === 0, reasons, details };
}

/** `host ports, privileged` (namespace warnings list only the reasons). */
export const forbiddenReason = (a: AggregateResult): string => a.reasons.join(', ');

/** `hostPort (container "c" uses hostPort 80), privileged (...)`: each reason with its detail in parentheses when it has one. */
export const forbiddenDetail = (a: AggregateResult): string => a.reasons.map((r, i) => (a.details[i] ? `${r} (${a.details[i]})` : r)).join(', ');
