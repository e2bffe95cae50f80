/**
 * OpenAPI v3, generated from the kind schemas: an index (`/openapi/v3`) whose
 * URLs carry a hash of each document, and one document per group-version with
 * every kind's schema under `components.schemas` (named definitions become `$ref`s)
 * and its operations, the PATCH one listing `fieldValidation` — which is what
 * tells kubectl to validate on the server — and `x-kubernetes-group-version-kind`.
 *
 * The schema conversion (`SchemaBuilder`) is shared with OpenAPI v2 (openapi-v2.ts):
 * the same kind schemas, written in either dialect.
 */
import { createHash } from 'node:crypto';
import { apiVersionOf, autoscalingv1, ObjectMeta, ListMeta, listKindOf, type ResourceDef } from '@kubeling/api';
import type { Catalog } from './discovery.js';
import { VERSION_INFO } from '../version.js';

export type Json = Record<string, unknown>;
export type Node = Json & {
  $id?: string;
  type?: string;
  properties?: Record<string, Node>;
  patternProperties?: Record<string, Node>;
  items?: Node;
  anyOf?: Node[];
  required?: string[];
  description?: string;
};

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY_DOC = 'Quantity is a fixed-point representation of a number, such as 100m or 1Gi.';

const ref = (id: string) => `#/components/schemas/${id}`;

/** Copies the `x-kubernetes-*` keys (patch strategy, list type...) of a schema node. */
function extensions(n: Node): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(n)) if (k.startsWith('x-kubernetes-')) out[k] = v;
  return out;
}

/**
 * Converts kind schemas to OpenAPI schemas, registering each named definition once.
 * `v3` writes `components.schemas` (a described reference is `allOf: [$ref]`, as
 * kube-openapi's v3 builder does); `v2` writes swagger 2.0 `definitions`, where a
 * reference carries its description beside `$ref`, Quantity and IntOrString are
 * `string` definitions (k8s.io/kube-openapi pkg/builder, the api/openapi-spec/swagger.json
 * shape) and properties are sorted by name, as Go's JSON encoding of the spec's maps does.
 */
export class SchemaBuilder {
  readonly schemas: Record<string, Json> = {};
  constructor(readonly dialect: 'v2' | 'v3' = 'v3') {}

  ref(id: string): string {
    return this.dialect === 'v2' ? `#/definitions/${id}` : ref(id);
  }

