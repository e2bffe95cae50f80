/**
 * Label selectors, as upstream's k8s.io/apimachinery/pkg/labels and
 * metav1.LabelSelectorAsSelector.
 *
 * - `parseLabelSelector` reads the string syntax (`?labelSelector=`); see
 *   parser.ts (and lexer.ts for its tokens).
 * - `selectorFromLabelSelector` converts a LabelSelector object; see
 *   label-selector.ts.
 * - Selectors keep their requirements sorted by key (stable); `toString()` is
 *   upstream's canonical form; `matches` follows upstream exactly. See
 *   selector.ts and requirement.ts.
 *
 * All parse and conversion failures throw `SelectorParseError`.
 */
export {
  type Operator,
  type Requirement,
  VALID_REQUIREMENT_OPERATORS,
  SelectorParseError,
  newRequirement,
  requirementErrors,
  requirementMatches,
  requirementString,
} from './requirement.js';
export { type LabelSelector, everything, matchesNothing, nothing, selectorFromSet, validatedSelectorFromSet } from './selector.js';
export { parseLabelSelector } from './parser.js';
export { type LabelSelectorObject, formatLabelSelector, labelSelectorAsSelector, labelSelectorToString, selectorFromLabelSelector } from './label-selector.js';
