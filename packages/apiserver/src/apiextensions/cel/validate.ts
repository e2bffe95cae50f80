/**
 * Evaluation of compiled `x-kubernetes-validations` rules over a custom
 * resource (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/
 * validation.go `Validator.Validate`), as Kubernetes 1.33 reports it:
 *
 * - rules run on every non-null value their schema node applies to,
 *   recursing into properties, items and additionalProperties (and allOf);
 * - transition rules (those using `oldSelf`) run only when an old value
 *   correlates (unchanged object fields of non-atomic maps, map-list items
 *   with equal keys), except `optionalOldSelf` rules, which see
 *   `optional.none()`;
 * - a failing rule gives `<path>: Invalid value: "<schema type>": <message>`
 *   where the message is `message`, the messageExpression result, or
 *   `failed rule: <rule>`; `reason` chooses Forbidden/Required/Duplicate;
 *   `fieldPath` extends the path;
 * - runtime errors: `<err> evaluating rule: <rule>`, or for a runtime
 *   overload mismatch `'no such overload': call arguments did not match a
 *   supported operator, function or macro signature for rule: <rule>`;
 * - one cost budget per call (RuntimeCELCostBudget): once spent, `validation
 *   failed due to running out of cost budget, no further validation rules
 *   will be run` and nothing more runs; each expression is also held to the
 *   per-call limit.
 *
 * Not implemented: validation ratcheting of unchanged values (warnings
 * instead of errors) — every failing rule is an error.
 */
import { type FieldError, field } from '@kubeling/apimachinery';
import type { JSONSchemaProps, ValidationRule } from '../types.js';
import type { CompiledRule, RuleProgram } from './compile.js';
import { evaluate, PER_CALL_LIMIT, type Program, RUNTIME_CEL_COST_BUDGET } from './env.js';
import { COST_LIMIT_EXCEEDED } from './interpreter.js';
import { escapeName, withTypeAndObjectMeta } from './schema-decl.js';
import { jsonEqual, unstructuredToVal } from './unstructured.js';
import { CelError, OPTIONAL_NONE, OptionalV, type Val } from './values.js';

export interface ValidateOptions {
  /** Path of the object (default: none, so the root's errors have an empty field). */
  fldPath?: string;
  /** Runtime cost budget for the whole call (default RuntimeCELCostBudget). */
  costBudget?: number;
  /** Per-expression cost limit (default PerCallLimit). */
  perCallLimit?: number;
}

const BUDGET_EXHAUSTED = 'validation failed due to running out of cost budget, no further validation rules will be run';
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ruleString = (r: ValidationRule) => (r.message ? r.message.trim() : r.rule.trim());
const child = (p: string, name: string) => (p ? `${p}.${name}` : name);

class RuleValidator {
  readonly errors: FieldError[] = [];
  constructor(
    public budget: number,
    private readonly perCallLimit: number,
  ) {}

  /** Returns false once the budget is exhausted (no further rules run). */
  validate(p: RuleProgram, path: string, obj: Json, old: Json): boolean {
    if (obj === null || obj === undefined) return true;
    if (!this.expressions(p, path, obj, old)) return false;
    for (const a of p.allOf ?? []) if (!this.validate(a, path, obj, old)) return false;
    if (Array.isArray(obj)) return this.array(p, path, obj, old);
    if (isObj(obj)) return this.object(p, path, obj, isObj(old) ? old : undefined);
    return true;
  }

  private object(p: RuleProgram, path: string, obj: Record<string, Json>, old: Record<string, Json> | undefined): boolean {
    const correlatable = p.schema['x-kubernetes-map-type'] !== 'atomic';
    const oldOf = (k: string) => (correlatable && old && Object.hasOwn(old, k) ? old[k] : undefined);
    if (p.additionalProperties) {
      for (const [k, v] of Object.entries(obj)) if (!this.validate(p.additionalProperties, `${path}[${k}]`, v, oldOf(k))) return false;
    }
    if (p.properties) {
      for (const [k, v] of Object.entries(obj)) {
        const sub = p.properties.get(k);
        if (sub && !this.validate(sub, child(path, k), v, oldOf(k))) return false;
      }
    }
    return true;
  }

  private array(p: RuleProgram, path: string, obj: Json[], old: Json): boolean {
    if (!p.items) return true;
    const keys = p.schema['x-kubernetes-list-type'] === 'map' ? (p.schema['x-kubernetes-list-map-keys'] ?? []) : undefined;
    const oldItems = Array.isArray(old) && keys ? old : [];
    const sameKeys = (a: Json, b: Json) => isObj(a) && isObj(b) && keys!.every((k) => jsonEqual(a[k], b[k]));
    for (let i = 0; i < obj.length; i++) {
      const o = keys ? oldItems.find((x) => sameKeys(x, obj[i])) : undefined;
      if (!this.validate(p.items, `${path}[${i}]`, obj[i], o)) return false;
    }
    return true;
  }

  private run(program: Program, vars: Map<string, Val | CelError>): { value: Val | CelError; cost: number } {
    return evaluate(program, vars, { costLimit: this.perCallLimit });
  }

