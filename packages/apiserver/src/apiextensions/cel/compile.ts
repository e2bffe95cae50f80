/**
 * Compilation of a CRD schema's `x-kubernetes-validations`, with the errors
 * CRD validation reports for them:
 *
 * - the rule checks of k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/
 *   validation/validation.go (empty rule, message and messageExpression,
 *   reason, fieldPath that does not resolve);
 * - per rule, pkg/apiserver/schema/cel/compilation.go `compileRule`
 *   (`compilation failed: ERROR: <input>:1:6: ...`, `cel expression must
 *   evaluate to a bool`, `messageExpression must evaluate to a string`,
 *   `program instantiation failed: ...`), `self` typed from the schema node
 *   and `oldSelf` the same (optional when `optionalOldSelf`);
 * - the estimated cost checks: a rule's estimated cost times the number of
 *   times it can run (product of the maxItems/maxProperties above it, or what
 *   fits in a request) against StaticEstimatedCostLimit, the CRD total against
 *   StaticEstimatedCRDCostLimit (cel_validation.go CELSchemaContext);
 * - oldSelf on a portion of the schema that cannot be correlated, and
 *   optionalOldSelf without oldSelf.
 *
 * Error order follows upstream: rule checks (schema errors) first, then CEL
 * errors, children before their parent; the CRD-total errors last.
 */
import { type FieldError, field } from '@kubeling/apimachinery';
import type { JSONSchemaProps, ValidationRule } from '../types.js';
import { estimateCost } from './cost.js';
import { celEnv, compileExpression, type ExtraLibrary, type Program } from './env.js';
import { validFieldPath } from './fieldpath.js';
import { type DeclType, declSizeEstimator, maxCardinality, schemaDeclType } from './schema-decl.js';
import { formatType, optionalOf } from './types.js';

/** Upstream StaticEstimatedCostLimit and StaticEstimatedCRDCostLimit. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

export interface CompileRulesOptions {
  /** The name given to the rule root's object type (upstream: `selfType<nanoseconds>`). */
  typeName?: string;
  /** Skip the per-expression cost limit (a version whose schema is unchanged by an update). */
  suppressPerExpressionCost?: boolean;
  /** Extra cel-go libraries (not enabled by Kubernetes for CRDs). */
  libraries?: readonly ExtraLibrary[];
  staticEstimatedCostLimit?: number;
  staticEstimatedCRDCostLimit?: number;
}

export interface CompiledRule {
  rule: ValidationRule;
  program?: Program;
  /** compileRule's error detail, when the rule did not compile. */
  error?: string;
  usesOldSelf: boolean;
  maxCost: number;
  maxCardinality: number;
  messageProgram?: Program;
  messageError?: string;
  messageMaxCost: number;
  /** The fieldPath normalized (`spec.x[key]`), when it resolves. */
  normalizedFieldPath?: string;
}

/** The compiled rules of a schema node and of the nodes below it that have rules. */
export interface RuleProgram {
  schema: JSONSchemaProps;
  isResourceRoot: boolean;
  rules: CompiledRule[];
  properties?: Map<string, RuleProgram>;
  items?: RuleProgram;
  additionalProperties?: RuleProgram;
  allOf?: RuleProgram[];
}

const SUPPORTED_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const hasNewlines = (s: string) => /[\n\r]+/.test(s);
const itemsOf = (s: JSONSchemaProps) => (Array.isArray(s.items) ? undefined : s.items);
const additionalOf = (s: JSONSchemaProps) => (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);

/** `%#v` of apiextensions.ValidationRule, as upstream prints the bad value (pointers print as an address there). */
export function goRule(r: ValidationRule): field.GoValue {
  const ptr = (t: string, v: unknown) => (v === undefined ? `(*${t})(nil)` : `(*${t})(0xc000000000)`);
  const goQuote = field.goQuote;
  return new field.GoValue(
    `apiextensions.ValidationRule{Rule:${goQuote(r.rule)}, Message:${goQuote(r.message ?? '')}, MessageExpression:${goQuote(r.messageExpression ?? '')}, ` +
      `Reason:${ptr('apiextensions.FieldValueErrorReason', r.reason)}, FieldPath:${goQuote(r.fieldPath ?? '')}, OptionalOldSelf:${ptr('bool', r.optionalOldSelf)}}`,
  );
}

