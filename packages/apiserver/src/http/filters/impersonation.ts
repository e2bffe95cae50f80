/**
 * The impersonation filter (k8s.io/apiserver pkg/endpoints/filters
 * impersonation.go): Impersonate-User, -Group, -Uid and -Extra-<key> make the
 * request act as someone else, each one checked as the `impersonate` verb
 * (users or serviceaccounts, groups, uids and userextras/<key> in
 * authentication.k8s.io). Groups or extras without a user are 400; a refused
 * check is 403.
 *
 * Runs after authentication, whose user it takes off the request: `req.user`
 * is set again only once every check passed, so a refused request carries
 * no user (its audit record names it as unauthenticated).
 */
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { badRequest, failure } from '@kubeling/apimachinery';
import { forbiddenMessage, type Attributes, type Authorizer, type UserInfo } from '../../auth/types.js';

function headerList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** An ObjectReference as Go's %v prints it: its seven fields between braces, space-separated. */
const refText = (kind: string, name: string, apiVersion = '', fieldPath = '') => `{${[kind, '', name, '', apiVersion, '', fieldPath].join(' ')}}`;

/** The user `user` acts as, per the request's Impersonate-* headers (itself without them). */
export async function impersonate(req: FastifyRequest, user: UserInfo, authz: Authorizer): Promise<UserInfo> {
  const who = headerList(req.headers['impersonate-user'])[0];
  const groups = headerList(req.headers['impersonate-group']).flatMap((g) =>
    g
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );
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
    extra[key] = headerList(v).flatMap((x) =>
      x
        .split(',')
        .map((y) => y.trim())
        .filter(Boolean),
    );
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
  const check = async (a: Omit<Attributes, 'user' | 'verb' | 'isResourceRequest'>) => {
    const attrs: Attributes = { user, verb: 'impersonate', isResourceRequest: true, ...a };
    if (!(await authz.authorize(attrs)).allowed) throw failure('Forbidden', forbiddenMessage(attrs));
  };
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(who);
  if (sa) await check({ apiGroup: '', resource: 'serviceaccounts', namespace: sa[1]!, name: sa[2]! });
  else await check({ apiGroup: '', resource: 'users', name: who });
  for (const g of groups) await check({ apiGroup: '', resource: 'groups', name: g });
  for (const [k, vs] of extras) for (const v of vs) await check({ apiGroup: 'authentication.k8s.io', resource: 'userextras', subresource: k, name: v });
  if (uid) await check({ apiGroup: 'authentication.k8s.io', resource: 'uids', name: uid });
  const out = new Set(groups);
  if (sa) {
    out.add('system:serviceaccounts');
    out.add(`system:serviceaccounts:${sa[1]}`);
  }
  if (who !== 'system:anonymous') out.add('system:authenticated');
  return { name: who, groups: [...out], ...(uid ? { uid } : {}), ...(extras.length ? { extra: Object.fromEntries(extras) } : {}) };
}

export const impersonation = fp<{ authorizer: Authorizer }>(
  async (app, { authorizer }) => {
    app.addHook('onRequest', async (req) => {
      const user = req.user!;
      delete req.user;
      req.user = await impersonate(req, user, authorizer);
    });
  },
  { name: 'kubeling-impersonation', dependencies: ['kubeling-authentication'] },
);
