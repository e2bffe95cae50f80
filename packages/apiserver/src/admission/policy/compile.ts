/**
 * Compiling the CEL expressions of admission configuration
 * (k8s.io/apiserver pkg/admission/plugin/cel/compile.go and composition.go,
 * policy/validating/plugin.go compilePolicy).
 *
 * Every expression sees `object`, `oldObject` (dyn), `request`
 * (kubernetes.AdmissionRequest), `namespaceObject` (kubernetes.Namespace),
 * `params` (dyn, when the policy has a paramKind) and `variables` (the
 * policy's variables compiled so far, each with its checked type; a variable
 * that does not compile is dyn). `authorizer` is not declared: kubeling's CEL
 * engine has no authorizer library, so an expression using it fails to
 * compile with `undeclared reference to 'authorizer'`.
 *
 * A failure is kept with the expression (`error`, upstream's cel.Error
 * detail: `compilation failed: ERROR: <input>:...` or `must evaluate to bool
 * but got int`), so that validation can report it and admission can apply the
 * failure policy.
 */
import type { admissionregistrationv1 } from '@kubeling/api';
import { type CelType, compileChecked, formatType, listOf, mapOf, type Program, sameType, structOf, T } from './cel.js';

const fields = (entries: [string, CelType][]) => new Map(entries);
const GVK = structOf(
  'kubernetes.GroupVersionKind',
  fields([
    ['group', T.string],
    ['version', T.string],
    ['kind', T.string],
  ]),
);
const GVR = structOf(
  'kubernetes.GroupVersionResource',
  fields([
    ['group', T.string],
    ['version', T.string],
    ['resource', T.string],
  ]),
);

/** BuildRequestType: the AdmissionRequest without uid, object and oldObject. */
export const REQUEST_TYPE = structOf(
  'kubernetes.AdmissionRequest',
  fields([
    ['kind', GVK],
    ['resource', GVR],
    ['subResource', T.string],
    ['requestKind', GVK],
    ['requestResource', GVR],
    ['requestSubResource', T.string],
    ['name', T.string],
    ['namespace', T.string],
    ['operation', T.string],
    [
      'userInfo',
      structOf(
        'kubernetes.UserInfo',
        fields([
          ['username', T.string],
          ['uid', T.string],
          ['groups', listOf(T.string)],
          ['extra', mapOf(T.string, listOf(T.string))],
        ]),
      ),
    ],
    ['dryRun', T.bool],
    ['options', T.dyn],
  ]),
);

/** BuildNamespaceType: what expressions may read of the request's namespace. */
export const NAMESPACE_TYPE = structOf(
  'kubernetes.Namespace',
  fields([
    [
      'metadata',
      structOf(
        'kubernetes.NamespaceMetadata',
        fields([
          ['name', T.string],
          ['generateName', T.string],
          ['namespace', T.string],
          ['labels', mapOf(T.string, T.string)],
          ['annotations', mapOf(T.string, T.string)],
          ['UID', T.string],
          ['creationTimestamp', T.timestamp],
          ['deletionGracePeriodSeconds', T.int],
          ['deletionTimestamp', T.timestamp],
          ['generation', T.int],
          ['resourceVersion', T.string],
          ['finalizers', listOf(T.string)],
        ]),
      ),
    ],
    ['spec', structOf('kubernetes.NamespaceSpec', fields([['finalizers', listOf(T.string)]]))],
    [
      'status',
      structOf(
        'kubernetes.NamespaceStatus',
        fields([
          [
            'conditions',
            listOf(
              structOf(
                'kubernetes.NamespaceCondition',
                fields([
                  ['status', T.string],
                  ['type', T.string],
                  ['lastTransitionTime', T.timestamp],
                  ['message', T.string],
                  ['reason', T.string],
                ]),
              ),
            ),
          ],
          ['phase', T.string],
        ]),
      ),
    ],
  ]),
);

export interface ExprEnv {
  hasParams: boolean;
  /** The variables declared so far (name → checked type); absent: no `variables` (webhook match conditions). */
  variables?: ReadonlyMap<string, CelType>;
  /** Types of object/oldObject and params (the type checker's schema types); dyn when absent. */
  objectType?: CelType;
  paramsType?: CelType;
}

