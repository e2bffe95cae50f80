import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columns, parseArgs } from './cli.js';
import { validateManifest } from './validate.js';

test('flags in every spelling; unknown flags are usage errors', () => {
  const { g, args } = parseArgs([
    'get',
    'pods',
    '-n',
    'kube-system',
    '--selector=app=web',
    '-o',
    'wide',
    '-A',
    '--kubeconfig=/x',
    '-f',
    'a.yaml',
    '--filename=b.yaml',
  ]);
  assert.deepEqual(args, ['get', 'pods']);
  assert.equal(g.namespace, 'kube-system');
  assert.equal(g.selector, 'app=web');
  assert.equal(g.output, 'wide');
  assert.equal(g.allNamespaces, true);
  assert.equal(g.kubeconfig, '/x');
  assert.deepEqual(g.filenames, ['a.yaml', 'b.yaml']);
  assert.throws(() => parseArgs(['get', '--bogus']), /unknown flag: --bogus/);
  assert.throws(() => parseArgs(['get', '-n']), /flag needs an argument: -n/);
});

test('columns pad like kubectl (three spaces), the last column unpadded', () => {
  assert.equal(
    columns([
      ['NAME', 'READY'],
      ['web-1', '1/1'],
    ]),
    'NAME    READY\nweb-1   1/1\n',
  );
});

test('client-side validation: kind, apiVersion, names, negative replicas', () => {
  assert.throws(() => validateManifest({ kind: 'Pod', metadata: { name: 'x' } }, 'f.yaml'), /apiVersion not set/);
  assert.throws(() => validateManifest({ apiVersion: 'v1', metadata: { name: 'x' } }, 'f.yaml'), /kind not set/);
  assert.throws(
    () => validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' } }, 'f.yaml'),
    /metadata\.name: Invalid value: "Bad_Name"/,
  );
  assert.throws(
    () => validateManifest({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: -1 } }, 'f.yaml'),
    /spec\.replicas: Invalid value: -1/,
  );
  validateManifest({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'ok' } }, 'f.yaml');
});

import { imageReferenceError } from './validate.js';
import { pickGenerator } from './commands/create.js';
import { conditionMet, parseFor } from './commands/wait.js';
import { rolloutStatus } from './commands/rollout.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './cli.js';

test('image references: registries, ports, tags and digests pass; upper case, spaces and empty tags fail', () => {
  for (const ok of [
    'nginx',
    'nginx:1.27',
    'docker.io/library/nginx:latest',
    '127.0.0.1:5000/team/app:v1',
    'ghcr.io/a/b@sha256:' + 'a'.repeat(64),
    'busybox:1.36-glibc',
  ])
    assert.equal(imageReferenceError(ok), undefined, ok);
  assert.match(imageReferenceError('NGINX')!, /repository name must be lowercase/);
  for (const bad of ['nginx:', 'nginx::1', 'ngi nx', ' nginx', 'nginx@sha256:xyz', '']) assert.ok(imageReferenceError(bad), bad);
  assert.throws(
    () =>
      validateManifest(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd' },
          spec: { template: { spec: { containers: [{ name: 'c', image: 'Nginx:latest' }] } } },
        },
        'f.yaml',
      ),
    /spec\.template\.spec\.containers\[0\]\.image: Invalid value: "Nginx:latest": invalid reference format/,
  );
  assert.throws(
    () => validateManifest({ apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'd' } }, 'f.yaml'),
    /no matches for kind "Deploymnet" in version "apps\/v1"/,
  );
  // A group kubeling does not build in is left to discovery (a CRD may serve it).
  validateManifest({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, 'f.yaml');
});

test('run generators: flags pick the kind as older kubectl did; --generator wins; unknown ones are errors', () => {
  assert.equal(pickGenerator({}), 'run-pod/v1');
  assert.equal(pickGenerator({ restart: 'Never' }), 'run-pod/v1');
  assert.equal(pickGenerator({ replicas: '3' }), 'deployment/apps.v1');
  assert.equal(pickGenerator({ restart: 'OnFailure' }), 'job/v1');
  assert.equal(pickGenerator({ schedule: '*/1 * * * *', restart: 'OnFailure' }), 'cronjob/v1');
  assert.equal(pickGenerator({ generator: 'job/v1', replicas: '2' }), 'job/v1');
  assert.throws(() => pickGenerator({ generator: 'deployment/v0' }), /generator "deployment\/v0" not found/);
});

