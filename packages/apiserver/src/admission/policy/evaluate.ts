/**
 * Evaluating compiled admission expressions against one request
 * (k8s.io/apiserver pkg/admission/plugin/cel/activation.go and condition.go,
 * webhook/matchconditions/matcher.go, policy/validating/validator.go).
 *
 * - An expression that did not compile evaluates to the error `compilation
 *   error: <detail>`; a runtime error to `expression '<expr>' resulted in
 *   error: <err>`.
 * - Match conditions: any false skips; otherwise errors are the failure
 *   policy's (Fail: an error, Ignore: skipped); all true matches.
 * - Validations share one cost budget (RuntimeCELCostBudget, 10M) with the
 *   message expressions and the variables they compute; running out is
 *   `validation failed due to running out of cost budget, no further
 *   validation rules will be run`. A false validation is a deny with its
 *   reason (Invalid by default) and message: messageExpression's string
 *   (unless it fails, is blank, too long or multi-line), else `message`, else
 *   `failed expression: <expr>`.
 * - Audit annotations publish a string value, skip null or blank, and are an
 *   error for any other type.
 */
import type { KubeObject } from '@kubeling/api';
import { celError, LazyVariables, run, toTypedVal, toVal, type Val, valTypeName } from './cel.js';
import { type CompiledExpr, type CompiledPolicy, NAMESPACE_TYPE } from './compile.js';

export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
/** celconfig.RuntimeCELCostBudgetMatchConditions */
export const MATCH_CONDITIONS_BUDGET = 10_000_000;
/** celconfig.MaxEvaluatedMessageExpressionSizeBytes */
const MAX_MESSAGE_BYTES = 5 * 1024;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

export interface EvalInput {
  object: KubeObject | null;
  oldObject: KubeObject | null;
  /** The AdmissionRequest as JSON (cel.CreateAdmissionRequest). */
  request: Record<string, unknown>;
  /** The param object; undefined when the policy has no paramKind (no `params` variable). */
  params?: KubeObject | null;
  namespaceObject: KubeObject | null;
}

export type Outcome = { value: Val } | { error: string };

class BudgetExceeded extends Error {}

/** The variables of one evaluation, and the cost spent so far against a budget. */
export class Activation {
  readonly vars = new Map<string, Val>();
  spent = 0;

  constructor(
    input: EvalInput,
    variables: CompiledPolicy['variables'] = [],
    private budget = RUNTIME_CEL_COST_BUDGET,
  ) {
    this.vars.set('object', toVal(input.object));
    this.vars.set('oldObject', toVal(input.oldObject));
    this.vars.set('request', toVal(input.request));
    this.vars.set('namespaceObject', input.namespaceObject ? toTypedVal(namespaceView(input.namespaceObject), NAMESPACE_TYPE) : null);
    if (input.params !== undefined) this.vars.set('params', toVal(input.params));
    const byName = new Map(variables.map((v) => [v.name, v.expr]));
    this.vars.set('variables', new LazyVariables([...byName.keys()], (name) => this.variable(name, byName.get(name)!)));
  }

  /** A composited variable, computed on first use (composition.go variableAccessor.Callback); its cost counts. */
  private variable(name: string, e: CompiledExpr) {
    if (e.error || !e.program) return celError(`composited variable "${name}" fails to compile: ${e.error ?? ''}`);
    const r = run(e.program, this.vars, Math.min(PER_CALL_LIMIT, Math.max(0, this.budget - this.spent)));
    this.spent += r.cost;
    if ('error' in r) return celError(`composited variable "${name}" fails to evaluate: ${r.error}`);
    return r.value;
  }

  /** A fresh budget (audit annotations and match conditions get their own). */
  reset(budget: number): void {
    this.budget = budget;
    this.spent = 0;
  }

  /** Evaluates one expression; throws BudgetExceeded when the budget is gone. */
  eval(e: CompiledExpr): Outcome {
    if (e.error || !e.program) return { error: `compilation error: ${e.error ?? 'unexpected internal error compiling expression'}` };
    const r = run(e.program, this.vars, Math.min(PER_CALL_LIMIT, Math.max(0, this.budget - this.spent)));
    this.spent += r.cost;
    if (this.spent > this.budget) throw new BudgetExceeded();
    if ('error' in r) return { error: `expression '${e.expression}' resulted in error: ${r.error}` };
    return { value: r.value };
  }
}

/** CreateNamespaceObject: the namespace's metadata (without managedFields or owners), spec and status. */
function namespaceView(ns: KubeObject): Record<string, unknown> {
  const m = ns.metadata ?? {};
  const pick = (k: string) => (m[k as keyof typeof m] !== undefined ? { [k]: m[k as keyof typeof m] } : {});
  return {
    metadata: {
      ...pick('name'),
      ...pick('generateName'),
      ...pick('namespace'),
      ...(m.uid !== undefined ? { UID: m.uid } : {}),
      ...pick('resourceVersion'),
      ...pick('generation'),
      ...pick('creationTimestamp'),
      ...pick('deletionTimestamp'),
      ...pick('deletionGracePeriodSeconds'),
      ...pick('labels'),
      ...pick('annotations'),
      ...pick('finalizers'),
    },
    spec: (ns as { spec?: unknown }).spec ?? {},
    status: (ns as { status?: unknown }).status ?? {},
  };
}

