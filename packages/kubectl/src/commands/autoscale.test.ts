/**
 * `kubectl autoscale` against canned answers on a loopback server: the
 * HorizontalPodAutoscaler we send (autoscaling/v2, falling back to v1) and
 * what we print must be kubectl 1.33's. With the real kubectl installed, each
 * case also runs through it and the outputs and the created objects (its
 * protobuf bodies decoded) must be equal.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CannedServer } from '../../test/canned-server.js';
import { Both, type Result } from '../../test/compare.js';
import { APPS, AUTOSCALING, CORE, METRICS, autoscaleRoutes, decodeBody } from '../../test/metrics-fixture.js';

let server: CannedServer;
let both: Both;

before(async () => {
  server = await CannedServer.start([CORE, APPS, AUTOSCALING, METRICS], autoscaleRoutes());
  both = new Both(server);
});
after(async () => {
  both?.cleanup();
  await server?.stop();
});

interface Sent {
  call: string;
  body: unknown;
}

/** Our result and the objects we created; the real kubectl's must be the same when it is installed. */
async function autoscale(args: string): Promise<Result & { sent: Sent[] }> {
  const argv = args.split(' ');
  const posts = (from: number, to: number): Sent[] =>
    server.requests
      .slice(from, to)
      .filter((r) => r.method === 'POST')
      .map((r) => ({ call: `${r.method} ${r.path}?${new URLSearchParams([...r.query].sort())}`, body: decodeBody(r) }));
  const mark = server.requests.length;
  const ours = await both.ours(argv);
  const mine = server.requests.length;
  const theirs = await both.theirs(argv);
  if (theirs) {
    assert.deepEqual(ours, theirs, `kubectl ${args}`);
    assert.deepEqual(posts(mark, mine), posts(mine, server.requests.length), `objects sent by kubectl ${args}`);
  }
  return { ...ours, sent: posts(mark, mine) };
}

const ref = (kind: string, name: string, apiVersion = 'apps/v1') => ({ kind, name, apiVersion });

test('autoscale creates an autoscaling/v2 HPA: a cpu Utilization metric from --cpu-percent, --min only when above 0', async () => {
  const r = await autoscale('autoscale deployment web --min=2 --max=5 --cpu-percent=50');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'horizontalpodautoscaler.autoscaling/web autoscaled\n');
  assert.deepEqual(r.sent, [
    {
      call: 'POST /apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers?fieldManager=kubectl-autoscale',
      body: {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web' },
        spec: {
          scaleTargetRef: ref('Deployment', 'web'),
          minReplicas: 2,
          maxReplicas: 5,
          metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        },
      },
    },
  ]);
  const named = await autoscale('autoscale deployment/web --max=5 --min=0 --name=w2');
  assert.equal(named.stdout, 'horizontalpodautoscaler.autoscaling/w2 autoscaled\n');
  assert.deepEqual((named.sent[0]!.body as { spec: unknown }).spec, { scaleTargetRef: ref('Deployment', 'web'), maxReplicas: 5 });
  const rc = await autoscale('autoscale rc rc1 --max=3 --cpu-percent=0 --dry-run=server');
  assert.equal(rc.stdout, 'horizontalpodautoscaler.autoscaling/rc1 autoscaled (server dry run)\n');
  assert.match(rc.sent[0]!.call, /dryRun=All/);
  await autoscale('autoscale rs rs1 --max=3 -o name');
  await autoscale('autoscale sts db --max=3 --cpu-percent=-5');
});

