/**
 * The expression tree the checker, cost estimator and interpreter work on.
 *
 * Parsing is @bufbuild/cel's `parse` (its peggy grammar and macro expansion of
 * has/all/exists/exists_one/map/filter). This module converts its protobuf
 * `Expr` into plain nodes, and adds what that parser lacks for Kubernetes:
 * cel-go's optional syntax (via the marker rewrite in source.ts), the
 * two-variable comprehension macros Kubernetes enables from 1.32
 * (`all(i, v, p)`, `exists(i, v, p)`, `existsOne(i, v, p)`, `transformList`,
 * `transformMap`), the optional-library macros `optMap`/`optFlatMap`, int64
 * literal range checks, and cel-go's node positions (the operator token of a
 * binary operator, the `(` of a call) so issues point where cel-go points.
 */
import { parse } from '@bufbuild/cel';
import type { CelType } from './types.js';
import { type Issue, OPT_ELEM, OPT_INDEX, OPT_KEY, OPT_SELECT, rewriteOptionalSyntax, type Token, tokenize } from './source.js';
import { INT64_MAX, INT64_MIN, UINT64_MAX, UintV, type Val } from './values.js';

/** Annotations the checker adds to every node. */
export interface Checked {
  /** The node's checked type. */
  t?: CelType;
}

export interface ConstNode extends Checked {
  kind: 'const';
  id: number;
  value: Val;
}
export interface IdentNode extends Checked {
  kind: 'ident';
  id: number;
  name: string;
}
export interface SelectNode extends Checked {
  kind: 'select';
  id: number;
  operand: Node;
  field: string;
  testOnly: boolean;
  optional: boolean;
  /** Set by the checker when the whole chain names a variable or a type (`google.protobuf.Timestamp`). */
  qualified?: string;
}
export interface CallNode extends Checked {
  kind: 'call';
  id: number;
  fn: string;
  target?: Node;
  args: Node[];
  /** Overload ids the checker found for this call (set by the checker). */
  overloads?: string[];
}
export interface ListNode extends Checked {
  kind: 'list';
  id: number;
  elems: Node[];
  optional: Set<number>;
}
export interface MapNode extends Checked {
  kind: 'map';
  id: number;
  entries: { key: Node; value: Node; optional: boolean }[];
}
export interface StructNode extends Checked {
  kind: 'struct';
  id: number;
  name: string;
  fields: { name: string; value: Node }[];
}
export interface CompNode extends Checked {
  kind: 'comp';
  id: number;
  iterVar: string;
  iterVar2?: string;
  range: Node;
  accuVar: string;
  init: Node;
  cond: Node;
  step: Node;
  result: Node;
}

export type Node = ConstNode | IdentNode | SelectNode | CallNode | ListNode | MapNode | StructNode | CompNode;

/** A parsed expression: the tree, node offsets into the original source, and any parse issues. */
export interface ParsedAst {
  source: string;
  root?: Node;
  positions: Map<number, number>;
  issues: Issue[];
}

export const ACCU = '@result';

// Structural view of @bufbuild/cel's protobuf Expr, as much as this module reads.
interface PExpr {
  id: bigint;
  exprKind: { case: string | undefined; value?: unknown };
}
interface PCall {
  function: string;
  target?: PExpr;
  args: PExpr[];
}
interface PSelect {
  operand?: PExpr;
  field: string;
  testOnly: boolean;
}
interface PComp {
  iterVar: string;
  iterVar2: string;
  iterRange: PExpr;
  accuVar: string;
  accuInit: PExpr;
  loopCondition: PExpr;
  loopStep: PExpr;
  result: PExpr;
}
interface PEntry {
  keyKind: { case: string | undefined; value?: unknown };
  value: PExpr;
}
interface PConst {
  constantKind: { case: string | undefined; value?: unknown };
}

const BINARY_OPS: Record<string, string> = {
  '_+_': '+',
  '_-_': '-',
  '_*_': '*',
  '_/_': '/',
  '_%_': '%',
  '_==_': '==',
  '_!=_': '!=',
  '_<_': '<',
  '_<=_': '<=',
  '_>_': '>',
  '_>=_': '>=',
  '_&&_': '&&',
  '_||_': '||',
  '@in': 'in',
};

