/**
 * The admission plugins' view of the CEL engine (apiextensions/cel): the one
 * file that names its API, so that a change there touches only this adapter.
 *
 * - `compileChecked(expr, decls)`: parse and type-check with the Kubernetes
 *   libraries; `issues` as cel-go renders them.
 * - `run(program, vars, limit)`: evaluate with a per-call cost limit; the
 *   value, or the error text cel-go would give, and the cost spent.
 * - `toVal`: JSON objects as CEL values (integers as int, other numbers as
 *   double, objects as maps: cel-go's unstructured conversion); `toTypedVal`
 *   where a declared type says timestamp.
 * - `LazyVariables`: the `variables` object of a policy, each entry computed
 *   on first use (upstream's composition.go evaluates variables lazily and
 *   caches them per evaluation).
 */
import {
  type CelType,
  compileExpression,
  evaluate,
  formatType as celFormatType,
  isError,
  ListV,
  MapV,
  NativeMap,
  type Program,
  sameType,
  structOf,
  T,
  listOf,
  mapOf,
  type Val,
  ArrayList,
  CelError,
  parseTimestamp,
  schemaDeclType,
} from '../../apiextensions/cel/index.js';

export { type CelType, type Program, type Val, T, listOf, mapOf, structOf, sameType, schemaDeclType };

export const celError = (message: string): CelError => new CelError(message);

/** cel-go's `Type.String()` as the compile errors print it (`must evaluate to bool but got int`). */
export const formatType = (t: CelType): string => celFormatType(t);

export interface Checked {
  program?: Program;
  /** The checked result type (when it compiled). */
  type?: CelType;
  /** cel-go's rendering of the issues, when it did not compile. */
  issues?: string;
}

/** Parses and type-checks `expr` with the given variable declarations. */
export function compileChecked(expr: string, decls: Readonly<Record<string, CelType>>): Checked {
  const r = compileExpression(expr, decls);
  if (r.issues !== undefined || !r.program) return { issues: r.issues ?? 'ERROR: <input>:1:1: failed to compile' };
  if (r.programError) return { issues: r.programError };
  return { program: r.program, type: r.program.type };
}

export type RunResult = { value: Val; cost: number } | { error: string; cost: number };

/** Evaluates a program; a CEL runtime error (or a cost overrun) is `error`. */
export function run(program: Program, vars: ReadonlyMap<string, Val>, costLimit: number): RunResult {
  try {
    const r = evaluate(program, vars, { costLimit });
    if (isError(r.value)) return { error: r.value.message, cost: r.cost };
    return { value: r.value as Val, cost: r.cost };
  } catch (e) {
    // A lazily computed variable that failed surfaces as a thrown CelError.
    if (e instanceof CelError) return { error: e.message, cost: 0 };
    throw e;
  }
}

/** A JSON value (a decoded API object) as a CEL value. */
export function toVal(v: unknown): Val {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isInteger(v) && Number.isSafeInteger(v) ? BigInt(v) : v;
    case 'bigint':
      return v;
    case 'object':
      if (Array.isArray(v)) return new ArrayList(v.map(toVal));
      return new NativeMap(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toVal(x)] as [Val, Val]));
    default:
      return null;
  }
}

/**
 * A JSON value as a CEL value of a declared type: the same as `toVal`, except
 * that RFC 3339 strings where the type says timestamp become timestamps (the
 * namespace object's times, which upstream converts from metav1.Time).
 */
export function toTypedVal(v: unknown, t: CelType): Val {
  if (t.kind === 'timestamp' && typeof v === 'string') {
    try {
      return parseTimestamp(v);
    } catch {
      return v;
    }
  }
  if (t.kind === 'list' && Array.isArray(v)) return new ArrayList(v.map((x) => toTypedVal(x, t.elem)));
  if (t.kind === 'struct' && t.fields && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const fields = t.fields;
    return new NativeMap(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toTypedVal(x, fields.get(k) ?? T.dyn)] as [Val, Val]));
  }
  return toVal(v);
}

/** The runtime type name of a value, as cel-go's `ref.Val.Type()` prints it. */
export function valTypeName(v: Val): string {
  if (v === null) return 'null_type';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (v instanceof ListV) return 'list';
  if (v instanceof MapV) return 'map';
  return 'dyn';
}

/**
 * The `variables` object: `resolve(name)` computes a variable the first time
 * an expression selects it; a failed computation throws the CelError the
 * selecting expression then fails with.
 */
export class LazyVariables extends MapV {
  private readonly cache = new Map<string, Val | CelError>();
  constructor(
    private readonly names: readonly string[],
    private readonly resolve: (name: string) => Val | CelError,
  ) {
    super();
    this.isObject = true;
  }
  get size(): number {
    return this.names.length;
  }
  find(key: Val): Val | undefined {
    if (typeof key !== 'string' || !this.names.includes(key)) return undefined;
    let v = this.cache.get(key);
    if (v === undefined) {
      v = this.resolve(key);
      this.cache.set(key, v);
    }
    if (v instanceof CelError) throw v;
    return v;
  }
  keys(): Val[] {
    return [...this.names];
  }
}
