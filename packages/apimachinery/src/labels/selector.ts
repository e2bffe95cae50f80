/**
 * Label selectors, as upstream's labels.Selector (internalSelector,
 * Everything, Nothing, SelectorFromSet in k8s.io/apimachinery/pkg/labels).
 *
 * A selector is its requirements, ANDed and kept sorted by key (stable);
 * `toString()` is upstream's canonical form, which is what Scale's
 * `status.selector` shows. The nothing-selector matches no labels and is the
 * one selector for which `matchesNothing` is true.
 */
import { type Requirement, byString, newRequirement, requirementMatches, requirementString } from './requirement.js';

export interface LabelSelector {
  /** The requirements, ANDed, sorted by key. */
  readonly requirements: readonly Requirement[];
  /** Whether the labels satisfy every requirement (a nothing-selector matches nothing). */
  matches(labels: Readonly<Record<string, string>> | null | undefined): boolean;
  /** True when the selector does not restrict anything (no requirements). */
  empty(): boolean;
  /** Upstream's canonical string form; '' for everything and for nothing. */
  toString(): string;
  /** The one value the selector requires `label` to have (`=`, `==`, or `in` with one value), if any. */
  requiresExactMatch(label: string): string | undefined;
  /** A new selector with more requirements (kept sorted by key). */
  add(...reqs: Requirement[]): LabelSelector;
}

class InternalSelector implements LabelSelector {
  readonly requirements: readonly Requirement[];
  constructor(reqs: readonly Requirement[]) {
    this.requirements = Object.freeze([...reqs]);
  }
  matches(labels: Readonly<Record<string, string>> | null | undefined): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels));
  }
  empty(): boolean {
    return this.requirements.length === 0;
  }
  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
  requiresExactMatch(label: string): string | undefined {
    const r = this.requirements.find((x) => x.key === label);
    if (!r) return undefined;
    if ((r.operator === '=' || r.operator === '==' || r.operator === 'in') && r.values.length === 1) return r.values[0];
    return undefined;
  }
  add(...reqs: Requirement[]): LabelSelector {
    // Array.prototype.sort is stable, so requirements on one key keep their order.
    return new InternalSelector([...this.requirements, ...reqs].sort((a, b) => byString(a.key, b.key)));
  }
}

const NOTHING: LabelSelector = Object.freeze({
  requirements: Object.freeze([]) as readonly Requirement[],
  matches: () => false,
  empty: () => false,
  toString: () => '',
  requiresExactMatch: () => undefined,
  add(): LabelSelector {
    return NOTHING;
  },
});

/** labels.Everything(): matches all labels. */
export const everything = (): LabelSelector => new InternalSelector([]);

/** labels.Nothing(): matches no labels (what a null LabelSelector means). */
export const nothing = (): LabelSelector => NOTHING;

/** labels.MatchesNothing: true only for the nothing-selector. */
export const matchesNothing = (s: LabelSelector): boolean => s === NOTHING;

/** labels.SelectorFromSet (no validation): `k=v` for each entry; empty or null selects everything. */
export function selectorFromSet(labels: Readonly<Record<string, string>> | null | undefined): LabelSelector {
  const reqs = Object.entries(labels ?? {}).map(([key, v]): Requirement => ({ key, operator: '=', values: [v] }));
  return everything().add(...reqs);
}

/** labels.ValidatedSelectorFromSet: like selectorFromSet, but keys and values are validated. */
export function validatedSelectorFromSet(labels: Readonly<Record<string, string>> | null | undefined): LabelSelector {
  return everything().add(...Object.entries(labels ?? {}).map(([k, v]) => newRequirement(k, '=', [v])));
}
