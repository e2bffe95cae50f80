/**
 * ValidatingAdmissionPolicy against a real etcd and apiserver: a Deny binding
 * refuses a Deployment with upstream's message, a Warn binding lets it through
 * with a Warning header, params come from a ConfigMap, a policy guards a custom
 * resource, the type-checking controller writes status.typeChecking, and a
 * webhook's matchConditions decide whether it is called.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { createCA, issue } from '@kubeling/pki';
import { eventually, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
  for (const [name, mode] of [
    ['vap-deny', 'deny'],
    ['vap-warn', 'warn'],
    ['vap-params', 'params'],
  ]) {
    await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'vap-test': mode! } } });
  }
});
after(async () => {
  await env?.stop();
});

const ADM = '/apis/admissionregistration.k8s.io/v1';
const deploymentRules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }];

const deployment = (name: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

const createPolicy = (name: string, spec: object) =>
  request(env.url, 'POST', `${ADM}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec,
  });
const createBinding = (name: string, spec: object) =>
  request(env.url, 'POST', `${ADM}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec,
  });
const inNamespacesLabelled = (mode: string) => ({ namespaceSelector: { matchLabels: { 'vap-test': mode } } });
const createDeployment = (ns: string, d: object, dryRun = false) =>
  request(env.url, 'POST', `/apis/apps/v1/namespaces/${ns}/deployments${dryRun ? '?dryRun=All' : ''}`, d);

/** Waits until the plugin refuses a dry-run create (it follows policies through the watch cache). */
const enforced = (ns: string, d: object) => eventually(async () => (await createDeployment(ns, d, true)).status !== 201, 10_000);

test('a Deny binding refuses a Deployment of 6 replicas with upstream message; the policy is defaulted and gets its status', async () => {
  const p = await createPolicy('max-replicas', {
    matchConstraints: { resourceRules: deploymentRules },
    validations: [{ expression: 'object.spec.replicas <= 5' }],
  });
  assert.equal(p.status, 201, JSON.stringify(p.body));
  assert.equal(p.body.spec.failurePolicy, 'Fail');
  assert.equal(p.body.spec.matchConstraints.matchPolicy, 'Equivalent');
  assert.equal(p.body.metadata.generation, 1);
  const b = await createBinding('max-replicas-binding', {
    policyName: 'max-replicas',
    validationActions: ['Deny'],
    matchResources: inNamespacesLabelled('deny'),
  });
  assert.equal(b.status, 201, JSON.stringify(b.body));
  await enforced('vap-deny', deployment('web', 6));
  const r = await createDeployment('vap-deny', deployment('web', 6));
  assert.equal(r.status, 422);
  assert.equal(r.body.reason, 'Invalid');
  assert.equal(
    r.body.message,
    `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`,
  );
  assert.deepEqual(r.body.details.causes, [
    { message: "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5" },
  ]);
  assert.equal((await createDeployment('vap-deny', deployment('web', 5))).status, 201);
  const scaled = await request(
    env.url,
    'PATCH',
    '/apis/apps/v1/namespaces/vap-deny/deployments/web',
    { spec: { replicas: 7 } },
    { contentType: 'application/merge-patch+json' },
  );
  assert.equal(scaled.status, 422, 'updates are checked too');
  // Namespaces the binding does not select are not checked.
  assert.equal((await createDeployment('default', deployment('free', 9))).status, 201);
  const status = await eventually(async () => {
    const s = (await request(env.url, 'GET', `${ADM}/validatingadmissionpolicies/max-replicas`)).body.status;
    return s?.observedGeneration === 1 ? s : undefined;
  });
  assert.deepEqual(status, { observedGeneration: 1, typeChecking: {} });
  const table = await request(env.url, 'GET', `${ADM}/validatingadmissionpolicies`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  assert.deepEqual(
    table.body.columnDefinitions.map((c: { name: string }) => c.name),
    ['Name', 'Validations', 'ParamKind', 'Age'],
  );
  assert.deepEqual(table.body.rows.find((x: { cells: unknown[] }) => x.cells[0] === 'max-replicas').cells.slice(0, 3), ['max-replicas', 1, '<unset>']);
});

test('a Warn binding lets the Deployment through with a Warning header', async () => {
  await createBinding('max-replicas-warn', { policyName: 'max-replicas', validationActions: ['Warn'], matchResources: inNamespacesLabelled('warn') });
  const d = deployment('warned', 6);
  const r = await eventually(async () => {
    const res = await createDeployment('vap-warn', d, true);
    return res.headers.get('warning') ? res : undefined;
  }, 5_000);
  assert.equal(r.status, 201);
  assert.equal(
    r.headers.get('warning'),
    `299 - "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-warn': failed expression: object.spec.replicas <= 5"`,
  );
});

test('params from a ConfigMap: object.spec.replicas <= int(params.data.max); a missing param follows parameterNotFoundAction', async () => {
  await request(env.url, 'POST', '/api/v1/namespaces/vap-params/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'limits' },
    data: { max: '2' },
  });
  const p = await createPolicy('replica-limit', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    matchConstraints: { resourceRules: deploymentRules },
    validations: [
      { expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "'at most ' + params.data.max + ' replicas'", reason: 'Forbidden' },
    ],
  });
  assert.equal(p.status, 201, JSON.stringify(p.body));
  const b = await createBinding('replica-limit-binding', {
    policyName: 'replica-limit',
    paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' },
    validationActions: ['Deny'],
    matchResources: inNamespacesLabelled('params'),
  });
  assert.equal(b.status, 201, JSON.stringify(b.body));
  await enforced('vap-params', deployment('api', 3));
  const r = await createDeployment('vap-params', deployment('api', 3));
  assert.equal(r.status, 403);
  assert.equal(r.body.reason, 'Forbidden');
  assert.equal(
    r.body.message,
    `deployments.apps "api" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: at most 2 replicas`,
  );
  assert.equal((await createDeployment('vap-params', deployment('api', 2))).status, 201);
  await request(env.url, 'DELETE', '/api/v1/namespaces/vap-params/configmaps/limits');
  const missing = await eventually(async () => {
    const res = await createDeployment('vap-params', deployment('api2', 1), true);
    return res.status === 422 ? res : undefined;
  });
  assert.equal(
    missing.body.message,
    "deployments.apps \"api2\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction",
  );
});

