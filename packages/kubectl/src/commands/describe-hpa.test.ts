/**
 * `kubectl describe hpa` against canned autoscaling/v2 (and v1) answers on a
 * loopback server: kubectl 1.33's HorizontalPodAutoscalerDescriber text, kept
 * literally here for the full case, and byte for byte the real kubectl's when
 * it is installed.
 */
process.env.TZ = 'UTC';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { humanDuration } from '@kubeling/apimachinery';
import { CannedServer } from '../../test/canned-server.js';
import { Both, type Result } from '../../test/compare.js';
import { APPS, AUTOSCALING, CORE, METRICS, hpaRoutes } from '../../test/metrics-fixture.js';

let server: CannedServer;
let v1Only: CannedServer;
let both: Both;
let bothV1: Both;

before(async () => {
  server = await CannedServer.start([CORE, APPS, AUTOSCALING, METRICS], hpaRoutes());
  v1Only = await CannedServer.start([CORE, APPS, { ...AUTOSCALING, versions: ['v1'] }], hpaRoutes());
  both = new Both(server);
  bothV1 = new Both(v1Only);
});
after(async () => {
  both?.cleanup();
  bothV1?.cleanup();
  await server?.stop();
  await v1Only?.stop();
});

async function describe(args: string, b = () => both): Promise<Result> {
  const argv = args.split(' ');
  const ours = await b().ours(argv);
  const theirs = await b().theirs(argv);
  if (theirs) assert.deepEqual(ours, theirs, `kubectl ${args}`);
  return ours;
}

test('describe hpa: every metric source, behavior policies, conditions and events', async () => {
  const r = await describe('describe hpa web');
  assert.equal(r.code, 0, r.stderr);
  const pad = (k: string) => k.padEnd(74);
  const age = humanDuration(Date.now() - Date.parse('2025-03-01T10:00:00Z'));
  assert.equal(
    r.stdout,
    [
      `${pad('Name:')}web`,
      `${pad('Namespace:')}default`,
      `${pad('Labels:')}app=web`,
      `${pad('')}tier=front`,
      `${pad('Annotations:')}note: hello`,
      `${pad('CreationTimestamp:')}Sat, 01 Mar 2025 10:00:00 +0000`,
      `${pad('Reference:')}Deployment/web`,
      `${pad('Metrics:')}( current / target )`,
      `${pad('  resource cpu on pods  (as a percentage of request):')}120% (120m) / 50%`,
      `${pad('  resource memory on pods:')}52428800 / 100Mi`,
      `${pad('  "packets-per-second" on pods:')}500 / 1k`,
      `${pad('  "requests-per-second" on Ingress/main-route (target value):')}2500 / 10k`,
      `${pad('  "hits" on Service/web (target average value):')}1500m / 500m`,
      `${pad('  "queue_messages_ready" (target average value):')}1500m / 30`,
      `${pad('  "lag" (target value):')}<unknown> / 2`,
      `${pad('  resource cpu of container "app" on pods  (as a percentage of request):')}<unknown> / 60%`,
      `${pad('  resource memory of container "app" on pods:')}<unknown> / 1Gi`,
      `${pad('  resource cpu on pods  (as a percentage of request):')}<unknown> / <auto>`,
      `${pad('Min replicas:')}2`,
      `${pad('Max replicas:')}10`,
      'Behavior:',
      '  Scale Up:',
      '    Stabilization Window: 0 seconds',
      '    Select Policy: Max',
      '    Policies:',
      '      - Type: Pods     Value: 4    Period: 15 seconds',
      '      - Type: Percent  Value: 100  Period: 15 seconds',
      '  Scale Down:',
      '    Stabilization Window: 300 seconds',
      '    Select Policy: Max',
      '    Policies:',
      '      - Type: Percent  Value: 100  Period: 15 seconds',
      'Deployment pods:       3 current / 4 desired',
      'Conditions:',
      '  Type            Status  Reason              Message',
      '  ----            ------  ------              -------',
      '  AbleToScale     True    SucceededRescale    the HPA controller was able to update the target scale to 4',
      '  ScalingActive   True    ValidMetricFound    the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
      '  ScalingLimited  False   DesiredWithinRange  the desired count is within the acceptable range',
      'Events:',
      `  Type    Reason             ${'Age'.padEnd(age.length + 2)}From                       Message`,
      `  ----    ------             ${'----'.padEnd(age.length + 2)}----                       -------`,
      `  Normal  SuccessfulRescale  ${age}  horizontal-pod-autoscaler  New size: 4; reason: cpu resource utilization (percentage of request) above target`,
      '',
    ].join('\n'),
  );
});

test('describe hpa: unset min replicas, an empty behavior, no conditions; a list describes each', async () => {
  const r = await describe('describe hpa bare');
  assert.match(r.stdout, /^Min replicas: +<unset>$/m);
  assert.match(r.stdout, /^Behavior:\n {2}Scale Up:\nStatefulSet pods: +0 current \/ 0 desired\nEvents: +<none>\n$/m);
  assert.doesNotMatch(r.stdout, /Conditions:/);
  const all = await describe('describe hpa');
  assert.equal(all.stdout.match(/^Name:/gm)?.length, 2);
  await describe('describe horizontalpodautoscalers.autoscaling web');
});

test('describe hpa on a server that serves it only as autoscaling/v1', async () => {
  const r = await describe('describe hpa old', () => bothV1);
  assert.equal(
    r.stdout,
    'Name:                        old\nNamespace:                   default\nLabels:                      app=old\nAnnotations:                 <none>\nCreationTimestamp:           Sat, 01 Mar 2025 10:00:00 +0000\nReference:                   ReplicationController/rc1\nTarget CPU utilization:      80%\nCurrent CPU utilization:     12%\nMin replicas:                1\nMax replicas:                3\nReplicationController pods:  1 current / 1 desired\nEvents:                      <none>\n',
  );
});