class Converter {
  nextId = 1;
  readonly positions = new Map<number, number>();
  readonly issues: Issue[] = [];
  constructor(
    private readonly srcPos: Record<string, number>,
    private readonly tokens: Token[],
  ) {}

  private pos(id: bigint): number {
    return this.srcPos[id.toString()] ?? 0;
  }

  private fresh(offset: number): number {
    const id = this.nextId++;
    this.positions.set(id, offset);
    return id;
  }

  private tokenAfter(offset: number, text: string, before = Number.POSITIVE_INFINITY): Token | undefined {
    return this.tokens.find((t) => t.start >= offset && t.start < before && t.text === text);
  }

  /** The `(` of a call whose recorded offset is at its name or the `.` before it. */
  private callParen(offset: number): number {
    const i = this.tokens.findIndex((t) => t.start >= offset);
    let k = i;
    if (this.tokens[k]?.text === '.') k++;
    if (this.tokens[k]?.kind === 'ident' && this.tokens[k + 1]?.text === '(') return this.tokens[k + 1]!.start;
    return offset;
  }

  convert(e: PExpr): Node {
    const offset = this.pos(e.id);
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return { kind: 'const', id: this.fresh(offset), value: this.constant(k.value as PConst, offset) };
      case 'identExpr':
        return { kind: 'ident', id: this.fresh(offset), name: (k.value as { name: string }).name };
      case 'selectExpr': {
        const s = k.value as PSelect;
        const operand = this.convert(s.operand!);
        const optional = s.field.startsWith(OPT_SELECT);
        const field = optional ? s.field.slice(OPT_SELECT.length) : s.field;
        return { kind: 'select', id: this.fresh(offset), operand, field, testOnly: s.testOnly, optional };
      }
      case 'callExpr':
        return this.call(k.value as PCall, offset);
      case 'listExpr': {
        const elems: Node[] = [];
        const optional = new Set<number>();
        for (const el of (k.value as { elements: PExpr[] }).elements) {
          const inner = this.unwrapMarker(el, OPT_ELEM);
          if (inner) optional.add(elems.length);
          elems.push(this.convert(inner ?? el));
        }
        return { kind: 'list', id: this.fresh(offset), elems, optional };
      }
      case 'structExpr': {
        const v = k.value as { entries: PEntry[]; messageName: string };
        if (v.messageName) {
          const fields = v.entries.map((en) => ({ name: String(en.keyKind.value), value: this.convert(en.value) }));
          return { kind: 'struct', id: this.fresh(offset), name: v.messageName, fields };
        }
        const entries = v.entries.map((en) => {
          const key = en.keyKind.value as PExpr;
          const inner = this.unwrapMarker(key, OPT_KEY);
          return { key: this.convert(inner ?? key), value: this.convert(en.value), optional: !!inner };
        });
        return { kind: 'map', id: this.fresh(offset), entries };
      }
      case 'comprehensionExpr': {
        const c = k.value as PComp;
        const range = this.convert(c.iterRange);
        const init = this.convert(c.accuInit);
        const cond = this.convert(c.loopCondition);
        const step = this.convert(c.loopStep);
        const result = this.convert(c.result);
        const node: CompNode = {
          kind: 'comp',
          id: this.fresh(this.callParen(offset)),
          iterVar: c.iterVar,
          range,
          accuVar: c.accuVar,
          init,
          cond,
          step,
          result,
        };
        if (c.iterVar2) node.iterVar2 = c.iterVar2;
        return node;
      }
      default:
        this.issues.push({ offset, message: 'Syntax error: unsupported expression' });
        return { kind: 'const', id: this.fresh(offset), value: null };
    }
  }

  private unwrapMarker(e: PExpr, marker: string): PExpr | undefined {
    if (e.exprKind.case !== 'callExpr') return undefined;
    const c = e.exprKind.value as PCall;
    return !c.target && c.function === marker && c.args.length === 1 ? c.args[0] : undefined;
  }

  private constant(c: PConst, offset: number): Val {
    const v = c.constantKind.value;
    switch (c.constantKind.case) {
      case 'int64Value': {
        const n = v as bigint;
        if (n < INT64_MIN || n > INT64_MAX) this.issues.push({ offset, message: 'invalid int literal' });
        return n;
      }
      case 'uint64Value': {
        const n = v as bigint;
        if (n > UINT64_MAX) this.issues.push({ offset, message: 'invalid uint literal' });
        return new UintV(n);
      }
      case 'nullValue':
        return null;
      default:
        return v as Val;
    }
  }

  private call(c: PCall, offset: number): Node {
    const op = BINARY_OPS[c.function];
    // Macros this parser leaves as plain calls.
    const macro = this.macro(c, offset);
    if (macro) return macro;
    if (c.function === '_[_]' && c.args.length === 2) {
      const inner = this.unwrapMarker(c.args[1]!, OPT_INDEX);
      if (inner) return { kind: 'call', id: this.fresh(offset), fn: '_[?_]', args: [this.convert(c.args[0]!), this.convert(inner)] };
    }
    const target = c.target ? this.convert(c.target) : undefined;
    const args = c.args.map((a) => this.convert(a));
    let at = offset;
    if (op && args.length === 2) {
      const left = maxOffset(args[0]!, this.positions);
      const right = minOffset(args[1]!, this.positions);
      at = this.tokenAfter(left + 1, op, right + 1)?.start ?? this.tokenAfter(offset, op)?.start ?? offset;
    } else if (c.function === '_?_:_' && args.length === 3) {
      at = this.tokenAfter(maxOffset(args[0]!, this.positions) + 1, '?', minOffset(args[1]!, this.positions) + 1)?.start ?? offset;
    } else if (/^[A-Za-z_]/.test(c.function)) {
      at = this.callParen(offset);
    }
    const node: CallNode = { kind: 'call', id: this.fresh(at), fn: c.function, args };
    if (target) node.target = target;
    return node;
  }

  private identName(e: PExpr | undefined): string | undefined {
    return e?.exprKind.case === 'identExpr' ? (e.exprKind.value as { name: string }).name : undefined;
  }

  /** Expands the macros @bufbuild/cel does not know. */
  private macro(c: PCall, offset: number): Node | undefined {
    if (!c.target) return undefined;
    const n = c.args.length;
    const v1 = this.identName(c.args[0]);
    const v2 = this.identName(c.args[1]);
    const at = this.callParen(offset);
    const mk = (iterVar: string, iterVar2: string | undefined, init: Node, cond: Node, step: Node, result: Node): CompNode => {
      const range = this.convert(c.target!);
      const node: CompNode = { kind: 'comp', id: this.fresh(at), iterVar, range, accuVar: ACCU, init, cond, step, result };
      if (iterVar2) node.iterVar2 = iterVar2;
      return node;
    };
    const id = (name: string): IdentNode => ({ kind: 'ident', id: this.fresh(at), name });
    const lit = (value: Val): ConstNode => ({ kind: 'const', id: this.fresh(at), value });
    const call = (fn: string, ...args: Node[]): CallNode => ({ kind: 'call', id: this.fresh(at), fn, args });
    const list = (...elems: Node[]): ListNode => ({ kind: 'list', id: this.fresh(at), elems, optional: new Set() });
    if ((c.function === 'optMap' || c.function === 'optFlatMap') && n === 2 && v1) {
      // cel-go optional library: x.optMap(v, e) is x.hasValue() ? optional.of(cel.bind(v, x.value(), e)) : optional.none()
      const target = this.convert(c.target);
      const body = this.convert(c.args[1]!);
      const valueCall: CallNode = { kind: 'call', id: this.fresh(at), fn: 'value', target: structuredClone(target), args: [] };
      const bind: CompNode = {
        kind: 'comp',
        id: this.fresh(at),
        iterVar: '#unused',
        range: list(),
        accuVar: v1,
        init: valueCall,
        cond: lit(false),
        step: id(v1),
        result: body,
      };
      const has: CallNode = { kind: 'call', id: this.fresh(at), fn: 'hasValue', target, args: [] };
      const then = c.function === 'optMap' ? call('optional.of', bind) : bind;
      return call('_?_:_', has, then, call('optional.none'));
    }
    if (!v1 || !v2 || n < 3) return undefined;
    switch (c.function) {
      case 'all':
        if (n !== 3) return undefined;
        return mk(v1, v2, lit(true), call('@not_strictly_false', id(ACCU)), call('_&&_', id(ACCU), this.convert(c.args[2]!)), id(ACCU));
      case 'exists':
        if (n !== 3) return undefined;
        return mk(v1, v2, lit(false), call('@not_strictly_false', call('!_', id(ACCU))), call('_||_', id(ACCU), this.convert(c.args[2]!)), id(ACCU));
      case 'existsOne':
      case 'exists_one': {
        if (n !== 3) return undefined;
        const step = call('_?_:_', this.convert(c.args[2]!), call('_+_', id(ACCU), lit(1n)), id(ACCU));
        return mk(v1, v2, lit(0n), lit(true), step, call('_==_', id(ACCU), lit(1n)));
      }
      case 'transformList': {
        const value = this.convert(c.args[n - 1]!);
        const add = call('_+_', id(ACCU), list(value));
        const step = n === 4 ? call('_?_:_', this.convert(c.args[2]!), add, id(ACCU)) : add;
        return mk(v1, v2, list(), lit(true), step, id(ACCU));
      }
      case 'transformMap': {
        const value = this.convert(c.args[n - 1]!);
        const ins = call('cel.@mapInsert', id(ACCU), id(v1), value);
        const step = n === 4 ? call('_?_:_', this.convert(c.args[2]!), ins, id(ACCU)) : ins;
        const init: MapNode = { kind: 'map', id: this.fresh(at), entries: [] };
        return mk(v1, v2, init, lit(true), step, id(ACCU));
      }
      default:
        return undefined;
    }
  }
}

