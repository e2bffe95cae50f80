/**
 * The arithmetic of cel-go's cost model (checker/cost.go SizeEstimate and
 * CostEstimate: saturating at 2^64-1, cost factors rounded up) and
 * Kubernetes' per-function estimates (k8s.io/apiserver/pkg/cel/library/
 * cost.go `EstimateCallCost`), used by cost.ts.
 */
import type { Node } from './ast.js';
import { FIXED_COST_FUNCTIONS, REGEX_STRING_LENGTH_COST_FACTOR, STRING_TRAVERSAL_COST_FACTOR } from './runtime-cost.js';
import { type CelType, formatType } from './types.js';

/** 2^64-1 as cel-go saturates uint64 costs (the nearest double). */
export const MAX_U64 = 2 ** 64 - 1;

export interface Estimate {
  min: number;
  max: number;
}

export const fixed = (n: number): Estimate => ({ min: n, max: n });
export const UNKNOWN: Estimate = { min: 0, max: MAX_U64 };
export const addN = (x: number, y: number) => (y > 0 && x > MAX_U64 - y ? MAX_U64 : x + y);
export const mulN = (x: number, y: number) => (y !== 0 && x > MAX_U64 / y ? MAX_U64 : x * y);
const factorN = (x: number, f: number) => (x > 0 && f > 0 && x > MAX_U64 / f ? MAX_U64 : Math.min(MAX_U64, Math.ceil(x * f)));
export const add = (a: Estimate, b: Estimate): Estimate => ({ min: addN(a.min, b.min), max: addN(a.max, b.max) });
export const mul = (a: Estimate, b: Estimate): Estimate => ({ min: mulN(a.min, b.min), max: mulN(a.max, b.max) });
export const byFactor = (a: Estimate, f: number): Estimate => ({ min: factorN(a.min, f), max: factorN(a.max, f) });
export const union = (a: Estimate, b: Estimate): Estimate => ({ min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) });

export interface CallEstimate {
  cost: Estimate;
  size?: Estimate;
}

/** An expression node as the estimators see it. */
export interface AstNode {
  node?: Node;
  path: string[] | undefined;
  type: CelType;
  size: Estimate | undefined;
}

/** k8s CostEstimator.listElementNode: the element of a list node, with the `@items` path. */
export function listElem(list: AstNode): AstNode | undefined {
  if (list.type.kind !== 'list') return undefined;
  return { path: list.path ? [...list.path, '@items'] : undefined, type: list.type.elem, size: undefined };
}

/** k8s.io/apiserver/pkg/cel/library/cost.go EstimateCallCost. */
export function k8sEstimate(fn: string, id: string, target: AstNode | undefined, args: AstNode[], size: (n: AstNode) => Estimate): CallEstimate | undefined {
  const trav = STRING_TRAVERSAL_COST_FACTOR;
  if (FIXED_COST_FUNCTIONS.has(fn)) return { cost: fixed(1) };
  switch (fn) {
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf': {
      if (!target) return undefined;
      const el = listElem(target);
      if (!el) return { cost: byFactor(size(target), trav) };
      let elCost = fixed(1);
      if (el.type.kind === 'string' || el.type.kind === 'bytes') elCost = add(elCost, byFactor(size(el), trav));
      return { cost: mul(size(target), elCost) };
    }
    case 'url':
      if (args.length !== 1) return undefined;
      return { cost: byFactor(size(args[0]!), trav), size: size(args[0]!) };
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      if (!target) return undefined;
      return { cost: byFactor(size(target), trav), size: size(target) };
    case 'replace':
      return target && args.length >= 2 ? replaceEstimate(target, args, size) : undefined;
    case 'split': {
      if (!target) return undefined;
      const sz = size(target);
      let max = sz.max;
      const lim = args[1]?.node;
      if (lim?.kind === 'const' && typeof lim.value === 'bigint') max = Number(lim.value);
      return { cost: byFactor(sz, 2 * trav), size: { min: 0, max } };
    }
    case 'join': {
      if (!target) return undefined;
      const listSize = size(target);
      const el = listElem(target);
      let sz = el ? mul(listSize, size(el)) : fixed(0);
      if (args.length) {
        const seps = { min: listSize.min > 0 ? listSize.min - 1 : 0, max: listSize.max > 0 ? listSize.max - 1 : 0 };
        sz = add(sz, mul(size(args[0]!), seps));
      }
      return { cost: byFactor(sz, trav), size: sz };
    }
    case 'find':
    case 'findAll': {
      if (!target || !args.length) return undefined;
      const sz = size(target);
      const str = byFactor(add(sz, fixed(1)), trav);
      return { cost: mul(str, byFactor(size(args[0]!), REGEX_STRING_LENGTH_COST_FACTOR)), size: { min: 0, max: sz.max } };
    }
    case 'ip':
      return target ? { cost: fixed(1) } : undefined;
    case 'containsIP':
    case 'containsCIDR': {
      if (!target || !args.length) return undefined;
      const sz = { min: 4, max: 16 };
      let c = byFactor(add(sz, sz), trav);
      if (fn === 'containsCIDR') c = add(add(c, byFactor(sz, trav)), fixed(1));
      if (id === 'cidr_contains_ip_string' || id === 'cidr_contains_cidr_string') c = add(c, byFactor(size(args[0]!), trav));
      return { cost: c };
    }
    case 'validate':
      return target ? { cost: byFactor(byFactor(size(args[0]!), trav), 128 * REGEX_STRING_LENGTH_COST_FACTOR) } : undefined;
    case '_==_': {
      if (args.length !== 2) return undefined;
      const [l, r] = [args[0]!.type, args[1]!.type];
      if (formatType(l) !== formatType(r)) return undefined;
      if (l.kind === 'opaque' && (l.name === 'net.IP' || l.name === 'net.CIDR')) return { cost: fixed(1) };
      if (l.kind === 'struct' && l.name === 'kubernetes.Quantity') return { cost: fixed(1) };
      if (l.kind === 'struct' && l.name === 'kubernetes.NamedFormat') return { cost: byFactor({ min: 1, max: 64 }, trav) };
      if (l.kind === 'struct' && l.name === 'kubernetes.URL') {
        const rs = args[1]!.size;
        return { cost: byFactor({ min: 1, max: rs ? rs.max : 1 }, trav) };
      }
      return undefined;
    }
  }
  return undefined;
}

function replaceEstimate(target: AstNode, args: AstNode[], size: (n: AstNode) => Estimate): CallEstimate {
  const sz = size(target);
  const from = size(args[0]!);
  const to = size(args[1]!);
  const count = { min: 0, max: 0 };
  const retained = { min: 0, max: 0 };
  if (from.min === 0) {
    count.max = sz.max < MAX_U64 ? sz.max + 1 : sz.max;
    retained.max = sz.max;
  } else if (to.max <= from.min) retained.max = sz.max;
  else count.max = Math.ceil(sz.max / from.min);
  if (from.max === 0) {
    count.min = sz.min < MAX_U64 ? sz.min + 1 : sz.min;
    retained.min = sz.min;
  } else if (from.max <= to.min) retained.min = sz.min;
  else count.min = Math.ceil(sz.min / from.max);
  return { cost: byFactor(sz, 2 * STRING_TRAVERSAL_COST_FACTOR), size: add(mul(count, to), retained) };
}
