/**
 * The ValidatingAdmissionPolicy admission plugin (k8s.io/apiserver
 * pkg/admission/plugin/policy/validating: plugin.go, dispatcher.go; generic:
 * policy_source.go, policy_dispatcher.go).
 *
 * It follows the policies and bindings through their stores' watch caches and
 * compiles a policy once per resourceVersion. For each request (never one on
 * admissionregistration.k8s.io objects, which policies may not guard), every
 * policy with bindings is considered in name order: its matchConstraints,
 * then each binding's matchResources, then the binding's params; each param
 * is one evaluation (match conditions, validations, audit annotations).
 *
 * A failed validation is enforced by the binding's validationActions: Deny
 * collects a denial, Warn adds `Validation failed for ValidatingAdmissionPolicy
 * '<p>' with binding '<b>': <message>` to the request's warnings, Audit adds
 * the `validation.policy.admission.k8s.io/validation_failure` audit
 * annotation. Configuration errors (no matchConstraints, an unknown paramKind,
 * a missing param with parameterNotFoundAction Deny, a selector that does not
 * parse) deny unless the policy's failurePolicy is Ignore. The first denial
 * is the answer: `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy
 * '<p>' with binding '<b>' denied request: <message>`, with the validation's
 * reason (Invalid by default) and its HTTP code.
 *
 * Warnings and audit annotations go where the attributes have room for them
 * (`warnings`, `auditAnnotations`); attributes without them drop them.
 */
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import type { AdmissionAttributes, ValidatingAdmission } from '../index.js';
import type { ObjectGetter, ObjectSubscriber } from '../lookups.js';
import { type CompiledPolicy, compilePolicy } from './compile.js';
import { validatePolicy } from './evaluate.js';
import { type Equivalent, type GroupVersionResource, type MatchRequest, type MatchResult, matchResources } from './matching.js';
import { collectParams, type Param, type ParamSource } from './params.js';
import { admissionRequest } from './request.js';

type Policy = admissionregistrationv1.ValidatingAdmissionPolicy;
type Binding = admissionregistrationv1.ValidatingAdmissionPolicyBinding;

export interface ResolvedResource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

export interface PolicyPluginContext {
  policies: () => ObjectSubscriber;
  bindings: () => ObjectSubscriber;
  namespaces: () => ObjectGetter;
  /** The served resource of a request's `group/resource`. */
  resolve(resource: string): ResolvedResource | undefined;
  /** Other versions of the same storage (matchPolicy Equivalent). */
  equivalents?(r: GroupVersionResource): Equivalent[];
  /** Where objects of a paramKind are read; undefined when nothing serves that kind. */
  paramSource(group: string, version: string, kind: string): ParamSource | undefined;
}

/** Attributes that carry the request's warnings and audit annotations, when the store gives them room. */
export type PolicyAttributes = AdmissionAttributes & { warnings?: string[]; auditAnnotations?: Record<string, string> };

export const VALIDATION_FAILURE_ANNOTATION = 'validation.policy.admission.k8s.io/validation_failure';
const MAX_AUDIT_ANNOTATION_VALUE = 10 * 1024;
const CODES: Record<string, number> = { Forbidden: 403, Unauthorized: 401, RequestEntityTooLarge: 413, Invalid: 422 };

interface Denial {
  policy: string;
  binding?: string;
  message: string;
  reason?: string;
}

/** attributes.AddAnnotation: the first value of a key stays. */
function annotate(a: PolicyAttributes, key: string, value: string): void {
  if (!a.auditAnnotations) return;
  if (a.auditAnnotations[key] === undefined) a.auditAnnotations[key] = value;
}

const splitGroupVersion = (apiVersion: string): [string, string] => {
  const i = apiVersion.indexOf('/');
  return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
};

export class ValidatingAdmissionPolicyPlugin implements ValidatingAdmission {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly policies = new Map<string, Policy>();
  private readonly bindings = new Map<string, Binding>();
  private readonly compiled = new Map<string, { rv: string; compiled: CompiledPolicy }>();