  private expressions(p: RuleProgram, path: string, obj: Json, old: Json): boolean {
    if (!p.rules.length) return true;
    const sts = p.schema;
    const stsType = sts.type ?? '';
    if (this.budget <= 0) {
      this.errors.push(field.invalid(path, stsType, BUDGET_EXHAUSTED));
      this.budget = -1;
      return false;
    }
    const schema: JSONSchemaProps = p.isResourceRoot ? withTypeAndObjectMeta(sts) : sts;
    const self = unstructuredToVal(obj, schema);
    const hasOld = old !== null && old !== undefined;
    const oldSelf = hasOld ? unstructuredToVal(old, schema) : undefined;
    for (const cr of p.rules) {
      if (cr.error) {
        this.errors.push(field.invalid(path, stsType, `rule compile error: ${cr.error}`));
        continue;
      }
      if (!cr.program) continue;
      if (cr.usesOldSelf && !hasOld && !cr.rule.optionalOldSelf) continue;
      const vars = new Map<string, Val | CelError>([['self', self]]);
      if (cr.rule.optionalOldSelf) vars.set('oldSelf', oldSelf === undefined ? OPTIONAL_NONE : oldSelf instanceof CelError ? oldSelf : new OptionalV(oldSelf));
      else if (oldSelf !== undefined) vars.set('oldSelf', oldSelf);
      const r = this.run(cr.program, vars);
      if (r.cost > this.budget) {
        this.errors.push(field.invalid(path, stsType, BUDGET_EXHAUSTED));
        this.budget = -1;
        return false;
      }
      this.budget -= r.cost;
      if (r.value instanceof CelError) {
        const msg = r.value.message;
        if (msg.startsWith('no such overload')) {
          this.errors.push(
            field.invalid(
              path,
              stsType,
              `'${msg}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleString(cr.rule)}`,
            ),
          );
        } else if (msg.startsWith(COST_LIMIT_EXCEEDED)) {
          this.errors.push(
            field.invalid(path, stsType, `'${msg}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleString(cr.rule)}`),
          );
          this.budget = -1;
          return false;
        } else {
          this.errors.push(field.invalid(path, stsType, `${msg} evaluating rule: ${ruleString(cr.rule)}`));
        }
        continue;
      }
      if (r.value === true) continue;
      const at = cr.normalizedFieldPath ? child(path, cr.normalizedFieldPath) : path;
      let detail: string | undefined;
      if (cr.messageProgram) {
        const m = this.message(cr, vars, at, stsType);
        if (m === false) return false;
        detail = m;
      }
      detail ??= cr.rule.message ? cr.rule.message.trim() : `failed rule: ${ruleString(cr.rule)}`;
      this.errors.push(errorForReason(at, stsType, detail, cr.rule.reason));
    }
    return true;
  }

  /** validation.go evalMessageExpression: the message, undefined to fall back to the rule's message, false when the budget is spent. */
  private message(cr: CompiledRule, vars: Map<string, Val | CelError>, at: string, stsType: string): string | undefined | false {
    const r = this.run(cr.messageProgram!, vars);
    if (r.cost > this.budget) {
      this.errors.push(
        field.invalid(at, stsType, 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'),
      );
      this.budget = -1;
      return false;
    }
    if (r.value instanceof CelError && r.value.message.startsWith(COST_LIMIT_EXCEEDED)) {
      this.errors.push(
        field.invalid(
          at,
          stsType,
          `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${field.goQuote(cr.rule.messageExpression ?? '')}`,
        ),
      );
      this.budget = -1;
      return false;
    }
    this.budget -= r.cost;
    if (typeof r.value !== 'string') return undefined;
    const msg = r.value.trim();
    if (Buffer.byteLength(msg) > MAX_MESSAGE_EXPRESSION_BYTES || /\n/.test(msg) || !msg) return undefined;
    return msg;
  }
}

/** validation.go fieldErrorForReason (1.33: the bad value is the schema type). */
function errorForReason(at: string, stsType: string, detail: string, reason: ValidationRule['reason']): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return field.forbidden(at, detail);
    case 'FieldValueRequired':
      return field.required(at, detail);
    case 'FieldValueDuplicate':
      return field.duplicate(at, stsType);
    default:
      return field.invalid(at, stsType, detail);
  }
}

/** Evaluates the rules of a compiled schema over an object (and its old version on update); returns the errors and the budget left (negative once exhausted). */
export function validateWithRulesBudget(
  program: RuleProgram | undefined,
  obj: Json,
  oldObj: Json | undefined,
  opts: ValidateOptions = {},
): { errors: FieldError[]; remainingBudget: number } {
  const v = new RuleValidator(opts.costBudget ?? RUNTIME_CEL_COST_BUDGET, opts.perCallLimit ?? PER_CALL_LIMIT);
  if (program) v.validate(program, opts.fldPath ?? '', obj, oldObj);
  return { errors: v.errors, remainingBudget: v.budget };
}

/** Evaluates the rules of a compiled schema over an object (and its old version on update) and returns the field errors. */
export function validateWithRules(program: RuleProgram | undefined, obj: Json, oldObj: Json | undefined, opts: ValidateOptions = {}): FieldError[] {
  return validateWithRulesBudget(program, obj, oldObj, opts).errors;
}

/** The escaped CEL field name of a property (exposed for callers that build field paths). */
export const celFieldName = escapeName;