  /** The OpenAPI form of a schema node, registering named definitions. */
  convert(n: Node, isRoot = false): Json {
    const own = n['x-kubeling-field-description'] as string | undefined;
    const v2 = this.dialect === 'v2';
    if (n.$id && !isRoot) {
      this.define(n);
      const description = own;
      if (v2) return description ? { $ref: this.ref(n.$id), description } : { $ref: this.ref(n.$id) };
      return description ? { allOf: [{ $ref: ref(n.$id) }], description, default: {} } : { $ref: ref(n.$id) };
    }
    const desc = own ?? n.description;
    const base: Json = desc ? { description: desc } : {};
    if (n['x-kubeling-quantity']) {
      if (v2) {
        this.schemas[QUANTITY] ??= { description: QUANTITY_DOC, type: 'string' };
        return { $ref: this.ref(QUANTITY), ...base };
      }
      this.schemas[QUANTITY] ??= { description: QUANTITY_DOC, oneOf: [{ type: 'string' }, { type: 'number' }] };
      return { ...base, allOf: [{ $ref: ref(QUANTITY) }] };
    }
    if (n['x-kubernetes-int-or-string']) {
      if (v2) {
        this.schemas[INT_OR_STRING] ??= {
          description: 'IntOrString is a type that can hold an int32 or a string.',
          format: 'int-or-string',
          type: 'string',
        };
        return { $ref: this.ref(INT_OR_STRING), ...base };
      }
      return { ...base, 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
    }
    if (n['x-kubernetes-preserve-unknown-fields']) return { ...base, type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    switch (n.type) {
      case 'object': {
        if (n.properties) {
          const props: Json = {};
          const names = Object.keys(n.properties);
          for (const k of v2 ? names.sort() : names) props[k] = this.convert(n.properties[k]!);
          return { ...base, type: 'object', properties: props, ...(n.required?.length ? { required: [...n.required] } : {}), ...extensions(n) };
        }
        const value = n.patternProperties ? Object.values(n.patternProperties)[0] : undefined;
        return { ...base, type: 'object', additionalProperties: value ? this.convert(value) : {}, ...extensions(n) };
      }
      case 'array':
        return { ...base, type: 'array', items: n.items ? this.convert(n.items) : {}, ...extensions(n) };
      case 'string':
      case 'integer':
      case 'number':
      case 'boolean': {
        const out: Json = { ...base, type: n.type };
        if (n.format) out.format = n.format;
        if (n.enum) out.enum = n.enum;
        return out;
      }
      default:
        return base;
    }
  }

  define(n: Node, gvk?: { group: string; version: string; kind: string }): void {
    const id = n.$id!;
    if (this.schemas[id] && !gvk) return;
    // A custom resource's schema comes already written in both dialects (apiextensions/openapi.ts).
    const written = n['x-kubeling-openapi'] as { v2: Json; v3: Json } | undefined;
    if (written) {
      this.schemas[id] = structuredClone(this.dialect === 'v2' ? written.v2 : written.v3);
      return;
    }
    this.schemas[id] = {}; // placeholder against cycles
    const converted = this.convert(n, true);
    if (gvk) converted['x-kubernetes-group-version-kind'] = [gvk];
    this.schemas[id] = converted;
  }
}

/** Query parameters of the write operations (their descriptions serve OpenAPI v2 too). */
export const COMMON_PARAMS = {
  pretty: { name: 'pretty', in: 'query', description: "If 'true', then the output is pretty printed.", schema: { type: 'string' } },
  dryRun: { name: 'dryRun', in: 'query', description: 'When present, indicates that modifications should not be persisted.', schema: { type: 'string' } },
  fieldManager: {
    name: 'fieldManager',
    in: 'query',
    description: 'fieldManager is a name associated with the actor or entity that is making these changes.',
    schema: { type: 'string' },
  },
  fieldValidation: {
    name: 'fieldValidation',
    in: 'query',
    description: 'fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict.',
    schema: { type: 'string' },
  },
  force: { name: 'force', in: 'query', description: 'Force is going to "force" Apply requests.', schema: { type: 'boolean' } },
};

const LIST_PARAMS = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
].map((name) => ({
  name,
  in: 'query',
  schema: {
    type: ['limit', 'timeoutSeconds'].includes(name) ? 'integer' : ['allowWatchBookmarks', 'watch', 'sendInitialEvents'].includes(name) ? 'boolean' : 'string',
  },
}));

function opId(verb: string, r: ResourceDef, suffix = ''): string {
  const gv = (r.group.split('.')[0] ?? '').replace(/^(.)/, (c) => c.toUpperCase()) + r.version.replace(/^(.)/, (c) => c.toUpperCase());
  const g = r.group ? gv : `Core${r.version.replace(/^(.)/, (c) => c.toUpperCase())}`;
  return `${verb}${g}${r.namespaced ? 'Namespaced' : ''}${r.kind}${suffix}`;
}

function operations(r: ResourceDef, schemaId: string, listId: string): Record<string, Json> {
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced ? '/namespaces/{namespace}' : '';
  const coll = `${prefix}${ns}/${r.resource}`;
  const item = `${coll}/{name}`;
  const pathParams = [
    ...(r.namespaced
      ? [
          {
            name: 'namespace',
            in: 'path',
            required: true,
            description: 'object name and auth scope, such as for teams and projects',
            schema: { type: 'string', uniqueItems: true },
          },
        ]
      : []),
  ];
  const nameParam = { name: 'name', in: 'path', required: true, description: `name of the ${r.kind}`, schema: { type: 'string', uniqueItems: true } };
  const ok = (id: string) => ({
    description: 'OK',
    content: { 'application/json': { schema: { $ref: ref(id) } }, 'application/yaml': { schema: { $ref: ref(id) } } },
  });
  const body = (types: string[]) => ({ content: Object.fromEntries(types.map((t) => [t, { schema: { $ref: ref(schemaId) } }])), required: true });
  const ext = (action: string) => ({ 'x-kubernetes-action': action, 'x-kubernetes-group-version-kind': gvk });
  const out: Record<string, Json> = {};
  if (r.virtual) {
    out[coll] = {
      parameters: pathParams,
      post: {
        operationId: opId('create', r),
        parameters: [COMMON_PARAMS.dryRun, COMMON_PARAMS.fieldManager, COMMON_PARAMS.fieldValidation],
        requestBody: body(['*/*']),
        responses: { '201': ok(schemaId) },
        ...ext('post'),
      },
    };
    return out;
  }
  out[coll] = {
    parameters: [...pathParams, COMMON_PARAMS.pretty],
    get: { operationId: opId('list', r), parameters: LIST_PARAMS, responses: { '200': ok(listId) }, ...ext('list') },
    post: {
      operationId: opId('create', r),
      parameters: [COMMON_PARAMS.dryRun, COMMON_PARAMS.fieldManager, COMMON_PARAMS.fieldValidation],
      requestBody: body(['*/*']),
      responses: { '200': ok(schemaId), '201': ok(schemaId), '202': ok(schemaId) },
      ...ext('post'),
    },
    ...(r.verbs.includes('deletecollection')
      ? {
          delete: {
            operationId: opId('deletecollection', r, ''),
            parameters: LIST_PARAMS,
            responses: { '200': { description: 'OK' } },
            ...ext('deletecollection'),
          },
        }
      : {}),
  };
  out[item] = {
    parameters: [nameParam, ...pathParams, COMMON_PARAMS.pretty],
    get: { operationId: opId('read', r), responses: { '200': ok(schemaId) }, ...ext('get') },
    put: {
      operationId: opId('replace', r),
      parameters: [COMMON_PARAMS.dryRun, COMMON_PARAMS.fieldManager, COMMON_PARAMS.fieldValidation],
      requestBody: body(['*/*']),
      responses: { '200': ok(schemaId), '201': ok(schemaId) },
      ...ext('put'),
    },
    patch: {
      operationId: opId('patch', r),
      parameters: [COMMON_PARAMS.dryRun, COMMON_PARAMS.fieldManager, COMMON_PARAMS.fieldValidation, COMMON_PARAMS.force],
      requestBody: {
        content: Object.fromEntries(
          ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'].map((t) => [
            t,
            { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } },
          ]),
        ),
        required: true,
      },
      responses: { '200': ok(schemaId), '201': ok(schemaId) },
      ...ext('patch'),
    },
    delete: {
      operationId: opId('delete', r),
      parameters: [
        COMMON_PARAMS.dryRun,
        { name: 'gracePeriodSeconds', in: 'query', schema: { type: 'integer' } },
        { name: 'propagationPolicy', in: 'query', schema: { type: 'string' } },
      ],
      responses: { '200': { description: 'OK' }, '202': { description: 'Accepted' } },
      ...ext('delete'),
    },
  };
  for (const [sub, s] of Object.entries(r.subresources)) {
    if (sub !== 'status' && sub !== 'scale') continue;
    const subId = s.kind && s.kind.kind !== r.kind ? 'io.k8s.api.autoscaling.v1.Scale' : schemaId;
    const subGvk = s.kind ?? gvk;
    out[`${item}/${sub}`] = {
      parameters: [nameParam, ...pathParams, COMMON_PARAMS.pretty],
      get: {
        operationId: opId('read', r, sub[0]!.toUpperCase() + sub.slice(1)),
        responses: { '200': ok(subId) },
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': subGvk,
      },
      put: {
        operationId: opId('replace', r, sub[0]!.toUpperCase() + sub.slice(1)),
        parameters: [COMMON_PARAMS.dryRun, COMMON_PARAMS.fieldManager, COMMON_PARAMS.fieldValidation],
        responses: { '200': ok(subId) },
        'x-kubernetes-action': 'put',
        'x-kubernetes-group-version-kind': subGvk,
      },
      patch: {
        operationId: opId('patch', r, sub[0]!.toUpperCase() + sub.slice(1)),
        parameters: [COMMON_PARAMS.dryRun, COMMON_PARAMS.fieldManager, COMMON_PARAMS.fieldValidation, COMMON_PARAMS.force],
        responses: { '200': ok(subId) },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': subGvk,
      },
    };
  }
  return out;
}