  constructor(private readonly ctx: PolicyPluginContext) {
    ctx.policies().subscribe((type, obj) => {
      const name = obj.metadata.name!;
      this.compiled.delete(name);
      if (type === 'DELETED') this.policies.delete(name);
      else this.policies.set(name, obj as unknown as Policy);
    });
    ctx.bindings().subscribe((type, obj) => {
      const name = obj.metadata.name!;
      if (type === 'DELETED') this.bindings.delete(name);
      else this.bindings.set(name, obj as unknown as Binding);
    });
  }

  handles(a: AdmissionAttributes): boolean {
    return this.bindings.size > 0 && !a.resource.startsWith('admissionregistration.k8s.io/');
  }

  private compiledOf(p: Policy): CompiledPolicy {
    const name = p.metadata?.name ?? '';
    const rv = p.metadata?.resourceVersion ?? '';
    const hit = this.compiled.get(name);
    if (hit && hit.rv === rv) return hit.compiled;
    const compiled = compilePolicy(p);
    this.compiled.set(name, { rv, compiled });
    return compiled;
  }

  /** Policies that have bindings, in name order, with their bindings in name order. */
  private hooks(): { policy: Policy; bindings: Binding[] }[] {
    const byPolicy = new Map<string, Binding[]>();
    for (const b of [...this.bindings.values()].sort((x, y) => (x.metadata?.name ?? '').localeCompare(y.metadata?.name ?? ''))) {
      const pn = b.spec?.policyName ?? '';
      byPolicy.set(pn, [...(byPolicy.get(pn) ?? []), b]);
    }
    return [...byPolicy.keys()].sort().flatMap((pn) => {
      const policy = this.policies.get(pn);
      return policy ? [{ policy, bindings: byPolicy.get(pn)! }] : [];
    });
  }

