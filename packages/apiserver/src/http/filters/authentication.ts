/**
 * The authentication filter (k8s.io/apiserver pkg/endpoints/filters
 * authentication.go): the first authenticator that recognises the request
 * (client certificate, then bearer tokens) names its user as `req.user`.
 * A credential nobody accepts is 401; so is a request without one, except on
 * the health and version paths, which anonymous users may reach. The
 * Authorization header is dropped once used, so no handler sees the token.
 *
 * A root plugin (fastify-plugin): its onRequest hook runs for every route,
 * the 404 handler included.
 */
import fp from 'fastify-plugin';
import { failure, type StatusError } from '@kubeling/apimachinery';
import type { Authenticator } from '../../auth/authn.js';
import { ANONYMOUS, type UserInfo } from '../../auth/types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts as: set by authentication, replaced by impersonation. */
    user?: UserInfo;
  }
}

/** Paths anonymous requests may reach (health and version). */
const ANONYMOUS_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);

export const unauthorized = (): StatusError => failure('Unauthorized', 'Unauthorized');

export const authentication = fp<{ authenticator: Authenticator }>(
  async (app, { authenticator }) => {
    app.addHook('onRequest', async (req) => {
      const res = await authenticator.authenticate(req.raw);
      if (res && 'error' in res) throw unauthorized();
      if (res) req.user = res.user;
      else if (ANONYMOUS_PATHS.has(req.url.split('?')[0]!)) req.user = ANONYMOUS;
      else throw unauthorized();
      delete req.headers.authorization;
    });
  },
  { name: 'kubeling-authentication' },
);
