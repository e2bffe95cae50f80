/**
 * kubectl 1.27 and 1.28 read the protobuf OpenAPI v2 document (`/openapi/v2`)
 * before every `apply`/`create -f` with `--validate=true`, for `explain
 * --output=plaintext-openapiv2`, and for the strategic-merge metadata of
 * client-side apply. Against a real apiserver: valid manifests apply; an unknown
 * field is refused (by the server for a single object, since the PATCH operation
 * lists `fieldValidation`; by kubectl itself, from the v2 schemas, for the items of
 * a `List`, which it always validates client-side); explain prints the field docs;
 * and real manifests of the kubernetes/examples corpus apply with kubectl 1.27.
 * Versions not installed are skipped with a message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const bins = kubectlBinaries();
const CORPUS = fileURLToPath(new URL('../../../shared/corpus/kubernetes-examples', import.meta.url));

const deployment = (name: string, image: string, env: string, replicas = '2') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: nginx
        image: ${image}
        ports: [{containerPort: 80}]
        env: [${env}]
`;

const OPENAPI_PATCH_WARNING = /error calculating patch from openapi spec/;

for (const version of ['1.27', '1.28']) {
  const bin = bins[version];
  describe(`kubectl ${version} with OpenAPI v2`, { skip: bin ? false : `kubectl ${version} is not installed on this machine` }, () => {
    let env: TestEnv;
    let k: Kubectl;
    const ns = `oa${version.replace('.', '-')}`;
    before(async () => {
      env = await startTestEnv();
      k = new Kubectl(env.url, bin!, { namespace: ns });
      await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      k?.cleanup();
      await env?.stop();
    });

    test('apply --validate=true of valid manifests, and client-side apply merging with the v2 patch metadata', async () => {
      const cm = k.file('cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: valid}\ndata: {a: b}\n');
      const a = await k.run(['apply', '--validate=true', '-f', cm]);
      assert.equal(a.code, 0, a.stderr);
      assert.match(a.stdout, /configmap\/valid created/);
      const c = await k.run(['create', '--validate=true', '-f', k.file('cm2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: created}\n')]);
      assert.equal(c.code, 0, c.stderr);

      const d1 = await k.run([
        'apply',
        '--validate=true',
        '-f',
        k.file('d1.yaml', deployment('web', 'nginx:1.25', '{name: A, value: "1"}, {name: B, value: "2"}')),
      ]);
      assert.equal(d1.code, 0, d1.stderr);
      const d2 = await k.run(['apply', '--validate=true', '-f', k.file('d2.yaml', deployment('web', 'nginx:1.26', '{name: A, value: "1"}'))]);
      assert.equal(d2.code, 0, d2.stderr);
      assert.match(d2.stdout, /deployment.apps\/web configured/);
      // The three-way patch came from the v2 document's x-kubernetes-patch-merge-key / -strategy, not kubectl's fallback.
      assert.doesNotMatch(d2.stderr, OPENAPI_PATCH_WARNING);
      const got = JSON.parse((await k.run(['get', 'deploy', 'web', '-o', 'json'])).stdout);
      const ctr = got.spec.template.spec.containers[0];
      assert.equal(ctr.image, 'nginx:1.26');
      assert.deepEqual(ctr.env, [{ name: 'A', value: '1' }]);
      assert.deepEqual(ctr.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    });

    test('an unknown field is refused: by the server for one object, by kubectl from the v2 schemas in a List', async () => {
      const one = await k.run(['apply', '--validate=true', '-f', k.file('bogus.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bogus}\nbogus: 1\n')]);
      assert.notEqual(one.code, 0);
      assert.match(one.stderr, /unknown field "bogus"/);

      const list = (bogus: string, replicas: string, nameLine: string) => `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: in-list}
  data: {a: b}
${bogus}- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: in-list}
  spec:
    replicas: ${replicas}
    selector: {matchLabels: {app: in-list}}
    template:
      metadata: {labels: {app: in-list}}
      spec:
        containers:
        - ${nameLine}image: nginx
          ports: [{containerPort: 80}]
`;
      const bad = await k.run(['apply', '--validate=true', '-f', k.file('list.yaml', list('  bogus: 1\n', '"two"', ''))]);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /error validating data: .*ValidationError\(ConfigMap\): unknown field "bogus" in io\.k8s\.api\.core\.v1\.ConfigMap/);
      assert.match(
        bad.stderr,
        /ValidationError\(Deployment\.spec\.replicas\): invalid type for io\.k8s\.api\.apps\.v1\.DeploymentSpec\.replicas: got "string", expected "integer"/,
      );
      assert.match(
        bad.stderr,
        /ValidationError\(Deployment\.spec\.template\.spec\.containers\[0\]\): missing required field "name" in io\.k8s\.api\.core\.v1\.Container/,
      );
      assert.equal((await k.run(['get', 'cm', 'in-list'])).code, 1, 'nothing of a refused List is created');

      const ok = await k.run(['apply', '--validate=true', '-f', k.file('good-list.yaml', list('', '2', 'name: nginx\n          '))]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /configmap\/in-list created/);
      assert.match(ok.stdout, /deployment.apps\/in-list created/);
    });

    test('explain pods.spec.containers, from v3 and from v2', async () => {
      const v3 = await k.run(['explain', 'pods.spec.containers']);
      assert.equal(v3.code, 0, v3.stderr);
      assert.match(v3.stdout, /FIELD: containers <\[\]Container>/);
      assert.match(v3.stdout, /name\s+<string> -required-/);
      const v2 = await k.run(['explain', 'pods.spec.containers', '--output=plaintext-openapiv2']);
      assert.equal(v2.code, 0, v2.stderr);
      assert.match(v2.stdout, /^KIND:\s+Pod$/m);
      assert.match(v2.stdout, /RESOURCE: containers <\[\]Object>/);
      assert.match(v2.stdout, /List of containers belonging to the pod\./);
      assert.match(v2.stdout, /^ {3}image\t<string>$/m);
      assert.match(v2.stdout, /^ {3}name\t<string> -required-$/m);
      const replicas = await k.run(['explain', 'deployment.spec.replicas', '--output=plaintext-openapiv2']);
      assert.match(replicas.stdout, /FIELD:\s+replicas <integer>/);
    });

    const corpus = [
      'web/guestbook/redis-master-deployment.yaml',
      'web/guestbook/redis-master-service.yaml',
      'web/guestbook/frontend-deployment.yaml',
      'web/guestbook/frontend-service.yaml',
      'web/guestbook/all-in-one/guestbook-all-in-one.yaml',
      'web/guestbook/legacy/redis-master-controller.yaml',
      'databases/cassandra/cassandra-service.yaml',
    ].map((f) => `${CORPUS}/${f}`);
    const skipCorpus =
      version !== '1.27' ? 'the corpus runs with kubectl 1.27' : !corpus.every(existsSync) ? 'the manifest corpus is not beside the repository' : false;
    test('kubernetes/examples manifests apply with validation', { skip: skipCorpus }, async () => {
      for (const file of corpus) {
        const r = await k.run(['apply', '--validate=true', '-f', file]);
        assert.equal(r.code, 0, `${file}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, OPENAPI_PATCH_WARNING, file);
      }
      // And every object of them passes kubectl's own v2 validation (a List is validated client-side).
      const items = corpus.flatMap((f) => readFileSync(f, 'utf8').split(/^---\s*$/m)).filter((d) => /^kind:/m.test(d));
      const list = `apiVersion: v1\nkind: List\nitems:\n${items.map((d) => `- ${d.trim().replace(/\n/g, '\n  ')}`).join('\n')}\n`;
      const r = await k.run(['apply', '--validate=true', '--dry-run=server', '-f', k.file('corpus-list.yaml', list)]);
      assert.equal(r.code, 0, r.stderr);
    });
  });
}
