/**
 * kubectl 1.29, 1.31 and 1.33 (each with a fresh cache dir) against one
 * apiserver: discovery, OpenAPI validation, client-side apply with strategic
 * merge, server-side apply, patches of every type, scale, the protobuf bodies of `create <generator>`
 * and `auth can-i` (1.32+), Table output, explain and describe.
 * Versions not installed are skipped with a message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, request, startTestEnv, type TestEnv } from '@kubeling/testenv';

const bins = kubectlBinaries();

const deployment = (name: string, image: string, env: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 2
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

for (const version of ['1.29', '1.31', '1.33']) {
  const bin = bins[version];
  describe(`kubectl ${version}`, { skip: bin ? false : `kubectl ${version} is not installed on this machine` }, () => {
    let env: TestEnv;
    let k: Kubectl;
    const ns = `v${version.replace('.', '-')}`;
    before(async () => {
      env = await startTestEnv();
      k = new Kubectl(env.url, bin!, { namespace: ns });
      await request(env.url, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      k?.cleanup();
      await env?.stop();
    });

    test('version, api-versions, api-resources, explain', async () => {
      const v = await k.run(['version']);
      assert.equal(v.code, 0, v.stderr);
      assert.match(v.stdout, /Server Version: v1\.32/);
      const av = await k.run(['api-versions']);
      assert.match(av.stdout, /^apps\/v1$/m);
      assert.match(av.stdout, /^coordination\.k8s\.io\/v1$/m);
      const ar = await k.run(['api-resources']);
      assert.match(ar.stdout, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
      assert.match(ar.stdout, /^pods\s+po\s+v1\s+true\s+Pod$/m);
      const ex = await k.run(['explain', 'deployment.spec.replicas']);
      assert.equal(ex.code, 0, ex.stderr);
      assert.match(ex.stdout, /replicas\s+<integer>/);
    });

    test('apply twice: changed image, removed env var, ports survive', async () => {
      const f1 = k.file('d1.yaml', deployment('web', 'nginx:1.25', '{name: A, value: "1"}, {name: B, value: "2"}'));
      const a1 = await k.run(['apply', '-f', f1]);
      assert.equal(a1.code, 0, a1.stderr);
      assert.match(a1.stdout, /deployment.apps\/web created/);
      const f2 = k.file('d2.yaml', deployment('web', 'nginx:1.26', '{name: A, value: "1"}'));
      const a2 = await k.run(['apply', '-f', f2]);
      assert.equal(a2.code, 0, a2.stderr);
      assert.match(a2.stdout, /deployment.apps\/web configured/);
      const a3 = await k.run(['apply', '-f', f2]);
      assert.match(a3.stdout, /deployment.apps\/web unchanged/);
      const got = JSON.parse((await k.run(['get', 'deploy', 'web', '-o', 'json'])).stdout);
      const c = got.spec.template.spec.containers[0];
      assert.equal(c.image, 'nginx:1.26');
      assert.deepEqual(c.env, [{ name: 'A', value: '1' }]);
      assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }]);
      assert.equal(got.metadata.generation, 2);
    });

    test('apply --server-side: managedFields, conflicts with another manager, --force-conflicts, dropped fields removed', async () => {
      const f1 = k.file('s1.yaml', deployment('ssa', 'nginx:1.25', '{name: A, value: "1"}, {name: B, value: "2"}'));
      const a1 = await k.run(['apply', '--server-side', '-f', f1]);
      assert.equal(a1.code, 0, a1.stderr);
      assert.match(a1.stdout, /deployment.apps\/ssa serverside-applied/);
      const got = JSON.parse((await k.run(['get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields'])).stdout);
      const mine = got.metadata.managedFields.find((m: any) => m.manager === 'kubectl' && m.operation === 'Apply');
      assert.ok(mine, JSON.stringify(got.metadata.managedFields));
      assert.deepEqual(mine.fieldsV1['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"nginx"}']['f:env']['k:{"name":"B"}'], {
        '.': {},
        'f:name': {},
        'f:value': {},
      });
      // Another manager takes .spec.replicas; applying a different value conflicts.
      assert.equal((await k.run(['patch', 'deploy', 'ssa', '--type=merge', '-p', '{"spec":{"replicas":5}}'])).code, 0);
      const c = await k.run(['apply', '--server-side', '-f', f1]);
      assert.notEqual(c.code, 0);
      assert.match(c.stderr, /Apply failed with 1 conflict: conflict with "kubectl-patch" using apps\/v1 at [0-9T:-]+Z: \.spec\.replicas/);
      assert.equal(JSON.parse((await k.run(['get', 'deploy', 'ssa', '-o', 'json'])).stdout).spec.replicas, 5, 'a refused apply changes nothing');
      const forced = await k.run(['apply', '--server-side', '--force-conflicts', '-f', f1]);
      assert.equal(forced.code, 0, forced.stderr);
      // Dropping env B and changing the image: B goes, the image changes, ports stay.
      const f2 = k.file('s2.yaml', deployment('ssa', 'nginx:1.26', '{name: A, value: "1"}'));
      assert.equal((await k.run(['apply', '--server-side', '-f', f2])).code, 0);
      const after = JSON.parse((await k.run(['get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields'])).stdout);
      const ctr = after.spec.template.spec.containers[0];
      assert.equal(after.spec.replicas, 2);
      assert.equal(ctr.image, 'nginx:1.26');
      assert.deepEqual(ctr.env, [{ name: 'A', value: '1' }]);
      assert.deepEqual(ctr.ports, [{ containerPort: 80, protocol: 'TCP' }]);
      assert.ok(
        !after.metadata.managedFields.some((m: any) => m.manager === 'kubectl-patch' && m.fieldsV1?.['f:spec']?.['f:replicas']),
        'forced apply took .spec.replicas over',
      );
    });

    test('patch --type json, merge, strategic; scale; label; annotate', async () => {
      assert.equal((await k.run(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"replace","path":"/spec/replicas","value":3}]'])).code, 0);
      assert.equal((await k.run(['patch', 'deploy', 'web', '--type=merge', '-p', '{"metadata":{"labels":{"tier":"front"}}}'])).code, 0);
      const sp = await k.run(['patch', 'deploy', 'web', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}']);
      assert.equal(sp.code, 0, sp.stderr);
      const sc = await k.run(['scale', 'deploy', 'web', '--replicas=4']);
      assert.equal(sc.code, 0, sc.stderr);
      assert.equal((await k.run(['label', 'deploy', 'web', 'extra=yes'])).code, 0);
      assert.equal((await k.run(['annotate', 'deploy', 'web', 'note=hi'])).code, 0);
      const got = JSON.parse((await k.run(['get', 'deploy', 'web', '-o', 'json'])).stdout);
      assert.equal(got.spec.replicas, 4);
      assert.equal(got.spec.template.spec.containers[0].image, 'nginx:1.27');
      assert.deepEqual(got.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
      assert.equal(got.metadata.labels.tier, 'front');
      assert.equal(got.metadata.labels.extra, 'yes');
      assert.equal(got.metadata.annotations.note, 'hi');
      const bad = await k.run(['patch', 'deploy', 'web', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":99}]']);
      assert.notEqual(bad.code, 0);
    });

    test('create <generator> (protobuf bodies from 1.32 on) and auth can-i', async () => {
      const d = await k.run(['create', 'deployment', 'gen', '--image=nginx', '--replicas=3']);
      assert.equal(d.code, 0, d.stderr);
      const cm = await k.run(['create', 'configmap', 'gen-cm', '--from-literal=a=b']);
      assert.equal(cm.code, 0, cm.stderr);
      const s = await k.run(['create', 'secret', 'generic', 'gen-s', '--from-literal=p=q']);
      assert.equal(s.code, 0, s.stderr);
      const n = await k.run(['create', 'namespace', `gen-${ns}`]);
      assert.equal(n.code, 0, n.stderr);
      const svc = await k.run(['create', 'service', 'clusterip', 'gen-svc', '--tcp=80:8080']);
      assert.equal(svc.code, 0, svc.stderr);
      const got = JSON.parse((await k.run(['get', 'deploy', 'gen', '-o', 'json'])).stdout);
      assert.equal(got.spec.replicas, 3);
      assert.equal(got.spec.template.spec.containers[0].image, 'nginx');
      const sec = JSON.parse((await k.run(['get', 'secret', 'gen-s', '-o', 'json'])).stdout);
      assert.equal(Buffer.from(sec.data.p, 'base64').toString(), 'q');
      const sv = JSON.parse((await k.run(['get', 'svc', 'gen-svc', '-o', 'json'])).stdout);
      assert.equal(sv.spec.ports[0].targetPort, 8080);
      assert.match(sv.spec.clusterIP, /^127\./);
      const can = await k.run(['auth', 'can-i', 'create', 'pods']);
      assert.equal(can.code, 0, can.stderr);
      assert.equal(can.stdout.trim(), 'yes');
    });

    test('get: wide, name, jsonpath, custom-columns, -A, -l, describe', async () => {
      const wide = await k.run(['get', 'deploy', '-o', 'wide']);
      assert.match(wide.stdout, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR/m);
      const jp = await k.run(['get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}']);
      assert.equal(jp.stdout, '4');
      const cc = await k.run(['get', 'deploy', '-o', 'custom-columns=N:.metadata.name,R:.spec.replicas']);
      assert.match(cc.stdout, /^web\s+4$/m);
      const all = await k.run(['get', 'deploy', '-A']);
      assert.match(all.stdout, new RegExp(`^${ns}\\s+web\\s+`, 'm'));
      const sel = await k.run(['get', 'deploy', '-l', 'tier=front', '-o', 'name']);
      assert.equal(sel.stdout.trim(), 'deployment.apps/web');
      const desc = await k.run(['describe', 'deploy', 'web']);
      assert.equal(desc.code, 0, desc.stderr);
      assert.match(desc.stdout, /Replicas:\s+4 desired/);
    });

    test('delete -f and delete --wait', async () => {
      const f1 = k.file('d1.yaml', deployment('web', 'nginx:1.25', ''));
      const del = await k.run(['delete', '-f', f1, '--wait']);
      assert.equal(del.code, 0, del.stderr);
      assert.match(del.stdout, /deployment.apps "web" deleted/);
    });
  });
}