function children(n: Node): Node[] {
  switch (n.kind) {
    case 'select':
      return [n.operand];
    case 'call':
      return n.target ? [n.target, ...n.args] : n.args;
    case 'list':
      return n.elems;
    case 'map':
      return n.entries.flatMap((e) => [e.key, e.value]);
    case 'struct':
      return n.fields.map((f) => f.value);
    case 'comp':
      return [n.range, n.init, n.cond, n.step, n.result];
    default:
      return [];
  }
}

/** Every node of a tree, depth first. */
export function* walk(n: Node): Generator<Node> {
  yield n;
  for (const c of children(n)) yield* walk(c);
}

const maxOffset = (n: Node, pos: Map<number, number>) => Math.max(...[...walk(n)].map((x) => pos.get(x.id) ?? 0));
const minOffset = (n: Node, pos: Map<number, number>) => Math.min(...[...walk(n)].map((x) => pos.get(x.id) ?? 0));

interface BufParseError {
  rawMessage?: string;
  message?: string;
  location?: { start: { offset: number } };
}

/** Parses a CEL expression; syntax errors become issues as cel-go reports them (`Syntax error: ...`). */
export function parseExpression(source: string): ParsedAst {
  const rw = rewriteOptionalSyntax(source);
  let parsed: { expr: PExpr; sourceInfo?: { positions: Record<string, number> } };
  try {
    parsed = parse(rw.text) as unknown as typeof parsed;
  } catch (e) {
    const err = e as BufParseError;
    const offset = rw.toOriginal(err.location?.start.offset ?? 0);
    const msg = err.rawMessage ?? err.message ?? String(e);
    return { source, positions: new Map(), issues: [{ offset, message: `Syntax error: ${msg}` }] };
  }
  const conv = new Converter(parsed.sourceInfo?.positions ?? {}, tokenize(rw.text));
  let root: Node;
  try {
    root = conv.convert(parsed.expr);
  } catch (e) {
    return { source, positions: new Map(), issues: [{ offset: 0, message: `Syntax error: ${(e as Error).message}` }] };
  }
  const positions = new Map<number, number>();
  for (const [id, off] of conv.positions) positions.set(id, rw.toOriginal(off));
  return { source, root, positions, issues: conv.issues.map((i) => ({ offset: rw.toOriginal(i.offset), message: i.message })) };
}
