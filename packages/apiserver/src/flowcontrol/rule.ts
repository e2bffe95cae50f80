/**
 * Classification of a request by FlowSchemas (k8s.io/apiserver
 * pkg/util/flowcontrol rule.go and apf_controller.go): the schemas are tried in
 * order of matching precedence, then name; the first whose rules match wins. A
 * rule matches when one of its subjects is the requester (user name, group, or
 * ServiceAccount, "*" for any) and — for resource requests — one resource rule
 * matches the verb, API group, resource[/subresource] and namespace (requests
 * without a namespace only where `clusterScope` is true), or — for other
 * requests — one non-resource rule matches the verb and path ("/x/*" is a
 * prefix, "*" anything). The flow distinguisher is the user name (ByUser), the
 * namespace (ByNamespace) or nothing.
 */
import type { flowcontrolv1 } from '@kubeling/api';
import type { FlowSchema } from '../registry/flowcontrol/bootstrap.js';
type Subject = flowcontrolv1.Subject;

/** What classification looks at: who asks, and what (upstream's RequestDigest). */
export interface RequestDigest {
  user: { name: string; groups: readonly string[] };
  isResourceRequest: boolean;
  verb: string;
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
}

const SA_PREFIX = 'system:serviceaccount:';

function matchesSubject(user: RequestDigest['user'], s: Subject): boolean {
  switch (s.kind) {
    case 'User':
      return !!s.user && (s.user.name === '*' || s.user.name === user.name);
    case 'Group':
      return !!s.group && (s.group.name === '*' || user.groups.includes(s.group.name));
    case 'ServiceAccount': {
      if (!s.serviceAccount || !user.name.startsWith(SA_PREFIX)) return false;
      const nsPrefix = `${s.serviceAccount.namespace}:`;
      const rest = user.name.slice(SA_PREFIX.length);
      if (!rest.startsWith(nsPrefix)) return false;
      return s.serviceAccount.name === '*' || rest.slice(nsPrefix.length) === s.serviceAccount.name;
    }
    default:
      return false;
  }
}

/** `x` is in `list`, or `list` is just the wildcard (validation keeps a wildcard alone). */
const contains = (x: string, list: readonly string[] | undefined, wildcard = '*') =>
  !!list && ((list.length === 1 && list[0] === wildcard) || list.includes(x));

function matchesNonResourceURL(urls: readonly string[], path: string): boolean {
  for (const u of urls) {
    if (u === '*' || u === path) return true;
    let prefix = u.endsWith('*') ? u.slice(0, -1) : u;
    if (!prefix.endsWith('/')) prefix += '/';
    if (path.startsWith(prefix)) return true;
  }
  return false;
}

function matchesRule(d: RequestDigest, rule: flowcontrolv1.PolicyRulesWithSubjects): boolean {
  if (!(rule.subjects ?? []).some((s) => matchesSubject(d.user, s))) return false;
  if (!d.isResourceRequest)
    return (rule.nonResourceRules ?? []).some((r) => contains(d.verb, r.verbs) && matchesNonResourceURL(r.nonResourceURLs ?? [], d.path));
  const resource = d.subresource ? `${d.resource}/${d.subresource}` : d.resource;
  return (rule.resourceRules ?? []).some(
    (r) =>
      contains(d.verb, r.verbs) &&
      contains(resource, r.resources) &&
      contains(d.apiGroup, r.apiGroups) &&
      (d.namespace ? contains(d.namespace, r.namespaces) : r.clusterScope === true),
  );
}

export const matchesFlowSchema = (d: RequestDigest, fs: FlowSchema): boolean => (fs.spec?.rules ?? []).some((r) => matchesRule(d, r));

/** Matching precedence ascending, then name: the order schemas are tried in. */
export function sortFlowSchemas(schemas: FlowSchema[]): FlowSchema[] {
  return schemas.sort((a, b) => {
    const pa = a.spec?.matchingPrecedence ?? 0;
    const pb = b.spec?.matchingPrecedence ?? 0;
    if (pa !== pb) return pa - pb;
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** The first matching schema of `sorted`. */
export const classify = (d: RequestDigest, sorted: readonly FlowSchema[]): FlowSchema | undefined => sorted.find((fs) => matchesFlowSchema(d, fs));

export function flowDistinguisher(d: RequestDigest, fs: FlowSchema): string {
  switch (fs.spec?.distinguisherMethod?.type) {
    case 'ByUser':
      return d.user.name;
    case 'ByNamespace':
      return d.namespace;
    default:
      return '';
  }
}
