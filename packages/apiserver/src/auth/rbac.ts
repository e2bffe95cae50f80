/**
 * RBAC (kubernetes plugin/pkg/auth/authorizer/rbac): Roles and ClusterRoles
 * grant rules; RoleBindings grant them in their namespace, ClusterRoleBindings
 * everywhere. A ClusterRole with an aggregationRule has the rules of the
 * ClusterRoles its selectors match. The policy is kept in memory, fed by the
 * watch cache, so no request reads etcd to be authorized.
 */
import type { KubeObject, rbacv1 } from '@kubeling/api';
import { field, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { Attributes, Authorizer, Decision, RuleSet, UserInfo } from './types.js';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

interface Binding {
  namespace?: string;
  roleRef: { kind: string; name: string } | undefined;
  subjects: Subject[];
}

const has = (list: string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

function resourceMatches(rule: PolicyRule, resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

function nonResourceMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** RuleAllows. */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.isResourceRequest) return nonResourceMatches(rule, a.path ?? '');
  if (!has(rule.apiGroups, a.apiGroup ?? '')) return false;
  if (!resourceMatches(rule, a.resource ?? '', a.subresource)) return false;
  if (rule.resourceNames?.length) return !!a.name && rule.resourceNames.includes(a.name);
  return true;
}

function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string | undefined): boolean {
  switch (s.kind) {
    case 'User':
      return s.name === user.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount':
      return user.name === `system:serviceaccount:${s.namespace || bindingNamespace}:${s.name}`;
    default:
      return false;
  }
}

export class RbacAuthorizer implements Authorizer {
  private readonly roles = new Map<string, rbacv1.Role>();
  private readonly clusterRoles = new Map<string, rbacv1.ClusterRole>();
  private readonly roleBindings = new Map<string, Binding>();
  private readonly clusterRoleBindings = new Map<string, Binding>();

  /** Feeds one change of a Role/ClusterRole/RoleBinding/ClusterRoleBinding. */
  apply(kind: 'roles' | 'clusterroles' | 'rolebindings' | 'clusterrolebindings', type: string, obj: KubeObject): void {
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const del = type === 'DELETED';
    if (kind === 'roles') del ? this.roles.delete(key) : this.roles.set(key, obj as rbacv1.Role);
    else if (kind === 'clusterroles') del ? this.clusterRoles.delete(obj.metadata.name!) : this.clusterRoles.set(obj.metadata.name!, obj as rbacv1.ClusterRole);
    else {
      const binding = obj as rbacv1.RoleBinding | rbacv1.ClusterRoleBinding;
      const b: Binding = {
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
        roleRef: binding.roleRef,
        subjects: binding.subjects ?? [],
      };
      const map = kind === 'rolebindings' ? this.roleBindings : this.clusterRoleBindings;
      del ? map.delete(key) : map.set(key, b);
    }
  }

  /**
   * A ClusterRole's rules, with aggregation. Upstream's aggregation controller
   * writes a role's aggregated rules into its `.rules`, which roles aggregating
   * it then take: aggregation is transitive (edit has view's rules, admin has
   * edit's). `seen` guards against cycles.
   */
  private clusterRoleRules(name: string, seen: Set<string> = new Set()): PolicyRule[] {
    const cr = this.clusterRoles.get(name);
    if (!cr || seen.has(name)) return [];
    seen.add(name);
    const own: PolicyRule[] = cr.rules ?? [];
    const selectors = cr.aggregationRule?.clusterRoleSelectors;
    if (!selectors?.length) return own;
    const out = [...own];
    for (const other of this.clusterRoles.values()) {
      if (other.metadata?.name === name) continue;
      for (const sel of selectors) {
        try {
          if (selectorFromLabelSelector(sel).matches(other.metadata?.labels ?? {})) {
            out.push(...this.clusterRoleRules(other.metadata?.name ?? '', seen));
            break;
          }
        } catch {
          // a bad selector aggregates nothing
        }
      }
    }
    return out;
  }

