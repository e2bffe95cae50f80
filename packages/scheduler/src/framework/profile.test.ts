import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig, ConfigError } from './profile.js';

test('the default profile runs upstream filters in order with upstream score weights', () => {
  const c = buildConfig();
  const p = c.profiles[0]!;
  assert.equal(p.schedulerName, 'default-scheduler');
  assert.deepEqual(
    p.filter.map((f) => f.name),
    [
      'NodeUnschedulable',
      'NodeName',
      'TaintToleration',
      'NodeAffinity',
      'NodePorts',
      'NodeResourcesFit',
      'VolumeRestrictions',
      'NodeVolumeLimits',
      'VolumeBinding',
      'VolumeZone',
      'PodTopologySpread',
      'InterPodAffinity',
    ],
  );
  assert.deepEqual(
    p.reserve.map((r) => r.name),
    ['VolumeBinding'],
  );
  assert.deepEqual(
    p.preBind.map((r) => r.name),
    ['VolumeBinding'],
  );
  assert.deepEqual(
    p.score.map((s) => [s.plugin.name, s.weight]),
    [
      ['TaintToleration', 3],
      ['NodeAffinity', 2],
      ['NodeResourcesFit', 1],
      ['PodTopologySpread', 2],
      ['InterPodAffinity', 2],
      ['NodeResourcesBalancedAllocation', 1],
    ],
  );
  assert.equal(p.preemption, true);
  assert.equal(c.percentageOfNodesToScore, 0);
});

test('a KubeSchedulerConfiguration selects, disables and weights plugins and passes args', () => {
  const c = buildConfig({
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    percentageOfNodesToScore: 30,
    profiles: [
      {
        schedulerName: 'packer',
        plugins: {
          score: { disabled: [{ name: '*' }], enabled: [{ name: 'NodeResourcesFit', weight: 5 }] },
          filter: { disabled: [{ name: 'NodePorts' }] },
          postFilter: { disabled: [{ name: 'DefaultPreemption' }] },
        },
        pluginConfig: [{ name: 'NodeResourcesFit', args: { scoringStrategy: { type: 'MostAllocated' } } }],
      },
      { schedulerName: 'default-scheduler' },
    ],
  });
  assert.equal(c.percentageOfNodesToScore, 30);
  const packer = c.profiles[0]!;
  assert.deepEqual(
    packer.score.map((s) => [s.plugin.name, s.weight]),
    [['NodeResourcesFit', 5]],
  );
  assert.ok(!packer.filter.some((f) => f.name === 'NodePorts'));
  assert.equal(packer.preemption, false);
  assert.equal(c.profiles[1]!.schedulerName, 'default-scheduler');
});

test('VolumeBinding takes bindTimeoutSeconds from its args; reserve and preBind can be disabled', () => {
  const c = buildConfig({
    profiles: [
      {
        plugins: { preBind: { disabled: [{ name: 'VolumeBinding' }] } },
        pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: 30 } }],
      },
    ],
  });
  const p = c.profiles[0]!;
  const vb = p.plugins.find((x) => x.name === 'VolumeBinding') as unknown as { bindTimeoutMs: number };
  assert.equal(vb.bindTimeoutMs, 30_000);
  assert.deepEqual(p.preBind, []);
  assert.deepEqual(
    p.reserve.map((r) => r.name),
    ['VolumeBinding'],
  );
  assert.throws(() => buildConfig({ profiles: [{ pluginConfig: [{ name: 'VolumeBinding', args: { bindTimeoutSeconds: -5 } }] }] }), ConfigError);
});

test('bad configurations are refused with a reason', () => {
  assert.throws(() => buildConfig({ profiles: [{ plugins: { filter: { enabled: [{ name: 'Nope' }] } } }] }), ConfigError);
  assert.throws(() => buildConfig({ percentageOfNodesToScore: 120 }), /percentageOfNodesToScore/);
  assert.throws(() => buildConfig({ profiles: [{}, {}] }), /duplicate schedulerName/);
});
