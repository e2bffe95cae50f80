/**
 * OpenAPI: v3 (the index and one document per group-version) and v2 (one
 * document for everything), each built on first use.
 *
 * `/openapi/v2` negotiates on Accept as k8s.io/kube-openapi pkg/handler/handler.go
 * does: the clauses in preference order, the first that matches JSON or the
 * protobuf media type (old and new spelling) wins, nothing matching is a bare
 * 406; `Vary: Accept`; the ETag is the SHA-512 of the JSON; conditional requests
 * answer 304 (http.ServeContent); bodies of 1400 bytes or more are gzipped when the
 * client accepts it (NYTimes/gziphandler's default). kube-apiserver's default
 * `Cache-Control: no-cache, private` applies. The paths clients before 1.10 used
 * (`/swagger-2.0.0.pb-v1`, which kubectl still falls back to on a 404, and
 * `/swagger.json`) serve the same document without negotiation.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { notFoundPath } from '@kubeling/apimachinery';
import { buildOpenAPIv3 } from '../openapi.js';
import type { ResourceCatalog } from '../../apiextensions/catalog.js';
import { buildOpenAPIv2, type OpenAPIv2, type Representation } from '../openapi-v2.js';

const PROTOBUF = 'com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PROTOBUF_DEPRECATED = 'com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** The media type the 1.8/1.9 apiservers gave `.pb-v1` files. */
const LEGACY_PROTOBUF = 'application/com.github.googleapis.gnostic.OpenAPIv2@68f4ded+protobuf';
const GZIP_MIN_SIZE = 1400;

interface Clause {
  type: string;
  subtype: string;
  q: number;
}

/** Accept clauses, most preferred first: by q, then specific before wildcard (github.com/munnerz/goautoneg ParseAccept). */
export function parseAccept(header: string | undefined): Clause[] {
  const clauses: Clause[] = [];
  for (const part of (header || '*/*').split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim());
    const slash = range.indexOf('/');
    const type = slash < 0 ? range : range.slice(0, slash);
    const subtype = slash < 0 ? '*' : range.slice(slash + 1);
    if (!type) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!(q > 0)) continue;
    clauses.push({ type, subtype, q });
  }
  const wild = (c: Clause) => (c.type === '*' ? 2 : c.subtype === '*' ? 1 : 0);
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.q - a.c.q || wild(a.c) - wild(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

/** The served form for an Accept header, with its Content-Type; undefined when none is acceptable (406). */
export function negotiateV2(accept: string | undefined, doc: OpenAPIv2): { rep: Representation; contentType: string } | undefined {
  const offered: [string, Representation, string][] = [
    ['json', doc.json, 'application/json'],
    [PROTOBUF_DEPRECATED, doc.protobuf, `application/${PROTOBUF}`],
    [PROTOBUF, doc.protobuf, `application/${PROTOBUF}`],
  ];
  for (const c of parseAccept(accept)) {
    if (c.type !== 'application' && c.type !== '*') continue;
    const hit = offered.find(([subtype]) => c.subtype === subtype || c.subtype === '*');
    if (hit) return { rep: hit[1], contentType: hit[2] };
  }
  return undefined;
}

const acceptsGzip = (header: string | string[] | undefined) =>
  String(header ?? '')
    .split(',')
    .some((e) => {
      const [coding = '', ...params] = e.split(';').map((s) => s.trim().toLowerCase());
      return (coding === 'gzip' || coding === '*') && !params.some((p) => /^q=0(\.0*)?$/.test(p));
    });

/** Writes one representation: validators, 304 on a matching If-None-Match / If-Modified-Since, gzip when accepted. */
function serve(req: FastifyRequest, reply: FastifyReply, rep: Representation, contentType: string, compress = true): Buffer | string {
  reply.header('Cache-Control', 'no-cache, private').header('Etag', rep.etag).header('Last-Modified', rep.lastModified.toUTCString());
  const inm = req.headers['if-none-match'];
  const ims = req.headers['if-modified-since'];
  const notModified =
    inm !== undefined
      ? inm.split(',').some((t) => [rep.etag, '*'].includes(t.trim().replace(/^W\//, '')))
      : !!ims && Date.parse(ims) >= rep.lastModified.getTime();
  if (notModified) {
    reply.code(304);
    return '';
  }
  reply.type(contentType);
  if (!compress) return rep.body;
  const vary = reply.getHeader('Vary');
  reply.header('Vary', vary ? `${vary}, Accept-Encoding` : 'Accept-Encoding');
  if (rep.body.length < GZIP_MIN_SIZE || !acceptsGzip(req.headers['accept-encoding'])) return rep.body;
  reply.header('Content-Encoding', 'gzip');
  return rep.gzipped();
}

export const openapiRoutes: FastifyPluginAsync<{ catalog: ResourceCatalog }> = async (app, { catalog }) => {
  // Built on first use after each change of what is served (a CRD created, changed or gone).
  let openapi: { gen: number; doc: ReturnType<typeof buildOpenAPIv3> } | undefined;
  const docs = () => {
    if (openapi?.gen !== catalog.generation) openapi = { gen: catalog.generation, doc: buildOpenAPIv3(catalog) };
    return openapi.doc;
  };
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

  let v2: { gen: number; doc: OpenAPIv2 } | undefined;
  const v2docs = () => {
    if (v2?.gen !== catalog.generation) v2 = { gen: catalog.generation, doc: buildOpenAPIv2(catalog) };
    return v2.doc;
  };
  app.get('/openapi/v2', async (req, reply) => {
    reply.header('Vary', 'Accept');
    const chosen = negotiateV2(req.headers.accept, v2docs());
    if (!chosen) {
      reply.code(406);
      return '';
    }
    return serve(req, reply, chosen.rep, chosen.contentType);
  });
  for (const path of ['/swagger.json', '/swagger-2.0.0.json']) app.get(path, async (req, reply) => serve(req, reply, v2docs().json, 'application/json'));
  app.get('/swagger-2.0.0.pb-v1', async (req, reply) => serve(req, reply, v2docs().protobuf, LEGACY_PROTOBUF));
  app.get('/swagger-2.0.0.pb-v1.gz', async (req, reply) => {
    const rep = v2docs().protobuf;
    return serve(req, reply, { ...rep, body: rep.gzipped(), etag: rep.etag.replace(/"$/, '-gzip"') }, 'application/x-gzip', false);
  });
};
