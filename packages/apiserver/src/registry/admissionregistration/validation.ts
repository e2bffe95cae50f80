/**
 * Validation of admissionregistration.k8s.io objects, as kubernetes
 * pkg/apis/admissionregistration/validation/validation.go: rules and match
 * resources, match conditions (shared with the webhook configurations),
 * ValidatingAdmissionPolicy specs (CEL expressions are compiled and their
 * failures reported as `spec.validations[0].expression: Invalid value:
 * "<expr>": compilation failed: ERROR: <input>:...`), bindings and the
 * policy status written by the type-checking controller.
 */
import type { admissionregistrationv1 } from '@kubeling/api';
import {
  type FieldError,
  field,
  isDNS1035Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidPathSegmentName,
  jsonpath,
  nameIsDNSSubdomain,
  validateLabelSelector,
} from '@kubeling/apimachinery';
import type { CelType } from '../../admission/policy/cel.js';
import { CEL_RESERVED } from '../../apiextensions/cel/index.js';
import { type CompiledExpr, compileExpr, type ExprEnv, type ReturnTypes } from '../../admission/policy/compile.js';

type Policy = admissionregistrationv1.ValidatingAdmissionPolicy;
type PolicySpec = NonNullable<Policy['spec']>;
type Binding = admissionregistrationv1.ValidatingAdmissionPolicyBinding;
type MatchResources = admissionregistrationv1.MatchResources;
type NamedRule = admissionregistrationv1.NamedRuleWithOperations;
type MatchCondition = admissionregistrationv1.MatchCondition;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const VALIDATION_REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_VALUE_EXPRESSION_LENGTH = 5 * 1024;

/** `%#v` of a typed string slice (`[]admissionregistration.OperationType{"CREATE", "*"}`). */
const goTyped = (type: string, values: readonly unknown[] | undefined) =>
  new field.GoValue(values ? `[]${type}{${values.map((v) => field.goQuote(String(v))).join(', ')}}` : `[]${type}(nil)`);
const goStrings = (values: readonly unknown[] | undefined) => goTyped('string', values);
const hasWildcard = (xs: readonly string[] | undefined) => !!xs?.includes('*');

