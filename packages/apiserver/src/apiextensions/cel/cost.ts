/**
 * Static cost estimation of a checked expression, after cel-go's
 * checker/cost.go (the version Kubernetes 1.33 vendors: local-variable and
 * entry-size tracking, presence tests costing only their operand) combined
 * with Kubernetes' `CostEstimator.EstimateCallCost` (k8s.io/apiserver/pkg/cel/
 * library/cost.go) and the sets extension's overload estimators.
 *
 * Sizes of data come from a pluggable `estimateSize(path)`: for CRD rules the
 * path (`self`, a field, `@items`, `@keys`, `@values`) is walked through the
 * schema's DeclType and its MaxElements (maxLength×4, maxItems, maxProperties,
 * or what fits in a 3 MiB request) is the bound, as compilation.go's
 * sizeEstimator does.
 *
 * Approximations: arithmetic is on doubles saturating at 2^64-1 (exact below
 * 2^53, which covers every limit compared against); authz, semver, image and
 * jsonpatch libraries are absent, so their estimators are too.
 */
import type { CallNode, CompNode, Node } from './ast.js';
import { type AstNode, add, addN, byFactor, type CallEstimate, type Estimate, fixed, k8sEstimate, MAX_U64, mul, mulN, UNKNOWN, union } from './cost-model.js';
import {
  LIST_CREATE_BASE_COST,
  MAP_CREATE_BASE_COST,
  REGEX_STRING_LENGTH_COST_FACTOR,
  STRING_TRAVERSAL_COST_FACTOR,
  STRUCT_CREATE_BASE_COST,
} from './runtime-cost.js';
import { type CelType, isScalarType, T } from './types.js';
import { codePointLength, UintV } from './values.js';

/** Size of the data at a path from a variable, or undefined when unknown. */
export type SizeEstimator = (path: readonly string[], type: CelType) => Estimate | undefined;

interface EntrySize {
  list: boolean;
  key: Estimate;
  val: Estimate;
}
interface LocalVar {
  path: string[] | undefined;
  size: Estimate | undefined;
  entry: EntrySize | undefined;
}

const ACCUMULATORS = new Set(['@result', '__result__']);

class Coster {
  private readonly paths = new Map<Node, string[]>();
  private readonly sizes = new Map<Node, Estimate>();
  private readonly entries = new Map<Node, EntrySize>();
  private readonly locals = new Map<string, LocalVar[]>();

  constructor(private readonly estimateSize: SizeEstimator | undefined) {}

  private peek(name: string): LocalVar | undefined {
    const s = this.locals.get(name);
    return s?.[s.length - 1];
  }
  private push(name: string, v: LocalVar): void {
    this.locals.set(name, [...(this.locals.get(name) ?? []), v]);
  }
  private pop(name: string): void {
    this.locals.get(name)?.pop();
  }

  private pathOf(e: Node): string[] | undefined {
    if (e.kind === 'ident') {
      const v = this.peek(e.name);
      if (v) return v.path;
    }
    return this.paths.get(e);
  }

  private literalSize(e: Node): Estimate | undefined {
    if (e.kind === 'const') {
      const v = e.value;
      if (typeof v === 'string') return fixed(codePointLength(v));
      if (v instanceof Uint8Array) return fixed(v.length);
      if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean' || v === null || v instanceof UintV) return fixed(1);
      return undefined;
    }
    if (e.kind === 'list') return fixed(e.elems.length);
    if (e.kind === 'map') return fixed(e.entries.length);
    return undefined;
  }

  /** cel-go computeSize. */
  private computeSize(e: Node): Estimate | undefined {
    const known = this.sizes.get(e) ?? this.literalSize(e);
    if (known) return known;
    const path = this.pathOf(e);
    if (path?.length && this.estimateSize) {
      const s = this.estimateSize(path, e.t ?? T.dyn);
      if (s) {
        this.sizes.set(e, s);
        return s;
      }
    }
    if (e.t && isScalarType(e.t)) return fixed(1);
    if (e.kind === 'ident') return this.peek(e.name)?.size;
    return undefined;
  }

