/**
 * The request's identity and permission, before any handler runs
 * (k8s.io/apiserver pkg/endpoints/filters): authenticate (401 when nobody
 * recognises the request outside the anonymous paths), apply impersonation
 * headers for users allowed to `impersonate`, then authorize (403 with
 * upstream's message). The Authorization header is dropped once used.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, failure, type StatusError } from '@kubeling/apimachinery';
import { parseRequestInfo } from '../http/request-info.js';
import type { Authenticator } from './authn.js';
import { ANONYMOUS, forbiddenMessage, type Attributes, type Authorizer, type UserInfo } from './types.js';

export * from './types.js';
export { Authenticator, StaticTokens, parseTokenFile } from './authn.js';
export { RbacAuthorizer, MastersAuthorizer, UnionAuthorizer, ruleAllows, type PolicyRule } from './rbac.js';
export { reconcileBootstrapPolicy, bootstrapPolicy } from './bootstrap.js';
export { NodeAuthorizer } from './node.js';
export { ServiceAccountTokens, type ServiceAccountTokenOptions } from './serviceaccount.js';

/** Paths anonymous requests may reach (health and version). */
const ANONYMOUS_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

export const unauthorized = (): StatusError => failure('Unauthorized', 'Unauthorized');

export function attributesOf(req: FastifyRequest, user: UserInfo): Attributes {
  const path = req.url.split('?')[0]!;
  const info = parseRequestInfo(req.method, path, req.query as Record<string, string>);
  if (!info.isResourceRequest) return { user, verb: info.verb, isResourceRequest: false, path };
  return {
    user,
    verb: info.verb,
    isResourceRequest: true,
    ...(info.namespace ? { namespace: info.namespace } : {}),
    apiGroup: info.apiGroup,
    resource: info.resource,
    ...(info.subresource ? { subresource: info.subresource } : {}),
    ...(info.name ? { name: info.name } : {}),
  };
}

function headerList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** An ObjectReference as Go's %v prints it: its seven fields between braces, space-separated. */
const refText = (kind: string, name: string, apiVersion = '', fieldPath = '') => `{${[kind, '', name, '', apiVersion, '', fieldPath].join(' ')}}`;

/**
 * Impersonate-User, -Group, -Uid and -Extra-<key>: each one checked as the
 * `impersonate` verb (users or serviceaccounts, groups, uids and
 * userextras/<key> in authentication.k8s.io), as upstream's impersonation filter.
 */
function impersonate(req: FastifyRequest, user: UserInfo, authz: Authorizer): UserInfo {
  const who = headerList(req.headers['impersonate-user'])[0];
  const groups = headerList(req.headers['impersonate-group']).flatMap((g) => g.split(',').map((x) => x.trim()).filter(Boolean));
  const uid = headerList(req.headers['impersonate-uid'])[0];
  const extra: Record<string, string[]> = {};
  for (const [h, v] of Object.entries(req.headers)) {
    if (!h.startsWith('impersonate-extra-')) continue;
    let key = h.slice('impersonate-extra-'.length);
    try {
      key = decodeURIComponent(key);
    } catch {
      // kept as written, as upstream's unescape does on a bad escape
    }
    extra[key] = headerList(v).flatMap((x) => x.split(',').map((y) => y.trim()).filter(Boolean));
  }
  const extras = Object.entries(extra).filter(([, vs]) => vs.length);
  if (!who) {
    if (groups.length || extras.length || uid) {
      const refs = [
        ...groups.map((g) => refText('Group', g)),
        ...extras.flatMap(([k, vs]) => vs.map((v) => refText('UserExtra', v, 'authentication.k8s.io/v1', k))),
        ...(uid ? [refText('UID', uid, 'authentication.k8s.io/v1')] : []),
      ];
      throw badRequest(`requested [${refs.join(' ')}] without impersonating a user`);
    }
    return user;
  }
  const check = (a: Omit<Attributes, 'user' | 'verb' | 'isResourceRequest'>) => {
    const attrs: Attributes = { user, verb: 'impersonate', isResourceRequest: true, ...a };
    if (!authz.authorize(attrs).allowed) throw failure('Forbidden', forbiddenMessage(attrs));
  };
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(who);
  if (sa) check({ apiGroup: '', resource: 'serviceaccounts', namespace: sa[1]!, name: sa[2]! });
  else check({ apiGroup: '', resource: 'users', name: who });
  for (const g of groups) check({ apiGroup: '', resource: 'groups', name: g });
  for (const [k, vs] of extras) for (const v of vs) check({ apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: k, name: v });
  if (uid) check({ apiGroup: 'authentication.k8s.io', resource: 'uids', name: uid });
  const out = new Set(groups);
  if (sa) {
    out.add('system:serviceaccounts');
    out.add(`system:serviceaccounts:${sa[1]}`);
  }
  if (who !== 'system:anonymous') out.add('system:authenticated');
  return { name: who, groups: [...out], ...(uid ? { uid } : {}), ...(extras.length ? { extra: Object.fromEntries(extras) } : {}) };
}

export interface Gate {
  authenticator: Authenticator;
  authorizer: Authorizer;
}

/** The onRequest hook: sets `req.user` or answers 401/403. */
export function authHook(gate: Gate) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const path = req.url.split('?')[0]!;
    const res = await gate.authenticator.authenticate(req.raw);
    if (res && 'error' in res) throw unauthorized();
    let user: UserInfo;
    if (res) user = res.user;
    else if (ANONYMOUS_PATHS.has(path)) user = ANONYMOUS;
    else throw unauthorized();
    delete req.headers.authorization;
    user = impersonate(req, user, gate.authorizer);
    req.user = user;
    const attrs = attributesOf(req, user);
    const d = gate.authorizer.authorize(attrs);
    // The authorizers' reasons follow the message, as upstream's responsewriters.Forbidden writes them.
    if (!d.allowed) throw failure('Forbidden', forbiddenMessage(attrs) + (d.reason ? `: ${d.reason}` : ''), attrs.isResourceRequest ? { ...(attrs.apiGroup ? { group: attrs.apiGroup } : {}), ...(attrs.resource !== undefined ? { kind: attrs.resource } : {}), ...(attrs.name ? { name: attrs.name } : {}) } : undefined);
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    user?: UserInfo;
  }
}
