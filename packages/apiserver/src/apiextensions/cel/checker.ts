/**
 * The CEL type checker, following cel-go's checker/checker.go: identifier and
 * qualified-name resolution, field selection on maps and declared struct
 * types, overload resolution with type parameters (the first matching overload
 * gives the result type; several matches with different results give dyn),
 * homogeneous list and map literals (Kubernetes enables
 * `HomogeneousAggregateLiterals`), comprehension scoping, and cel-go's
 * optional types. Issues carry cel-go's messages (`undeclared reference to
 * 'x' (in container '')`, `undefined field 'x'`, `found no matching overload
 * for '_+_' applied to '(int, string)'`, ...).
 *
 * The checker annotates every node with its type (`node.t`) and every call
 * with the ids of the overloads it may dispatch to (`node.overloads`); the
 * cost estimator and the interpreter read those.
 */
import type { CallNode, CompNode, ListNode, MapNode, Node, ParsedAst, SelectNode } from './ast.js';
import { walk } from './ast.js';
import { type FunctionRegistry, formatSignature } from './registry.js';
import type { Issue } from './source.js';
import {
  type CelType,
  formatType,
  isAssignable,
  isAssignableList,
  isOptionalType,
  listOf,
  type Mapping,
  mapOf,
  mostGeneral,
  optionalOf,
  param,
  substitute,
  T,
  typeOf,
} from './types.js';
import { TypeV, UintV, type Val } from './values.js';

export interface CheckEnv {
  functions: FunctionRegistry;
  /** Declared variables. */
  vars: ReadonlyMap<string, CelType>;
  /** Identifiers that denote types (`int`, `string`, ...). */
  typeIdents: Readonly<Record<string, CelType>>;
}

export interface CheckResult {
  type: CelType;
  issues: Issue[];
  /** Names of the declared variables the expression references. */
  references: Set<string>;
}

const constType = (v: Val): CelType => {
  if (typeof v === 'bigint') return T.int;
  if (typeof v === 'number') return T.double;
  if (typeof v === 'string') return T.string;
  if (typeof v === 'boolean') return T.bool;
  if (v === null) return T.null;
  if (v instanceof UintV) return T.uint;
  if (v instanceof Uint8Array) return T.bytes;
  if (v instanceof TypeV) return typeOf();
  return T.dyn;
};

/** The dotted name of an ident/select chain (`a.b.c`), if it is one. */
export function qualifiedName(n: Node): string | undefined {
  if (n.kind === 'ident') return n.name;
  if (n.kind === 'select' && !n.testOnly && !n.optional) {
    const p = qualifiedName(n.operand);
    return p === undefined ? undefined : `${p}.${n.field}`;
  }
  return undefined;
}

class Checker {
  readonly issues: Issue[] = [];
  readonly references = new Set<string>();
  private readonly mapping: Mapping = new Map();
  private readonly scopes: Map<string, CelType>[] = [];
  private fresh = 0;

  constructor(
    private readonly env: CheckEnv,
    private readonly positions: ReadonlyMap<number, number>,
  ) {}

  private err(n: Node, message: string): CelType {
    this.issues.push({ offset: this.positions.get(n.id) ?? 0, message });
    return T.error;
  }

  private newVar(): CelType {
    return param(`_var${this.fresh++}`);
  }

