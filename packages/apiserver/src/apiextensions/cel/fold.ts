/**
 * The plan-time optimizations of cel-go's interpreter that Kubernetes turns on
 * (`cel.EvalOptions(cel.OptOptimize)`, interpreter/decorators.go
 * `decOptimize`), which change the runtime cost: list and map literals of
 * constants become constants, type conversions of a constant (`int('1')`,
 * `duration('1s')`) are computed once, and `x in [constants]` becomes a set
 * membership test. Constants cost nothing at runtime, so these parts of an
 * expression are free, as they are upstream. The static estimate is computed
 * on the unoptimized tree, as upstream's is.
 *
 * A conversion of a constant that fails is a program creation error, as in
 * cel-go (`maybeOptimizeConstUnary`).
 */
import type { Node } from './ast.js';
import { walk } from './ast.js';
import type { FunctionRegistry } from './registry.js';
import { fitsRuntime } from './registry.js';
import { ArrayList, CelError, ListV, NativeMap, UintV, type Val } from './values.js';

const CONVERSIONS = new Set(['bool', 'bytes', 'double', 'duration', 'dyn', 'int', 'string', 'timestamp', 'type', 'uint']);

/** What the optimizer found: constant values of nodes, and `in` calls turned into set membership. */
export interface Folded {
  constants: WeakMap<Node, Val>;
  setMembership: WeakSet<Node>;
}

const isPrimitive = (v: Val) => typeof v === 'string' || typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean' || v instanceof UintV;

/** Computes the constant parts of a checked expression; throws the CelError of a failing constant conversion. */
export function fold(root: Node, functions: FunctionRegistry): Folded {
  const constants = new WeakMap<Node, Val>();
  const setMembership = new WeakSet<Node>();
  const nodes = [...walk(root)].reverse(); // children before parents
  for (const n of nodes) {
    switch (n.kind) {
      case 'const':
        constants.set(n, n.value);
        break;
      case 'list':
        if (!n.optional.size && n.elems.every((e) => constants.has(e))) constants.set(n, new ArrayList(n.elems.map((e) => constants.get(e) as Val)));
        break;
      case 'map':
        if (n.entries.every((e) => !e.optional && constants.has(e.key) && constants.has(e.value))) {
          try {
            constants.set(n, new NativeMap(n.entries.map((e) => [constants.get(e.key) as Val, constants.get(e.value) as Val])));
          } catch {
            // duplicate or unsupported keys fail at runtime, as written
          }
        }
        break;
      case 'call': {
        if (!n.target && n.args.length === 1 && CONVERSIONS.has(n.fn) && constants.has(n.args[0]!)) {
          const arg = constants.get(n.args[0]!) as Val;
          for (const id of n.overloads ?? []) {
            const o = functions.overload(id);
            if (!o?.impl || !fitsRuntime(o.params[0]!, arg)) continue;
            let v: Val;
            try {
              v = o.impl([arg]);
            } catch (e) {
              if (e instanceof CelError) throw e;
              throw new CelError((e as Error).message);
            }
            constants.set(n, v);
            break;
          }
        }
        if (n.fn === '@in' && n.overloads?.includes('in_list') && n.args[1] && constants.has(n.args[1])) {
          const l = constants.get(n.args[1]);
          if (l instanceof ListV && l.items().every(isPrimitive)) setMembership.add(n);
        }
        break;
      }
    }
  }
  return { constants, setMembership };
}