function validateResources(resources: readonly string[] | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = resources ?? [];
  if (!list.length) errs.push(field.required(p, ''));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  list.forEach((rs, i) => {
    if (rs === '') {
      errs.push(field.required(`${p}[${i}]`, ''));
      return;
    }
    if (rs === '*/*') doubleWildcard = true;
    if (rs === '*') singleWildcard = true;
    const slash = rs.indexOf('/');
    if (slash < 0) {
      withoutSub = rs !== '*';
      return;
    }
    const [res, sub] = [rs.slice(0, slash), rs.slice(slash + 1)];
    if (withWildcardSub.has(res)) errs.push(field.invalid(`${p}[${i}]`, rs, `if '${res}/*' is present, must not specify ${rs}`));
    if (subWithWildcardRes.has(sub)) errs.push(field.invalid(`${p}[${i}]`, rs, `if '*/${sub}' is present, must not specify ${rs}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (list.length > 1 && doubleWildcard) errs.push(field.invalid(p, goStrings(list), "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub) errs.push(field.invalid(p, goStrings(list), "if '*' is present, must not specify other resources without subresources"));
  return errs;
}

/** validateRuleWithOperations (subresources allowed). */
export function validateRuleWithOperations(r: Omit<NamedRule, 'resourceNames'>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = r.operations ?? [];
  if (!ops.length) errs.push(field.required(`${p}.operations`, ''));
  if (ops.length > 1 && hasWildcard(ops))
    errs.push(field.invalid(`${p}.operations`, goTyped('admissionregistration.OperationType', ops), "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) errs.push(field.notSupported(`${p}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = r.apiGroups ?? [];
  if (!groups.length) errs.push(field.required(`${p}.apiGroups`, ''));
  if (groups.length > 1 && hasWildcard(groups))
    errs.push(field.invalid(`${p}.apiGroups`, goStrings(groups), "if '*' is present, must not specify other API groups"));
  const versions = r.apiVersions ?? [];
  if (!versions.length) errs.push(field.required(`${p}.apiVersions`, ''));
  if (versions.length > 1 && hasWildcard(versions))
    errs.push(field.invalid(`${p}.apiVersions`, goStrings(versions), "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') errs.push(field.required(`${p}.apiVersions[${i}]`, ''));
  });
  errs.push(...validateResources(r.resources, `${p}.resources`));
  if (r.scope !== undefined && !SCOPES.includes(r.scope)) errs.push(field.notSupported(`${p}.scope`, r.scope, SCOPES));
  return errs;
}

function validateNamedRule(r: NamedRule, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (r.resourceNames ?? []).forEach((n, i) => {
    for (const msg of isValidPathSegmentName(n)) errs.push(field.invalid(`${p}.resourceNames[${i}]`, n, msg));
    if (seen.has(n)) errs.push(field.duplicate(`${p}.resourceNames[${i}]`, n));
    else seen.add(n);
  });
  errs.push(...validateRuleWithOperations(r, p));
  return errs;
}

export function validateMatchResources(mr: MatchResources | undefined, p: string): FieldError[] {
  if (!mr) return [];
  const errs: FieldError[] = [];
  if (mr.matchPolicy === undefined) errs.push(field.required(`${p}.matchPolicy`, ''));
  else if (!MATCH_POLICIES.includes(mr.matchPolicy)) errs.push(field.notSupported(`${p}.matchPolicy`, mr.matchPolicy, MATCH_POLICIES));
  if (!mr.namespaceSelector) errs.push(field.required(`${p}.namespaceSelector`, ''));
  else errs.push(...validateLabelSelector(mr.namespaceSelector, `${p}.namespaceSelector`));
  if (!mr.objectSelector) errs.push(field.required(`${p}.objectSelector`, ''));
  else errs.push(...validateLabelSelector(mr.objectSelector, `${p}.objectSelector`));
  (mr.resourceRules ?? []).forEach((r, i) => errs.push(...validateNamedRule(r, `${p}.resourceRules[${i}]`)));
  (mr.excludeResourceRules ?? []).forEach((r, i) => errs.push(...validateNamedRule(r, `${p}.excludeResourceRules[${i}]`)));
  return errs;
}

/** A compile failure as validation reports it (convertCELErrorToValidationError: ErrorTypeInvalid). */
function celErrors(p: string, expression: string, c: CompiledExpr): FieldError[] {
  return c.error ? [field.invalid(p, expression, c.error)] : [];
}

/** validateMatchConditions: at most 64, unique qualified names, bool expressions (params only for policies with a paramKind). */
export function validateMatchConditions(conds: readonly MatchCondition[] | undefined, allowParams: boolean, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = conds ?? [];
  if (list.length > 64) errs.push(field.tooMany(p, list.length, 64));
  const names = new Set<string>();
  list.forEach((m, i) => {
    const mp = `${p}[${i}]`;
    const expr = (m.expression ?? '').trim();
    if (!expr) errs.push(field.required(`${mp}.expression`, ''));
    else errs.push(...celErrors(`${mp}.expression`, expr, compileExpr(expr, { hasParams: allowParams }, 'bool')));
    if (!m.name) errs.push(field.required(`${mp}.name`, ''));
    else for (const msg of isQualifiedName(m.name)) errs.push(field.invalid(`${mp}.name`, m.name, msg));
    if (m.name) {
      if (names.has(m.name)) errs.push(field.duplicate(`${mp}.name`, m.name));
      else names.add(m.name);
    }
  });
  return errs;
}

function validateParamKind(pk: { apiVersion?: string; kind?: string }, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const av = pk.apiVersion ?? '';
  if (!av) errs.push(field.required(`${p}.apiVersion`, ''));
  else if (av !== '/' && (av.match(/\//g) ?? []).length > 1) errs.push(field.invalid(`${p}.apiVersion`, av, `unexpected GroupVersion string: ${av}`));
  else {
    const i = av.indexOf('/');
    const [group, version] = av === '/' ? ['', ''] : i < 0 ? ['', av] : [av.slice(0, i), av.slice(i + 1)];
    if (group) {
      const e = isDNS1123Subdomain(group);
      if (e.length) errs.push(field.invalid(`${p}.apiVersion`, group, e.join(',')));
    }
    if (!version) errs.push(field.invalid(`${p}.apiVersion`, av, 'version must be specified'));
    else {
      const e = isDNS1035Label(version);
      if (e.length) errs.push(field.invalid(`${p}.apiVersion`, version, e.join(',')));
    }
  }
  const kind = pk.kind ?? '';
  if (!kind) errs.push(field.required(`${p}.kind`, ''));
  else {
    const e = isDNS1035Label(kind.toLowerCase());
    if (e.length) errs.push(field.invalid(`${p}.kind`, kind, `may have mixed case, but should otherwise match: ${e.join(',')}`));
  }
  return errs;
}

const isCELIdentifier = (name: string) => /^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) && !CEL_RESERVED.has(name);

/** The policy's expressions, compiled as validation compiles them (variables composed in order). */
function validateExpressions(name: string, spec: PolicySpec, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const hasParams = !!spec.paramKind;
  const variables = new Map<string, CelType>();
  const env = (): ExprEnv => ({ hasParams, variables: new Map(variables) });
  const compile = (expr: string, e: ExprEnv, ret: ReturnTypes) => compileExpr(expr, e, ret);
  (spec.variables ?? []).forEach((v, i) => {
    const vp = `${p}.variables[${i}]`;
    if (!v.name?.trim()) errs.push(field.required(`${vp}.name`, 'name is not specified'));
    else if (!isCELIdentifier(v.name)) errs.push(field.invalid(`${vp}.name`, v.name, 'name is not a valid CEL identifier'));
    if (!v.expression?.trim()) {
      errs.push(field.required(`${vp}.expression`, 'expression is not specified'));
      return;
    }
    const c = compile(v.expression, env(), 'any');
    errs.push(...celErrors(`${vp}.expression`, v.expression, c));
    if (v.name) variables.set(v.name, c.program ? c.type : { kind: 'dyn' });
  });
  if (!spec.validations?.length && !spec.auditAnnotations?.length) {
    errs.push(field.required(`${p}.validations`, 'validations or auditAnnotations must contain at least one item'));
    errs.push(field.required(`${p}.auditAnnotations`, 'validations or auditAnnotations must contain at least one item'));
    return errs;
  }
  (spec.validations ?? []).forEach((v, i) => {
    const vp = `${p}.validations[${i}]`;
    const expr = v.expression ?? '';
    if (!expr.trim()) errs.push(field.required(`${vp}.expression`, 'expression is not specified'));
    else errs.push(...celErrors(`${vp}.expression`, expr, compile(expr, env(), 'bool')));
    const me = v.messageExpression ?? '';
    if (me && !me.trim()) errs.push(field.invalid(`${vp}.messageExpression`, me, 'must be non-empty if specified'));
    else if (me.trim()) errs.push(...celErrors(`${vp}.messageExpression`, me, compile(me, env(), 'string')));
    const msg = v.message ?? '';
    if (msg && !msg.trim()) errs.push(field.invalid(`${vp}.message`, msg, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(msg.trim())) errs.push(field.invalid(`${vp}.message`, msg, 'message must not contain line breaks'));
    if (v.reason !== undefined && !VALIDATION_REASONS.includes(v.reason)) errs.push(field.notSupported(`${vp}.reason`, v.reason, VALIDATION_REASONS));
  });
  const annotations = spec.auditAnnotations ?? [];
  if (annotations.length > MAX_AUDIT_ANNOTATIONS)
    errs.push(field.invalid(`${p}.auditAnnotations`, annotations, `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  const keys = new Set<string>();
  annotations.forEach((a, i) => {
    const ap = `${p}.auditAnnotations[${i}]`;
    if (name) for (const msg of isQualifiedName(`${name}/${a.key ?? ''}`)) errs.push(field.invalid(`${ap}.key`, `${name}/${a.key ?? ''}`, msg));
    else errs.push(field.invalid(`${ap}.key`, a.key ?? '', 'requires metadata.name be non-empty'));
    const ve = (a.valueExpression ?? '').trim();
    if (!ve) errs.push(field.required(`${ap}.valueExpression`, 'valueExpression is not specified'));
    else if (Buffer.byteLength(ve) > MAX_AUDIT_VALUE_EXPRESSION_LENGTH)
      errs.push(field.required(`${ap}.valueExpression`, `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION_LENGTH} bytes in length`));
    else errs.push(...celErrors(`${ap}.valueExpression`, a.valueExpression, compile(ve, env(), 'stringOrNull')));
    if (keys.has(a.key)) errs.push(field.duplicate(`${ap}.key`, a.key));
    keys.add(a.key);
  });
  return errs;
}

export interface PolicyValidationOptions {
  /** On update, unchanged match conditions (and paramKind) are not compiled again. */
  ignoreMatchConditions?: boolean;
}

/** validateValidatingAdmissionPolicySpec (metadata is the store's). */
export function validatePolicy(policy: Policy, opts: PolicyValidationOptions = {}): FieldError[] {
  const spec = (policy.spec ?? {}) as PolicySpec;
  const p = 'spec';
  const errs: FieldError[] = [];
  if (spec.failurePolicy === undefined) errs.push(field.required(`${p}.failurePolicy`, ''));
  else if (!FAILURE_POLICIES.includes(spec.failurePolicy)) errs.push(field.notSupported(`${p}.failurePolicy`, spec.failurePolicy, FAILURE_POLICIES));
  if (spec.paramKind) errs.push(...validateParamKind(spec.paramKind, `${p}.paramKind`));
  if (!spec.matchConstraints) errs.push(field.required(`${p}.matchConstraints`, ''));
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, `${p}.matchConstraints`));
    // At least one resourceRule gives the type checker the types to check against.
    if (!spec.matchConstraints.resourceRules?.length) errs.push(field.required(`${p}.matchConstraints.resourceRules`, ''));
  }
  if (!opts.ignoreMatchConditions) errs.push(...validateMatchConditions(spec.matchConditions, !!spec.paramKind, `${p}.matchConditions`));
  errs.push(...validateExpressions(policy.metadata?.name ?? '', spec, p));
  return errs;
}

function validateValidationActions(actions: readonly string[] | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (actions ?? []).forEach((a, i) => {
    if (!VALIDATION_ACTIONS.includes(a)) errs.push(field.notSupported(`${p}[${i}]`, a, VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push(field.duplicate(`${p}[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      field.invalid(
        p,
        goTyped('admissionregistration.ValidationAction', actions),
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (!seen.size) errs.push(field.required(p, 'at least one validation action is required'));
  return errs;
}

function validateParamRef(pr: admissionregistrationv1.ParamRef | undefined, p: string): FieldError[] {
  if (!pr) return [];
  const errs: FieldError[] = [];
  if (pr.name) {
    for (const msg of isValidPathSegmentName(pr.name)) errs.push(field.invalid(`${p}.name`, pr.name, msg));
    if (pr.selector) errs.push(field.forbidden(`${p}.name`, 'name and selector are mutually exclusive'));
  }
  if (pr.selector) {
    errs.push(...validateLabelSelector(pr.selector, `${p}.selector`));
    if (pr.name) errs.push(field.forbidden(`${p}.selector`, 'name and selector are mutually exclusive'));
  }
  if (!pr.name && !pr.selector) errs.push(field.required(p, 'one of name or selector must be specified'));
  if (!pr.parameterNotFoundAction) errs.push(field.required(`${p}.parameterNotFoundAction`, ''));
  else if (pr.parameterNotFoundAction !== 'Deny' && pr.parameterNotFoundAction !== 'Allow')
    errs.push(field.notSupported(`${p}.parameterNotFoundAction`, pr.parameterNotFoundAction, ['Deny', 'Allow']));
  return errs;
}

/** validateValidatingAdmissionPolicyBindingSpec (upstream reports matchResources under `spec.matchResouces`). */
export function validateBinding(b: Binding): FieldError[] {
  const spec = b.spec ?? {};
  const errs: FieldError[] = [];
  if (!spec.policyName) errs.push(field.required('spec.policyName', ''));
  else for (const msg of nameIsDNSSubdomain(spec.policyName, false)) errs.push(field.invalid('spec.policyName', spec.policyName, msg));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResouces'));
  errs.push(...validateValidationActions(spec.validationActions, 'spec.validationActions'));
  return errs;
}

/** validateValidatingAdmissionPolicyStatus: expression warnings need a warning and a fieldRef that parses as JSONPath. */
export function validatePolicyStatus(policy: Policy): FieldError[] {
  const errs: FieldError[] = [];
  (policy.status?.typeChecking?.expressionWarnings ?? []).forEach((w, i) => {
    const p = `status.typeChecking.expressionWarnings[${i}]`;
    if (!w.warning) errs.push(field.required(`${p}.warning`, ''));
    const ref = (w.fieldRef ?? '').trim();
    if (!ref) errs.push(field.required(`${p}.fieldRef`, ''));
    else {
      try {
        jsonpath.compile(`{${ref}}`);
      } catch (e) {
        errs.push(field.invalid(`${p}.fieldRef`, ref, `invalid JSONPath: ${(e as Error).message}`));
      }
    }
  });
  return errs;
}