  private lookupVar(name: string): CelType | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const t = this.scopes[i]!.get(name);
      if (t) return t;
    }
    const t = this.env.vars.get(name);
    if (t) this.references.add(name);
    return t;
  }

  check(n: Node): CelType {
    const t = this.checkNode(n);
    n.t = t;
    return t;
  }

  private checkNode(n: Node): CelType {
    switch (n.kind) {
      case 'const':
        return constType(n.value);
      case 'ident': {
        const v = this.lookupVar(n.name);
        if (v) return v;
        const ti = this.env.typeIdents[n.name];
        if (ti) return typeOf(ti);
        return this.err(n, `undeclared reference to '${n.name}' (in container '')`);
      }
      case 'select':
        return this.checkSelect(n);
      case 'call':
        return this.checkCall(n);
      case 'list':
        return this.checkList(n);
      case 'map':
        return this.checkMap(n);
      case 'struct':
        for (const f of n.fields) this.check(f.value);
        return this.err(n, `undeclared reference to '${n.name}' (in container '')`);
      case 'comp':
        return this.checkComp(n);
    }
  }

  /** The type of selecting `field` from a value of type `t` (cel-go checkSelect). */
  private fieldType(n: Node, t: CelType, field: string): CelType {
    const target = substitute(this.mapping, t, false);
    switch (target.kind) {
      case 'map':
        return target.value;
      case 'struct': {
        const f = target.fields?.get(field) ?? target.fields?.get(`__${field}__`);
        return f ?? this.err(n, `undefined field '${field}'`);
      }
      case 'param':
        isAssignable(this.mapping, T.dyn, target);
        return T.dyn;
      case 'dyn':
      case 'error':
        return T.dyn;
      default:
        return this.err(n, `type '${formatType(target)}' does not support field selection`);
    }
  }

  private checkSelect(n: SelectNode): CelType {
    // A dotted name may be a declared variable or type name (cel-go resolves qualified identifiers first).
    const qn = n.testOnly ? undefined : qualifiedName(n);
    if (qn !== undefined) {
      const root = qualifiedName(n.operand)?.split('.')[0];
      if (root !== undefined && !this.lookupVarQuiet(root)) {
        const v = this.lookupVar(qn);
        const ti = this.env.typeIdents[qn];
        if (v || ti) n.qualified = qn;
        if (v) return v;
        if (ti) return typeOf(ti);
      }
    }
    let operand = substitute(this.mapping, this.check(n.operand), false);
    const wasOptional = isOptionalType(operand);
    if (isOptionalType(operand)) operand = operand.params[0]!;
    const ft = this.fieldType(n, operand, n.field);
    if (n.testOnly) return T.bool;
    return n.optional || wasOptional ? optionalOf(ft) : ft;
  }

  private lookupVarQuiet(name: string): boolean {
    return this.scopes.some((s) => s.has(name)) || this.env.vars.has(name);
  }

  private checkCall(n: CallNode): CelType {
    if (n.target) {
      const qn = qualifiedName(n.target);
      if (qn !== undefined && this.env.functions.has(`${qn}.${n.fn}`) && !this.lookupVarQuiet(qn.split('.')[0]!)) {
        // A namespaced function (sets.contains, optional.of, format.named): drop the receiver.
        n.fn = `${qn}.${n.fn}`;
        delete n.target;
      }
    }
    if (n.fn === 'has' && !n.target) {
      for (const a of n.args) this.check(a);
      return this.err(n, 'invalid argument to has() macro');
    }
    const argTypes = n.args.map((a) => this.check(a));
    const targetType = n.target ? this.check(n.target) : undefined;
    if (n.fn === '_[?_]') return this.checkOptIndex(n, argTypes);
    const overloads = this.env.functions.lookup(n.fn);
    if (!overloads) return this.err(n, `undeclared reference to '${n.fn}' (in container '')`);
    const actual = targetType ? [targetType, ...argTypes] : argTypes;
    let result: CelType | undefined;
    const ids: string[] = [];
    for (const o of overloads) {
      if (o.member !== !!targetType) continue;
      let params = o.params;
      let res = o.result;
      if (o.typeParams?.length) {
        const subs: Mapping = new Map(o.typeParams.map((p) => [p, this.newVar()]));
        params = params.map((p) => substitute(subs, p, false));
        res = substitute(subs, res, false);
      }
      if (!isAssignableList(this.mapping, params, actual)) continue;
      ids.push(o.id);
      const r = substitute(this.mapping, res, false);
      if (!result) result = r;
      else if (result.kind !== 'dyn' && formatType(r) !== formatType(result)) result = T.dyn;
    }
    if (!result) {
      const shown = actual.map((t) => substitute(this.mapping, t, true));
      return this.err(n, `found no matching overload for '${n.fn}' applied to '${formatSignature(shown, !!targetType)}'`);
    }
    n.overloads = ids;
    return result;
  }

  /** `a[?k]`: optional indexing of lists and maps (cel-go optional library). */
  private checkOptIndex(n: CallNode, argTypes: CelType[]): CelType {
    let operand = substitute(this.mapping, argTypes[0]!, false);
    if (isOptionalType(operand)) operand = operand.params[0]!;
    const key = argTypes[1]!;
    if (operand.kind === 'list' && isAssignable(this.mapping, T.int, key)) return optionalOf(operand.elem);
    if (operand.kind === 'map' && isAssignable(this.mapping, operand.key, key)) return optionalOf(operand.value);
    if (operand.kind === 'dyn' || operand.kind === 'param' || operand.kind === 'error') return optionalOf(T.dyn);
    return this.err(n, `found no matching overload for '_[?_]' applied to '${formatSignature(argTypes, false)}'`);
  }

  /** cel-go joinTypes with homogeneous aggregate literals. */
  private join(n: Node, prev: CelType | undefined, cur: CelType): CelType {
    if (!prev) return cur;
    if (isAssignable(this.mapping, prev, cur)) return mostGeneral(prev, cur);
    return this.err(n, `expected type '${formatType(substitute(this.mapping, prev, true))}' but found '${formatType(substitute(this.mapping, cur, true))}'`);
  }

  private unwrapOptionalElem(n: Node, t: CelType): CelType {
    const s = substitute(this.mapping, t, false);
    if (isOptionalType(s)) return s.params[0]!;
    if (s.kind === 'dyn' || s.kind === 'error') return T.dyn;
    const v = this.newVar();
    if (isAssignable(this.mapping, optionalOf(v), s)) return v;
    return this.err(n, `expected type '${formatType(optionalOf(T.dyn))}' but found '${formatType(s)}'`);
  }

  private checkList(n: ListNode): CelType {
    let elem: CelType | undefined;
    n.elems.forEach((e, i) => {
      let t = this.check(e);
      if (n.optional.has(i)) t = this.unwrapOptionalElem(e, t);
      elem = this.join(e, elem, t);
    });
    return listOf(elem ?? this.newVar());
  }

  private checkMap(n: MapNode): CelType {
    let key: CelType | undefined;
    let val: CelType | undefined;
    for (const e of n.entries) {
      key = this.join(e.key, key, this.check(e.key));
      let vt = this.check(e.value);
      if (e.optional) vt = this.unwrapOptionalElem(e.value, vt);
      val = this.join(e.value, val, vt);
    }
    return mapOf(key ?? this.newVar(), val ?? this.newVar());
  }

  private checkComp(n: CompNode): CelType {
    const range = substitute(this.mapping, this.check(n.range), false);
    const accu = this.check(n.init);
    let v1: CelType;
    let v2: CelType | undefined;
    switch (range.kind) {
      case 'list':
        v1 = n.iterVar2 ? T.int : range.elem;
        v2 = range.elem;
        break;
      case 'map':
        v1 = range.key;
        v2 = range.value;
        break;
      case 'dyn':
      case 'error':
      case 'param':
        isAssignable(this.mapping, T.dyn, range);
        v1 = T.dyn;
        v2 = T.dyn;
        break;
      default:
        this.err(n.range, `expression of type '${formatType(range)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
        v1 = T.error;
        v2 = T.error;
    }
    this.scopes.push(new Map([[n.accuVar, accu]]));
    const iter = new Map([[n.iterVar, v1]]);
    if (n.iterVar2) iter.set(n.iterVar2, v2);
    this.scopes.push(iter);
    const cond = this.check(n.cond);
    if (!isAssignable(this.mapping, T.bool, cond)) this.err(n.cond, `expected type 'bool' but found '${formatType(cond)}'`);
    const step = this.check(n.step);
    if (!isAssignable(this.mapping, accu, step)) this.err(n.step, `expected type '${formatType(accu)}' but found '${formatType(step)}'`);
    this.scopes.pop();
    const result = this.check(n.result);
    this.scopes.pop();
    return substitute(this.mapping, result, false);
  }

  /** Applies the final substitutions to every node's type (unresolved type parameters become dyn). */
  finalize(root: Node): CelType {
    for (const x of walk(root)) if (x.t) x.t = substitute(this.mapping, x.t, true);
    return root.t ?? T.error;
  }
}

/** Type-checks a parsed expression in an environment, annotating its nodes. */
export function check(ast: ParsedAst, env: CheckEnv): CheckResult {
  if (!ast.root) return { type: T.error, issues: ast.issues, references: new Set() };
  const c = new Checker(env, ast.positions);
  c.check(ast.root);
  const type = c.finalize(ast.root);
  return { type, issues: [...ast.issues, ...c.issues], references: c.references };
}
