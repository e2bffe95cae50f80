/**
 * CustomResourceDefinitions against a real etcd and apiserver: a CRD becomes
 * Established and its resources appear in discovery and OpenAPI without a
 * restart; custom resources are pruned, defaulted and validated by the
 * schema (422 with upstream's causes); status and scale subresources;
 * printer columns in Tables; field selectors on selectableFields; strategic
 * merge patch 415; name conflicts; deleting the CRD deletes its resources.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

const crd = (plural: string, group: string, extra: { versions?: object[]; scope?: string; names?: object } = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: extra.scope ?? 'Namespaced',
    names: {
      plural,
      singular: plural.replace(/s$/, ''),
      kind: plural[0]!.toUpperCase() + plural.slice(1, -1),
      shortNames: [plural.slice(0, 2)],
      ...(extra.names ?? {}),
    },
    versions: extra.versions ?? [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
                  image: { type: 'string', pattern: '^[a-z]+$' },
                  mode: { type: 'string', enum: ['a', 'b'] },
                },
                required: ['image'],
              },
              status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
            },
          },
        },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
        },
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
        ],
        selectableFields: [{ jsonPath: '.spec.image' }],
      },
    ],
  },
});

async function established(name: string) {
  for (let i = 0; i < 100; i++) {
    const r = await request(env.url, 'GET', `${CRDS}/${name}`);
    const conds: { type: string; status: string }[] = r.body.status?.conditions ?? [];
    if (conds.some((c) => c.type === 'Established' && c.status === 'True')) return r.body;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`${name} never became Established`);
}

async function until<T>(what: string, fn: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('a CRD is Established, served, discovered and published in OpenAPI', async () => {
  const c = await request(env.url, 'POST', CRDS, crd('widgets', 'example.com'));
  assert.equal(c.status, 201, c.text);
  assert.deepEqual(c.body.status.storedVersions, ['v1']);
  const got = await established('widgets.example.com');
  const names = Object.fromEntries(got.status.conditions.map((x: { type: string; status: string; reason: string }) => [x.type, `${x.status}/${x.reason}`]));
  assert.equal(names.NamesAccepted, 'True/NoConflicts');
  assert.equal(names.Established, 'True/InitialNamesAccepted');
  assert.equal(got.status.acceptedNames.kind, 'Widget');
  assert.equal(got.status.acceptedNames.listKind, 'WidgetList');

  const rl = await until('discovery', async () => {
    const r = await request(env.url, 'GET', '/apis/example.com/v1');
    return r.status === 200 ? r.body : undefined;
  });
  const res = rl.resources.map((x: { name: string }) => x.name).sort();
  assert.deepEqual(res, ['widgets', 'widgets/scale', 'widgets/status']);
  const groups = await request(env.url, 'GET', '/apis');
  assert.ok(groups.body.groups.some((g: { name: string }) => g.name === 'example.com'));
  const agg = await request(env.url, 'GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
  const g = agg.body.items.find((x: { metadata: { name: string } }) => x.metadata.name === 'example.com');
  assert.equal(g.versions[0].resources[0].resource, 'widgets');
  assert.deepEqual(g.versions[0].resources[0].shortNames, ['wi']);

  const v2 = await request(env.url, 'GET', '/openapi/v2', undefined, { accept: 'application/json' });
  const d = v2.body.definitions['com.example.v1.Widget'];
  assert.ok(d, 'definition published');
  assert.deepEqual(d['x-kubernetes-group-version-kind'], [{ group: 'example.com', version: 'v1', kind: 'Widget' }]);
  assert.equal(d.properties.spec.properties.image.pattern, '^[a-z]+$');
  assert.equal(d.properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.ok(v2.body.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}']);
  const v3 = await request(env.url, 'GET', '/openapi/v3/apis/example.com/v1');
  assert.equal(v3.status, 200);
  assert.ok(v3.body.components.schemas['com.example.v1.Widget']);
});

test('custom resources: pruning, defaulting, validation, selectors, Table, SMP 415', async () => {
  await request(env.url, 'POST', CRDS, crd('gadgets', 'example.com'));
  await established('gadgets.example.com');
  const base = '/apis/example.com/v1/namespaces/default/gadgets';
  await until('served', async () => ((await request(env.url, 'GET', base)).status === 200 ? true : undefined));

  const c = await request(env.url, 'POST', base, {
    apiVersion: 'example.com/v1',
    kind: 'Gadget',
    metadata: { name: 'g1' },
    spec: { image: 'nginx', extra: 1 },
    junk: true,
  });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.spec.replicas, 1, 'defaulted');
  assert.equal(c.body.spec.extra, undefined, 'pruned');
  assert.equal(c.body.junk, undefined, 'pruned at the root');
  assert.equal(c.body.metadata.generation, 1);

  const strict = await request(env.url, 'POST', `${base}?fieldValidation=Strict`, {
    apiVersion: 'example.com/v1',
    kind: 'Gadget',
    metadata: { name: 'g2' },
    spec: { image: 'x', extra: 1 },
  });
  assert.equal(strict.status, 400, strict.text);
  assert.match(strict.body.message, /unknown field "spec.extra"/);

  const bad = await request(env.url, 'POST', base, {
    apiVersion: 'example.com/v1',
    kind: 'Gadget',
    metadata: { name: 'g3' },
    spec: { replicas: 11, image: 'UP', mode: 'c' },
  });
  assert.equal(bad.status, 422, bad.text);
  assert.equal(bad.body.details.kind, 'Gadget');
  assert.equal(bad.body.details.group, 'example.com');
  const fields = bad.body.details.causes.map((x: { field: string }) => x.field).sort();
  assert.deepEqual(fields, ['spec.image', 'spec.mode', 'spec.replicas']);
  const missing = await request(env.url, 'POST', base, { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g4' }, spec: {} });
  assert.equal(missing.status, 422);
  assert.match(missing.body.message, /spec.image: Required value/);

  await request(env.url, 'POST', base, { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g5' }, spec: { image: 'redis' } });
  const sel = await request(env.url, 'GET', `${base}?fieldSelector=spec.image%3Dredis`);
  assert.equal(sel.status, 200, sel.text);
  assert.deepEqual(
    sel.body.items.map((x: { metadata: { name: string } }) => x.metadata.name),
    ['g5'],
  );
  assert.equal(sel.body.kind, 'GadgetList');

  const t = await request(env.url, 'GET', base, undefined, { accept: TABLE });
  assert.deepEqual(
    t.body.columnDefinitions.map((x: { name: string }) => x.name),
    ['Name', 'Replicas', 'Image'],
  );
  assert.deepEqual(t.body.rows[0].cells, ['g1', 1, 'nginx']);

  const smp = await request(env.url, 'PATCH', `${base}/g1`, { spec: { replicas: 2 } }, { contentType: 'application/strategic-merge-patch+json' });
  assert.equal(smp.status, 415, smp.text);
  const mp = await request(env.url, 'PATCH', `${base}/g1`, { spec: { replicas: 2 } }, { contentType: 'application/merge-patch+json' });
  assert.equal(mp.status, 200, mp.text);
  assert.equal(mp.body.metadata.generation, 2);
  const pb = await request(env.url, 'POST', base, Buffer.from('k8s\0'), { contentType: 'application/vnd.kubernetes.protobuf' });
  assert.equal(pb.status, 415);
});

test('status and scale subresources of a custom resource', async () => {
  await request(env.url, 'POST', CRDS, crd('gizmos', 'example.com'));
  await established('gizmos.example.com');
  const base = '/apis/example.com/v1/namespaces/default/gizmos';
  await until('served', async () => ((await request(env.url, 'GET', base)).status === 200 ? true : undefined));
  const c = await request(env.url, 'POST', base, {
    apiVersion: 'example.com/v1',
    kind: 'Gizmo',
    metadata: { name: 'z' },
    spec: { image: 'a', replicas: 3 },
    status: { replicas: 9 },
  });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.status, undefined, 'status is not taken on create');
  const st = await request(
    env.url,
    'PATCH',
    `${base}/z/status`,
    { status: { replicas: 2, selector: 'app=z' }, spec: { replicas: 7 } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(st.status, 200, st.text);
  assert.equal(st.body.status.replicas, 2);
  assert.equal(st.body.spec.replicas, 3, 'spec is not taken through status');
  const sc = await request(env.url, 'GET', `${base}/z/scale`);
  assert.deepEqual([sc.body.kind, sc.body.spec.replicas, sc.body.status.replicas, sc.body.status.selector], ['Scale', 3, 2, 'app=z']);
  const put = await request(env.url, 'PUT', `${base}/z/scale`, { ...sc.body, spec: { replicas: 5 } });
  assert.equal(put.status, 200, put.text);
  assert.equal((await request(env.url, 'GET', `${base}/z`)).body.spec.replicas, 5);
});

test('a conflicting name is not accepted; deleting a CRD deletes its resources', async () => {
  await request(env.url, 'POST', CRDS, crd('doohickeys', 'conflict.example.com', { names: { shortNames: ['dh'] } }));
  await established('doohickeys.conflict.example.com');
  const other = crd('thingies', 'conflict.example.com', { names: { kind: 'Doohickey', shortNames: [] } });
  assert.equal((await request(env.url, 'POST', CRDS, other)).status, 201);
  const cond = await until('NamesAccepted', async () => {
    const r = await request(env.url, 'GET', `${CRDS}/thingies.conflict.example.com`);
    return r.body.status?.conditions?.find((x: { type: string }) => x.type === 'NamesAccepted');
  });
  assert.equal(cond.status, 'False');
  assert.equal(cond.reason, 'KindConflict');
  assert.equal(cond.message, '"Doohickey" is already in use');

  const base = '/apis/conflict.example.com/v1/namespaces/default/doohickeys';
  await until('served', async () => ((await request(env.url, 'GET', base)).status === 200 ? true : undefined));
  for (const n of ['a', 'b']) {
    const r = await request(env.url, 'POST', base, { apiVersion: 'conflict.example.com/v1', kind: 'Doohickey', metadata: { name: n }, spec: { image: 'x' } });
    assert.equal(r.status, 201, r.text);
  }
  const del = await request(env.url, 'DELETE', `${CRDS}/doohickeys.conflict.example.com`);
  assert.equal(del.status, 200, del.text);
  await until('CRD gone', async () => ((await request(env.url, 'GET', `${CRDS}/doohickeys.conflict.example.com`)).status === 404 ? true : undefined));
  await until('resources gone', async () => ((await request(env.url, 'GET', base)).status === 404 ? true : undefined));
  const left = await env.server!.storage.client.getAll().prefix('/registry/conflict.example.com/doohickeys/').keys();
  assert.deepEqual(left, []);
});

test('an invalid CRD is refused with upstream causes: name, storage versions, non-structural schema', async () => {
  const bad = crd('bads', 'example.com', {
    versions: [
      {
        name: 'v1',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } } },
      },
    ],
  });
  bad.metadata.name = 'wrong.example.com';
  const r = await request(env.url, 'POST', CRDS, bad);
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.details.kind, 'CustomResourceDefinition');
  const causes = r.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`);
  assert.ok(causes.includes('metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group'), causes.join('\n'));
  assert.ok(
    causes.some(
      (c: string) =>
        c.startsWith('spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{') &&
        c.endsWith('must have exactly one version marked as storage version'),
    ),
    causes.join('\n'),
  );
  // With one version upstream's internal form hoists the schema to spec.validation, and its errors say so.
  assert.ok(
    causes.includes('spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields'),
    causes.join('\n'),
  );
});

test('server-side apply merges a custom resource list by its x-kubernetes-list-map-keys', async () => {
  const listSchema = {
    name: 'v1',
    served: true,
    storage: true,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['name'],
                items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
              },
              tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            },
          },
        },
      },
    },
  };
  await request(env.url, 'POST', CRDS, crd('portsets', 'apply.example.com', { versions: [listSchema] }));
  await established('portsets.apply.example.com');
  const base = '/apis/apply.example.com/v1/namespaces/default/portsets';
  await until('served', async () => ((await request(env.url, 'GET', base)).status === 200 ? true : undefined));
  const apply = (manager: string, spec: object) =>
    request(
      env.url,
      'PATCH',
      `${base}/p?fieldManager=${manager}`,
      { apiVersion: 'apply.example.com/v1', kind: 'Portset', metadata: { name: 'p' }, spec },
      {
        contentType: 'application/apply-patch+yaml',
      },
    );
  const a = await apply('alice', { ports: [{ name: 'http', port: 80 }], tags: ['a'] });
  assert.equal(a.status, 201, a.text);
  const b = await apply('bob', { ports: [{ name: 'https', port: 443 }], tags: ['b'] });
  assert.equal(b.status, 200, b.text);
  assert.deepEqual(b.body.spec.ports, [
    { name: 'http', port: 80 },
    { name: 'https', port: 443 },
  ]);
  assert.deepEqual(b.body.spec.tags, ['a', 'b']);
  const conflict = await apply('bob', { ports: [{ name: 'http', port: 8080 }] });
  assert.equal(conflict.status, 409, conflict.text);
  assert.match(conflict.body.message, /conflict with "alice"/);
});

test('x-kubernetes-validations: rules, messages, transition rules, and rules that do not compile', async () => {
  const ruled = {
    name: 'v1',
    served: true,
    storage: true,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            'x-kubernetes-validations': [
              { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
              { rule: "self.mode == 'a' || has(self.reason)", messageExpression: "'mode ' + self.mode + ' needs a reason'", fieldPath: '.mode' },
            ],
            properties: {
              replicas: { type: 'integer' },
              maxReplicas: { type: 'integer' },
              mode: { type: 'string', maxLength: 10 },
              reason: { type: 'string' },
              owner: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'Value is immutable' }] },
            },
          },
        },
      },
    },
  };
  const c = await request(env.url, 'POST', CRDS, crd('rules', 'cel.example.com', { versions: [ruled] }));
  assert.equal(c.status, 201, c.text);
  await established('rules.cel.example.com');
  const base = '/apis/cel.example.com/v1/namespaces/default/rules';
  await until('served', async () => ((await request(env.url, 'GET', base)).status === 200 ? true : undefined));
  const body = (name: string, spec: object) => ({ apiVersion: 'cel.example.com/v1', kind: 'Rule', metadata: { name }, spec });
  const bad = await request(env.url, 'POST', base, body('r1', { replicas: 5, maxReplicas: 3, mode: 'b', owner: 'x' }));
  assert.equal(bad.status, 422, bad.text);
  const causes = bad.body.details.causes.map((x: { field: string; message: string }) => `${x.field}: ${x.message}`);
  assert.deepEqual(causes, [
    'spec: Invalid value: "object": replicas must not exceed maxReplicas',
    'spec.mode: Invalid value: "object": mode b needs a reason',
  ]);
  const ok = await request(env.url, 'POST', base, body('r1', { replicas: 2, maxReplicas: 3, mode: 'a', owner: 'x' }));
  assert.equal(ok.status, 201, ok.text);
  const changed = await request(env.url, 'PATCH', `${base}/r1`, { spec: { owner: 'y' } }, { contentType: 'application/merge-patch+json' });
  assert.equal(changed.status, 422, changed.text);
  assert.match(changed.body.message, /spec.owner: Invalid value: "string": Value is immutable/);
  const fine = await request(env.url, 'PATCH', `${base}/r1`, { spec: { replicas: 3 } }, { contentType: 'application/merge-patch+json' });
  assert.equal(fine.status, 200, fine.text);

  const broken = structuredClone(ruled);
  broken.schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [{ rule: 'self.nope > 1', message: 'x' }] as never;
  const r = await request(env.url, 'POST', CRDS, crd('brokens', 'cel.example.com', { versions: [broken] }));
  assert.equal(r.status, 422, r.text);
  assert.match(
    r.body.message,
    /spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: .*compilation failed: ERROR: <input>:1:5: undefined field 'nope'/,
  );
});