/** compilation.go compileRule for one rule of a node typed `decl`. */
export function compileRule(rule: ValidationRule, node: JSONSchemaProps, decl: DeclType, opts: CompileRulesOptions = {}): CompiledRule {
  const out: CompiledRule = { rule, usesOldSelf: false, maxCost: 0, maxCardinality: 0, messageMaxCost: 0 };
  if (!rule.rule.trim()) return out;
  const env = celEnv({ self: decl.cel, oldSelf: rule.optionalOldSelf ? optionalOf(decl.cel) : decl.cel }, opts.libraries ? { libraries: opts.libraries } : {});
  const sizes = declSizeEstimator(decl);
  const r = compileExpression(rule.rule, env);
  if (!r.program) {
    out.error = `compilation failed: ${r.issues}`;
    return out;
  }
  if (r.program.type.kind !== 'bool') {
    out.error = 'cel expression must evaluate to a bool';
    return out;
  }
  out.usesOldSelf = r.program.references.has('oldSelf');
  if (r.programError) {
    out.error = `program instantiation failed: ${r.programError}`;
    return out;
  }
  out.maxCost = estimateCost(r.program.root, sizes).max;
  out.maxCardinality = maxCardinality(decl.minSerializedSize);
  out.program = r.program;
  if (rule.messageExpression) {
    const m = compileExpression(rule.messageExpression, env);
    if (!m.program) {
      out.messageError = `messageExpression compilation failed: ${m.issues}`;
      return out;
    }
    if (m.program.type.kind !== 'string') {
      out.messageError = 'messageExpression must evaluate to a string';
      return out;
    }
    if (m.programError) {
      out.messageError = `messageExpression instantiation failed: ${m.programError}`;
      return out;
    }
    out.messageMaxCost = estimateCost(m.program.root, sizes).max;
    out.messageProgram = m.program;
  }
  if (rule.fieldPath) {
    const fp = validFieldPath(rule.fieldPath, node);
    if ('path' in fp) out.normalizedFieldPath = fp.path;
  }
  return out;
}

/** validation.go getCostErrorMessage. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** cel_validation.go extractMaxElements: the factor a schema multiplies its children's cardinality by (undefined: unbounded). */
function cardinalityFactor(s: JSONSchemaProps): number | undefined {
  if (s.type === 'object') return s.additionalProperties !== undefined ? (s.maxProperties !== undefined ? Math.max(0, s.maxProperties) : undefined) : 1;
  if (s.type === 'array') return s.maxItems !== undefined ? Math.max(0, s.maxItems) : undefined;
  return 1;
}

interface Ctx {
  path: string;
  isRoot: boolean;
  cardinality: number | undefined;
  forbidOldSelf: string | undefined;
}

class RuleCompiler {
  readonly schemaErrors: FieldError[] = [];
  readonly celErrors: FieldError[] = [];
  readonly compiled = new Map<JSONSchemaProps, CompiledRule[]>();
  total = 0;
  mostExpensive: { path: string; cost: number }[] = [];

  constructor(
    private readonly opts: CompileRulesOptions,
    private readonly typeName: string,
  ) {}

  private observe(path: string, cost: number): void {
    this.total = Math.min(Number.MAX_VALUE, this.total + cost);
    if (cost < (this.opts.staticEstimatedCRDCostLimit ?? STATIC_ESTIMATED_CRD_COST_LIMIT) / 100) return;
    this.mostExpensive.push({ path, cost });
    this.mostExpensive.sort((a, b) => b.cost - a.cost);
    this.mostExpensive = this.mostExpensive.slice(0, 4);
  }

