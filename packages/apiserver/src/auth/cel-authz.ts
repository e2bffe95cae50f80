/**
 * The CEL of an authorization webhook's matchConditions (k8s.io/apiserver
 * pkg/authorization/cel compile.go and matcher.go). An expression sees
 * `request`, a kubernetes.SubjectAccessReviewSpec: `user`, `uid`, `groups`,
 * `extra` and every string of `resourceAttributes` always present (upstream
 * fills even the empty ones), `resourceAttributes` or `nonResourceAttributes`
 * present by the kind of request. It must be a bool.
 *
 * Evaluation (CELMatcher.Eval): the first condition that is false decides
 * "no match"; otherwise any condition that failed makes an error (each
 * `cel evaluation error: expression '<e>' resulted in error: <why>`,
 * aggregated), and only all true is a match.
 */
import { field } from '@kubeling/apimachinery';
import {
  compileExpression,
  evaluate,
  formatType,
  isError,
  jsonToVal,
  listOf,
  mapOf,
  type CelType,
  type Program,
  sameType,
  structOf,
  T,
} from '../apiextensions/cel/index.js';

const fields = (entries: [string, CelType][]) => new Map(entries);
const strings = (names: string[]): [string, CelType][] => names.map((n) => [n, T.string]);

const SELECTOR_REQUIREMENT = structOf('kubernetes.SelectorRequirement', fields([...strings(['key', 'operator']), ['values', listOf(T.string)]]));
const selector = (name: string) => structOf(name, fields([...strings(['rawSelector']), ['requirements', listOf(SELECTOR_REQUIREMENT)]]));

/** buildRequestType: what `request` declares. */
export const SAR_SPEC_TYPE = structOf(
  'kubernetes.SubjectAccessReviewSpec',
  fields([
    [
      'resourceAttributes',
      structOf(
        'kubernetes.ResourceAttributes',
        fields([
          ...strings(['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name']),
          ['fieldSelector', selector('kubernetes.FieldSelectorAttributes')],
          ['labelSelector', selector('kubernetes.LabelSelectorAttributes')],
        ]),
      ),
    ],
    ['nonResourceAttributes', structOf('kubernetes.NonResourceAttributes', fields(strings(['path', 'verb'])))],
    ['user', T.string],
    ['groups', listOf(T.string)],
    ['extra', mapOf(T.string, listOf(T.string))],
    ['uid', T.string],
  ]),
);

/** A SubjectAccessReview spec (authorization.k8s.io/v1) as the webhook is sent it. */
export interface SarSpec {
  user?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  resourceAttributes?: Record<string, string>;
  nonResourceAttributes?: { path?: string; verb?: string };
}

export interface CompiledCondition {
  expression: string;
  program: Program;
}

/** CompileCELExpression: the program, or upstream's cel.Error detail (`compilation failed: ...`, `must evaluate to bool but got int`). */
export function compileMatchCondition(expression: string): { condition: CompiledCondition } | { error: string } {
  const r = compileExpression(expression, { request: SAR_SPEC_TYPE });
  if (r.issues !== undefined || !r.program) return { error: `compilation failed: ${r.issues ?? ''}` };
  if (r.programError) return { error: `program instantiation failed: ${r.programError}` };
  if (!sameType(r.program.type, T.bool)) return { error: `must evaluate to bool but got ${formatType(r.program.type)}` };
  return { condition: { expression, program: r.program } };
}

/** convertObjectToUnstructured: every user field and every resource-attribute string, even empty ones. */
function requestValue(spec: SarSpec) {
  const ra = spec.resourceAttributes;
  const nra = spec.nonResourceAttributes;
  return jsonToVal({
    user: spec.user ?? '',
    groups: spec.groups ?? [],
    uid: spec.uid ?? '',
    extra: spec.extra ?? {},
    ...(ra
      ? {
          resourceAttributes: Object.fromEntries(['namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name'].map((k) => [k, ra[k] ?? ''])),
        }
      : {}),
    ...(nra ? { nonResourceAttributes: { verb: nra.verb ?? '', path: nra.path ?? '' } } : {}),
  });
}

/** CELMatcher.Eval over the spec a webhook would be sent. */
export function evalMatchConditions(conditions: readonly CompiledCondition[], spec: SarSpec): { matches: boolean; error?: string } {
  const vars = new Map([['request', requestValue(spec)]]);
  const errors: string[] = [];
  for (const c of conditions) {
    let value: unknown;
    try {
      value = evaluate(c.program, vars).value;
    } catch (e) {
      value = e;
    }
    if (isError(value) || value instanceof Error) {
      errors.push(`cel evaluation error: expression '${c.expression}' resulted in error: ${(value as Error).message}`);
      continue;
    }
    if (typeof value !== 'boolean') {
      errors.push(`cel evaluation error: expression '${c.expression}' eval result type should be bool`);
      continue;
    }
    if (!value) return { matches: false };
  }
  if (errors.length) return { matches: false, error: field.aggregateStrings(errors) };
  return { matches: true };
}