function buildDocument(cat: Catalog, group: string, version: string, scaleSchema: Node | undefined): Json {
  const b = new SchemaBuilder();
  const paths: Record<string, Json> = {};
  b.define(ObjectMeta as unknown as Node);
  b.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Patch'] = {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  };
  for (const r of cat.resources().filter((x) => x.group === group && x.version === version)) {
    const schema = r.schema as unknown as Node;
    const id = schema.$id!;
    b.define(schema, { group: r.group, version: r.version, kind: r.kind });
    const listId = `${id}List`;
    if (!r.virtual) {
      b.schemas[listId] = {
        description: listDescription(r),
        type: 'object',
        required: ['items'],
        properties: {
          apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
          items: { type: 'array', description: `List of ${r.resource}.`, items: { $ref: ref(id) } },
          kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
          metadata: { allOf: [{ $ref: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta') }], default: {}, description: 'Standard list metadata.' },
        },
        'x-kubernetes-group-version-kind': [{ group: r.group, version: r.version, kind: listKind(r) }],
      };
      b.define(ListMeta as unknown as Node);
    }
    if (r.subresources.scale && scaleSchema) b.define(scaleSchema, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
    Object.assign(paths, operations(r, id, listId));
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: VERSION_INFO.gitVersion },
    paths,
    components: { schemas: b.schemas },
  };
}

export interface OpenAPIv3 {
  index: { paths: Record<string, { serverRelativeURL: string }> };
  documents: Map<string, { body: string; hash: string }>;
}

/** A kind's list kind: `<Kind>List`, or what a CRD names. */
export const listKind = listKindOf;

/** A list kind's description (a CRD's as the apiextensions-apiserver's OpenAPI builder writes it). */
export const listDescription = (r: ResourceDef): string =>
  r.listKind ? `${r.listKind} is a list of ${r.kind}` : `${r.kind}List is a list of ${r.kind} objects.`;

/** Builds every document of what the catalogue serves now. */
export function buildOpenAPIv3(cat: Catalog): OpenAPIv3 {
  const scaleSchema = autoscalingv1.Scale as unknown as Node;
  const documents = new Map<string, { body: string; hash: string }>();
  const index: OpenAPIv3['index'] = { paths: {} };
  for (const gv of cat.groupVersions()) {
    const key = gv.group ? `apis/${apiVersionOf(gv.group, gv.version)}` : `api/${gv.version}`;
    const body = JSON.stringify(buildDocument(cat, gv.group, gv.version, scaleSchema));
    const hash = createHash('sha512').update(body).digest('hex').toUpperCase();
    documents.set(key, { body, hash });
    index.paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
  }
  return { index, documents };
}
