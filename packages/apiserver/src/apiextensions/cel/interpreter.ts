/**
 * The evaluator of checked expressions, with cel-go's runtime semantics and
 * its runtime cost tracking (interpreter/interpreter.go, runtimecost.go):
 *
 * - identifiers and each field selection or index cost 1, constants 0, list
 *   and map literals 10 and 30, every function call its `callCost`;
 *   `&&`, `||`, `?:` and comprehensions cost only what they evaluate; a
 *   presence test (`has`) costs only its operand (Kubernetes sets
 *   PresenceTestHasCost(false));
 * - when the running cost passes the limit, evaluation stops with
 *   `operation cancelled: actual cost limit exceeded`;
 * - errors are values: `&&`/`||` absorb an error when the other side decides
 *   the result, strict functions propagate the first error argument;
 * - calls dispatch among the overloads the checker resolved, on the runtime
 *   types of the arguments; none fitting is `no such overload`.
 */
import { type CallNode, type CompNode, type Node, walk } from './ast.js';
import type { Folded } from './fold.js';
import { listIndex, mapIndex } from './lib-std.js';
import { type FunctionRegistry, fitsRuntime, noSuchOverload } from './registry.js';
import { callCost, LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST } from './runtime-cost.js';
import { ArrayList, CelError, celEquals, isError, keyOf, ListV, MapV, NativeMap, OPTIONAL_NONE, OptionalV, TypeV, typeName, type Val } from './values.js';

type R = Val | CelError;

export const COST_LIMIT_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

class CostLimitExceeded extends Error {}

/** Variable bindings: the top-level activation and comprehension scopes. */
interface Scope {
  lookup(name: string): R | undefined;
}

class VarScope implements Scope {
  constructor(
    readonly name: string,
    public value: R,
    private readonly parent: Scope,
  ) {}
  lookup(name: string): R | undefined {
    return name === this.name ? this.value : this.parent.lookup(name);
  }
}

export interface EvalResult {
  /** The result value, or the evaluation error. */
  value: R;
  /** The actual cost of the evaluation (cel-go EvalDetails.ActualCost). */
  cost: number;
}

export class Interpreter {
  private cost = 0;

  constructor(
    private readonly functions: FunctionRegistry,
    private readonly limit: number,
    private readonly folded?: Folded,
  ) {}

  run(root: Node, vars: ReadonlyMap<string, Val | CelError>): EvalResult {
    this.cost = 0;
    const top: Scope = { lookup: (name) => vars.get(name) };
    try {
      return { value: this.eval(root, top), cost: this.cost };
    } catch (e) {
      if (e instanceof CostLimitExceeded) return { value: new CelError(COST_LIMIT_EXCEEDED), cost: this.cost };
      if (e instanceof RangeError) return { value: new CelError(`evaluation failed: ${e.message}`), cost: this.cost };
      throw e;
    }
  }

  private charge(n: number): void {
    this.cost += n;
    if (this.cost > this.limit) throw new CostLimitExceeded();
  }

  private eval(n: Node, s: Scope): R {
    if (this.folded?.constants.has(n)) return this.folded.constants.get(n) as Val;
    switch (n.kind) {
      case 'const':
        return n.value;
      case 'ident':
        return this.attr(n, s, true);
      case 'select': {
        if (!n.testOnly) return this.attr(n, s, true);
        const operand = this.eval(n.operand, s);
        if (isError(operand)) return operand;
        try {
          if (operand instanceof MapV) return operand.find(n.field) !== undefined;
        } catch (e) {
          if (e instanceof CelError) return e;
          throw e;
        }
        return noSuchOverload();
      }
      case 'call':
        return this.call(n, s);
      case 'list': {
        const items: Val[] = [];
        for (let i = 0; i < n.elems.length; i++) {
          const v = this.eval(n.elems[i]!, s);
          if (isError(v)) return v;
          if (n.optional.has(i)) {
            if (!(v instanceof OptionalV)) return noSuchOverload();
            if (v.value !== undefined) items.push(v.value);
          } else items.push(v);
        }
        this.charge(LIST_CREATE_BASE_COST);
        return new ArrayList(items);
      }
      case 'map': {
        const seen = new Set<string>();
        const entries: [Val, Val][] = [];
        for (const e of n.entries) {
          const k = this.eval(e.key, s);
          if (isError(k)) return k;
          const v = this.eval(e.value, s);
          if (isError(v)) return v;
          const kk = keyOf(k);
          if (kk === undefined || typeof k === 'number') return new CelError('unsupported key type');
          if (seen.has(kk)) return new CelError('Failed with repeated key');
          seen.add(kk);
          if (e.optional) {
            if (!(v instanceof OptionalV)) return noSuchOverload();
            if (v.value !== undefined) entries.push([k, v.value]);
          } else entries.push([k, v]);
        }
        this.charge(MAP_CREATE_BASE_COST);
        return new NativeMap(entries);
      }
      case 'struct':
        return new CelError(`unknown type: ${n.name}`);
      case 'comp':
        return this.comprehension(n, s);
    }
  }

