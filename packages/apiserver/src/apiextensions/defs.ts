/**
 * What a CRD serves: one resource definition per served version, named by
 * the CRD's accepted names, with the schema written for OpenAPI v3 and v2 as
 * the apiextensions-apiserver's OpenAPI builder writes it
 * (pkg/controller/openapi/builder/builder.go, v2/conversion.go): definitions
 * named `<reversed group>.<version>.<Kind>`, metadata a reference to
 * ObjectMeta, apiVersion and kind added, embedded resources given theirs, and
 * for v2 the keywords swagger 2.0 lacks dropped (allOf/anyOf/oneOf/not,
 * nullable types, preserve-unknown-fields objects left open).
 */
import { ObjectMeta, SUBRESOURCE_VERBS, STANDARD_VERBS } from '@kubeling/api';
import type { CrdServing, CustomResourceDef } from './catalog.js';
import type { CustomResourceDefinition, JSONSchemaProps } from './types.js';

type Json = Record<string, unknown>;

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const API_VERSION_DOC =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DOC =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA_DOC = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const EMBEDDED_API_VERSION_DOC =
  'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND_DOC =
  'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** kube-openapi's ToRESTFriendlyName of `group/version/kind`: the group's labels reversed. */
export const definitionName = (group: string, version: string, kind: string) => `${group.split('.').reverse().join('.')}.${version}.${kind}`;

/** ToStructuralOpenAPIV2: what swagger 2.0 and old kubectls cannot read is dropped. */
function toV2(s: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = { ...s };
  delete out.allOf;
  delete out.anyOf;
  delete out.oneOf;
  delete out.not;
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, toV2(v)]));
  if (out.items && !Array.isArray(out.items)) out.items = toV2(out.items);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = toV2(out.additionalProperties);
  if (out.nullable) {
    delete out.type;
    delete out.nullable;
    delete out.items;
    delete out.properties;
  }
  if (out['x-kubernetes-preserve-unknown-fields']) {
    delete out.items;
    delete out.properties;
    if (out.type === 'object') delete out.type;
  }
  if (out.type === 'array' && !out.items) delete out.type;
  if (out.required && out.properties) {
    const req = out.required.filter((f) => !s.properties?.[f]?.nullable);
    if (req.length) out.required = req;
    else delete out.required;
  }
  if (typeof s.additionalProperties === 'object' && s.additionalProperties.nullable) delete out.required;
  return out;
}

/** The schema with refs and the properties the builder adds (addTypeMetaProperties, addEmbeddedProperties). */
function publish(s: JSONSchemaProps, ref: (id: string) => string, v2: boolean, root: boolean): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' || k === 'items' || k === 'additionalProperties' || k === 'allOf' || k === 'anyOf' || k === 'oneOf' || k === 'not') continue;
    out[k] = v;
  }
  const sub = (x: JSONSchemaProps) => publish(x, ref, v2, false);
  if (s.properties) {
    const props: Json = {};
    const names = Object.keys(s.properties);
    for (const k of v2 ? names.sort() : names) props[k] = sub(s.properties[k]!);
    out.properties = props;
  }
  if (s.items && !Array.isArray(s.items)) out.items = sub(s.items);
  if (s.additionalProperties !== undefined)
    out.additionalProperties = typeof s.additionalProperties === 'object' ? sub(s.additionalProperties) : s.additionalProperties;
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (s[k]) out[k] = s[k]!.map(sub);
  if (s.not) out.not = sub(s.not);
  const metaRef = v2 ? { $ref: ref(OBJECT_META), description: METADATA_DOC } : { allOf: [{ $ref: ref(OBJECT_META) }], description: METADATA_DOC };
  if (root) {
    const props = (out.properties ?? {}) as Json;
    out.properties = {
      ...props,
      apiVersion: { description: API_VERSION_DOC, type: 'string' },
      kind: { description: KIND_DOC, type: 'string' },
      metadata: metaRef,
    };
  } else if (s['x-kubernetes-embedded-resource'] && !(v2 && s['x-kubernetes-preserve-unknown-fields'])) {
    const props = (out.properties ?? {}) as Json;
    out.properties = {
      ...props,
      apiVersion: { description: EMBEDDED_API_VERSION_DOC, type: 'string' },
      kind: { description: EMBEDDED_KIND_DOC, type: 'string' },
      metadata: metaRef,
    };
    const req = new Set((out.required as string[] | undefined) ?? []);
    out.required = [...((out.required as string[] | undefined) ?? []), ...['kind', 'apiVersion'].filter((f) => !req.has(f))];
  }
  if (v2 && out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Json).sort(([a], [b]) => (a < b ? -1 : 1)));
  return out;
}