  /** Walks a schema as ValidateCustomResourceDefinitionOpenAPISchema does with a CEL schema context; returns the count of schema errors found at or below. */
  visit(s: JSONSchemaProps, ctx: Ctx): number {
    const before = this.schemaErrors.length;
    const factor = ctx.cardinality === undefined ? undefined : cardinalityFactor(s);
    const childCard = ctx.cardinality === undefined || factor === undefined ? undefined : ctx.cardinality * factor;
    const ap = additionalOf(s);
    if (ap) this.visit(ap, { path: `${ctx.path}.additionalProperties`, isRoot: false, cardinality: childCard, forbidOldSelf: ctx.forbidOldSelf });
    const correlatable = s['x-kubernetes-map-type'] !== 'atomic';
    for (const [name, ps] of Object.entries(s.properties ?? {})) {
      const forbid = ctx.forbidOldSelf ?? (correlatable ? undefined : ctx.path);
      this.visit(ps, { path: `${ctx.path}.properties[${name}]`, isRoot: false, cardinality: childCard, forbidOldSelf: forbid });
    }
    const items = itemsOf(s);
    if (items) {
      const forbid = ctx.forbidOldSelf ?? (s['x-kubernetes-list-type'] === 'map' ? undefined : ctx.path);
      this.visit(items, { path: `${ctx.path}.items`, isRoot: false, cardinality: childCard, forbidOldSelf: forbid });
    }
    const rules = s['x-kubernetes-validations'] ?? [];
    rules.forEach((r, i) => this.checkRule(s, r, `${ctx.path}.x-kubernetes-validations[${i}]`));
    if (rules.length && this.schemaErrors.length === before) this.compileNode(s, ctx);
    return this.schemaErrors.length - before;
  }

  private checkRule(s: JSONSchemaProps, r: ValidationRule, p: string): void {
    const rule = (r.rule ?? '').trim();
    const msg = (r.message ?? '').trim();
    if (!rule) this.schemaErrors.push(field.required(`${p}.rule`, 'rule is not specified'));
    else if (r.message && !msg) this.schemaErrors.push(field.invalid(`${p}.message`, r.message, 'message must be non-empty if specified'));
    else if (hasNewlines(msg)) this.schemaErrors.push(field.invalid(`${p}.message`, r.message, 'message must not contain line breaks'));
    else if (hasNewlines(rule) && !msg) this.schemaErrors.push(field.required(`${p}.message`, 'message must be specified if rule contains line breaks'));
    if (r.messageExpression && !r.messageExpression.trim()) {
      this.schemaErrors.push(field.required(`${p}.messageExpression`, 'messageExpression must be non-empty if specified'));
    }
    if (r.reason !== undefined && !SUPPORTED_REASONS.includes(r.reason)) this.schemaErrors.push(field.notSupported(`${p}.reason`, r.reason, SUPPORTED_REASONS));
    if (r.fieldPath !== undefined && r.fieldPath !== '') {
      if (!r.fieldPath.trim()) this.schemaErrors.push(field.invalid(`${p}.fieldPath`, r.fieldPath, 'fieldPath must be non-empty if specified'));
      if (hasNewlines(r.fieldPath)) this.schemaErrors.push(field.invalid(`${p}.fieldPath`, r.fieldPath, 'fieldPath must not contain line breaks'));
      if ('error' in validFieldPath(r.fieldPath, s)) this.schemaErrors.push(field.invalid(`${p}.fieldPath`, r.fieldPath, 'fieldPath must be a valid path'));
    }
  }

  /** The compiled rules of a node, compiled once. */
  rulesOf(s: JSONSchemaProps, isResourceRoot: boolean, validation: JSONSchemaProps = s): CompiledRule[] {
    let c = this.compiled.get(validation);
    if (!c) {
      const decl = schemaDeclType(s, isResourceRoot, this.typeName);
      const rules = validation['x-kubernetes-validations'] ?? [];
      c = decl
        ? rules.map((r) => compileRule(r, s, decl, this.opts))
        : rules.map((r) => ({
            rule: r,
            usesOldSelf: false,
            maxCost: 0,
            maxCardinality: 0,
            messageMaxCost: 0,
            error: `rule declared on schema that does not support validation rules type: '${s.type ?? ''}' x-kubernetes-preserve-unknown-fields: '${!!s['x-kubernetes-preserve-unknown-fields']}'`,
          }));
      this.compiled.set(validation, c);
    }
    return c;
  }