test('a policy on a custom resource', async () => {
  const crd = await request(env.url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
        },
      ],
    },
  });
  assert.equal(crd.status, 201, JSON.stringify(crd.body));
  const widget = (name: string, size: number) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size } });
  const createWidget = (w: object, dryRun = false) =>
    request(env.url, 'POST', `/apis/example.com/v1/namespaces/default/widgets${dryRun ? '?dryRun=All' : ''}`, w);
  await eventually(async () => (await createWidget(widget('probe', 1), true)).status === 201);
  await createPolicy('widget-size', {
    matchConstraints: { resourceRules: [{ apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }] },
    validations: [{ expression: 'object.spec.size < 10', message: 'widgets must be smaller than 10' }, { expression: 'object.spec.sise < 10' }],
    failurePolicy: 'Ignore',
  });
  await createBinding('widget-size-binding', { policyName: 'widget-size', validationActions: ['Deny'] });
  await eventually(async () => (await createWidget(widget('big', 20), true)).status === 422);
  const r = await createWidget(widget('big', 20));
  assert.equal(
    r.body.message,
    `widgets.example.com "big" is forbidden: ValidatingAdmissionPolicy 'widget-size' with binding 'widget-size-binding' denied request: widgets must be smaller than 10`,
  );
  assert.equal((await createWidget(widget('small', 3))).status, 201, 'the failing second expression is ignored (failurePolicy Ignore)');
  // The controller type-checks against the CRD's schema: the typo is a warning.
  const status = await eventually(async () => (await request(env.url, 'GET', `${ADM}/validatingadmissionpolicies/widget-size`)).body.status?.typeChecking);
  assert.deepEqual(status.expressionWarnings, [
    {
      fieldRef: 'spec.validations[1].expression',
      warning: "example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'sise'\n | object.spec.sise < 10\n | ...........^\n",
    },
  ]);
});

test('a policy whose expression does not compile is refused with the compiler output', async () => {
  const r = await createPolicy('bad', { matchConstraints: { resourceRules: deploymentRules }, validations: [{ expression: 'object.spec.replicas <= x' }] });
  assert.equal(r.status, 422);
  assert.equal(
    r.body.message,
    `ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad" is invalid: spec.validations[0].expression: Invalid value: "object.spec.replicas <= x": compilation failed: ERROR: <input>:1:25: undeclared reference to 'x' (in container '')\n | object.spec.replicas <= x\n | ........................^`,
  );
});

test("a webhook's matchConditions skip it when false", async () => {
  const ca = await createCA('vap-webhook-ca');
  const cert = await issue(ca, { commonName: 'webhook', ips: ['127.0.0.1'], usage: 'server' });
  const called: string[] = [];
  const hook: Server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const r = JSON.parse(body).request;
      called.push(r.name);
      const response = { uid: r.uid, allowed: false, status: { code: 403, message: 'checked and refused' } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `https://127.0.0.1:${(hook.address() as { port: number }).port}/`;
    const cfg = await request(env.url, 'POST', `${ADM}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'checker' },
      webhooks: [
        {
          name: 'checker.example.com',
          clientConfig: { url, caBundle: Buffer.from(ca.certPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          matchConditions: [{ name: 'only-checked', expression: "object.metadata.name.startsWith('check-')" }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
        {
          name: 'tokens.example.com',
          clientConfig: { url, caBundle: Buffer.from(ca.certPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }],
          matchConditions: [{ name: 'has-token', expression: "object.data.token != ''" }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    assert.equal(cfg.status, 201, JSON.stringify(cfg.body));
    assert.deepEqual(cfg.body.webhooks[0].matchConditions, [{ name: 'only-checked', expression: "object.metadata.name.startsWith('check-')" }]);
    const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
    const refused = await eventually(async () => {
      const res = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', cm('check-me'));
      return res.status === 403 ? res : undefined;
    });
    assert.equal(refused.body.message, 'admission webhook "checker.example.com" denied the request: checked and refused');
    const skipped = await request(env.url, 'POST', '/api/v1/namespaces/default/configmaps', cm('plain'));
    assert.equal(skipped.status, 201, JSON.stringify(skipped.body));
    assert.ok(called.includes('check-me'));
    assert.ok(!called.includes('plain'), 'the webhook is not called when a match condition is false');
    // A condition that fails to evaluate refuses the request under failurePolicy Fail (the default).
    const broken = await request(env.url, 'POST', '/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'no-data' } });
    assert.equal(broken.status, 403);
    assert.equal(broken.body.message, `secrets "no-data" is forbidden: expression 'object.data.token != ''' resulted in error: no such key: data`);
  } finally {
    await request(env.url, 'DELETE', `${ADM}/validatingwebhookconfigurations/checker`);
    hook.close();
  }
});