  /**
   * An attribute (cel-go interpreter/attributes.go): a variable or any other
   * operand followed by field selections and indexes. Its cost is cel-go's:
   * 1 for the attribute when it is observed (not for a branch of `?:`),
   * 1 per field or constant index, an attribute used as an index costs what
   * it costs, any other index expression its cost plus 1; an operand that is
   * not itself an attribute costs its own evaluation.
   */
  private attr(n: Node, s: Scope, observed: boolean): R {
    if (n.kind === 'ident') {
      const v = s.lookup(n.name);
      if (v === undefined && n.t?.kind === 'type') return new TypeV(n.name); // a type name is a constant: no cost
      if (observed) this.charge(1);
      return v ?? new CelError(`no such attribute(s): ${n.name}`);
    }
    if (n.kind === 'select' && n.qualified !== undefined) {
      const v = s.lookup(n.qualified);
      if (v === undefined) return new TypeV(n.qualified);
      if (observed) this.charge(1);
      return v;
    }
    const inner = n.kind === 'select' ? n.operand : (n as CallNode).args[0]!;
    const operand = isAttribute(inner) ? this.attr(inner, s, observed) : this.relative(inner, s, observed);
    if (n.kind === 'select') {
      this.charge(1);
      if (isError(operand)) return operand;
      return this.select(operand, n.field, n.optional);
    }
    const call = n as CallNode;
    const keyNode = call.args[1]!;
    let key: R;
    if (keyNode.kind === 'const' || this.folded?.constants.has(keyNode)) {
      key = this.eval(keyNode, s);
      this.charge(1);
    } else if (isAttribute(keyNode)) key = this.attr(keyNode, s, true);
    else {
      key = this.eval(keyNode, s);
      this.charge(1);
    }
    if (isError(operand)) return operand;
    if (isError(key)) return key;
    return this.index(operand, key, call.fn === '_[?_]');
  }

  private relative(n: Node, s: Scope, observed: boolean): R {
    const v = this.eval(n, s);
    if (observed) this.charge(1);
    return v;
  }

  /** Field selection on a map or object; optional semantics yield optional.none() for an absent field. */
  private select(operand: Val, field: string, optional: boolean): R {
    let target = operand;
    let opt = optional;
    if (target instanceof OptionalV) {
      if (target.value === undefined) return OPTIONAL_NONE;
      target = target.value;
      opt = true;
    }
    if (!(target instanceof MapV)) return noSuchOverload();
    let v: Val | undefined;
    try {
      v = target.find(field);
    } catch (e) {
      if (e instanceof CelError) return e;
      throw e;
    }
    if (opt) return v === undefined ? OPTIONAL_NONE : new OptionalV(v);
    return v === undefined ? new CelError(`no such key: ${field}`) : v;
  }

  private index(operand: Val, key: Val, optional: boolean): R {
    let target = operand;
    let opt = optional;
    if (target instanceof OptionalV) {
      if (target.value === undefined) return OPTIONAL_NONE;
      target = target.value;
      opt = true;
    }
    try {
      if (target instanceof ListV) {
        if (!opt) return listIndex(target, key);
        const v = safe(() => listIndex(target as ListV, key));
        return isError(v) ? OPTIONAL_NONE : new OptionalV(v);
      }
      if (target instanceof MapV) {
        if (!opt) return mapIndex(target, key);
        const v = target.find(key);
        return v === undefined ? OPTIONAL_NONE : new OptionalV(v);
      }
    } catch (e) {
      if (e instanceof CelError) return e;
      throw e;
    }
    return noSuchOverload();
  }