  private sizeOrUnknown(e: Node | AstNode): Estimate {
    if ('kind' in e) return this.computeSize(e) ?? UNKNOWN;
    return e.size ?? UNKNOWN;
  }

  private entrySize(e: Node): EntrySize | undefined {
    return this.entries.get(e) ?? (e.kind === 'ident' ? this.peek(e.name)?.entry : undefined);
  }

  private astNode(e: Node): AstNode {
    let path = this.pathOf(e);
    if (path?.length && ACCUMULATORS.has(path[0]!)) path = undefined;
    return { node: e, path, type: e.t ?? T.dyn, size: this.computeSize(e) };
  }

  /** Size of a node for Kubernetes' estimator (k8s CostEstimator.sizeEstimate). */
  private k8sSize(n: AstNode): Estimate {
    if (n.size) return n.size;
    if (n.path?.length && this.estimateSize) return this.estimateSize(n.path, n.type) ?? UNKNOWN;
    return UNKNOWN;
  }

  cost(e: Node): Estimate {
    switch (e.kind) {
      case 'const':
        return fixed(0);
      case 'ident':
        if (!this.peek(e.name)) this.paths.set(e, [e.name]);
        return fixed(1);
      case 'select': {
        if (e.qualified !== undefined) {
          this.paths.set(e, [e.qualified]);
          return fixed(1);
        }
        if (e.testOnly) return this.cost(e.operand);
        const c = this.cost(e.operand);
        const k = e.operand.t?.kind;
        const sel = e.optional || k === 'map' || k === 'struct' || k === 'param' ? 1 : 0;
        const p = this.pathOf(e.operand);
        if (p) this.paths.set(e, [...p, e.field]);
        return add(c, fixed(sel));
      }
      case 'call':
        return this.costCall(e);
      case 'list': {
        let sum = fixed(0);
        let item: Estimate = e.elems.length ? { min: MAX_U64, max: 0 } : fixed(0);
        for (const x of e.elems) {
          sum = add(sum, this.cost(x));
          item = union(item, this.sizeOrUnknown(x));
        }
        this.entries.set(e, { list: true, key: fixed(1), val: item });
        return add(sum, fixed(LIST_CREATE_BASE_COST));
      }
      case 'map': {
        let sum = fixed(0);
        let key: Estimate = e.entries.length ? { min: MAX_U64, max: 0 } : fixed(0);
        let val = key;
        for (const en of e.entries) {
          sum = add(add(sum, this.cost(en.key)), this.cost(en.value));
          key = union(key, this.sizeOrUnknown(en.key));
          val = union(val, this.sizeOrUnknown(en.value));
        }
        this.entries.set(e, { list: false, key, val });
        return add(sum, fixed(MAP_CREATE_BASE_COST));
      }
      case 'struct':
        return add(
          e.fields.reduce((s, f) => add(s, this.cost(f.value)), fixed(0)),
          fixed(STRUCT_CREATE_BASE_COST),
        );
      case 'comp':
        return this.isBind(e) ? this.costBind(e) : this.costComp(e);
    }
  }

  private pushLocal(name: string, init: Node): void {
    this.push(name, { path: this.pathOf(init), size: this.computeSize(init), entry: this.entrySize(init) });
  }

  private isBind(e: CompNode): boolean {
    return e.range.kind === 'list' && e.range.elems.length === 0 && e.cond.kind === 'const' && e.cond.value === false && !ACCUMULATORS.has(e.accuVar);
  }

  private costBind(e: CompNode): Estimate {
    let sum = add(this.cost(e.range), this.cost(e.init));
    this.pushLocal(e.accuVar, e.init);
    sum = add(sum, this.cost(e.result));
    this.pop(e.accuVar);
    const s = this.computeSize(e.result);
    if (s) this.sizes.set(e, s);
    const en = this.entrySize(e.result);
    if (en) this.entries.set(e, en);
    return sum;
  }

