/**
 * metav1.LabelSelector objects as selectors (upstream's
 * k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go): null/undefined selects
 * nothing, an empty one everything; operators In/NotIn/Exists/DoesNotExist;
 * bad keys, values and operators throw `SelectorParseError` as upstream does.
 */
import { goQuote } from '../field-errors.js';
import { type Operator, type Requirement, SelectorParseError, newRequirement } from './requirement.js';
import { type LabelSelector, everything, nothing } from './selector.js';

export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>> | null | undefined;
  matchExpressions?: readonly { key: string; operator: string; values?: readonly string[] | null | undefined }[] | null | undefined;
}

const EXPRESSION_OPERATORS: Readonly<Record<string, Operator>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * metav1.LabelSelectorAsSelector: null/undefined → nothing, no matchLabels and
 * no matchExpressions → everything; otherwise the ANDed requirements. Throws
 * SelectorParseError for invalid keys/values (`key: Invalid value: ...`,
 * `values[0][k]: Invalid value: ...`) and operators (`"Foo" is not a valid
 * label selector operator`).
 */
export function selectorFromLabelSelector(ls: LabelSelectorObject | null | undefined): LabelSelector {
  if (ls === null || ls === undefined) return nothing();
  const matchLabels = Object.entries(ls.matchLabels ?? {});
  const matchExpressions = ls.matchExpressions ?? [];
  if (matchLabels.length + matchExpressions.length === 0) return everything();
  const reqs: Requirement[] = [];
  for (const [k, v] of matchLabels) reqs.push(newRequirement(k, '=', [v]));
  for (const e of matchExpressions) {
    const op = Object.hasOwn(EXPRESSION_OPERATORS, e.operator) ? EXPRESSION_OPERATORS[e.operator] : undefined;
    if (!op) throw new SelectorParseError(`${goQuote(String(e.operator))} is not a valid label selector operator`);
    reqs.push(newRequirement(e.key, op, e.values?.length ? [...e.values] : null));
  }
  return everything().add(...reqs);
}

/** Alias with upstream's name. */
export const labelSelectorAsSelector = selectorFromLabelSelector;

/**
 * The selector string of a LabelSelector object, as Scale's `status.selector`
 * carries it (`app=web,tier in (db)`); '' for null, empty or invalid selectors.
 */
export function labelSelectorToString(ls: LabelSelectorObject | null | undefined): string {
  try {
    return selectorFromLabelSelector(ls).toString();
  } catch {
    return '';
  }
}

/** metav1.FormatLabelSelector (kubectl's SELECTOR column): `<none>` when empty, `<error>` when invalid. */
export function formatLabelSelector(ls: LabelSelectorObject | null | undefined): string {
  let s: string;
  try {
    s = selectorFromLabelSelector(ls).toString();
  } catch {
    return '<error>';
  }
  return s.length ? s : '<none>';
}