  private compileNode(s: JSONSchemaProps, ctx: Ctx): void {
    const limit = this.opts.staticEstimatedCostLimit ?? STATIC_ESTIMATED_COST_LIMIT;
    const results = this.rulesOf(s, ctx.isRoot || !!s['x-kubernetes-embedded-resource']);
    results.forEach((cr, i) => {
      const p = `${ctx.path}.x-kubernetes-validations[${i}]`;
      const card = ctx.cardinality ?? cr.maxCardinality;
      const cost = cr.maxCost === 0 ? 0 : Math.min(Number.MAX_VALUE, cr.maxCost * card);
      if (!this.opts.suppressPerExpressionCost && cost > limit)
        this.celErrors.push(field.forbidden(`${p}.rule`, costErrorMessage('estimated rule cost', cost, limit)));
      this.observe(`${p}.rule`, cost);
      if (cr.error) this.celErrors.push(field.invalid(`${p}.rule`, goRule(cr.rule), cr.error));
      if (cr.messageError) this.celErrors.push(field.invalid(`${p}.messageExpression`, goRule(cr.rule), cr.messageError));
      else if (cr.messageProgram) {
        if (!this.opts.suppressPerExpressionCost && cr.messageMaxCost > limit) {
          this.celErrors.push(field.forbidden(`${p}.messageExpression`, costErrorMessage('estimated messageExpression cost', cr.messageMaxCost, limit)));
        }
        this.observe(`${p}.messageExpression`, cr.messageMaxCost);
      }
      if (cr.usesOldSelf) {
        if (ctx.forbidOldSelf !== undefined) {
          this.celErrors.push(
            field.invalid(`${p}.rule`, cr.rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${ctx.forbidOldSelf}`),
          );
        }
      } else if (cr.rule.optionalOldSelf !== undefined) {
        this.celErrors.push(field.invalid(`${p}.optionalOldSelf`, cr.rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
      }
    });
  }

  /** The runtime tree (validation.go `validator`): rules of `validation` applied to data of `node`. */
  build(validation: JSONSchemaProps, node: JSONSchemaProps, isResourceRoot: boolean): RuleProgram | undefined {
    const rules = validation['x-kubernetes-validations']?.length ? this.rulesOf(node, isResourceRoot, validation) : [];
    const out: RuleProgram = { schema: node, isResourceRoot, rules };
    const vi = itemsOf(validation);
    const ni = itemsOf(node);
    if (vi && ni) {
      const p = this.build(vi, ni, !!ni['x-kubernetes-embedded-resource']);
      if (p) out.items = p;
    }
    for (const [k, vp] of Object.entries(validation.properties ?? {})) {
      const np = node.properties?.[k];
      if (!np) continue;
      const p = this.build(vp, np, !!np['x-kubernetes-embedded-resource']);
      if (p) (out.properties ??= new Map()).set(k, p);
    }
    const va = additionalOf(validation);
    const na = additionalOf(node);
    if (va && na) {
      const p = this.build(va, na, !!na['x-kubernetes-embedded-resource']);
      if (p) out.additionalProperties = p;
    }
    for (const a of validation.allOf ?? []) {
      const p = this.build(a, node, isResourceRoot);
      if (p) (out.allOf ??= []).push(p);
    }
    return rules.length || out.items || out.properties || out.additionalProperties || out.allOf ? out : undefined;
  }
}

/**
 * Compiles every `x-kubernetes-validations` rule of a structural schema.
 * `fldPath` is the schema's path in the CRD (`spec.versions[0].schema.openAPIV3Schema`).
 * `program` is undefined when the schema has no rules.
 */
export function compileRules(
  schema: JSONSchemaProps,
  fldPath: string,
  opts: CompileRulesOptions = {},
): { errors: FieldError[]; program: RuleProgram | undefined } {
  const typeName = opts.typeName ?? `selfType${process.hrtime.bigint() % 1_000_000_000n}`;
  const c = new RuleCompiler(opts, typeName);
  c.visit(schema, { path: fldPath, isRoot: true, cardinality: 1, forbidOldSelf: undefined });
  const errors = [...c.schemaErrors, ...c.celErrors];
  const crdLimit = opts.staticEstimatedCRDCostLimit ?? STATIC_ESTIMATED_CRD_COST_LIMIT;
  if (c.total > crdLimit) {
    for (const e of c.mostExpensive)
      errors.push(field.forbidden(e.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errors.push(
      field.forbidden(fldPath, costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', c.total, crdLimit)),
    );
  }
  return { errors, program: c.build(schema, schema, true) };
}

/** The CEL type `self` has at a schema node (for messages and tests). */
export function selfType(schema: JSONSchemaProps, isResourceRoot: boolean, typeName = 'object'): string | undefined {
  const d = schemaDeclType(schema, isResourceRoot, typeName);
  return d && formatType(d.cel);
}
