/**
 * OpenAPI v3: the index and one document per group-version, built on first
 * use; a request with the document's hash may cache it for good. The protobuf
 * OpenAPI v2 kubectl probes is 404, which makes it use what it knows.
 */
import type { FastifyPluginAsync } from 'fastify';
import { notFoundPath } from '@kubeling/apimachinery';
import { buildOpenAPIv3 } from '../openapi.js';

export const openapiRoutes: FastifyPluginAsync = async (app) => {
  let openapi: ReturnType<typeof buildOpenAPIv3> | undefined;
  const docs = () => (openapi ??= buildOpenAPIv3());
  app.get('/openapi/v3', async () => docs().index);
  app.get('/openapi/v3/*', async (req, reply) => {
    const key = (req.params as { '*': string })['*'].replace(/\/$/, '');
    const doc = docs().documents.get(key);
    if (!doc) throw notFoundPath();
    const hash = (req.query as { hash?: string }).hash;
    reply.header('Cache-Control', hash === doc.hash ? 'public, immutable' : 'no-cache, private').header('Etag', `"${doc.hash}"`);
    reply.type('application/json');
    return doc.body;
  });
  app.get('/openapi/v2', async () => {
    throw notFoundPath();
  });
};
