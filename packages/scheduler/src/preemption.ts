/**
 * DefaultPreemption (kubernetes pkg/scheduler/framework/plugins/defaultpreemption
 * and framework/preemption): when a pod fits nowhere, find the node where
 * evicting lower-priority pods would let it fit, evicting as few and as
 * unimportant pods as possible and breaking as few PodDisruptionBudgets as
 * possible.
 *
 * For each node that failed with a resolvable reason: remove every pod of lower
 * priority, check the pod fits, then add the would-be victims back one by one —
 * PDB-protected ones first, most important first — keeping each that still
 * leaves room. Among the nodes that work, choose the fewest PDB violations, then
 * the lowest highest-victim priority, the smallest priority sum, the fewest
 * victims.
 */
import type { KubeObject, policyv1 } from '@kubeling/api';
import { rfc3339, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { NodeInfo, Pod, PodInfo, Status } from './framework/types.js';
import type { Profile } from './framework/profile.js';

export const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const NO_VICTIMS = 'No preemption victims found for incoming pod';

export interface Candidate {
  node: string;
  victims: PodInfo[];
  pdbViolations: number;
}

export interface PreemptionResult {
  candidate?: Candidate;
  /** The PostFilter part of the FitError message ("preemption: 0/N nodes are available: ..."). */
  message: string;
}

/** What preemption reads of a PodDisruptionBudget: its selector and the disruptions it allows. */
export type PdbView = KubeObject & {
  spec?: Pick<policyv1.PodDisruptionBudgetSpec, 'selector'>;
  status?: Partial<Pick<policyv1.PodDisruptionBudgetStatus, 'disruptionsAllowed'>>;
};

export interface PreemptionContext {
  profile: Profile;
  nodes: readonly NodeInfo[];
  pdbs: readonly PdbView[];
  /** Runs PreFilter + Filter for the pod against `nodes` with `node` as the one to check. */
  fits(pod: PodInfo, nodes: readonly NodeInfo[], node: NodeInfo): Status | null;
  /** Percentage / absolute floor of candidate nodes to dry-run (upstream: 10 %, 100). */
  minCandidatePercentage?: number;
  minCandidateAbsolute?: number;
}

/** Whether the pod may preempt at all, and if not, why (upstream PodEligibleToPreemptOthers). */
export function eligibleToPreempt(pod: PodInfo, nodeOf: (name: string) => NodeInfo | undefined): string | undefined {
  if (pod.spec.preemptionPolicy === 'Never') return 'not eligible due to preemptionPolicy=Never.';
  const nominated = pod.pod.status?.nominatedNodeName;
  if (nominated) {
    const n = nodeOf(nominated);
    // Victims of an earlier preemption are still leaving: wait for them.
    if (n)
      for (const p of n.pods.values())
        if (p.pod.metadata.deletionTimestamp && p.priority < pod.priority) return 'not eligible due to a terminating pod on the nominated node.';
  }
  return undefined;
}

function histogramMessage(total: number, reasons: Map<string, number>): string {
  const parts = [...reasons].map(([r, n]) => `${n} ${r}`).sort();
  return `preemption: 0/${total} nodes are available: ${parts.join(', ')}.`;
}

interface PdbState {
  selector: ReturnType<typeof selectorFromLabelSelector>;
  namespace: string;
  allowed: number;
}

function pdbStates(pdbs: readonly PdbView[]): PdbState[] {
  const out: PdbState[] = [];
  for (const pdb of pdbs) {
    const spec = pdb.spec ?? {};
    if (!spec.selector) continue;
    try {
      out.push({ selector: selectorFromLabelSelector(spec.selector), namespace: pdb.metadata.namespace ?? '', allowed: pdb.status?.disruptionsAllowed ?? 0 });
    } catch {
      // A PDB with a bad selector protects nothing.
    }
  }
  return out;
}

/** Splits victims into those whose eviction would break a PDB and those that would not. */
function splitByPdb(victims: PodInfo[], pdbs: PdbState[]): { violating: PodInfo[]; nonViolating: PodInfo[] } {
  const allowed = pdbs.map((p) => p.allowed);
  const violating: PodInfo[] = [];
  const nonViolating: PodInfo[] = [];
  for (const v of victims) {
    let breaks = false;
    pdbs.forEach((p, i) => {
      if (p.namespace !== v.pod.metadata.namespace || !p.selector.matches(v.labels)) return;
      allowed[i]!--;
      if (allowed[i]! < 0) breaks = true;
    });
    (breaks ? violating : nonViolating).push(v);
  }
  return { violating, nonViolating };
}

const startTime = (p: PodInfo): number => Date.parse(p.pod.status?.startTime ?? p.pod.metadata.creationTimestamp ?? '') || 0;

/** More important first: higher priority, then earlier start. */
const moreImportant = (a: PodInfo, b: PodInfo) => b.priority - a.priority || startTime(a) - startTime(b);

function dryRun(ctx: PreemptionContext, pod: PodInfo, node: NodeInfo, pdbs: PdbState[]): Candidate | undefined {
  const clone = node.clone();
  const view = ctx.nodes.map((n) => (n === node ? clone : n));
  const potential = [...clone.pods.values()].filter((p) => p.priority < pod.priority).sort(moreImportant);
  for (const v of potential) clone.removePod(v.key);
  if (ctx.fits(pod, view, clone)) return undefined;
  const { violating, nonViolating } = splitByPdb(potential, pdbs);
  const victims: PodInfo[] = [];
  let pdbViolations = 0;
  const reprieve = (v: PodInfo, isViolating: boolean) => {
    clone.addPod(v);
    if (ctx.fits(pod, view, clone)) {
      clone.removePod(v.key);
      victims.push(v);
      if (isViolating) pdbViolations++;
    }
  };
  for (const v of violating) reprieve(v, true);
  for (const v of nonViolating) reprieve(v, false);
  return { node: node.name, victims: victims.sort(moreImportant), pdbViolations };
}

/** pickOneNodeForPreemption. */
export function pickCandidate(cs: Candidate[]): Candidate | undefined {
  const key = (c: Candidate) => [
    c.pdbViolations,
    c.victims.length ? c.victims[0]!.priority : Number.MIN_SAFE_INTEGER,
    c.victims.reduce((s, v) => s + v.priority + 2 ** 31, 0),
    c.victims.length,
  ];
  const less = (a: number[], b: number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
    return false;
  };
  let best: Candidate | undefined;
  let bestKey: number[] = [];
  for (const c of cs) {
    const k = key(c);
    if (!best || less(k, bestKey)) {
      best = c;
      bestKey = k;
    }
  }
  return best;
}

export function preempt(ctx: PreemptionContext, pod: PodInfo, diagnosis: Map<string, Status>): PreemptionResult {
  const total = ctx.nodes.length;
  const reasons = new Map<string, number>();
  const bump = (r: string) => reasons.set(r, (reasons.get(r) ?? 0) + 1);
  const potential: NodeInfo[] = [];
  for (const n of ctx.nodes) {
    const st = diagnosis.get(n.name);
    if (st?.code === 'UnschedulableAndUnresolvable') bump(NOT_HELPFUL);
    else potential.push(n);
  }
  if (!potential.length) return { message: histogramMessage(total, reasons) };
  const pdbs = pdbStates(ctx.pdbs);
  const want = Math.max(ctx.minCandidateAbsolute ?? 100, Math.floor((potential.length * (ctx.minCandidatePercentage ?? 10)) / 100));
  const candidates: Candidate[] = [];
  const offset = Math.floor(Math.random() * potential.length);
  for (let i = 0; i < potential.length; i++) {
    const n = potential[(offset + i) % potential.length]!;
    const c = dryRun(ctx, pod, n, pdbs);
    if (c) {
      candidates.push(c);
      if (candidates.length >= want) break;
    } else bump(NO_VICTIMS);
  }
  const best = pickCandidate(candidates);
  if (!best) return { message: histogramMessage(total, reasons) };
  return { candidate: best, message: '' };
}

/** The status patch that marks a victim before it is deleted: the DisruptionTarget condition, as upstream's preemption writes it. */
export function disruptionTargetPatch(victim: Pod, schedulerName: string): { status: { conditions: unknown[] } } {
  const condition = {
    type: 'DisruptionTarget',
    status: 'True',
    lastTransitionTime: rfc3339(),
    reason: 'PreemptionByScheduler',
    message: `${schedulerName}: preempting to accommodate a higher priority pod`,
  };
  return { status: { conditions: [...(victim.status?.conditions ?? []).filter((x) => x.type !== 'DisruptionTarget'), condition] } };
}