  async validate(obj: KubeObject, attrs: AdmissionAttributes): Promise<void> {
    const a = attrs as PolicyAttributes;
    const r = this.ctx.resolve(a.resource);
    if (!r) return;
    const isNamespace = r.group === '' && r.resource === 'namespaces';
    const req: MatchRequest = {
      operation: a.operation,
      resource: { group: r.group, version: r.version, resource: r.resource },
      kind: { group: r.group, version: r.version, kind: r.kind },
      subresource: a.subresource ?? '',
      namespace: isNamespace ? '' : (a.namespace ?? ''),
      name: a.name ?? obj.metadata?.name ?? a.old?.metadata?.name ?? '',
      object: a.operation === 'DELETE' ? null : obj,
      oldObject: a.operation === 'DELETE' ? (a.old ?? obj) : (a.old ?? null),
    };
    const namespaces = new Map<string, Promise<KubeObject>>();
    const namespace = (name: string) => {
      let p = namespaces.get(name);
      if (!p) {
        p = this.ctx.namespaces().get(undefined, name, '0');
        namespaces.set(name, p);
      }
      return p;
    };
    const deps = {
      namespaceLabels: async (n: string) => (await namespace(n)).metadata.labels ?? {},
      ...(this.ctx.equivalents ? { equivalents: this.ctx.equivalents } : {}),
    };
    const denied: Denial[] = [];
    for (const { policy, bindings } of this.hooks()) {
      const pname = policy.metadata?.name ?? '';
      const spec = policy.spec ?? {};
      const configError = (e: unknown, binding?: Binding) => {
        if ((spec.failurePolicy ?? 'Fail') === 'Ignore') return;
        const msg = e instanceof Error ? e.message : String(e);
        denied.push(
          binding
            ? { policy: pname, binding: binding.metadata?.name ?? '', message: `failed to configure binding: ${msg}` }
            : { policy: pname, message: `failed to configure policy: ${msg}` },
        );
      };
      let matched: MatchResult;
      try {
        if (!spec.matchConstraints) throw new Error('policy contained no match constraints, a required field');
        matched = await matchResources(spec.matchConstraints, req, deps);
      } catch (e) {
        configError(e);
        continue;
      }
      if (!matched.matches) continue;
      let paramSource: ParamSource | undefined;
      if (spec.paramKind) {
        const [g, v] = splitGroupVersion(spec.paramKind.apiVersion ?? '');
        paramSource = this.ctx.paramSource(g, v, spec.paramKind.kind ?? '');
        if (!paramSource) {
          configError(new Error(`failed to find resource referenced by paramKind: '${g}/${v}, Kind=${spec.paramKind.kind ?? ''}'`));
          continue;
        }
      }
      const compiled = this.compiledOf(policy);
      const collected = new Map<string, string[]>();
      for (const binding of bindings) {
        const bname = binding.metadata?.name ?? '';
        let params: Param[];
        try {
          if (binding.spec?.matchResources && !(await matchResources(binding.spec.matchResources, req, deps)).matches) continue;
          params = await collectParams(spec.paramKind, paramSource, binding.spec?.paramRef, a.namespace ?? '');
        } catch (e) {
          configError(e, binding);
          continue;
        }
        const nsName = isNamespace ? '' : (a.namespace ?? '');
        const namespaceObject = nsName ? await namespace(nsName) : null;
        const request = admissionRequest({
          operation: a.operation,
          resource: matched.resource,
          kind: matched.kind,
          requestResource: req.resource,
          requestKind: req.kind,
          subresource: req.subresource,
          name: req.name,
          namespace: a.namespace ?? '',
          dryRun: !!a.dryRun,
          user: a.user,
        });
        for (const param of params) {
          const result = validatePolicy(compiled, {
            object: req.object,
            oldObject: req.oldObject,
            request,
            namespaceObject,
            ...(param !== undefined ? { params: param } : {}),
          });
          for (const d of result.decisions) {
            if (d.action !== 'deny') continue;
            const actions = binding.spec?.validationActions ?? [];
            for (const action of actions) {
              if (action === 'Deny') denied.push({ policy: pname, binding: bname, message: d.message, ...(d.reason ? { reason: d.reason } : {}) });
              else if (action === 'Warn') a.warnings?.push(`Validation failed for ValidatingAdmissionPolicy '${pname}' with binding '${bname}': ${d.message}`);
              else if (action === 'Audit') {
                const value = [
                  { message: d.message, policy: binding.spec?.policyName ?? '', binding: bname, expressionIndex: d.index, validationActions: actions },
                ];
                annotate(a, VALIDATION_FAILURE_ANNOTATION, JSON.stringify(value));
              }
            }
          }
          for (const aa of result.auditAnnotations) {
            if (aa.action === 'publish') {
              const value = aa.value!.slice(0, MAX_AUDIT_ANNOTATION_VALUE);
              const values = collected.get(aa.key) ?? [];
              if (!values.includes(value)) collected.set(aa.key, [...values, value]);
            } else if (aa.action === 'error') denied.push({ policy: pname, binding: bname, message: aa.error ?? '' });
          }
        }
      }
      for (const [key, values] of collected) annotate(a, `${pname}/${key}`, values.join(', '));
    }
    if (denied.length) throw denial(denied[0]!, req);
  }
}

/** admission.NewForbidden with the denial's reason and code, and the message as the one cause. */
function denial(d: Denial, req: MatchRequest): StatusError {
  const why = d.binding
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const gr = req.resource.group ? `${req.resource.resource}.${req.resource.group}` : req.resource.resource;
  const message = req.name ? `${gr} "${req.name}" is forbidden: ${why}` : `${gr} is forbidden: ${why}`;
  const reason = d.reason || 'Invalid';
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: {
      ...(req.name ? { name: req.name } : {}),
      ...(req.resource.group ? { group: req.resource.group } : {}),
      kind: req.resource.resource,
      causes: [{ message: why }],
    },
    code: CODES[reason] ?? 422,
  });
}
