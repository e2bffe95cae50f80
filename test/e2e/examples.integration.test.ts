/** Every manifest under examples/ applies with the real kubectl, and the RBAC example limits jane as it says. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const kubectlBin = kubectlBinaries().default;
let env: TestEnv;

before(async () => {
  if (kubectlBin) env = await startTestEnv({ secure: true });
});
after(async () => {
  await env?.stop();
});

test('kubectl apply -f examples/ creates every example; jane may read pods in team-a only', {
  skip: kubectlBin ? false : 'kubectl is not installed',
}, async () => {
  const admin = await env.pki!.client('kubernetes-admin', ['system:masters']);
  const k = new Kubectl(env.url, kubectlBin!, { caPem: env.pki!.caPem, ...admin });
  try {
    // No controller-manager runs here: the default ServiceAccount pods need is made by hand.
    assert.equal((await k.run(['create', 'serviceaccount', 'default', '-n', 'default'])).code, 0);
    // The namespace comes first so that the Role in it can be created in the same run.
    assert.equal((await k.run(['apply', '-f', `${EXAMPLES}rbac-limited-user.yaml`])).code, 0);
    const a = await k.run(['apply', '-f', EXAMPLES]);
    assert.equal(a.code, 0, a.stderr);
    for (const what of [
      'cronjob.batch/clock',
      'job.batch/countdown',
      'deployment.apps/nginx-deployment',
      'pod/web-with-probes',
      'service/nginx',
      'rolebinding.rbac.authorization.k8s.io/jane-reads-pods',
    ]) {
      assert.match(a.stdout, new RegExp(`${what.replace(/\./g, '\\.')} (created|configured|unchanged)`));
    }
    assert.equal((await k.run(['auth', 'can-i', 'list', 'pods', '--as=jane', '-n', 'team-a'])).stdout.trim(), 'yes');
    assert.equal((await k.run(['auth', 'can-i', 'get', 'pods/log', '--as=jane', '-n', 'team-a'])).stdout.trim(), 'yes');
    assert.equal((await k.run(['auth', 'can-i', 'list', 'pods', '--as=jane', '-n', 'default'])).stdout.trim(), 'no');
    assert.equal((await k.run(['auth', 'can-i', 'delete', 'pods', '--as=jane', '-n', 'team-a'])).stdout.trim(), 'no');
  } finally {
    k.cleanup();
  }
});
