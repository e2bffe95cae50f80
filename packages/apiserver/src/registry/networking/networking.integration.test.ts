/**
 * networking.k8s.io/v1 against a real etcd and apiserver: Ingress (create,
 * upstream's validation errors, generation, merge patch, /status, Table, the
 * DefaultIngressClass plugin), IngressClass, NetworkPolicy (defaults and
 * validation), ServiceCIDR, and IPAddress — including the ones the Service IP
 * allocator stores under /registry/ipaddresses/ — and `kubectl create
 * ingress` / `kubectl get` with the real kubectl where it is installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

const G = '/apis/networking.k8s.io/v1';
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const causes = (r: { body: { details?: { causes?: { field: string; message: string }[] } } }) =>
  (r.body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);

const ingress = (name: string, spec: object, extra: object = {}) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, ...extra },
  spec,
});
const svcBackend = (name: string, port: object) => ({ service: { name, port } });

test('Ingress: create, generation, merge patch, /status, Table', async () => {
  const spec = {
    rules: [{ host: 'foo.example.com', http: { paths: [{ path: '/bar', pathType: 'Prefix', backend: svcBackend('web', { number: 80 }) }] } }],
    tls: [{ hosts: ['foo.example.com'], secretName: 'foo-tls' }],
  };
  const c = await request(env.url, 'POST', `${G}/namespaces/default/ingresses`, ingress('web', spec));
  assert.equal(c.status, 201, c.text);
  assert.deepEqual(c.body.status, { loadBalancer: {} });
  assert.equal(c.body.metadata.generation, 1);

  const p = await request(
    env.url,
    'PATCH',
    `${G}/namespaces/default/ingresses/web`,
    { spec: { ingressClassName: 'nginx' } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(p.status, 200, p.text);
  assert.equal(p.body.spec.ingressClassName, 'nginx');
  assert.equal(p.body.metadata.generation, 2);

  // The main resource does not write status; /status does, and is validated.
  const withStatus = { ...p.body, status: { loadBalancer: { ingress: [{ ip: '127.0.0.9' }] } } };
  const ignored = await request(env.url, 'PUT', `${G}/namespaces/default/ingresses/web`, withStatus);
  assert.deepEqual(ignored.body.status, { loadBalancer: {} });
  const st = await request(env.url, 'PUT', `${G}/namespaces/default/ingresses/web/status`, { ...withStatus, metadata: ignored.body.metadata });
  assert.equal(st.status, 200, st.text);
  assert.deepEqual(st.body.status.loadBalancer.ingress, [{ ip: '127.0.0.9' }]);
  const badSt = await request(env.url, 'PUT', `${G}/namespaces/default/ingresses/web/status`, {
    ...st.body,
    status: { loadBalancer: { ingress: [{ hostname: '127.0.0.1' }] } },
  });
  assert.equal(badSt.status, 422);
  assert.deepEqual(causes(badSt), ['status.loadBalancer.ingress[0].hostname: Invalid value: "127.0.0.1": must be a DNS name, not an IP address']);

  const t = await request(env.url, 'GET', `${G}/namespaces/default/ingresses`, undefined, TABLE);
  assert.deepEqual(
    t.body.columnDefinitions.map((d: { name: string }) => d.name),
    ['Name', 'Class', 'Hosts', 'Address', 'Ports', 'Age'],
  );
  assert.deepEqual(t.body.rows[0].cells.slice(0, 5), ['web', 'nginx', 'foo.example.com', '127.0.0.9', '80, 443']);
});

test('Ingress: validation errors as upstream words them', async () => {
  const bad = await request(
    env.url,
    'POST',
    `${G}/namespaces/default/ingresses`,
    ingress('bad', {
      rules: [
        { host: '127.0.0.1', http: { paths: [{ path: 'rel', pathType: 'Exact', backend: svcBackend('web', { name: 'http', number: 80 }) }] } },
        { host: 'ok.example.com', http: { paths: [{ path: '/a//b', pathType: 'Prefix', backend: svcBackend('Web', { number: 80 }) }] } },
        { http: { paths: [{ path: '/', backend: svcBackend('web', { number: 80 }) }] } },
      ],
    }),
  );
  assert.equal(bad.status, 422, bad.text);
  assert.equal(bad.body.reason, 'Invalid');
  assert.deepEqual(causes(bad), [
    'spec.rules[0].host: Invalid value: "127.0.0.1": must be a DNS name, not an IP address',
    'spec.rules[0].http.paths[0].path: Invalid value: "rel": must be an absolute path',
    'spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number',
    'spec.rules[1].http.paths[0].path: Invalid value: "/a//b": must not contain \'//\'',
    "spec.rules[1].http.paths[0].backend.service.name: Invalid value: \"Web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    'spec.rules[2].http.paths[0].pathType: Required value: pathType must be specified',
  ]);
  const empty = await request(env.url, 'POST', `${G}/namespaces/default/ingresses`, ingress('empty', {}));
  assert.equal(empty.status, 422);
  assert.equal(
    empty.body.message,
    'Ingress.networking.k8s.io "empty" is invalid: spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
  );
  const mismatch = await request(
    env.url,
    'POST',
    `${G}/namespaces/default/ingresses`,
    ingress('mm', { ingressClassName: 'a', defaultBackend: svcBackend('web', { number: 80 }) }, { annotations: { 'kubernetes.io/ingress.class': 'b' } }),
  );
  assert.equal(mismatch.status, 422);
  assert.deepEqual(causes(mismatch), ['annotations.kubernetes.io/ingress.class: Invalid value: "b": must match `ingressClassName` when both are specified']);
});

test('IngressClass: validation, immutable controller, Table; the default class is given to Ingresses without one', async () => {
  const ic = (name: string, spec: object, annotations: Record<string, string> = {}) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name, annotations },
    spec,
  });
  const bad = await request(
    env.url,
    'POST',
    `${G}/ingressclasses`,
    ic('bad', { controller: 'nginx', parameters: { kind: 'Cfg', name: 'x', scope: 'Namespace' } }),
  );
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), [
    'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
    "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
  ]);
  const c = await request(
    env.url,
    'POST',
    `${G}/ingressclasses`,
    ic(
      'nginx',
      { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'p' } },
      {
        'ingressclass.kubernetes.io/is-default-class': 'true',
      },
    ),
  );
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.spec.parameters.scope, 'Cluster');
  const up = await request(env.url, 'PUT', `${G}/ingressclasses/nginx`, { ...c.body, spec: { ...c.body.spec, controller: 'k8s.io/other' } });
  assert.equal(up.status, 422);
  assert.deepEqual(causes(up), ['spec.controller: Invalid value: "k8s.io/other": field is immutable']);
  const t = await request(env.url, 'GET', `${G}/ingressclasses/nginx`, undefined, TABLE);
  assert.deepEqual(t.body.rows[0].cells.slice(0, 3), ['nginx', 'k8s.io/ingress-nginx', 'IngressParameters.k8s.example.com/p']);

  const ing = await request(
    env.url,
    'POST',
    `${G}/namespaces/default/ingresses`,
    ingress('defaulted', { defaultBackend: svcBackend('web', { name: 'http' }) }),
  );
  assert.equal(ing.status, 201, ing.text);
  assert.equal(ing.body.spec.ingressClassName, 'nginx');
});

test('NetworkPolicy: defaults, validation, update, Table', async () => {
  const np = (name: string, spec: object) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name }, spec });
  const c = await request(
    env.url,
    'POST',
    `${G}/namespaces/default/networkpolicies`,
    np('db', {
      podSelector: { matchLabels: { app: 'db' } },
      egress: [{ ports: [{ port: 5432 }], to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }] }],
    }),
  );
  assert.equal(c.status, 201, c.text);
  assert.deepEqual(c.body.spec.policyTypes, ['Ingress', 'Egress']);
  assert.equal(c.body.spec.egress[0].ports[0].protocol, 'TCP');
  const bad = await request(
    env.url,
    'POST',
    `${G}/namespaces/default/networkpolicies`,
    np('bad', {
      podSelector: {},
      ingress: [{ ports: [{ port: 'http', endPort: 90 }], from: [{}, { ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] }, podSelector: {} }] }],
      policyTypes: ['Ingress', 'Sideways'],
    }),
  );
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), [
    'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
    'spec.ingress[0].from[0]: Required value: must specify a peer',
    'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
    'spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer',
    'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
  ]);
  const up = await request(env.url, 'PUT', `${G}/namespaces/default/networkpolicies/db`, {
    ...c.body,
    spec: { ...c.body.spec, podSelector: { matchLabels: { app: 'pg' } } },
  });
  assert.equal(up.status, 200, up.text);
  assert.equal(up.body.metadata.generation, 2);
  const t = await request(env.url, 'GET', `${G}/namespaces/default/networkpolicies`, undefined, TABLE);
  assert.deepEqual(
    t.body.columnDefinitions.map((d: { name: string }) => d.name),
    ['Name', 'Pod-Selector', 'Age'],
  );
  assert.deepEqual(t.body.rows[0].cells.slice(0, 2), ['db', 'app=pg']);
});

test('ServiceCIDR: canonical CIDRs of distinct families, immutable, /status, Table', async () => {
  const sc = (name: string, cidrs: string[]) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'ServiceCIDR', metadata: { name }, spec: { cidrs } });
  const c = await request(env.url, 'POST', `${G}/servicecidrs`, sc('extra', ['10.96.0.0/16', 'fd00:10:96::/112']));
  assert.equal(c.status, 201, c.text);
  const bad = await request(env.url, 'POST', `${G}/servicecidrs`, sc('bad', ['10.96.0.1/16']));
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), ['spec.cidrs[0]: Invalid value: "10.96.0.1/16": must not have bits set beyond the prefix length']);
  const two = await request(env.url, 'POST', `${G}/servicecidrs`, sc('two', ['10.0.0.0/24', '10.1.0.0/24']));
  assert.equal(two.status, 422);
  assert.match(two.body.message, /may specify no more than one IP for each IP family/);
  const up = await request(env.url, 'PUT', `${G}/servicecidrs/extra`, { ...c.body, spec: { cidrs: ['10.97.0.0/16'] } });
  assert.equal(up.status, 422);
  assert.deepEqual(causes(up), ['spec.cidrs: Invalid value: []string{"10.97.0.0/16"}: field is immutable']);
  const cond = { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' };
  const st = await request(env.url, 'PUT', `${G}/servicecidrs/extra/status`, { ...c.body, status: { conditions: [cond] } });
  assert.equal(st.status, 200, st.text);
  assert.deepEqual(st.body.status.conditions, [cond]);
  const t = await request(env.url, 'GET', `${G}/servicecidrs/extra`, undefined, TABLE);
  assert.deepEqual(t.body.rows[0].cells.slice(0, 2), ['extra', '10.96.0.0/16,fd00:10:96::/112']);
});

test("IPAddress: the allocator's records are served; names are canonical IPs; a held IP blocks a Service", async () => {
  const svc = await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: { ports: [{ port: 80 }] },
  });
  assert.equal(svc.status, 201, svc.text);
  const ip = svc.body.spec.clusterIP;
  const got = await request(env.url, 'GET', `${G}/ipaddresses/${ip}`);
  assert.equal(got.status, 200, got.text);
  // ParentReference.group is omitempty in Go: the core group is left out.
  assert.deepEqual(got.body.spec.parentRef, { resource: 'services', namespace: 'default', name: 'web' });
  const list = await request(env.url, 'GET', `${G}/ipaddresses`);
  assert.ok(
    list.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === '127.1.0.1'),
    'the kubernetes Service IP',
  );
  const t = await request(env.url, 'GET', `${G}/ipaddresses/${ip}`, undefined, TABLE);
  assert.deepEqual(t.body.rows[0].cells.slice(0, 2), [ip, 'services/default/web']);

  const ipa = (name: string, parentRef: object) => ({ apiVersion: 'networking.k8s.io/v1', kind: 'IPAddress', metadata: { name }, spec: { parentRef } });
  const bad = await request(env.url, 'POST', `${G}/ipaddresses`, ipa('2001:DB8::1', { resource: 'gateways', name: 'g' }));
  assert.equal(bad.status, 422);
  assert.deepEqual(causes(bad), ['metadata.name: Invalid value: "2001:DB8::1": must be in canonical form ("2001:db8::1")']);
  const noRes = await request(env.url, 'POST', `${G}/ipaddresses`, ipa('127.1.77.77', { name: 'g' }));
  assert.deepEqual(causes(noRes), ['spec.parentRef.resource: Required value']);
  const held = await request(
    env.url,
    'POST',
    `${G}/ipaddresses`,
    ipa('127.1.77.77', { group: 'gateway.networking.k8s.io', resource: 'gateways', namespace: 'default', name: 'g' }),
  );
  assert.equal(held.status, 201, held.text);
  const clash = await request(env.url, 'POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'clash' },
    spec: { clusterIP: '127.1.77.77', ports: [{ port: 80 }] },
  });
  assert.equal(clash.status, 422);
  assert.match(clash.body.message, /provided IP is already allocated/);
  const moved = await request(env.url, 'PUT', `${G}/ipaddresses/127.1.77.77`, { ...held.body, spec: { parentRef: { resource: 'services', name: 'x' } } });
  assert.equal(moved.status, 422);
  assert.deepEqual(causes(moved), [
    'spec.parentRef: Invalid value: networking.ParentReference{Group:"", Resource:"services", Namespace:"", Name:"x"}: field is immutable',
  ]);
});

const bins = kubectlBinaries();
test('kubectl create ingress (a protobuf body), get ing / netpol / ingressclass columns', {
  skip: bins.default ? false : 'kubectl is not installed',
}, async () => {
  const k = new Kubectl(env.url, bins.default!);
  try {
    const c = await k.run(['create', 'ingress', 'simple', '--class=nginx', '--rule=foo.com/bar=svc1:8080,tls=my-cert']);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /ingress.networking.k8s.io\/simple created/);
    const got = await k.run(['get', 'ing', 'simple', '-o', 'json']);
    const obj = JSON.parse(got.stdout);
    assert.deepEqual(obj.spec.rules[0].http.paths[0], { path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } });
    assert.deepEqual(obj.spec.tls, [{ hosts: ['foo.com'], secretName: 'my-cert' }]);
    const table = await k.run(['get', 'ingress', 'simple']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\n/);
    assert.match(table.stdout, /^simple\s+nginx\s+foo\.com\s+80, 443\s+\d+s$/m);
    const np = await k.run(['get', 'netpol']);
    assert.match(np.stdout, /^NAME\s+POD-SELECTOR\s+AGE\n/);
    const ic = await k.run(['get', 'ingressclass']);
    assert.match(ic.stdout, /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\n/);
  } finally {
    k.cleanup();
  }
});
