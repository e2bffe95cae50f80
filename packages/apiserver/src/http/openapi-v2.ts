/**
 * OpenAPI v2 (swagger 2.0): one document for every served group-version, as
 * kube-apiserver serves at `/openapi/v2` — `definitions` named like
 * `io.k8s.api.core.v1.Pod` (the kind schemas, converted by the same
 * `SchemaBuilder` as OpenAPI v3), kinds and their lists tagged with
 * `x-kubernetes-group-version-kind`, `paths` with every operation
 * (openapi-v2-paths.ts), the shared `parameters`, and the BearerToken security
 * definition (k8s.io/apiserver pkg/server/config.go `completeOpenAPI`: info.version
 * is the server's gitVersion up to its first `-`).
 *
 * The document is built once, on first use, then kept in the forms it is served
 * in: JSON, and the gnostic `openapi_v2.Document` protobuf (openapi-v2-proto.ts)
 * that client-go's `OpenAPISchema()` asks for and kubectl validates and explains
 * with. Both carry the same ETag, the SHA-512 of the JSON, as
 * k8s.io/kube-openapi pkg/handler/handler.go computes it.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import * as api from '@kubeling/api';
import { DeleteOptions, ListMeta, ObjectMeta, Status } from '@kubeling/api';
import type { Catalog } from './discovery.js';
import { VERSION_INFO } from '../version.js';
import { type Json, listDescription, listKind, type Node, SchemaBuilder } from './openapi.js';
import { PathsBuilder } from './openapi-v2-paths.js';
import { encodeDocument } from './openapi-v2-proto.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

type Gvk = { group: string; version: string; kind: string };

/** Every named schema the api package exports, by definition name (`$id`). */
function exportedSchemas(): Map<string, Node> {
  const out = new Map<string, Node>();
  const walk = (v: unknown, depth: number) => {
    if (!v || typeof v !== 'object' || depth > 2) return;
    const id = (v as Node).$id;
    if (typeof id === 'string') {
      if (!out.has(id)) out.set(id, v as Node);
      return;
    }
    for (const x of Object.values(v)) walk(x, depth + 1);
  };
  for (const v of Object.values(api)) walk(v, 0);
  return out;
}

/** The definition name kube-openapi gives a built-in kind: `io.k8s.api.<group's first label or core>.<version>.<Kind>`. */
const definitionName = (g: Gvk) => `io.k8s.api.${g.group ? g.group.split('.')[0] : 'core'}.${g.version}.${g.kind}`;

const sortKeys = <T>(o: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** Builds the OpenAPI v2 document of every resource the catalogue lists now. */
export function buildOpenAPIv2Document(cat: Catalog): Json {
  const b = new SchemaBuilder('v2');
  const named = exportedSchemas();
  const gvks = new Map<string, Gvk[]>();
  const tag = (id: string, g: Gvk) => {
    const list = gvks.get(id) ?? [];
    if (!list.some((x) => x.group === g.group && x.version === g.version && x.kind === g.kind)) list.push(g);
    gvks.set(id, list);
  };
  /** The definition of a kind the catalogue does not serve itself (Scale, Eviction, TokenRequest...), defined on first use. */
  const schemaOf = (g: Gvk): string | undefined => {
    const served = cat.resources().find((r) => r.group === g.group && r.version === g.version && r.kind === g.kind);
    const schema = (served?.schema as unknown as Node | undefined) ?? named.get(definitionName(g));
    if (!schema?.$id) return undefined;
    b.define(schema);
    tag(schema.$id, { group: g.group, kind: g.kind, version: g.version });
    return schema.$id;
  };
  const paths = new PathsBuilder(schemaOf);

  b.define(ObjectMeta as unknown as Node);
  b.define(ListMeta as unknown as Node);
  b.define(Status as unknown as Node);
  b.define(DeleteOptions as unknown as Node);
  tag(`${META}Status`, { group: '', kind: 'Status', version: 'v1' });
  for (const gv of cat.groupVersions()) tag(`${META}DeleteOptions`, { group: gv.group, kind: 'DeleteOptions', version: gv.version });
  b.schemas[`${META}Patch`] = { description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.', type: 'object' };

  for (const r of cat.resources()) {
    const schema = r.schema as unknown as Node;
    const id = schema.$id;
    if (!id) continue;
    b.define(schema);
    tag(id, { group: r.group, kind: r.kind, version: r.version });
    if (r.verbs.includes('list')) {
      b.schemas[`${id}List`] = {
        description: listDescription(r),
        properties: {
          apiVersion: { description: 'APIVersion defines the versioned schema of this representation of an object.', type: 'string' },
          items: { description: `List of ${r.resource}.`, items: { $ref: b.ref(id) }, type: 'array' },
          kind: { description: 'Kind is a string value representing the REST resource this object represents.', type: 'string' },
          metadata: { $ref: b.ref(`${META}ListMeta`), description: 'Standard list metadata.' },
        },
        required: ['items'],
        type: 'object',
      };
      tag(`${id}List`, { group: r.group, kind: listKind(r), version: r.version });
    }
    paths.add(r, id);
  }
  for (const [id, list] of gvks) {
    const d = b.schemas[id];
    if (d) d['x-kubernetes-group-version-kind'] = list;
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: VERSION_INFO.gitVersion.split('-')[0] },
    paths: sortKeys(paths.paths),
    definitions: sortKeys(b.schemas),
    parameters: sortKeys(paths.parameters),
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' } },
    security: [{ BearerToken: [] }],
  };
}

/** One served form of the document. */
export interface Representation {
  body: Buffer;
  /** The gzip-compressed body, made on first demand. */
  gzipped(): Buffer;
  etag: string;
  lastModified: Date;
}

export interface OpenAPIv2 {
  json: Representation;
  protobuf: Representation;
}

function representation(body: Buffer, etag: string, lastModified: Date): Representation {
  let gz: Buffer | undefined;
  return { body, etag, lastModified, gzipped: () => (gz ??= gzipSync(body)) };
}

/** Builds the document and both of its encodings (called once, lazily, by the route). */
export function buildOpenAPIv2(cat: Catalog): OpenAPIv2 {
  const doc = buildOpenAPIv2Document(cat);
  const json = Buffer.from(JSON.stringify(doc));
  const etag = `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"`;
  // http.ServeContent compares Last-Modified at one-second precision.
  const lastModified = new Date(Math.floor(Date.now() / 1000) * 1000);
  return { json: representation(json, etag, lastModified), protobuf: representation(encodeDocument(doc), etag, lastModified) };
}
