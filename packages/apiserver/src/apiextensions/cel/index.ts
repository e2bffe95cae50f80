/**
 * CEL as Kubernetes uses it: the environment, compiler and evaluator
 * (env.ts), the CRD `x-kubernetes-validations` compiler and validator
 * (compile.ts, validate.ts), and the value and type models other users
 * (ValidatingAdmissionPolicy) build on.
 */
export {
  type CompileResult,
  celEnv,
  type CelEnvironment,
  compileExpression,
  type EvaluateOptions,
  evaluate,
  type ExtraLibrary,
  PER_CALL_LIMIT,
  type Program,
  RUNTIME_CEL_COST_BUDGET,
} from './env.js';
export { type EvalResult, COST_LIMIT_EXCEEDED } from './interpreter.js';
export { estimateCost, type Estimate, type SizeEstimator } from './cost.js';
export { type CelType, formatType, isOptionalType, K8sTypes, listOf, mapOf, opaqueOf, optionalOf, sameType, structOf, T, typeOf } from './types.js';
export {
  ArrayList,
  CelError,
  celEquals,
  DurationV,
  isError,
  ListV,
  list,
  MapV,
  mapFromRecord,
  NativeMap,
  OPTIONAL_NONE,
  OpaqueV,
  OptionalV,
  TimestampV,
  TypeV,
  typeName,
  UintV,
  type Val,
} from './values.js';
export { formatDuration, formatTimestamp, parseDuration, parseTimestamp } from './lib-time.js';
export {
  type CompiledRule,
  type CompileRulesOptions,
  compileRule,
  compileRules,
  costErrorMessage,
  type RuleProgram,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from './compile.js';
export { type ValidateOptions, validateWithRules, validateWithRulesBudget } from './validate.js';
export { type DeclType, escapeName, RESERVED as CEL_RESERVED, schemaDeclType, unescapeName } from './schema-decl.js';
export { jsonToVal, unstructuredToVal } from './unstructured.js';
export { validFieldPath } from './fieldpath.js';