  private call(n: CallNode, s: Scope): R {
    switch (n.fn) {
      case '_&&_':
      case '_||_': {
        const decisive = n.fn === '_||_';
        const l = this.eval(n.args[0]!, s);
        if (l === decisive) return decisive;
        const r = this.eval(n.args[1]!, s);
        if (r === decisive) return decisive;
        if (typeof l === 'boolean' && typeof r === 'boolean') return !decisive;
        if (isError(l)) return l;
        return isError(r) ? r : noSuchOverload();
      }
      case '_?_:_': {
        // The branches are resolved as attributes without observing them (cel-go conditionalAttribute).
        const c = this.eval(n.args[0]!, s);
        const branch = c === true ? n.args[1]! : c === false ? n.args[2]! : undefined;
        if (!branch) return isError(c) ? c : noSuchOverload();
        return isAttribute(branch) ? this.attr(branch, s, false) : this.eval(branch, s);
      }
      case '_[_]':
      case '_[?_]':
        return this.attr(n, s, true);
      case '@not_strictly_false': {
        const v = this.eval(n.args[0]!, s);
        this.charge(1);
        return v !== false;
      }
    }
    if (this.folded?.setMembership.has(n)) {
      // cel-go's set membership test against a constant list: only the operand costs.
      const v = this.eval(n.args[0]!, s);
      if (isError(v)) return v;
      return (this.folded.constants.get(n.args[1]!) as ListV).items().some((x) => celEquals(x, v));
    }
    const args: R[] = [];
    if (n.target) args.push(this.eval(n.target, s));
    for (const a of n.args) args.push(this.eval(a, s));
    const err = args.find(isError);
    if (err) {
      this.charge(1);
      return err;
    }
    const vals = args as Val[];
    let result: R;
    let overloadId = '';
    const o = this.pick(n, vals);
    if (!o?.impl) result = noSuchOverload();
    else {
      overloadId = o.id;
      const impl = o.impl;
      result = safe(() => impl(vals));
    }
    this.charge(callCost(n.fn, overloadId, vals, result));
    return result;
  }

  private pick(n: CallNode, vals: Val[]) {
    for (const id of n.overloads ?? []) {
      const o = this.functions.overload(id);
      if (o && o.params.length === vals.length && o.params.every((p, i) => fitsRuntime(p, vals[i]!))) return o;
    }
    return undefined;
  }

  private comprehension(n: CompNode, s: Scope): R {
    const range = this.eval(n.range, s);
    if (isError(range)) return range;
    const init = this.eval(n.init, s);
    const accu = new VarScope(n.accuVar, init, s);
    let pairs: [Val, Val][];
    try {
      if (range instanceof ListV) pairs = range.items().map((v, i) => [BigInt(i), v]);
      else if (range instanceof MapV) pairs = range.keys().map((k) => [k, n.iterVar2 ? (range.find(k) ?? null) : null]);
      else return new CelError(`got '${typeName(range)}', expected iterable type`);
    } catch (e) {
      if (e instanceof CelError) return e;
      throw e;
    }
    const isList = range instanceof ListV;
    for (const [k, v] of pairs) {
      const iter = n.iterVar2 ? new VarScope(n.iterVar2, v, new VarScope(n.iterVar, k, accu)) : new VarScope(n.iterVar, isList ? v : k, accu);
      const cond = this.eval(n.cond, iter);
      if (cond === false) break;
      accu.value = this.eval(n.step, iter);
    }
    return this.eval(n.result, accu);
  }
}

/** Whether a node is an attribute: a variable, or a field selection or index of something. */
function isAttribute(n: Node): boolean {
  if (n.kind === 'ident') return true;
  if (n.kind === 'select') return !n.testOnly;
  return n.kind === 'call' && (n.fn === '_[_]' || n.fn === '_[?_]') && n.args.length === 2;
}

function safe(f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (e instanceof CelError) return e;
    if (e instanceof CostLimitExceeded) throw e;
    return new CelError(e instanceof Error ? e.message : String(e));
  }
}

/** Whether an expression references a variable (by the checker's annotations: an ident not bound by a comprehension). */
export function referencesVariable(root: Node, name: string): boolean {
  for (const n of walk(root)) if (n.kind === 'ident' && n.name === name) return true;
  return false;
}