/** The kind's OpenAPI definition in one dialect (buildKubeNative). */
export function openapiDefinition(schema: JSONSchemaProps | undefined, gvk: { group: string; version: string; kind: string }, v2: boolean): Json {
  const ref = (id: string) => (v2 ? `#/definitions/${id}` : `#/components/schemas/${id}`);
  let out: Json;
  if (!schema || (v2 && schema['x-kubernetes-preserve-unknown-fields'])) out = { type: 'object' };
  else out = publish(v2 ? toV2(schema) : schema, ref, v2, true);
  out['x-kubernetes-group-version-kind'] = [gvk];
  return out;
}

/** The definitions a CRD serves now: its served versions, once it is Established, under its accepted names. */
export function servedDefs(crd: CustomResourceDefinition): CustomResourceDef[] {
  const names = crd.status?.acceptedNames;
  if (!names?.plural || !names.kind) return [];
  const spec = crd.spec;
  const storage = spec.versions.find((v) => v.storage)?.name;
  if (!storage) return [];
  const out: CustomResourceDef[] = [];
  for (const v of spec.versions) {
    if (!v.served) continue;
    const schema = v.schema?.openAPIV3Schema;
    const sub = v.subresources ?? {};
    const id = definitionName(spec.group, v.name, names.kind);
    const gvk = { group: spec.group, version: v.name, kind: names.kind };
    const crdServing: CrdServing = {
      name: crd.metadata.name ?? '',
      uid: crd.metadata.uid ?? '',
      listKind: names.listKind ?? `${names.kind}List`,
      storageVersion: storage,
      schema,
      statusSubresource: !!sub.status,
      scale: sub.scale,
      columns: v.additionalPrinterColumns ?? [],
      selectableFields: (v.selectableFields ?? []).map((f) => f.jsonPath),
      deprecationWarning: v.deprecated ? (v.deprecationWarning ?? `${spec.group}/${v.name} ${names.kind} is deprecated`) : undefined,
      spec,
    };
    // For decoding: anything goes (the CRD's schema is applied by the strategy); for field management: the schema's shape.
    const wireSchema = {
      ...(schema ?? { type: 'object' }),
      properties: { ...(schema?.properties ?? {}), metadata: ObjectMeta },
      $id: id,
      'x-kubernetes-preserve-unknown-fields': true,
      'x-kubeling-openapi': { v2: openapiDefinition(schema, gvk, true), v3: openapiDefinition(schema, gvk, false) },
    };
    const subresources: CustomResourceDef['subresources'] = {
      ...(sub.status ? { status: { verbs: SUBRESOURCE_VERBS } } : {}),
      ...(sub.scale ? { scale: { kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: SUBRESOURCE_VERBS } } : {}),
    };
    out.push({
      group: spec.group,
      version: v.name,
      kind: names.kind,
      resource: names.plural,
      listKind: crdServing.listKind,
      singular: names.singular ?? names.kind.toLowerCase(),
      namespaced: spec.scope === 'Namespaced',
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      verbs: STANDARD_VERBS,
      subresources,
      schema: wireSchema as unknown as CustomResourceDef['schema'],
      storage: { group: spec.group, resource: `${spec.group}/${names.plural}` },
      crd: crdServing,
    });
  }
  return out;
}