test('wait --for parsing and conditions (observedGeneration respected)', () => {
  assert.deepEqual(parseFor('condition=Available'), { t: 'condition', type: 'Available', status: 'true' });
  assert.deepEqual(parseFor('condition=Ready=false'), { t: 'condition', type: 'Ready', status: 'false' });
  assert.deepEqual(parseFor('jsonpath={.status.phase}=Running'), { t: 'jsonpath', expr: '{.status.phase}', value: 'Running' });
  assert.deepEqual(parseFor('delete'), { t: 'delete' });
  assert.throws(() => parseFor('bogus'), /unrecognized condition/);
  const pod = { metadata: { generation: 2 }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
  assert.equal(conditionMet(parseFor('condition=Ready'), pod), true);
  assert.equal(conditionMet(parseFor('condition=ready=False'), pod), false);
  assert.equal(conditionMet(parseFor('jsonpath={.status.phase}=Running'), pod), true);
  assert.equal(
    conditionMet(parseFor('condition=Ready'), { ...pod, status: { conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1 }] } }),
    false,
  );
  assert.equal(conditionMet(parseFor('delete'), undefined), true);
});

test('rollout status messages follow upstream DeploymentStatusViewer', () => {
  const d = (status: object, generation = 1) => ({
    kind: 'Deployment',
    metadata: { name: 'web', generation },
    spec: { replicas: 3 },
    status: { observedGeneration: 1, ...status },
  });
  assert.equal(rolloutStatus(d({}, 2))[0], 'Waiting for deployment spec update to be observed...\n');
  assert.equal(
    rolloutStatus(d({ updatedReplicas: 1, replicas: 3 }))[0],
    'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...\n',
  );
  assert.equal(
    rolloutStatus(d({ updatedReplicas: 3, replicas: 4 }))[0],
    'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...\n',
  );
  assert.equal(
    rolloutStatus(d({ updatedReplicas: 3, replicas: 3, availableReplicas: 2 }))[0],
    'Waiting for deployment "web" rollout to finish: 2 of 3 updated replicas are available...\n',
  );
  assert.deepEqual(rolloutStatus(d({ updatedReplicas: 3, replicas: 3, availableReplicas: 3 })), ['deployment "web" successfully rolled out\n', true]);
});

test('config: get-contexts, use-context and set-context --current --namespace write the file that holds them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubectl-config-'));
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  writeFileSync(
    a,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster: {server: "https://127.0.0.1:1", certificate-authority-data: Zm9v}\nusers:\n- name: u1\n  user: {token: secret-token}\ncontexts:\n- name: one\n  context: {cluster: c1, user: u1}\ncurrent-context: one\n',
  );
  writeFileSync(b, 'apiVersion: v1\nkind: Config\ncontexts:\n- name: two\n  context: {cluster: c1, user: u1, namespace: ns2}\n');
  const env = { HOME: dir, KUBECONFIG: `${a}:${b}` };
  const k = async (...argv: string[]) => {
    let out = '';
    let err = '';
    const code = await run(argv, { out: (s) => (out += s), err: (s) => (err += s), env });
    return { code, out, err };
  };
  assert.equal(
    (await k('config', 'get-contexts')).out,
    'CURRENT   NAME   CLUSTER   AUTHINFO   NAMESPACE\n*         one    c1        u1\n          two    c1        u1         ns2\n',
  );
  assert.equal((await k('config', 'current-context')).out, 'one\n');
  const view = (await k('config', 'view')).out;
  assert.match(view, /certificate-authority-data: DATA\+OMITTED/);
  assert.match(view, /token: REDACTED/);
  assert.doesNotMatch(view, /secret-token/);
  assert.match((await k('config', 'view', '--raw', '--minify')).out, /token: secret-token/);
  assert.equal((await k('config', 'use-context', 'two')).out, 'Switched to context "two".\n');
  assert.match(readFileSync(a, 'utf8'), /current-context: two/);
  assert.equal((await k('config', 'set-context', '--current', '--namespace=dev')).out, 'Context "two" modified.\n');
  assert.match(readFileSync(b, 'utf8'), /namespace: dev/);
  assert.match((await k('config', 'use-context', 'nope')).err, /no context exists with the name: "nope"/);
});

test('pflag habits: -ojsonpath=..., -lapp=web, -n=x, -Aw; -v accepted', () => {
  const a = parseArgs(['get', 'pods', '-ojsonpath={.items[*].metadata.name}', '-lapp=web', '-n=kube-system', '-Aw', '-v=6']);
  assert.equal(a.g.output, 'jsonpath={.items[*].metadata.name}');
  assert.equal(a.g.selector, 'app=web');
  assert.equal(a.g.namespace, 'kube-system');
  assert.equal(a.g.allNamespaces, true);
  assert.equal(a.g.watch, true);
  assert.equal(parseArgs(['get', '-A=false']).g.allNamespaces, false);
  assert.throws(() => parseArgs(['get', '-Ax']), /unknown shorthand flag: 'x'/);
});

test('names and namespaces are single path segments: .., / and % are refused', async () => {
  const { pathSegment } = await import('./discovery.js');
  assert.equal(pathSegment('web-1'), 'web-1');
  assert.throws(() => pathSegment('..'), /invalid resource name "\.\.": \[may not be '\.\.'\]/);
  assert.throws(() => pathSegment('../../kube-system/pods/x'), /may not contain '\/'/);
  assert.throws(() => pathSegment('a%2f', 'namespace'), /invalid namespace "a%2f": \[may not contain '%'\]/);
});
