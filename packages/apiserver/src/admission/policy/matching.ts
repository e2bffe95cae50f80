/**
 * Which requests a ValidatingAdmissionPolicy's `matchConstraints` (or a
 * binding's `matchResources`) select, as k8s.io/apiserver
 * pkg/admission/plugin/policy/matching/matching.go and the webhook predicates
 * it uses (webhook/predicates/rules, namespace, object):
 *
 * - a namespaceSelector is skipped for cluster-scoped requests other than
 *   namespaces; a Namespace being created or updated is matched on its own
 *   labels, anything else on its namespace's (read through `namespaceLabels`);
 * - an objectSelector matches when the new or the old object matches (an
 *   absent object never does);
 * - excludeResourceRules win over resourceRules; no resourceRules matches
 *   every resource (bindings); resourceNames narrow a rule to names;
 * - with matchPolicy Equivalent, a rule that misses the request's own
 *   group/version/resource may match an equivalent resource (another version
 *   of the same storage), which becomes the matched resource and kind.
 *
 * Selector or lookup failures are errors only when the rules otherwise match,
 * as upstream returns them after the resource check.
 */
import type { KubeObject, admissionregistrationv1 } from '@kubeling/api';
import { selectorFromLabelSelector } from '@kubeling/apimachinery';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** What matching reads of a request (upstream's admission.Attributes). */
export interface MatchRequest {
  operation: Operation;
  resource: GroupVersionResource;
  kind: GroupVersionKind;
  subresource: string;
  /** '' for cluster-scoped objects (and for namespaces themselves). */
  namespace: string;
  name: string;
  /** The new object (absent for DELETE). */
  object: KubeObject | null;
  /** The object as stored (absent for CREATE). */
  oldObject: KubeObject | null;
}

export interface Equivalent {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

export interface MatchDeps {
  /** Labels of a namespace; throws (a 404 StatusError) when it does not exist. */
  namespaceLabels(name: string): Promise<Record<string, string>>;
  /** Resources that store the same objects as `r` (other versions), for matchPolicy Equivalent. */
  equivalents?(r: GroupVersionResource): Equivalent[];
}

export interface MatchResult {
  matches: boolean;
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

type Rule = admissionregistrationv1.NamedRuleWithOperations;
type MatchResources = admissionregistrationv1.MatchResources;

const NO_MATCH = (r: MatchRequest): MatchResult => ({ matches: false, resource: r.resource, kind: r.kind });
const exactOrWildcard = (items: readonly string[] | undefined, v: string) => !!items?.some((i) => i === '*' || i === v);
const isNamespaceResource = (r: GroupVersionResource) => r.group === '' && r.version === 'v1' && r.resource === 'namespaces';

/** rules.Matcher.Matches: scope, operation, group, version and resource/subresource of one rule. */
export function ruleMatches(
  rule: Omit<Rule, 'resourceNames'>,
  req: Pick<MatchRequest, 'operation' | 'subresource' | 'namespace'>,
  res: GroupVersionResource,
): boolean {
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced' && (isNamespaceResource(res) || req.namespace === '')) return false;
  if (scope === 'Cluster' && !(isNamespaceResource(res) || req.namespace === '')) return false;
  if (scope !== '*' && scope !== 'Namespaced' && scope !== 'Cluster') return false;
  if (!rule.operations?.some((op) => op === '*' || op === req.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, res.group) || !exactOrWildcard(rule.apiVersions, res.version)) return false;
  return (rule.resources ?? []).some((rs) => {
    const i = rs.indexOf('/');
    const [r, sub] = i < 0 ? [rs, ''] : [rs.slice(0, i), rs.slice(i + 1)];
    return (r === '*' || r === res.resource) && (sub === '*' || sub === req.subresource);
  });
}

const nameMatches = (rule: Rule, name: string) => !rule.resourceNames?.length || rule.resourceNames.includes(name);

/** matchesResourceRules: the first rule (then the first equivalent resource) that matches decides the matched resource and kind. */
export function matchesResourceRules(
  rules: readonly Rule[],
  matchPolicy: string | undefined,
  req: MatchRequest,
  deps: Pick<MatchDeps, 'equivalents'>,
): MatchResult {
  for (const rule of rules) {
    if (ruleMatches(rule, req, req.resource) && nameMatches(rule, req.name)) return { matches: true, resource: req.resource, kind: req.kind };
  }
  if (matchPolicy !== 'Equivalent') return NO_MATCH(req);
  const equivalents = deps.equivalents?.(req.resource) ?? [];
  for (const rule of rules) {
    for (const eq of equivalents) {
      const same = eq.resource.group === req.resource.group && eq.resource.version === req.resource.version && eq.resource.resource === req.resource.resource;
      if (same || !ruleMatches(rule, req, eq.resource)) continue;
      if (nameMatches(rule, req.name)) return { matches: true, resource: eq.resource, kind: eq.kind };
    }
  }
  return NO_MATCH(req);
}

const labelsOf = (o: KubeObject | null): Record<string, string> | undefined => (o && typeof o === 'object' ? (o.metadata?.labels ?? {}) : undefined);

/** The namespace selector: true, false, or the error to report if the rules match. */
async function namespaceSelected(mr: MatchResources, req: MatchRequest, deps: MatchDeps): Promise<boolean | Error> {
  const namespaces = isNamespaceResource(req.resource);
  if (!req.namespace && !namespaces) return true;
  const sel = mr.namespaceSelector ?? {};
  if (!sel.matchLabels && !sel.matchExpressions?.length) return true;
  try {
    const selector = selectorFromLabelSelector(sel);
    let labels: Record<string, string>;
    if (namespaces && !req.subresource && (req.operation === 'CREATE' || req.operation === 'UPDATE')) labels = labelsOf(req.object) ?? {};
    else labels = await deps.namespaceLabels(req.namespace || req.name);
    return selector.matches(labels);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

function objectSelected(mr: MatchResources, req: MatchRequest): boolean | Error {
  const sel = mr.objectSelector ?? {};
  if (!sel.matchLabels && !sel.matchExpressions?.length) return true;
  try {
    const selector = selectorFromLabelSelector(sel);
    const matches = (o: KubeObject | null) => {
      const l = labelsOf(o);
      return l !== undefined && selector.matches(l);
    };
    return matches(req.object) || matches(req.oldObject);
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/**
 * matching.Matcher.Matches: the matched resource and kind (the request's own, or
 * an equivalent's). Without resourceRules (a binding's matchResources) every
 * resource matches. Throws a selector or namespace lookup error when the rules match.
 */
export async function matchResources(mr: MatchResources, req: MatchRequest, deps: MatchDeps): Promise<MatchResult> {
  const ns = await namespaceSelected(mr, req, deps);
  if (ns === false) return NO_MATCH(req);
  const ob = objectSelected(mr, req);
  if (ob === false) return NO_MATCH(req);
  if (mr.excludeResourceRules?.length && matchesResourceRules(mr.excludeResourceRules, mr.matchPolicy, req, deps).matches) return NO_MATCH(req);
  const res = mr.resourceRules?.length
    ? matchesResourceRules(mr.resourceRules, mr.matchPolicy, req, deps)
    : { matches: true, resource: req.resource, kind: req.kind };
  if (!res.matches) return res;
  if (ns instanceof Error) throw ns;
  if (ob instanceof Error) throw ob;
  return res;
}