  private bindingRules(b: Binding): PolicyRule[] {
    if (b.roleRef?.kind === 'ClusterRole') return this.clusterRoleRules(b.roleRef.name);
    if (b.roleRef?.kind === 'Role') return this.roles.get(`${b.namespace}/${b.roleRef.name}`)?.rules ?? [];
    return [];
  }

  /** Every rule that applies to the user in a namespace (cluster-wide ones included). */
  rulesFor(user: UserInfo, namespace: string | undefined): PolicyRule[] {
    const out: PolicyRule[] = [];
    for (const b of this.clusterRoleBindings.values()) if (b.subjects.some((s) => subjectMatches(s, user, undefined))) out.push(...this.bindingRules(b));
    if (namespace)
      for (const b of this.roleBindings.values())
        if (b.namespace === namespace && b.subjects.some((s) => subjectMatches(s, user, b.namespace))) out.push(...this.bindingRules(b));
    return out;
  }

  /** RulesFor: the user's rules in the namespace, as a rules review lists them. */
  resolveRules(user: UserInfo, namespace: string): RuleSet {
    const out: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false };
    for (const r of this.rulesFor(user, namespace || undefined)) {
      if (r.resources?.length)
        out.resourceRules.push({
          verbs: r.verbs,
          apiGroups: r.apiGroups ?? [],
          resources: r.resources,
          ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
        });
      if (r.nonResourceURLs?.length) out.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    }
    return out;
  }

  authorize(a: Attributes): Decision {
    for (const b of this.clusterRoleBindings.values()) {
      if (!b.subjects.some((s) => subjectMatches(s, a.user, undefined))) continue;
      if (this.bindingRules(b).some((r) => ruleAllows(a, r)))
        return { allowed: true, reason: `RBAC: allowed by ClusterRoleBinding with role ${b.roleRef?.name}` };
    }
    if (a.namespace) {
      for (const b of this.roleBindings.values()) {
        if (b.namespace !== a.namespace || !b.subjects.some((s) => subjectMatches(s, a.user, b.namespace))) continue;
        if (this.bindingRules(b).some((r) => ruleAllows(a, r)))
          return { allowed: true, reason: `RBAC: allowed by RoleBinding with ${b.roleRef?.kind} ${b.roleRef?.name}` };
      }
    }
    return { allowed: false, reason: '' };
  }
}

/** system:masters may do anything, before RBAC is consulted (as upstream's privileged group). */
export class MastersAuthorizer implements Authorizer {
  authorize(a: Attributes): Decision {
    return a.user.groups.includes('system:masters') ? { allowed: true, reason: 'member of system:masters' } : { allowed: false, reason: '' };
  }
}

/**
 * The union of authorizers (k8s.io/apiserver pkg/authorization/union): each
 * is asked in order and the first allow or deny is the answer, with that
 * authorizer's reason. When none has an opinion the request is refused with
 * every reason given, one a line. Evaluation errors are gathered as
 * upstream's aggregate (`[a, b]`). The rules of a rules review are those of
 * every authorizer that lists rules, incomplete when any says so.
 */
export class UnionAuthorizer implements Authorizer {
  constructor(private readonly list: Authorizer[]) {}

  async authorize(a: Attributes): Promise<Decision> {
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const z of this.list) {
      const d = await z.authorize(a);
      if (d.error) errors.push(d.error);
      if (d.reason) reasons.push(d.reason);
      if (d.allowed || d.denied) return d;
    }
    const error = field.aggregateStrings(errors);
    return { allowed: false, reason: reasons.join('\n'), ...(error ? { error } : {}) };
  }

  resolveRules(user: UserInfo, namespace: string): RuleSet {
    const out: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false };
    const errors: string[] = [];
    for (const z of this.list) {
      if (!z.resolveRules) continue;
      const r = z.resolveRules(user, namespace);
      out.resourceRules.push(...r.resourceRules);
      out.nonResourceRules.push(...r.nonResourceRules);
      if (r.incomplete) out.incomplete = true;
      if (r.error) errors.push(r.error);
    }
    const error = field.aggregateStrings(errors);
    return error ? { ...out, error } : out;
  }
}
