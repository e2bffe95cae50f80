/**
 * Defaulting of flowcontrol.apiserver.k8s.io/v1 objects (kubernetes
 * pkg/apis/flowcontrol/v1/defaults.go), and the "semantic" equality the
 * mandatory-object checks and the bootstrap ensurer compare specs with.
 *
 * - FlowSchema: `matchingPrecedence` 0 → 1000.
 * - Limited levels: `nominalConcurrencyShares` absent → 30 (a pointer in v1:
 *   an explicit 0 stays), `lendablePercent` absent → 0.
 * - Exempt levels: both absent → 0 (only when `spec.exempt` is present).
 * - Queuing: `handSize` 0 → 8, `queues` 0 → 64, `queueLengthLimit` 0 → 50.
 */
import type { KubeObject } from '@kubeling/api';

type Obj = Record<string, unknown>;
const objOf = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const unsetNumber = (v: unknown) => v === undefined || v === null || v === 0;

export const DEFAULT_MATCHING_PRECEDENCE = 1000;
export const DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30;
export const DEFAULT_HAND_SIZE = 8;
export const DEFAULT_QUEUES = 64;
export const DEFAULT_QUEUE_LENGTH_LIMIT = 50;

export function defaultFlowSchemaSpec(spec: Obj | undefined): void {
  if (spec && unsetNumber(spec.matchingPrecedence)) spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
}

export function defaultPriorityLevelSpec(spec: Obj | undefined): void {
  if (!spec) return;
  const exempt = objOf(spec.exempt);
  if (exempt) {
    exempt.nominalConcurrencyShares ??= 0;
    exempt.lendablePercent ??= 0;
  }
  const limited = objOf(spec.limited);
  if (limited) {
    limited.nominalConcurrencyShares ??= DEFAULT_NOMINAL_CONCURRENCY_SHARES;
    limited.lendablePercent ??= 0;
    const queuing = objOf(objOf(limited.limitResponse)?.queuing);
    if (queuing) {
      if (unsetNumber(queuing.handSize)) queuing.handSize = DEFAULT_HAND_SIZE;
      if (unsetNumber(queuing.queues)) queuing.queues = DEFAULT_QUEUES;
      if (unsetNumber(queuing.queueLengthLimit)) queuing.queueLengthLimit = DEFAULT_QUEUE_LENGTH_LIMIT;
    }
  }
}

export const defaultFlowSchema = (obj: KubeObject): void => defaultFlowSchemaSpec(objOf(obj.spec));
export const defaultPriorityLevel = (obj: KubeObject): void => defaultPriorityLevelSpec(objOf(obj.spec));

/**
 * Go's zero values dropped: false, '', null and empty lists or objects (the
 * decoded Go structs hold no difference between those and absence).
 */
function prune(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(prune);
    return items.length ? items : undefined;
  }
  if (v && typeof v === 'object') {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      const p = prune(x);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (v === false || v === '' || v === null) return undefined;
  return v;
}

/** equality.Semantic.DeepEqual of two specs, as far as JSON tells them apart. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(prune(a))) === JSON.stringify(sortKeys(prune(b)));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Obj)[k])]),
    );
  }
  return v;
}
