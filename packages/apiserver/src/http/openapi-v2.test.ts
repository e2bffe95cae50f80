/**
 * The OpenAPI v2 document and how `/openapi/v2` serves it: every catalogue kind
 * defined and tagged, references that all resolve (kubectl refuses the whole
 * document otherwise), only shapes kube-openapi's proto parser accepts, PATCH
 * operations listing `fieldValidation`; content negotiation, ETag, 304, gzip,
 * 406, and the legacy paths.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { resources } from '@kubeling/api';
import { buildOpenAPIv2Document } from './openapi-v2.js';
import { ResourceCatalog } from '../apiextensions/catalog.js';
import { openapiRoutes, parseAccept } from './routes/openapi.js';

// The document is walked as plain JSON.
const doc: any = buildOpenAPIv2Document(new ResourceCatalog());

/** Every schema node of the document, with where it is. */
function* schemas(): Generator<[string, any]> {
  function* walk(s: any, at: string): Generator<[string, any]> {
    yield [at, s];
    for (const [k, v] of Object.entries(s.properties ?? {})) yield* walk(v as any, `${at}.${k}`);
    if (s.items) yield* walk(s.items, `${at}[]`);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') yield* walk(s.additionalProperties, `${at}{}`);
  }
  for (const [name, d] of Object.entries(doc.definitions)) yield* walk(d as any, name);
  for (const [p, item] of Object.entries(doc.paths as any))
    for (const [m, op] of Object.entries(item as any)) {
      if (m === 'parameters') continue;
      for (const prm of (op as any).parameters ?? []) if (prm.schema) yield* walk(prm.schema, `${p} ${m} body`);
      for (const [code, r] of Object.entries((op as any).responses)) if ((r as any).schema) yield* walk((r as any).schema, `${p} ${m} ${code}`);
    }
  for (const [name, prm] of Object.entries(doc.parameters as any)) if ((prm as any).schema) yield* walk((prm as any).schema, `parameters ${name}`);
}

test('swagger 2.0 with the Kubernetes info and BearerToken security', () => {
  assert.equal(doc.swagger, '2.0');
  assert.equal(doc.info.title, 'Kubernetes');
  assert.match(doc.info.version, /^v1\.\d+\.\d+$/);
  assert.deepEqual(doc.securityDefinitions, {
    BearerToken: { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' },
  });
  assert.deepEqual(doc.security, [{ BearerToken: [] }]);
});

test('every catalogue kind has its definition, tagged with its group-version-kind, and its list when listable', () => {
  for (const r of resources) {
    const id = (r.schema as any).$id as string;
    const d = doc.definitions[id];
    assert.ok(d, `${r.kind}: no definition ${id}`);
    assert.ok(
      d['x-kubernetes-group-version-kind'].some((g: any) => g.group === r.group && g.version === r.version && g.kind === r.kind),
      `${id}: ${JSON.stringify(d['x-kubernetes-group-version-kind'])}`,
    );
    if (r.verbs.includes('list')) assert.deepEqual(doc.definitions[`${id}List`].properties.items.items, { $ref: `#/definitions/${id}` });
  }
  const pod = doc.definitions['io.k8s.api.core.v1.Pod'];
  assert.deepEqual(Object.keys(pod['x-kubernetes-group-version-kind'][0]), ['group', 'kind', 'version']);
  assert.deepEqual(pod['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Pod', version: 'v1' }]);
  assert.equal(pod.properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  const containers = doc.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers;
  assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
  assert.equal(containers['x-kubernetes-patch-strategy'], 'merge');
  assert.equal(containers['x-kubernetes-list-type'], 'map');
  assert.deepEqual(containers.items, { $ref: '#/definitions/io.k8s.api.core.v1.Container' });
  assert.ok(doc.definitions['io.k8s.api.core.v1.Container'].required.includes('name'));
  assert.deepEqual(doc.definitions['io.k8s.apimachinery.pkg.api.resource.Quantity'].type, 'string');
  assert.deepEqual(Object.keys(pod.properties), Object.keys(pod.properties).sort(), 'properties sorted, as Go writes maps');
});

test('every reference resolves, and every schema is a shape kube-openapi parses', () => {
  const primitives = ['string', 'integer', 'number', 'boolean'];
  for (const [at, s] of schemas()) {
    assert.ok(!('anyOf' in s) && !('oneOf' in s) && !('allOf' in s), `${at}: not swagger 2.0`);
    assert.ok(!Object.keys(s).some((k) => k.startsWith('x-kubeling')), `${at}: internal keys leak`);
    if (s.$ref) {
      assert.ok(s.$ref.startsWith('#/definitions/') && doc.definitions[s.$ref.slice(14)], `${at}: dangling ${s.$ref}`);
      assert.ok(!s.type && !s.properties, `${at}: a reference can have neither type nor properties`);
      continue;
    }
    if (s.type === undefined) continue;
    assert.equal(typeof s.type, 'string', at);
    if (s.type === 'array') assert.ok(s.items && !Array.isArray(s.items), `${at}: an array needs exactly one items schema`);
    else if (s.type !== 'object') assert.ok(primitives.includes(s.type), `${at}: ${s.type}`);
  }
  for (const item of Object.values(doc.paths as any))
    for (const [m, op] of Object.entries(item as any))
      for (const p of m === 'parameters' ? (op as any[]) : ((op as any).parameters ?? []))
        if (p.$ref) assert.ok(doc.parameters[p.$ref.replace('#/parameters/', '')], `dangling ${p.$ref}`);
});

test('paths: operations by verb, with actions, group-version-kinds and the PATCH fieldValidation kubectl looks for', () => {
  const pods = doc.paths['/api/v1/namespaces/{namespace}/pods'];
  assert.equal(pods.get.operationId, 'listCoreV1NamespacedPod');
  assert.equal(pods.get['x-kubernetes-action'], 'list');
  assert.equal(pods.post.operationId, 'createCoreV1NamespacedPod');
  assert.equal(pods.delete.operationId, 'deleteCoreV1CollectionNamespacedPod');
  assert.deepEqual(pods.post['x-kubernetes-group-version-kind'], { group: '', kind: 'Pod', version: 'v1' });
  assert.equal(doc.paths['/api/v1/pods'].get.operationId, 'listCoreV1PodForAllNamespaces');
  const pod = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'];
  assert.deepEqual(Object.keys(pod).sort(), ['delete', 'get', 'parameters', 'patch', 'put']);
  assert.deepEqual(pod.patch.consumes, [
    'application/json-patch+json',
    'application/merge-patch+json',
    'application/strategic-merge-patch+json',
    'application/apply-patch+yaml',
  ]);
  assert.equal(doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].patch['x-kubernetes-group-version-kind'].kind, 'Scale');
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/binding'].post.operationId, 'createCoreV1NamespacedPodBinding');
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'].post['x-kubernetes-action'], 'connect');
  assert.equal(doc.paths['/apis/rbac.authorization.k8s.io/v1/clusterroles'].get.operationId, 'listRbacAuthorizationV1ClusterRole');
  assert.deepEqual(doc.paths['/apis/rbac.authorization.k8s.io/v1/clusterroles'].get.tags, ['rbacAuthorization_v1']);
  // Namespaces have no deletecollection; reviews are only created.
  assert.equal(doc.paths['/api/v1/namespaces'].delete, undefined);
  assert.deepEqual(Object.keys(doc.paths['/apis/authorization.k8s.io/v1/selfsubjectaccessreviews']).sort(), ['parameters', 'post']);
  for (const r of resources.filter((x) => x.verbs.includes('patch'))) {
    const patches = Object.values<any>(doc.paths).filter((item) => item.patch?.['x-kubernetes-group-version-kind']?.kind === r.kind);
    assert.ok(patches.length, `${r.kind}: no PATCH operation`);
    for (const item of patches)
      assert.ok(
        item.patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query'),
        r.kind,
      );
  }
});

