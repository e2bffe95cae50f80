/**
 * `kubectl top` against canned metrics.k8s.io answers on a loopback server:
 * our output must be what kubectl 1.33 prints (kept literally here for the
 * main cases), and when the real kubectl is installed it runs against the
 * same answers and every case must match it byte for byte, exit code and
 * the metrics requests included.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CannedServer } from '../../test/canned-server.js';
import { Both, realKubectl, type Result } from '../../test/compare.js';
import { APPS, AUTOSCALING, CORE, METRICS, metricsRoutes } from '../../test/metrics-fixture.js';

let server: CannedServer;
let noMetrics: CannedServer;
let both: Both;
let bothNoMetrics: Both;

before(async () => {
  server = await CannedServer.start([CORE, APPS, AUTOSCALING, METRICS], metricsRoutes());
  noMetrics = await CannedServer.start([CORE, APPS, AUTOSCALING], metricsRoutes());
  both = new Both(server);
  bothNoMetrics = new Both(noMetrics);
});
after(async () => {
  both?.cleanup();
  bothNoMetrics?.cleanup();
  await server?.stop();
  await noMetrics?.stop();
});

/** Runs ours, then the real kubectl when there is one, and asserts they agree, requests included. */
async function top(args: string, b = () => both): Promise<Result> {
  const argv = args.split(' ');
  const s = b().server;
  const mark = s.requests.length;
  const ours = await b().ours(argv);
  const mine = s.requests.length;
  const theirs = await b().theirs(argv);
  if (theirs) {
    assert.deepEqual(ours, theirs, `kubectl ${args}`);
    const calls = (from: number, to: number) =>
      s.requests
        .slice(from, to)
        .filter((r) => r.path.includes('metrics.k8s.io/v1beta1/') || r.path.startsWith('/api/v1/'))
        .map((r) => `${r.method} ${r.path}?${new URLSearchParams([...r.query].sort())}`)
        .sort();
    assert.deepEqual(calls(mark, mine), calls(mine, s.requests.length), `requests of kubectl ${args}`);
  }
  return ours;
}

test('top nodes: usage against allocatable, sorted by name, nodes without metrics last as <unknown>', async () => {
  const r = await top('top nodes');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      'NAME       CPU(cores)   CPU(%)                  MEMORY(bytes)   MEMORY(%)   ',
      // An allocatable cpu of 0 divides by zero; Go's int64(NaN) on amd64 is what 1.33 prints.
      'tiny       0m           -9223372036854775808%   0Mi             0%          ',
      'worker-1   251m         6%                      1205Mi          14%         ',
      'worker-2   1250m        62%                     2000Mi          48%         ',
      'worker-3   <unknown>    <unknown>               <unknown>       <unknown>   ',
      '',
    ].join('\n'),
  );
  const one = await top('top node worker-1');
  assert.equal(one.stdout, 'NAME       CPU(cores)   CPU(%)   MEMORY(bytes)   MEMORY(%)   \nworker-1   251m         6%       1205Mi          14%         \n');
  assert.match((await top('top node worker-1 --show-capacity')).stdout, /^worker-1 +251m +6% +1205Mi +7% +$/m);
  const sorted = await top('top no --sort-by=memory --no-headers');
  assert.deepEqual(
    sorted.stdout.split('\n').map((l) => l.split(/\s+/)[0]),
    ['worker-2', 'worker-1', 'tiny', 'worker-3', ''],
  );
  await top('top nodes --sort-by=cpu');
  await top('top nodes -l kubernetes.io/os=linux,zone!=b');
});

test('top pods: per pod, per container, across namespaces, sorted, with sums', async () => {
  const r = await top('top pods');
  assert.equal(
    r.stdout,
    'NAME    CPU(cores)   MEMORY(bytes)   \napi     501m         6Mi             \nweb-1   1000m        0Mi             \nweb-2   105m         1034Mi          \n',
  );
  assert.equal(
    (await top('top pod web-2 --containers')).stdout,
    'POD     NAME      CPU(cores)   MEMORY(bytes)   \nweb-2   app       100m         1024Mi          \nweb-2   sidecar   5m           10Mi            \n',
  );
  assert.equal(
    (await top('top pods -A --containers --sum')).stdout,
    [
      'NAMESPACE     POD       NAME      CPU(cores)   MEMORY(bytes)   ',
      'a-team        zeta      z         7m           30Mi            ',
      'default       api       a         251m         3Mi             ',
      'default       api       b         251m         3Mi             ',
      'default       web-1     app       1000m        0Mi             ',
      'default       web-2     app       100m         1024Mi          ',
      'default       web-2     sidecar   5m           10Mi            ',
      'kube-system   coredns   coredns   3m           20Mi            ',
      '                                  ________     ________        ',
      '                                  1616m        1090Mi          ',
      '',
    ].join('\n'),
  );
  // Under --no-headers upstream counts only three columns for the sum's indentation.
  assert.equal(
    (await top('top pods --sum --no-headers -A')).stdout.split('\n').slice(-3).join('\n'),
    '              ________   ________   \n              1616m      1090Mi     \n',
  );
  assert.equal((await top('top pods --sort-by=cpu')).stdout.split('\n')[1], 'web-1   1000m        0Mi             ');
  await top('top pods -A');
  await top('top po --containers --sort-by=memory');
  await top('top pods --sum');
  await top('top pods -l app=web --field-selector=status.phase=Running');
});

test('top errors and empty answers as kubectl words them', async () => {
  assert.deepEqual(await top('top nodes', () => bothNoMetrics), { code: 1, stdout: '', stderr: 'error: Metrics API not available\n' });
  assert.deepEqual(await top('top pods -A', () => bothNoMetrics), { code: 1, stdout: '', stderr: 'error: Metrics API not available\n' });
  assert.deepEqual(await top('top pods -n young'), { code: 1, stdout: '', stderr: 'error: metrics not available yet\n' });
  assert.deepEqual(await top('top pods -n empty'), { code: 0, stdout: '', stderr: 'No resources found in empty namespace.\n' });
  assert.equal((await top('top pods --sort-by=name')).stderr, 'error: --sort-by accepts only cpu or memory\n');
  assert.equal((await top('top pods web-1 -l app=web')).stderr, 'error: only one of NAME or selector can be provided\n');
  assert.equal((await top('top nodes worker-1 -l a=b')).stderr, 'error: only one of NAME or --selector can be provided\n');
  assert.equal((await top('top pods a b')).stderr, "error: pod [NAME | -l label]\nSee 'kubectl top pod -h' for help and examples\n");
  assert.equal((await top('top foo')).stderr, 'error: unknown command "foo"\nSee \'kubectl top -h\' for help and examples\n');
  assert.match((await top('top pods nope')).stderr, /^Error from server \(NotFound\): /);
  const help = await top('top');
  assert.equal(help.code, 1);
  assert.match(help.stderr, /^Display resource \(CPU\/memory\) usage\.\n/);
});

test('the comparison ran against a real kubectl', { skip: realKubectl ? false : 'no kubectl on PATH: only our output was checked' }, () => {
  assert.ok(realKubectl);
});