export interface MatchResult {
  matches: boolean;
  /** The failing condition's name when one was false. */
  failedCondition?: string;
  /** Errors under failurePolicy Fail (joined as utilerrors.NewAggregate). */
  error?: string;
}

/** matchconditions.Matcher.Match. */
export function evalMatchConditions(conds: readonly { name: string; expr: CompiledExpr }[], act: Activation, failurePolicy: string): MatchResult {
  const errors: string[] = [];
  try {
    act.reset(MATCH_CONDITIONS_BUDGET);
    for (const c of conds) {
      const o = act.eval(c.expr);
      if ('error' in o) errors.push(o.error);
      else if (o.value === false) return { matches: false, failedCondition: c.name };
    }
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e;
    errors.push(OUT_OF_BUDGET);
  }
  if (errors.length) {
    if (failurePolicy === 'Ignore') return { matches: false };
    return { matches: false, error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
  }
  return { matches: true };
}

export interface Decision {
  action: 'admit' | 'deny';
  evaluation: 'admit' | 'deny' | 'error';
  message: string;
  reason?: string;
  /** The index of the validation (for the validation_failure audit annotation). */
  index: number;
}

export interface AuditAnnotationResult {
  key: string;
  action: 'publish' | 'exclude' | 'error';
  value?: string;
  error?: string;
}

export interface ValidateResult {
  decisions: Decision[];
  auditAnnotations: AuditAnnotationResult[];
}

const errorAction = (failurePolicy: string): Decision['action'] => (failurePolicy === 'Ignore' ? 'admit' : 'deny');

function messageOf(v: CompiledPolicy['validations'][number], messageOutcome: Outcome | undefined): string {
  let message = '';
  if (messageOutcome && 'value' in messageOutcome && typeof messageOutcome.value === 'string') {
    message = messageOutcome.value.trim();
    if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES || message.includes('\n')) message = '';
  }
  if (!message && v.message) message = v.message.trim();
  return message || `failed expression: ${v.expr.expression.trim()}`;
}

/** validator.Validate for one (binding, param): match conditions, validations with their messages, audit annotations. */
export function validatePolicy(compiled: CompiledPolicy, input: EvalInput): ValidateResult {
  const f = compiled.failurePolicy;
  const act = new Activation(input, compiled.variables);
  if (compiled.matchConditions.length) {
    const m = evalMatchConditions(compiled.matchConditions, act, f);
    if (m.error !== undefined) return { decisions: [{ action: errorAction(f), evaluation: 'error', message: m.error, index: 0 }], auditAnnotations: [] };
    if (!m.matches) return { decisions: [], auditAnnotations: [] };
  }
  act.reset(RUNTIME_CEL_COST_BUDGET);
  const outcomes: Outcome[] = [];
  try {
    for (const v of compiled.validations) outcomes.push(act.eval(v.expr));
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e;
    return { decisions: [{ action: errorAction(f), evaluation: 'error', message: OUT_OF_BUDGET, index: 0 }], auditAnnotations: [] };
  }
  const messages: (Outcome | undefined)[] = [];
  let messageBudgetGone = false;
  for (const v of compiled.validations) {
    if (!v.messageExpr || messageBudgetGone) {
      messages.push(undefined);
      continue;
    }
    try {
      messages.push(act.eval(v.messageExpr));
    } catch (e) {
      if (!(e instanceof BudgetExceeded)) throw e;
      messageBudgetGone = true;
      messages.push(undefined);
    }
  }
  const decisions = compiled.validations.map((v, i): Decision => {
    const o = outcomes[i]!;
    if ('error' in o) return { action: errorAction(f), evaluation: 'error', message: o.error, index: i };
    if (messageBudgetGone && v.messageExpr)
      return { action: errorAction(f), evaluation: 'error', message: `failed messageExpression: ${OUT_OF_BUDGET}`, index: i };
    if (o.value === true) return { action: 'admit', evaluation: 'admit', message: '', index: i };
    return { action: 'deny', evaluation: 'deny', message: messageOf(v, messages[i]), reason: v.reason ?? 'Invalid', index: i };
  });
  act.reset(RUNTIME_CEL_COST_BUDGET);
  const auditAnnotations = compiled.auditAnnotations.map((a): AuditAnnotationResult => {
    let o: Outcome;
    try {
      o = act.eval(a.expr);
    } catch (e) {
      if (!(e instanceof BudgetExceeded)) throw e;
      o = { error: OUT_OF_BUDGET };
    }
    if ('error' in o) return { key: a.key, action: f === 'Ignore' ? 'exclude' : 'error', error: o.error };
    if (o.value === null) return { key: a.key, action: 'exclude' };
    if (typeof o.value === 'string') {
      const value = o.value.trim();
      return value ? { key: a.key, action: 'publish', value } : { key: a.key, action: 'exclude' };
    }
    return {
      key: a.key,
      action: 'error',
      error: `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${valTypeName(o.value)}. Return type must be either string or null.`,
    };
  });
  return { decisions, auditAnnotations };
}
