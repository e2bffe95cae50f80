/**
 * The reusable CEL environment of Kubernetes (k8s.io/apiserver/pkg/cel/
 * environment/base.go): the standard library with cross-type numeric
 * comparisons, the strings extension (version 2), optional types, cel-go's
 * sets extension, and the Kubernetes libraries (lists, regex, URLs, quantity,
 * IP, CIDR, named formats), plus the AST validators Kubernetes enables from
 * 1.29 (duration, timestamp and regex literals).
 *
 * - `celEnv(decls)` declares variables (name → CEL type).
 * - `compileExpression(expr, env)` parses and type-checks; issues are
 *   rendered as cel-go renders them (`ERROR: <input>:1:6: ...`).
 * - `evaluate(program, activation)` runs a compiled expression with a
 *   per-call cost limit (Kubernetes' PerCallLimit by default) and returns the
 *   value or error and the actual cost.
 */
import { type Node, type ParsedAst, parseExpression, walk } from './ast.js';
import { check } from './checker.js';
import { type Folded, fold } from './fold.js';
import { type EvalResult, Interpreter } from './interpreter.js';
import { formats, urls } from './lib-k8s-url.js';
import { lists, regex, sets } from './lib-k8s-lists.js';
import { net } from './lib-k8s-net.js';
import { quantity } from './lib-k8s-quantity.js';
import { encoders, math } from './lib-extras.js';
import { optional } from './lib-optional.js';
import { STD_TYPE_IDENTS, std } from './lib-std.js';
import { strings } from './lib-strings.js';
import { parseDuration, parseTimestamp, time } from './lib-time.js';
import { regexError } from './regex.js';
import { FunctionRegistry } from './registry.js';
import { formatIssues } from './source.js';
import type { CelType } from './types.js';
import { CelError, type Val } from './values.js';

/** Kubernetes' per-expression runtime cost limit (k8s.io/apiserver/pkg/apis/cel: PerCallLimit). */
export const PER_CALL_LIMIT = 1_000_000;
/** Kubernetes' runtime cost budget for validating one object (RuntimeCELCostBudget). */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;

export type ExtraLibrary = 'math' | 'encoders';

export interface CelEnvironment {
  readonly functions: FunctionRegistry;
  readonly vars: ReadonlyMap<string, CelType>;
  readonly typeIdents: Readonly<Record<string, CelType>>;
  /** A new environment with more variable declarations. */
  extend(decls: Readonly<Record<string, CelType>>): CelEnvironment;
}

const BASE_LIBS = [std, time, strings, optional, lists, regex, sets, urls, quantity, net, formats];
let baseRegistry: FunctionRegistry | undefined;

class Env implements CelEnvironment {
  constructor(
    readonly functions: FunctionRegistry,
    readonly vars: ReadonlyMap<string, CelType>,
    readonly typeIdents: Readonly<Record<string, CelType>>,
  ) {}
  extend(decls: Readonly<Record<string, CelType>>): CelEnvironment {
    return new Env(this.functions, new Map([...this.vars, ...Object.entries(decls)]), this.typeIdents);
  }
}

/** A Kubernetes CEL environment declaring the given variables. */
export function celEnv(decls: Readonly<Record<string, CelType>> = {}, opts: { libraries?: readonly ExtraLibrary[] } = {}): CelEnvironment {
  let functions: FunctionRegistry;
  if (opts.libraries?.length) {
    functions = new FunctionRegistry(
      ...BASE_LIBS,
      ...(opts.libraries.includes('math') ? [math] : []),
      ...(opts.libraries.includes('encoders') ? [encoders] : []),
    );
  } else {
    baseRegistry ??= new FunctionRegistry(...BASE_LIBS);
    functions = baseRegistry;
  }
  return new Env(functions, new Map(Object.entries(decls)), STD_TYPE_IDENTS);
}

export interface Program {
  readonly source: string;
  readonly root: Node;
  /** The checked result type. */
  readonly type: CelType;
  readonly env: CelEnvironment;
  /** Declared variables the expression references. */
  readonly references: ReadonlySet<string>;
  readonly ast: ParsedAst;
  /** The plan-time constants (cel-go OptOptimize). */
  readonly folded: Folded;
}

export interface CompileResult {
  program?: Program;
  /** cel-go's rendering of the parse and check issues (`ERROR: <input>:1:6: ...`), or undefined. */
  issues?: string;
  /** A failure creating the program from a checked expression (cel-go `env.Program`), or undefined. */
  programError?: string;
}

/** cel-go's AST validators Kubernetes enables (ValidateDurationLiterals, ValidateTimestampLiterals, ValidateRegexLiterals). */
function validateLiterals(root: Node): { messages: Map<number, string>; programError?: string } {
  const messages = new Map<number, string>();
  let programError: string | undefined;
  const fails = (f: () => unknown) => {
    try {
      f();
      return false;
    } catch {
      return true;
    }
  };
  for (const n of walk(root)) {
    if (n.kind !== 'call') continue;
    const lit = n.target || n.fn !== 'matches' ? n.args[0] : n.args[1];
    if (lit?.kind !== 'const' || typeof lit.value !== 'string') continue;
    const s = lit.value;
    if (n.fn === 'duration' && !n.target && fails(() => parseDuration(s))) messages.set(lit.id, 'invalid duration argument');
    else if (n.fn === 'timestamp' && !n.target && fails(() => parseTimestamp(s))) messages.set(lit.id, 'invalid timestamp argument');
    else if (n.fn === 'matches' && regexError(s)) messages.set(lit.id, 'invalid matches argument');
    else if ((n.fn === 'find' || n.fn === 'findAll') && n.target) programError ??= regexError(s);
  }
  return programError ? { messages, programError } : { messages };
}

/** Parses and type-checks an expression in an environment (or with the given variable types in the base environment). */
export function compileExpression(expr: string, envOrDecls: CelEnvironment | Readonly<Record<string, CelType>> = {}): CompileResult {
  const env = envOrDecls instanceof Env ? envOrDecls : celEnv(envOrDecls as Record<string, CelType>);
  const ast = parseExpression(expr);
  const checked = check(ast, env);
  const issues = [...checked.issues];
  let programError: string | undefined;
  if (ast.root && !issues.length) {
    const v = validateLiterals(ast.root);
    for (const [id, message] of v.messages) issues.push({ offset: ast.positions.get(id) ?? 0, message });
    programError = v.programError;
  }
  if (issues.length || !ast.root) return { issues: formatIssues(expr, issues) };
  let folded: Folded = { constants: new WeakMap(), setMembership: new WeakSet() };
  try {
    folded = fold(ast.root, env.functions);
  } catch (e) {
    programError ??= e instanceof CelError ? e.message : String(e);
  }
  const program: Program = { source: expr, root: ast.root, type: checked.type, env, references: checked.references, ast, folded };
  return programError ? { program, programError } : { program };
}

export interface EvaluateOptions {
  /** The per-call cost limit (default PER_CALL_LIMIT). */
  costLimit?: number;
}

/** Evaluates a compiled program; `value` is a CelError when evaluation fails (including `operation cancelled: actual cost limit exceeded`). */
export function evaluate(
  program: Program,
  activation: Readonly<Record<string, Val | CelError>> | ReadonlyMap<string, Val | CelError>,
  opts: EvaluateOptions = {},
): EvalResult {
  const vars = activation instanceof Map ? activation : new Map(Object.entries(activation));
  return new Interpreter(program.env.functions, opts.costLimit ?? PER_CALL_LIMIT, program.folded).run(
    program.root,
    vars as ReadonlyMap<string, Val | CelError>,
  );
}

export { CelError };