  private costComp(e: CompNode): Estimate {
    let sum = add(this.cost(e.range), this.cost(e.init));
    this.pushLocal(e.accuVar, e.init);
    const rangeEntry = this.entrySize(e.range);
    const isList = rangeEntry ? rangeEntry.list : e.range.t?.kind === 'list';
    const rp = this.pathOf(e.range);
    const sub = (s: string) => (rp ? [...rp, s] : undefined);
    if (e.iterVar2) {
      this.push(e.iterVar, { path: sub(isList ? '@indices' : '@keys'), size: rangeEntry?.key, entry: undefined });
      this.push(e.iterVar2, { path: sub(isList ? '@items' : '@values'), size: rangeEntry?.val, entry: undefined });
    } else {
      this.push(e.iterVar, { path: sub(isList ? '@items' : '@keys'), size: isList ? rangeEntry?.val : rangeEntry?.key, entry: undefined });
    }
    const loop = this.cost(e.cond);
    const step = this.cost(e.step);
    this.pop(e.iterVar);
    if (e.iterVar2) this.pop(e.iterVar2);
    sum = add(sum, this.cost(e.result));
    this.pop(e.accuVar);
    const rangeCnt = this.sizeOrUnknown(e.range);
    sum = add(sum, mul(rangeCnt, add(step, loop)));
    if (e.init.kind === 'const') {
      const s = this.computeSize(e.init);
      if (s) this.sizes.set(e, s);
    } else if (e.init.kind === 'list' || e.init.kind === 'map') {
      this.sizes.set(e, rangeCnt);
      const en = this.entrySize(e.step);
      if (en) this.entries.set(e, en);
    }
    return sum;
  }

  private costCall(e: CallNode): Estimate {
    if (e.fn === 'dyn' && e.args.length === 1) {
      const c = this.cost(e.args[0]!);
      const s = this.computeSize(e.args[0]!);
      if (s) this.sizes.set(e, s);
      return add(fixed(1), c);
    }
    const argCosts = e.args.map((a) => this.cost(a));
    const args = e.args.map((a) => this.astNode(a));
    let sum = fixed(0);
    let target: AstNode | undefined;
    if (e.target) {
      sum = add(sum, this.cost(e.target));
      target = this.astNode(e.target);
    }
    const ids = e.fn === '_[?_]' ? ['optional_index'] : (e.overloads ?? []);
    if (!ids.length) return fixed(0);
    let fn: Estimate = { min: MAX_U64, max: 0 };
    let result: Estimate | undefined;
    for (const id of ids) {
      const est = this.functionCost(e, id, target, args, argCosts);
      fn = union(fn, est.cost);
      if (est.size) result = result ? union(result, est.size) : est.size;
      if (id === 'index_list' || id === 'index_map') {
        result = this.entrySize(e.args[0]!)?.val;
        const p = this.pathOf(e.args[0]!);
        if (p) this.paths.set(e, [...p, id === 'index_list' ? '@items' : '@values']);
      }
      result ??= this.computeSize(e);
    }
    if (result) this.sizes.set(e, result);
    return add(sum, fn);
  }