test('autoscale falls back to autoscaling/v1 when the v2 create fails', async () => {
  const r = await autoscale('autoscale deployment web --max=3 --cpu-percent=20 -n legacy');
  assert.equal(r.stdout, 'horizontalpodautoscaler.autoscaling/web autoscaled\n');
  assert.deepEqual(
    r.sent.map((s) => s.call),
    [
      'POST /apis/autoscaling/v2/namespaces/legacy/horizontalpodautoscalers?fieldManager=kubectl-autoscale',
      'POST /apis/autoscaling/v1/namespaces/legacy/horizontalpodautoscalers?fieldManager=kubectl-autoscale',
    ],
  );
  assert.deepEqual(r.sent[1]!.body, {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web' },
    spec: { scaleTargetRef: ref('Deployment', 'web'), maxReplicas: 3, targetCPUUtilizationPercentage: 20 },
  });
  const taken = await autoscale('autoscale deployment web --max=3 --name=taken');
  assert.equal(taken.code, 1);
  assert.equal(taken.stderr, 'Error from server (AlreadyExists): horizontalpodautoscalers.autoscaling "taken" already exists\n');
});

test('autoscale --dry-run=client prints the object as Go leaves it', async () => {
  const y = await autoscale('autoscale sts db --max=3 --min=1 --cpu-percent=5 --dry-run=client -o yaml');
  assert.equal(
    y.stdout,
    'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  creationTimestamp: null\n  name: db\nspec:\n  maxReplicas: 3\n  metrics:\n  - resource:\n      name: cpu\n      target:\n        averageUtilization: 5\n        type: Utilization\n    type: Resource\n  minReplicas: 1\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: StatefulSet\n    name: db\nstatus:\n  currentMetrics: null\n  desiredReplicas: 0\n',
  );
  assert.deepEqual(y.sent, []);
  assert.equal((await autoscale('autoscale deployment web --max=3 --dry-run=client')).stdout, 'horizontalpodautoscaler.autoscaling/web created (dry run)\n');
  assert.match((await autoscale('autoscale rs rs1 --max=2 --dry-run=client -o json')).stdout, /^\{\n {4}"kind": "HorizontalPodAutoscaler",\n {4}"apiVersion"/);
});

test('autoscale refuses what kubectl refuses, in its words', async () => {
  const err = async (args: string) => (await autoscale(args)).stderr;
  assert.equal(await err('autoscale deployment web'), 'error: required flag(s) "max" not set\n');
  assert.equal(await err('autoscale deployment web --max=0'), 'error: --max=MAXPODS is required and must be at least 1, max: 0\n');
  assert.equal(await err('autoscale deployment web --min=5 --max=2'), 'error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: 2, min: 5\n');
  assert.equal(
    await err('autoscale deployment web --max=3 --cpu-percent=x'),
    'error: invalid argument "x" for "--cpu-percent" flag: strconv.ParseInt: parsing "x": invalid syntax\nSee \'kubectl autoscale --help\' for usage.\n',
  );
  assert.match(await err('autoscale deployment web --max=99999999999'), /value out of range/);
  assert.match(await err('autoscale deployment web --max=3 --min=0x10'), /max: 3, min: 16\n$/);
  assert.equal(
    await err('autoscale ds agent --max=3'),
    'error: cannot autoscale a DaemonSet: could not find scale subresource for apps/v1, Resource=daemonsets in discovery information\n',
  );
  assert.equal(
    await err('autoscale pods solo --max=3'),
    'error: cannot autoscale a Pod: could not find scale subresource for /v1, Resource=pods in discovery information\n',
  );
  assert.match(await err('autoscale --max=3'), /^error: You must provide one or more resources by argument or filename\./);
  assert.equal(await err('autoscale deployment --max=3'), 'error: resource(s) were provided, but no name was specified\n');
  assert.match(
    await err('autoscale deployment web --max=3 -o wide'),
    /^error: unable to match a printer suitable for the output format "wide", allowed formats are: /,
  );
  // Every name is tried; the errors come at the end, one a line.
  const two = await autoscale('autoscale deployment nope web --max=3 --dry-run=client');
  assert.equal(two.code, 1);
  assert.equal(two.stdout, 'horizontalpodautoscaler.autoscaling/web created (dry run)\n');
  assert.match(two.stderr, /^Error from server \(NotFound\): /);
  assert.equal((await autoscale('autoscale deployment nope1 nope2 --max=3')).stderr.split('\n').length, 3);
});
