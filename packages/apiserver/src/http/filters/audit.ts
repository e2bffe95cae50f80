/**
 * The audit filter (k8s.io/apiserver pkg/endpoints/filters audit.go): one JSON
 * line per request with who, verb, what, code and latency, never bodies or
 * credentials. Blocking mode, as upstream's: the record is written when the
 * response is about to go out (onSend), so a client that hangs up after its
 * request was carried out still leaves one, and requests refused by
 * authentication are recorded too (upstream's WithFailedAuthenticationAudit).
 * An upgraded request is recorded once, at stage ResponseStarted with code 101.
 */
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { parseRequestInfo } from '../request-info.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the object a create made (for the audit record; the URL has none). */
    objectName?: string;
  }
}

export interface AuditOptions {
  logger: Logger;
  /** The user named in records of requests that have none (not authenticated, or authentication is off). */
  unauthenticatedUser: string;
}

export const audit = fp<AuditOptions>(
  async (app, { logger, unauthenticatedUser }) => {
    const line = (req: FastifyRequest, code: number, stage: string, ms: number) => {
      const path = req.url.split('?')[0]!;
      const info = req.k8s ?? parseRequestInfo(req.method, path, req.query as Record<string, string>);
      const user = req.user;
      logger.info(
        {
          stage,
          user: user?.name ?? unauthenticatedUser,
          ...(user?.groups?.length ? { groups: user.groups } : {}),
          verb: info.verb,
          ...(info.isResourceRequest
            ? {
                resource: info.resource,
                ...(info.subresource ? { subresource: info.subresource } : {}),
                ...(info.apiGroup ? { apiGroup: info.apiGroup } : {}),
                ...(info.namespace ? { namespace: info.namespace } : {}),
                ...(info.name || req.objectName ? { name: info.name || req.objectName } : {}),
              }
            : { path }),
          code,
          requestReceivedTimestamp: new Date(Date.now() - ms).toISOString(),
          stageTimestamp: new Date().toISOString(),
          latencyMs: Math.round(ms * 10) / 10,
          sourceIP: req.ip,
          userAgent: req.headers['user-agent'],
        },
        'audit',
      );
    };
    app.addHook('onSend', async (req, reply, payload) => {
      line(req, reply.statusCode, 'ResponseComplete', reply.elapsedTime);
      return payload;
    });
    app.addUpgradedHook((req) => line(req, 101, 'ResponseStarted', 0));
  },
  { name: 'kubeling-audit', dependencies: ['kubeling-upgrades'] },
);
