/**
 * Discovery above the group-versions: /api (legacy APIVersions), /apis
 * (APIGroupList) and /apis/<group> (APIGroup), and the aggregated forms of the
 * first two when Accept asks for them. Each group-version's APIResourceList is
 * served by its own routes (group-version.ts).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { notFoundPath } from '@kubeling/apimachinery';
import {
  aggregatedDiscovery,
  aggregatedVersionWanted,
  AGGREGATED_V2,
  AGGREGATED_V2BETA1,
  apiGroup,
  apiGroupList,
  apiVersions,
  type Catalog,
} from '../discovery.js';

export const discoveryRoutes: FastifyPluginAsync<{ advertiseAddress: string; catalog: Catalog }> = async (app, { advertiseAddress, catalog }) => {
  app.get('/api', async (req, reply) => {
    const v = aggregatedVersionWanted(req.headers.accept);
    if (v) return sendAggregated(reply, v, aggregatedDiscovery(catalog, 'core', v));
    return apiVersions(advertiseAddress);
  });
  app.get('/apis', async (req, reply) => {
    const v = aggregatedVersionWanted(req.headers.accept);
    if (v) return sendAggregated(reply, v, aggregatedDiscovery(catalog, 'groups', v));
    return apiGroupList(catalog);
  });
  app.get('/apis/:group', async (req) => {
    const g = apiGroup(catalog, (req.params as { group: string }).group);
    if (!g) throw notFoundPath();
    return g;
  });
};

/**
 * Aggregated discovery must go out with its media-type parameters exactly as
 * written (kubectl switches decoders on them), so it bypasses fastify's
 * content-type normalisation.
 */
function sendAggregated(reply: FastifyReply, v: 'v2' | 'v2beta1', body: unknown): FastifyReply {
  const payload = JSON.stringify(body);
  reply.hijack();
  reply.raw.writeHead(200, {
    'Content-Type': v === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1,
    'Content-Length': Buffer.byteLength(payload),
    Vary: 'Accept',
  });
  reply.raw.end(payload);
  return reply;
}