/** The declarations of an expression's environment. */
export function declarations(env: ExprEnv): Record<string, CelType> {
  const d: Record<string, CelType> = {
    object: env.objectType ?? T.dyn,
    oldObject: env.objectType ?? T.dyn,
    namespaceObject: NAMESPACE_TYPE,
    request: REQUEST_TYPE,
  };
  if (env.hasParams) d.params = env.paramsType ?? T.dyn;
  if (env.variables) d.variables = structOf('kubernetes.variables', env.variables);
  return d;
}

/** What an expression must evaluate to (ExpressionAccessor.ReturnTypes). */
export type ReturnTypes = 'bool' | 'string' | 'stringOrNull' | 'any';

export interface CompiledExpr {
  expression: string;
  program?: Program;
  /** The checked type; dyn when it did not compile. */
  type: CelType;
  /** cel-go's issues when it did not parse or type-check. */
  issues?: string;
  /** The compilation error as upstream's cel.Error detail. */
  error?: string;
}

function returnTypeError(ret: ReturnTypes, t: CelType): string | undefined {
  if (ret === 'any') return undefined;
  if (ret === 'stringOrNull')
    return sameType(t, T.string) || sameType(t, T.null) ? undefined : `must evaluate to one of [string null_type] but got ${formatType(t)}`;
  const want = ret === 'bool' ? T.bool : T.string;
  return sameType(t, want) ? undefined : `must evaluate to ${formatType(want)} but got ${formatType(t)}`;
}

/** CompileCELExpression: compile, then check the result type. */
export function compileExpr(expression: string, env: ExprEnv, ret: ReturnTypes): CompiledExpr {
  const c = compileChecked(expression, declarations(env));
  if (!c.program || !c.type) return { expression, type: T.dyn, issues: c.issues ?? '', error: `compilation failed: ${c.issues ?? ''}` };
  const wrong = returnTypeError(ret, c.type);
  if (wrong) return { expression, type: c.type, error: wrong };
  return { expression, program: c.program, type: c.type };
}

type Policy = admissionregistrationv1.ValidatingAdmissionPolicy;

export interface CompiledValidation {
  expr: CompiledExpr;
  message?: string;
  reason?: string;
  messageExpr?: CompiledExpr;
}

export interface CompiledPolicy {
  failurePolicy: string;
  variables: { name: string; expr: CompiledExpr }[];
  matchConditions: { name: string; expr: CompiledExpr }[];
  validations: CompiledValidation[];
  auditAnnotations: { key: string; valueExpression: string; expr: CompiledExpr }[];
}

/** compilePolicy: every expression of a policy, variables first (each seeing those before it). */
export function compilePolicy(policy: Policy, types: Pick<ExprEnv, 'objectType' | 'paramsType'> = {}): CompiledPolicy {
  const spec = policy.spec ?? {};
  const hasParams = !!spec.paramKind;
  const declared = new Map<string, CelType>();
  const variables: CompiledPolicy['variables'] = [];
  for (const v of spec.variables ?? []) {
    const expr = compileExpr(v.expression ?? '', { hasParams, variables: new Map(declared), ...types }, 'any');
    variables.push({ name: v.name, expr });
    declared.set(v.name, expr.program ? expr.type : T.dyn);
  }
  const env: ExprEnv = { hasParams, variables: declared, ...types };
  return {
    failurePolicy: spec.failurePolicy ?? 'Fail',
    variables,
    matchConditions: (spec.matchConditions ?? []).map((m) => ({ name: m.name, expr: compileExpr(m.expression, env, 'bool') })),
    validations: (spec.validations ?? []).map((v) => ({
      expr: compileExpr(v.expression, env, 'bool'),
      ...(v.message !== undefined ? { message: v.message } : {}),
      ...(v.reason !== undefined ? { reason: v.reason } : {}),
      ...(v.messageExpression ? { messageExpr: compileExpr(v.messageExpression, env, 'string') } : {}),
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({
      key: a.key,
      valueExpression: a.valueExpression,
      expr: compileExpr(a.valueExpression.trim(), env, 'stringOrNull'),
    })),
  };
}
