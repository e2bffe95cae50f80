/**
 * Function declarations with their implementations: one `Overload` per cel-go
 * overload (same overload ids, which the cost model keys on). The checker
 * resolves a call to the overloads whose signatures accept the argument types;
 * the interpreter dispatches among those on the runtime types of the
 * arguments, as cel-go does for dynamically typed operands, and reports
 * cel-go's `no such overload` when none fits.
 */
import { type CelType, formatType } from './types.js';
import { CelError, DurationV, ListV, MapV, OpaqueV, OptionalV, TimestampV, TypeV, UintV, type Val } from './values.js';

export type Impl = (args: Val[]) => Val;

export interface Overload {
  id: string;
  /** Function name, qualified for namespaced functions (`sets.contains`). */
  fn: string;
  /** Receiver-style call (`x.f(y)`); the receiver is the first of `params`. */
  member: boolean;
  params: readonly CelType[];
  result: CelType;
  /** Type parameter names used in params/result. */
  typeParams?: readonly string[];
  /** Undefined for the operators the interpreter evaluates itself (&&, ||, ?:, @not_strictly_false). */
  impl?: Impl;
}

/** Builds a global-function overload. */
export const global = (fn: string, id: string, params: readonly CelType[], result: CelType, impl?: Impl, typeParams?: readonly string[]): Overload => ({
  id,
  fn,
  member: false,
  params,
  result,
  ...(impl ? { impl } : {}),
  ...(typeParams ? { typeParams } : {}),
});

/** Builds a member-function overload; `params[0]` is the receiver. */
export const member = (fn: string, id: string, params: readonly CelType[], result: CelType, impl?: Impl, typeParams?: readonly string[]): Overload => ({
  ...global(fn, id, params, result, impl, typeParams),
  member: true,
});

/** A set of function declarations, looked up by name. */
export class FunctionRegistry {
  private readonly byName = new Map<string, Overload[]>();
  private readonly byId = new Map<string, Overload>();

  constructor(...libs: readonly (readonly Overload[])[]) {
    for (const lib of libs) for (const o of lib) this.add(o);
  }

  add(o: Overload): void {
    const list = this.byName.get(o.fn) ?? [];
    const i = list.findIndex((x) => x.id === o.id);
    if (i >= 0) list[i] = o;
    else list.push(o);
    this.byName.set(o.fn, list);
    this.byId.set(o.id, o);
  }

  lookup(fn: string): readonly Overload[] | undefined {
    return this.byName.get(fn);
  }

  overload(id: string): Overload | undefined {
    return this.byId.get(id);
  }

  has(fn: string): boolean {
    return this.byName.has(fn);
  }
}

/** Whether a runtime value fits a declared parameter type (type params and dyn accept anything). */
export function fitsRuntime(t: CelType, v: Val): boolean {
  switch (t.kind) {
    case 'dyn':
    case 'param':
    case 'error':
      return true;
    case 'int':
      return typeof v === 'bigint';
    case 'uint':
      return v instanceof UintV;
    case 'double':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'bytes':
      return v instanceof Uint8Array;
    case 'null_type':
      return v === null;
    case 'timestamp':
      return v instanceof TimestampV;
    case 'duration':
      return v instanceof DurationV;
    case 'list':
      // Dispatch on the element type too (list_int_sum_int vs list_double_sum_double) when it is concrete.
      if (!(v instanceof ListV)) return false;
      return v.size === 0 || t.elem.kind === 'dyn' || t.elem.kind === 'param' || fitsRuntime(t.elem, v.get(0));
    case 'map':
      return v instanceof MapV;
    case 'type':
      return v instanceof TypeV;
    case 'opaque':
      if (t.name === 'optional_type') return v instanceof OptionalV;
      return v instanceof OpaqueV && v.typeName === t.name;
    case 'struct':
      if (v instanceof OpaqueV) return v.typeName === t.name;
      return v instanceof MapV;
  }
}

/** cel-go's runtime error when no overload accepts the arguments. */
export const noSuchOverload = (): CelError => new CelError('no such overload');

/** A signature as cel-go prints it in `found no matching overload` (`(int, string)` or `string.(int)`). */
export function formatSignature(args: readonly CelType[], isMember: boolean): string {
  if (isMember && args.length) return `${formatType(args[0]!)}.(${args.slice(1).map(formatType).join(', ')})`;
  return `(${args.map(formatType).join(', ')})`;
}
