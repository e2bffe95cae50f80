/**
 * The authorization filter (k8s.io/apiserver pkg/endpoints/filters
 * authorization.go): the request's attributes (its user, verb and resource,
 * or its path) go to the authorizer; a denial is 403 with upstream's message
 * and the authorizers' reasons after it. Runs after authentication and
 * impersonation, so it judges the user the request acts as.
 */
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { failure } from '@kubeling/apimachinery';
import { parseRequestInfo } from '../request-info.js';
import { forbiddenMessage, type Attributes, type Authorizer, type UserInfo } from '../../auth/types.js';

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

export const authorization = fp<{ authorizer: Authorizer }>(
  async (app, { authorizer }) => {
    app.addHook('onRequest', async (req) => {
      const attrs = attributesOf(req, req.user!);
      const d = await authorizer.authorize(attrs);
      // The authorizers' reasons follow the message, as upstream's responsewriters.Forbidden writes them.
      if (!d.allowed)
        throw failure(
          'Forbidden',
          forbiddenMessage(attrs) + (d.reason ? `: ${d.reason}` : ''),
          attrs.isResourceRequest
            ? {
                ...(attrs.apiGroup ? { group: attrs.apiGroup } : {}),
                ...(attrs.resource !== undefined ? { kind: attrs.resource } : {}),
                ...(attrs.name ? { name: attrs.name } : {}),
              }
            : undefined,
        );
    });
  },
  { name: 'kubeling-authorization', dependencies: ['kubeling-authentication'] },
);
