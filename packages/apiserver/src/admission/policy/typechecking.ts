/**
 * Type checking of ValidatingAdmissionPolicies and the controller that
 * publishes it (k8s.io/apiserver pkg/admission/plugin/policy/validating
 * typechecking.go; kubernetes pkg/controller/validatingadmissionpolicystatus).
 *
 * `typeCheck` resolves the kinds a policy's resourceRules name explicitly (no
 * wildcards, no subresources; at most 10, sorted by group, version, kind),
 * types `object`/`oldObject` by each kind's schema and `params` by the
 * paramKind's (undeclared when that schema is unknown, as upstream), and
 * compiles every validation's expression and messageExpression against each
 * kind. Each failing expression gets one warning: per kind,
 * `<group>/<version>, Kind=<kind>: <cel-go issues>` lines.
 *
 * The controller runs in the apiserver over the policies' watch cache: a
 * policy whose metadata.generation is ahead of status.observedGeneration gets
 * `status.typeChecking` (warnings, or none) and `status.observedGeneration`
 * written through /status. Failed writes are retried after a second; a
 * conflict waits for the event that follows it.
 */
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import { SerialQueue } from '../../registry/serial-queue.js';
import type { Logger } from 'pino';
import type { ObjectSubscriber, StatusWriter } from '../lookups.js';
import type { CelType } from './cel.js';
import { compileExpr, type ExprEnv } from './compile.js';
import type { JSONSchemaProps } from '../../apiextensions/types.js';
import { resourceType } from './schema-types.js';

type Policy = admissionregistrationv1.ValidatingAdmissionPolicy;

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

export interface SchemaSource {
  /** The kinds served for a group/version/resource, with the schema of their objects. */
  kindsFor(group: string, version: string, resource: string): { kind: string; schema: JSONSchemaProps | undefined }[];
  /** The schema of a kind's objects, if it is served. */
  schemaOf(group: string, version: string, kind: string): JSONSchemaProps | undefined;
}

const MAX_TYPES = 10;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Typed {
  gvk: string;
  type: CelType;
}

/** typesToCheck + declType: the kinds the rules name, with their CEL types. */
function typesToCheck(policy: Policy, schemas: SchemaSource): Typed[] {
  const found = new Map<string, { group: string; version: string; kind: string; schema: JSONSchemaProps | undefined }>();
  rules: for (const rule of policy.spec?.matchConstraints?.resourceRules ?? []) {
    const groups = rule.apiGroups ?? [];
    const versions = rule.apiVersions ?? [];
    if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
    const resources = (rule.resources ?? []).filter((r) => !/[*/]/.test(r));
    for (const g of [...groups].sort())
      for (const v of [...versions].sort())
        for (const r of [...resources].sort())
          for (const k of schemas.kindsFor(g, v, r)) {
            found.set(`${g}/${v}, Kind=${k.kind}`, { group: g, version: v, kind: k.kind, schema: k.schema });
            if (found.size === MAX_TYPES) break rules;
          }
  }
  const sorted = [...found.entries()].sort(([, a], [, b]) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
  let n = 0;
  return sorted.flatMap(([gvk, k]) => {
    const type = resourceType(k.schema, `${k.kind}${++n}`);
    return type ? [{ gvk, type }] : [];
  });
}

/** TypeChecker.Check: the expression warnings of a policy (none when nothing can be typed). */
export function typeCheck(policy: Policy, schemas: SchemaSource): ExpressionWarning[] {
  const spec = policy.spec ?? {};
  const types = typesToCheck(policy, schemas);
  if (!types.length) return [];
  let paramsType: CelType | undefined;
  if (spec.paramKind) {
    const av = spec.paramKind.apiVersion ?? '';
    const i = av.indexOf('/');
    const schema = schemas.schemaOf(i < 0 ? '' : av.slice(0, i), i < 0 ? av : av.slice(i + 1), spec.paramKind.kind ?? '');
    paramsType = resourceType(schema, `${spec.paramKind.kind ?? ''}Params`);
  }
  const envs = types.map((t) => {
    const base: ExprEnv = { hasParams: paramsType !== undefined, objectType: t.type, ...(paramsType ? { paramsType } : {}) };
    const variables = new Map<string, CelType>();
    for (const v of spec.variables ?? []) {
      const c = compileExpr(v.expression ?? '', { ...base, variables: new Map(variables) }, 'any');
      variables.set(v.name, c.program ? c.type : { kind: 'dyn' });
    }
    return { gvk: t.gvk, env: { ...base, variables } };
  });
  const check = (expr: string): string => {
    const lines: string[] = [];
    for (const { gvk, env } of envs) {
      const c = compileExpr(expr, env, 'any');
      if (c.issues !== undefined) lines.push(`${gvk}: ${c.issues}\n`);
    }
    return lines.join('\n');
  };
  const warnings: ExpressionWarning[] = [];
  (spec.validations ?? []).forEach((v, i) => {
    const w = check(v.expression ?? '');
    if (w) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: w });
    if (!v.messageExpression) return;
    const m = check(v.messageExpression);
    if (m) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: m });
  });
  return warnings;
}

export const STATUS_CONTROLLER_NAME = 'validatingadmissionpolicy-status-controller';

export class TypeCheckingController {
  private readonly latest = new Map<string, Policy>();
  private readonly queue = new SerialQueue(
    (name) => this.reconcile(name),
    (name, err) => {
      const reason = err instanceof StatusError ? err.status.reason : undefined;
      if (reason === 'NotFound' || reason === 'Conflict') return;
      this.deps.logger?.warn({ err, policy: name }, 'type checking ValidatingAdmissionPolicy failed');
      this.queue.later(name);
    },
  );
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: { policies: () => ObjectSubscriber & StatusWriter; schemas: SchemaSource; logger?: Logger }) {}

  start(): void {
    this.unsubscribe = this.deps.policies().subscribe((type, obj) => {
      const name = obj.metadata.name!;
      if (type === 'DELETED') this.latest.delete(name);
      else this.latest.set(name, obj as unknown as Policy);
      this.queue.add(name);
    });
  }

  stop(): void {
    this.queue.stop();
    this.unsubscribe?.();
  }

  private async reconcile(name: string): Promise<void> {
    const policy = this.latest.get(name);
    if (!policy) return;
    const generation = policy.metadata?.generation ?? 0;
    if (generation <= (policy.status?.observedGeneration ?? 0)) return;
    const warnings = typeCheck(policy, this.deps.schemas);
    const body = {
      ...policy,
      status: { ...(policy.status ?? {}), observedGeneration: generation, typeChecking: warnings.length ? { expressionWarnings: warnings } : {} },
    } as unknown as KubeObject;
    await this.deps.policies().update(undefined, name, body, 'status', { fieldManager: STATUS_CONTROLLER_NAME });
  }
}