async function app() {
  const a = Fastify();
  await a.register(openapiRoutes, { catalog: new ResourceCatalog() });
  return a;
}

const PB = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

test('/openapi/v2 negotiates JSON or protobuf, with one ETag, 304 and gzip', async () => {
  const a = await app();
  try {
    const json = await a.inject({ url: '/openapi/v2', headers: { accept: 'application/json' } });
    assert.equal(json.statusCode, 200);
    assert.equal(json.headers['content-type'], 'application/json');
    assert.equal(json.headers['cache-control'], 'no-cache, private');
    assert.match(String(json.headers.vary), /Accept/);
    assert.equal(JSON.parse(json.body).swagger, '2.0');
    const etag = String(json.headers.etag);
    assert.match(etag, /^"[0-9A-F]{128}"$/);

    const pb = await a.inject({ url: '/openapi/v2', headers: { accept: PB } });
    assert.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    assert.equal(pb.headers.etag, etag);
    assert.equal(pb.rawPayload.subarray(0, 5).toString('latin1'), '\n\x032.0');

    const star = await a.inject({ url: '/openapi/v2', headers: { accept: '*/*' } });
    assert.equal(star.headers['content-type'], 'application/json');
    const preferred = await a.inject({ url: '/openapi/v2', headers: { accept: `application/json;q=0.5, ${PB}` } });
    assert.equal(preferred.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');

    const bad = await a.inject({ url: '/openapi/v2', headers: { accept: 'text/html' } });
    assert.equal(bad.statusCode, 406);

    const cached = await a.inject({ url: '/openapi/v2', headers: { accept: PB, 'if-none-match': etag } });
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.rawPayload.length, 0);

    const gz = await a.inject({ url: '/openapi/v2', headers: { accept: PB, 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gz.rawPayload.length < pb.rawPayload.length / 4, `gzip ${gz.rawPayload.length} of ${pb.rawPayload.length}`);
    assert.deepEqual(gunzipSync(gz.rawPayload), pb.rawPayload);
    const identity = await a.inject({ url: '/openapi/v2', headers: { accept: PB, 'accept-encoding': 'gzip;q=0' } });
    assert.equal(identity.headers['content-encoding'], undefined);
  } finally {
    await a.close();
  }
});

test('the paths older clients try serve the same document', async () => {
  const a = await app();
  try {
    const pb = await a.inject({ url: '/openapi/v2', headers: { accept: PB } });
    // client-go's fallback sends its default Accept to /swagger-2.0.0.pb-v1 and unmarshals protobuf.
    const legacy = await a.inject({ url: '/swagger-2.0.0.pb-v1', headers: { accept: 'application/json, */*' } });
    assert.equal(legacy.statusCode, 200);
    assert.deepEqual(legacy.rawPayload, pb.rawPayload);
    const legacyGz = await a.inject({ url: '/swagger-2.0.0.pb-v1.gz' });
    assert.deepEqual(gunzipSync(legacyGz.rawPayload), pb.rawPayload);
    const json = await a.inject({ url: '/swagger.json' });
    assert.equal(JSON.parse(json.body).info.title, 'Kubernetes');
  } finally {
    await a.close();
  }
});

test('Accept clauses are ordered by q, then specific before wildcard', () => {
  assert.deepEqual(
    parseAccept('*/*;q=0.8, application/*, application/json;q=0.9, text/plain;q=0').map((c) => `${c.type}/${c.subtype}`),
    ['application/*', 'application/json', '*/*'],
  );
  assert.deepEqual(parseAccept(undefined), [{ type: '*', subtype: '*', q: 1 }]);
});
