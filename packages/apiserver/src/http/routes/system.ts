/**
 * The endpoints besides the API: /healthz, /livez and /readyz (readiness
 * asks etcd; anonymous users may read all three), /version and /metrics.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { EtcdStorage } from '../../storage/etcd.js';
import type { ApiMetrics } from '../../metrics.js';
import { VERSION_INFO } from '../../version.js';

export const systemRoutes: FastifyPluginAsync<{ storage: EtcdStorage; metrics: ApiMetrics }> = async (app, { storage, metrics }) => {
  const healthz = async (_req: FastifyRequest, reply: FastifyReply) => {
    reply.type('text/plain; charset=utf-8');
    return 'ok';
  };
  app.get('/healthz', healthz);
  app.get('/livez', healthz);
  app.get('/readyz', async (req, reply) => {
    try {
      await storage.currentRevision();
    } catch {
      reply.code(500).type('text/plain; charset=utf-8');
      return '[-]etcd failed: reason withheld\nreadyz check failed';
    }
    reply.type('text/plain; charset=utf-8');
    return (req.query as Record<string, string>).verbose !== undefined ? '[+]ping ok\n[+]etcd ok\nreadyz check passed' : 'ok';
  });
  app.get('/version', async () => VERSION_INFO);
  app.get('/metrics', async (_req, reply) => {
    reply.type(metrics.contentType);
    return metrics.render();
  });
};
