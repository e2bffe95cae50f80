import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAgainstSchema } from '../schema/decode.js';
import {
  ControllerRevision,
  DaemonSetSpec,
  DaemonSetStatus,
  Deployment,
  DeploymentSpec,
  DeploymentStatus,
  ReplicaSetStatus,
  RollingUpdateDeployment,
  StatefulSet,
  StatefulSetSpec,
} from './apps-v1.js';

type Node = Record<string, unknown> & { properties?: Record<string, Node>; items?: Node; required?: string[] };
const node = (s: unknown): Node => s as Node;
const prop = (s: unknown, ...path: string[]): Node => {
  let n = node(s);
  for (const k of path) {
    const next = n.properties?.[k];
    assert.ok(next, `missing property ${path.join('.')}`);
    n = next;
  }
  return n;
};

test('kinds carry TypeMeta, ObjectMeta and the upstream definition ids', () => {
  assert.equal(node(Deployment).$id, 'io.k8s.api.apps.v1.Deployment');
  assert.equal(prop(Deployment, 'metadata').$id, 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.equal(prop(Deployment, 'apiVersion').type, 'string');
  assert.equal(prop(Deployment, 'spec').$id, 'io.k8s.api.apps.v1.DeploymentSpec');
  assert.equal(prop(Deployment, 'status').$id, 'io.k8s.api.apps.v1.DeploymentStatus');
  assert.equal(prop(StatefulSet, 'spec').$id, 'io.k8s.api.apps.v1.StatefulSetSpec');
});

test('Deployment spec.template resolves to the core/v1 PodTemplateSpec definition', () => {
  assert.equal(prop(Deployment, 'spec', 'template').$id, 'io.k8s.api.core.v1.PodTemplateSpec');
  assert.equal(prop(Deployment, 'spec', 'selector').$id, 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector');
  assert.deepEqual([...(node(DeploymentSpec).required ?? [])].sort(), ['selector', 'template']);
});

test('Deployment strategy is retainKeys and rolling update values are int-or-string', () => {
  const strategy = prop(DeploymentSpec, 'strategy');
  assert.equal(strategy.$id, 'io.k8s.api.apps.v1.DeploymentStrategy');
  assert.equal(strategy['x-kubernetes-patch-strategy'], 'retainKeys');
  assert.equal(prop(RollingUpdateDeployment, 'maxSurge')['x-kubernetes-int-or-string'], true);
  assert.equal(prop(RollingUpdateDeployment, 'maxUnavailable')['x-kubernetes-int-or-string'], true);
});

test('status conditions are merged by type and are map lists keyed by type', () => {
  for (const status of [DeploymentStatus, ReplicaSetStatus, DaemonSetStatus]) {
    const conditions = prop(status, 'conditions');
    assert.equal(conditions.type, 'array');
    assert.equal(conditions['x-kubernetes-patch-merge-key'], 'type');
    assert.equal(conditions['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(conditions['x-kubernetes-list-type'], 'map');
    assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
  }
  assert.equal(prop(DeploymentStatus, 'conditions').items?.$id, 'io.k8s.api.apps.v1.DeploymentCondition');
  assert.ok(prop(DeploymentStatus, 'conditions').items?.properties?.lastUpdateTime);
  assert.equal(prop(DeploymentStatus, 'observedGeneration').format, 'int64');
  assert.equal(prop(DeploymentStatus, 'collisionCount').format, 'int32');
});

test('StatefulSet volumeClaimTemplates are atomic PersistentVolumeClaims', () => {
  const vct = prop(StatefulSetSpec, 'volumeClaimTemplates');
  assert.equal(vct['x-kubernetes-list-type'], 'atomic');
  assert.equal(vct['x-kubernetes-patch-merge-key'], undefined);
  assert.equal(vct.items?.$id, 'io.k8s.api.core.v1.PersistentVolumeClaim');
  assert.equal(prop(StatefulSetSpec, 'updateStrategy', 'rollingUpdate', 'partition').format, 'int32');
  assert.equal(prop(StatefulSetSpec, 'updateStrategy', 'rollingUpdate', 'maxUnavailable')['x-kubernetes-int-or-string'], true);
  assert.ok(prop(StatefulSetSpec, 'persistentVolumeClaimRetentionPolicy', 'whenScaled'));
  assert.ok(prop(StatefulSetSpec, 'ordinals', 'start'));
  assert.ok(prop(DaemonSetSpec, 'updateStrategy', 'rollingUpdate', 'maxSurge'));
});

test('ControllerRevision data is kept opaque and revision is int64', () => {
  assert.equal(prop(ControllerRevision, 'data')['x-kubernetes-preserve-unknown-fields'], true);
  assert.equal(prop(ControllerRevision, 'revision').format, 'int64');
});

test('a real-world Deployment manifest decodes cleanly; typos are unknown fields', () => {
  const manifest = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 3,
      revisionHistoryLimit: 5,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
      },
    },
    status: { replicas: 3, terminatingReplicas: 0, conditions: [{ type: 'Available', status: 'True', lastUpdateTime: '2024-01-01T00:00:00Z' }] },
  };
  assert.deepEqual(checkAgainstSchema(Deployment, manifest), { unknown: [], typeErrors: [] });

  const typo = { ...manifest, spec: { ...manifest.spec, replica: 3, paused: 'yes' } };
  const issues = checkAgainstSchema(Deployment, typo);
  assert.deepEqual(issues.unknown, ['spec.replica']);
  assert.equal(issues.typeErrors.length, 1);
  assert.equal(issues.typeErrors[0]?.path, 'spec.paused');
  assert.equal(issues.typeErrors[0]?.parent, 'DeploymentSpec');
});
