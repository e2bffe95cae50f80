/**
 * The runtime cost of a function call: Kubernetes' `CostEstimator.CallCost`
 * (k8s.io/apiserver/pkg/cel/library/cost.go) first, then cel-go's default
 * `CostTracker.costCall` (interpreter/runtimecost.go), plus the cost trackers
 * of the cel-go sets extension. Kept in step with the static estimates in
 * cost.ts, as upstream keeps the two in step.
 */
import { FormatV } from './lib-k8s-url.js';
import { actualSize, type CelError, ListV, MapV, OpaqueV, type Val } from './values.js';

export const STRING_TRAVERSAL_COST_FACTOR = 0.1;
export const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;
export const LIST_CREATE_BASE_COST = 10;
export const MAP_CREATE_BASE_COST = 30;
export const STRUCT_CREATE_BASE_COST = 40;

/**
 * The library functions that cost 1 whatever their arguments, both estimated
 * and at run time (k8s.io/apiserver pkg/cel/library cost.go lists them in both).
 */
export const FIXED_COST_FUNCTIONS: ReadonlySet<string> = new Set([
  'masked',
  'prefixLength',
  'family',
  'isUnspecified',
  'isLoopback',
  'isLinkLocalMulticast',
  'isLinkLocalUnicast',
  'isGlobalUnicast',
  'format.named',
  'sign',
  'asInteger',
  'isInteger',
  'asApproximateFloat',
  'isGreaterThan',
  'isLessThan',
  'compareTo',
  'add',
  'sub',
  'getScheme',
  'getHostname',
  'getHost',
  'getPort',
  'getEscapedPath',
  'getQuery',
]);

type V = Val | CelError;
const size = (v: V | undefined) => (v === undefined ? 1 : actualSize(v));
const ceil = Math.ceil;

/** library/cost.go traversalCost: the cost of walking a value as a data tree. */
export function traversalCost(v: V): number {
  if (typeof v === 'string') return Math.floor(Buffer.byteLength(v) * STRING_TRAVERSAL_COST_FACTOR);
  if (v instanceof Uint8Array) return Math.floor(v.length * STRING_TRAVERSAL_COST_FACTOR);
  if (v instanceof ListV) return v.items().reduce((s: number, x) => s + traversalCost(x), 0);
  if (v instanceof MapV) return v.keys().reduce((s: number, k) => s + traversalCost(k) + traversalCost(v.find(k) ?? null), 0);
  return 1;
}

function k8sCallCost(fn: string, overloadId: string, args: readonly V[], result: V): number | undefined {
  if (FIXED_COST_FUNCTIONS.has(fn)) return 1;
  switch (fn) {
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return args.length ? traversalCost(args[0]!) : 0;
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'jsonpatch.escapeKey':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      return args.length ? ceil(size(args[0]) * STRING_TRAVERSAL_COST_FACTOR) : undefined;
    case 'replace':
    case 'split':
      return args.length ? ceil(size(args[0]) * 2 * STRING_TRAVERSAL_COST_FACTOR) : undefined;
    case 'join':
      return args.length ? ceil(size(result) * 2 * STRING_TRAVERSAL_COST_FACTOR) : undefined;
    case 'find':
    case 'findAll':
      if (args.length < 2) return undefined;
      return ceil((1 + size(args[0])) * STRING_TRAVERSAL_COST_FACTOR) * ceil(size(args[1]) * REGEX_STRING_LENGTH_COST_FACTOR);
    case 'ip':
      if (!args.length) return undefined;
      return overloadId === 'cidr_ip' ? 1 : ceil(size(args[0]) * STRING_TRAVERSAL_COST_FACTOR);
    case 'ip.isCanonical':
      return args.length ? ceil(size(args[0]) * 2 * STRING_TRAVERSAL_COST_FACTOR) : undefined;
    case 'containsIP': {
      if (args.length < 2) return undefined;
      const c = size(args[0]);
      let cost = ceil((c + c) * STRING_TRAVERSAL_COST_FACTOR);
      if (overloadId === 'cidr_contains_ip_string') cost += ceil(size(args[1]) * STRING_TRAVERSAL_COST_FACTOR);
      return cost;
    }
    case 'containsCIDR': {
      if (args.length < 2) return undefined;
      const c = size(args[0]);
      let cost = ceil((c + c) * STRING_TRAVERSAL_COST_FACTOR) + ceil(c * STRING_TRAVERSAL_COST_FACTOR) + 1;
      if (overloadId === 'cidr_contains_cidr_string') cost += ceil(size(args[1]) * STRING_TRAVERSAL_COST_FACTOR);
      return cost;
    }
    case 'validate': {
      const f = args[0];
      if (args.length < 2 || !(f instanceof FormatV)) return undefined;
      return ceil((1 + size(args[1])) * STRING_TRAVERSAL_COST_FACTOR) * ceil(f.maxRegexSize * REGEX_STRING_LENGTH_COST_FACTOR);
    }
    case '_==_':
      return args.length === 2 && args[0] instanceof OpaqueV ? 1 : undefined;
  }
  return undefined;
}

/** The runtime cost of one call of `overloadId` of `fn` with the given (already evaluated) arguments. */
export function callCost(fn: string, overloadId: string, args: readonly V[], result: V): number {
  const k = k8sCallCost(fn, overloadId, args, result);
  if (k !== undefined) return k;
  switch (overloadId) {
    case 'list_sets_contains_list':
    case 'list_sets_intersects_list':
      return size(args[0]) * size(args[1]) + 1;
    case 'list_sets_equivalent_list':
      return 2 * size(args[0]) * size(args[1]) + 1;
    case 'starts_with_string':
    case 'ends_with_string':
    case 'string_to_bytes':
    case 'bytes_to_string':
      return ceil(size(args[0]) * STRING_TRAVERSAL_COST_FACTOR);
    case 'in_list':
      return size(args[1]);
    case 'add_string':
    case 'add_bytes':
      return ceil((size(args[0]) + size(args[1])) * STRING_TRAVERSAL_COST_FACTOR);
    case 'matches_string':
      return ceil((1 + size(args[0])) * STRING_TRAVERSAL_COST_FACTOR) * ceil(size(args[1]) * REGEX_STRING_LENGTH_COST_FACTOR);
    case 'contains_string':
      return ceil(size(args[0]) * STRING_TRAVERSAL_COST_FACTOR) * ceil(size(args[1]) * STRING_TRAVERSAL_COST_FACTOR);
    default:
      if (/^(less|greater|less_equals|greater_equals)_(string|bytes)$/.test(overloadId) || overloadId === 'equals' || overloadId === 'not_equals') {
        return ceil(Math.min(size(args[0]), size(args[1])) * STRING_TRAVERSAL_COST_FACTOR);
      }
      return 1;
  }
}