  private functionCost(e: CallNode, id: string, target: AstNode | undefined, args: AstNode[], argCosts: Estimate[]): CallEstimate {
    const argSum = () => argCosts.reduce(add, fixed(0));
    const setsFactor = id === 'list_sets_equivalent_list' ? 2 : id === 'list_sets_contains_list' || id === 'list_sets_intersects_list' ? 1 : 0;
    if (setsFactor && args.length === 2) {
      return { cost: add(add(byFactor(mul(this.k8sSize(args[0]!), this.k8sSize(args[1]!)), setsFactor), fixed(1)), argSum()) };
    }
    const k = k8sEstimate(e.fn, id, target, args, (n) => this.k8sSize(n));
    if (k) return { cost: add(k.cost, argSum()), ...(k.size ? { size: k.size } : {}) };
    const size0 = () => this.sizeOrUnknown(args[0]!);
    switch (id) {
      case 'string_format':
        if (target) return { cost: add(byFactor(this.sizeOrUnknown(target), STRING_TRAVERSAL_COST_FACTOR), argSum()) };
        break;
      case 'string_to_bytes':
        if (args.length === 1)
          return { cost: add(byFactor(size0(), STRING_TRAVERSAL_COST_FACTOR), argSum()), size: { min: size0().min, max: mulN(size0().max, 4) } };
        break;
      case 'bytes_to_string':
        if (args.length === 1)
          return { cost: add(byFactor(size0(), STRING_TRAVERSAL_COST_FACTOR), argSum()), size: { min: Math.floor(size0().min / 4), max: size0().max } };
        break;
      case 'strings_quote':
        if (args.length === 1)
          return {
            cost: add(byFactor(size0(), STRING_TRAVERSAL_COST_FACTOR), argSum()),
            size: { min: addN(size0().min, 2), max: addN(mulN(size0().max, 2), 2) },
          };
        break;
      case 'starts_with_string':
      case 'ends_with_string':
        if (args.length === 1) return { cost: add(byFactor(size0(), STRING_TRAVERSAL_COST_FACTOR), argSum()) };
        break;
      case 'in_list':
        if (args.length === 2) return { cost: add(byFactor(this.sizeOrUnknown(args[1]!), 1), argSum()) };
        break;
      case 'matches_string':
        if (target && args.length === 1) {
          const str = byFactor(add(this.sizeOrUnknown(target), fixed(1)), STRING_TRAVERSAL_COST_FACTOR);
          return { cost: add(mul(str, byFactor(size0(), REGEX_STRING_LENGTH_COST_FACTOR)), argSum()) };
        }
        break;
      case 'contains_string':
        if (target && args.length === 1) {
          return {
            cost: add(mul(byFactor(this.sizeOrUnknown(target), STRING_TRAVERSAL_COST_FACTOR), byFactor(size0(), STRING_TRAVERSAL_COST_FACTOR)), argSum()),
          };
        }
        break;
      case 'logical_or':
      case 'logical_and': {
        const [l, r] = [argCosts[0]!, argCosts[1]!];
        return { cost: { min: l.min, max: add(l, r).max } };
      }
      case 'conditional': {
        const size = union(this.sizeOrUnknown(args[1]!), this.sizeOrUnknown(args[2]!));
        const a = this.entrySize(e.args[1]!);
        const b = this.entrySize(e.args[2]!);
        if (a && b) this.entries.set(e, { list: a.list, key: union(a.key, b.key), val: union(a.val, b.val) });
        return { cost: add(argCosts[0]!, union(argCosts[1]!, argCosts[2]!)), size };
      }
      case 'add_string':
      case 'add_bytes':
      case 'add_list':
        if (args.length === 2) {
          const size = add(size0(), this.sizeOrUnknown(args[1]!));
          const a = this.entrySize(e.args[0]!);
          const b = this.entrySize(e.args[1]!);
          if (a && b) this.entries.set(e, { list: a.list, key: union(a.key, b.key), val: union(a.val, b.val) });
          if (id === 'add_list') return { cost: add(fixed(1), argSum()), size };
          return { cost: add(byFactor(size, STRING_TRAVERSAL_COST_FACTOR), argSum()), size };
        }
        break;
      default:
        if (/^(less|greater|less_equals|greater_equals)_(string|bytes)$/.test(id) || id === 'equals' || id === 'not_equals') {
          const l = this.sizeOrUnknown(args[0]!);
          const r = this.sizeOrUnknown(args[1]!);
          const smallest = Math.min(l.max, r.max);
          return { cost: add(byFactor({ min: smallest > 0 ? 1 : 0, max: smallest }, STRING_TRAVERSAL_COST_FACTOR), argSum()) };
        }
    }
    return { cost: add(fixed(1), argSum()) };
  }
}

/** The estimated cost range of a checked expression (cel-go `env.EstimateCost`). */
export function estimateCost(root: Node, estimateSize?: SizeEstimator): Estimate {
  return new Coster(estimateSize).cost(root);
}

export type { Estimate } from './cost-model.js';
