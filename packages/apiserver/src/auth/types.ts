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
  /** Non-resource requests. */
  path?: string;
}

export type Decision = { allowed: true; reason: string } | { allowed: false; reason: string; denied?: boolean };

/**
 * Decides one request. Local authorizers (RBAC, Node) answer at once; remote
 * ones (Webhook) answer with a promise, so callers always `await`.
 */
export interface Authorizer {
  authorize(a: Attributes): Decision | Promise<Decision>;
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
