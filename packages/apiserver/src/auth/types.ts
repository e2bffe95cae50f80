/** Who made a request (user.Info) and what it asks (authorizer.Attributes). */

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface Attributes {
  user: UserInfo;
  verb: string;
  /** Resource requests. */
  isResourceRequest: boolean;
  namespace?: string;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  /** The API version requested, when known (a webhook is told it). */
  apiVersion?: string;
  /** Non-resource requests. */
  path?: string;
}

/**
 * An authorizer's answer (authorizer.Decision): allow; deny (`denied`, final
 * in a union); or no opinion (neither), leaving the request to the next
 * authorizer. `error` is an evaluation error (a webhook that failed, a match
 * condition that did not evaluate): reported by access reviews as
 * `evaluationError`, never to the requester in a 403.
 */
export type Decision = { allowed: true; reason: string; error?: string } | { allowed: false; reason: string; denied?: boolean; error?: string };

/** A rule of a rules review (authorizer.ResourceRuleInfo / NonResourceRuleInfo). */
export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}
export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

/** What an authorizer can tell of a user's rules (authorizer.RuleResolver's RulesFor). */
export interface RuleSet {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** Some of what the user may do cannot be listed (a webhook, the Node authorizer for a node). */
  incomplete: boolean;
  error?: string;
}

/**
 * Decides one request. Local authorizers (RBAC, Node) answer at once; remote
 * ones (Webhook) answer with a promise, so callers always `await`.
 * `resolveRules`, when present, lists a user's rules in a namespace
 * (SelfSubjectRulesReview).
 */
export interface Authorizer {
  authorize(a: Attributes): Decision | Promise<Decision>;
  resolveRules?(user: UserInfo, namespace: string): RuleSet;
}

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/** The message of a 403 (apiserver's forbiddenMessage). */
export function forbiddenMessage(a: Attributes): string {
  const who = `User "${a.user.name}"`;
  if (!a.isResourceRequest) return `forbidden: ${who} cannot ${a.verb} path "${a.path}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const what = `${who} cannot ${a.verb} resource "${resource}" in API group "${a.apiGroup ?? ''}"`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  // The prefix names the resource alone, as upstream's NewForbidden(GroupResource) does.
  const gr = a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource;
  return a.name ? `${gr} "${a.name}" is forbidden: ${what} ${scope}` : `${gr} is forbidden: ${what} ${scope}`;
}
