import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { appsv1 } from '@kubeling/api';
import type { Deployment, Pod, ReplicaSet } from '../kinds.js';
import { claimReplicaSets, HASH_LABEL, reconcileDeployment, REVISION, type DeploymentPlan } from './reconcile.js';
import { podTemplateHash } from './util.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const template = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });

interface DeploymentOpts {
  replicas?: number;
  image?: string;
  strategy?: appsv1.DeploymentStrategy;
  paused?: boolean;
  revision?: string;
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
  status?: appsv1.DeploymentStatus;
}
const deployment = (o: DeploymentOpts = {}): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'ns', uid: 'd-uid', generation: 1, annotations: { team: 'a', ...(o.revision ? { [REVISION]: o.revision } : {}) } },
  spec: {
    replicas: o.replicas ?? 3,
    selector: { matchLabels: { app: 'web' } },
    template: template(o.image ?? 'v2'),
    strategy: o.strategy ?? { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
    ...(o.paused ? { paused: true } : {}),
    ...(o.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: o.revisionHistoryLimit } : {}),
    ...(o.progressDeadlineSeconds ? { progressDeadlineSeconds: o.progressDeadlineSeconds } : {}),
  },
  ...(o.status ? { status: o.status } : {}),
});

/** A ReplicaSet of the Deployment running `image`, with `replicas` wanted and `available` of them available. */
const replicaSet = (image: string, revision: number, replicas: number, available = replicas, o: { podsLeft?: number } = {}): ReplicaSet => {
  const hash = podTemplateHash(template(image));
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `web-${hash}`,
      namespace: 'ns',
      uid: `rs-${image}`,
      creationTimestamp: iso(NOW - (10 - revision) * 60_000),
      labels: { app: 'web', [HASH_LABEL]: hash },
      annotations: { [REVISION]: String(revision) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true }],
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web', [HASH_LABEL]: hash } },
      template: { ...template(image), metadata: { labels: { app: 'web', [HASH_LABEL]: hash } } },
    },
    status: { replicas: o.podsLeft ?? replicas, readyReplicas: available, availableReplicas: available },
  };
};

const podOf = (rs: ReplicaSet): Pod => ({
  metadata: {
    name: `${rs.metadata.name}-x`,
    namespace: 'ns',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name!, uid: rs.metadata.uid!, controller: true }],
  },
});

const run = (d: Deployment, replicaSets: ReplicaSet[], pods: Pod[] = []) => reconcileDeployment({ deployment: d, replicaSets, pods, now: NOW });
const scales = (p: DeploymentPlan) => p.scale.map((s) => `${s.rs.spec?.template?.spec?.containers?.[0]?.image}:${s.from}->${s.to}`);
const cond = (p: DeploymentPlan, type: string) => p.status?.conditions?.find((c) => c.type === type);

test('a new Deployment gets a ReplicaSet named and selected by its template hash, at full size, as revision 1', () => {
  const p = run(deployment(), []);
  const hash = podTemplateHash(template('v2'));
  const rs = p.createReplicaSet!;
  assert.equal(rs.metadata.name, `web-${hash}`);
  assert.deepEqual(rs.metadata.labels, { app: 'web', [HASH_LABEL]: hash });
  assert.deepEqual(rs.metadata.annotations, {
    team: 'a',
    [REVISION]: '1',
    'deployment.kubernetes.io/desired-replicas': '3',
    'deployment.kubernetes.io/max-replicas': '4',
  });
  assert.deepEqual(rs.metadata.ownerReferences, [
    { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-uid', controller: true, blockOwnerDeletion: true },
  ]);
  assert.deepEqual(rs.spec?.selector, { matchLabels: { app: 'web', [HASH_LABEL]: hash } });
  assert.equal(rs.spec?.template?.metadata?.labels?.[HASH_LABEL], hash);
  assert.equal(rs.spec?.replicas, 3);
  assert.equal(p.deploymentRevision, '1');
  assert.deepEqual(p.scale, []);
  assert.equal(cond(p, 'Progressing')?.reason, 'NewReplicaSetCreated');
  // A hash collision names the next one differently.
  const collided = run(deployment({ status: { collisionCount: 1 } }), []);
  assert.equal(collided.createReplicaSet?.metadata.name, `web-${podTemplateHash(template('v2'), 1)}`);
});

test('rolling update: the new ReplicaSet starts within maxSurge, old ones shrink within maxUnavailable, step by step', () => {
  const d = deployment();
  // Step 1: 3 old available; the new one is created with room for 1 (3 + maxSurge 1), and one old replica goes.
  const s1 = run(d, [replicaSet('v1', 1, 3)]);
  assert.equal(s1.createReplicaSet?.spec?.replicas, 1);
  assert.equal(s1.createReplicaSet?.metadata.annotations?.[REVISION], '2');
  assert.deepEqual(scales(s1), ['v1:3->2']);
  assert.equal(s1.deploymentRevision, '2');
  // Step 2: the new pod is available; there is room again, so the new ReplicaSet grows first (and nothing else happens).
  assert.deepEqual(scales(run(d, [replicaSet('v1', 1, 2), replicaSet('v2', 2, 1, 1)])), ['v2:1->2']);
  // Step 3: 2 + 2 = 4 = replicas + maxSurge; 1 new unavailable → minAvailable 2 allows one old down.
  assert.deepEqual(scales(run(d, [replicaSet('v1', 1, 2), replicaSet('v2', 2, 2, 1)])), ['v1:2->1']);
  // Nothing while availability is at its floor (2 available = 3 - maxUnavailable 1).
  assert.deepEqual(scales(run(d, [replicaSet('v1', 1, 2), replicaSet('v2', 2, 2, 0)])), []);
});

test('a scaling event mid-rollout spreads the change over the ReplicaSets in proportion (upstream scale)', () => {
  const sized = (rs: ReplicaSet, desired: number, max: number): ReplicaSet => ({
    ...rs,
    metadata: {
      ...rs.metadata,
      annotations: {
        ...rs.metadata.annotations,
        'deployment.kubernetes.io/desired-replicas': String(desired),
        'deployment.kubernetes.io/max-replicas': String(max),
      },
    },
  });
  const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } };
  // The conformance test: 10 replicas mid-rollout (8 old, 5 new, none of them available), scaled to 30.
  const rollout = [sized(replicaSet('v1', 1, 8), 10, 13), sized(replicaSet('v2', 2, 5, 0), 10, 13)];
  const up = run(deployment({ replicas: 30, strategy, revision: '2' }), rollout);
  assert.deepEqual(scales(up), ['v1:8->20', 'v2:5->13']);
  assert.equal(up.createReplicaSet, undefined);
  assert.deepEqual(up.scaleAnnotations, { 'deployment.kubernetes.io/desired-replicas': '30', 'deployment.kubernetes.io/max-replicas': '33' });
  // Down again: the larger first, leftovers to it.
  const down = run(deployment({ replicas: 10, strategy, revision: '2' }), [sized(replicaSet('v1', 1, 20), 30, 33), sized(replicaSet('v2', 2, 13, 0), 30, 33)]);
  assert.deepEqual(scales(down), ['v1:20->8', 'v2:13->5']);
  // One active ReplicaSet takes the whole count.
  assert.deepEqual(scales(run(deployment({ replicas: 5, revision: '2' }), [replicaSet('v1', 1, 0), sized(replicaSet('v2', 2, 3), 3, 4)])), ['v2:3->5']);
});

test('rolling update with maxUnavailable 0 never takes an available replica away before a new one is available', () => {
  const d = deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } });
  assert.deepEqual(scales(run(d, [replicaSet('v1', 1, 3), replicaSet('v2', 2, 1, 0)])), []);
  assert.deepEqual(scales(run(d, [replicaSet('v1', 1, 3), replicaSet('v2', 2, 1, 1)])), ['v1:3->2']);
});

test('rolling update scales unavailable old replicas away first, oldest ReplicaSet first', () => {
  const d = deployment({ replicas: 4, image: 'v3' });
  // v1 has 2 replicas, none available; v2 has 2, both available; v3 (new) is full at surge.
  const p = run(d, [replicaSet('v1', 1, 2, 0), replicaSet('v2', 2, 2, 2), replicaSet('v3', 3, 1, 1)]);
  assert.deepEqual(scales(p), ['v1:2->0']);
  // With more room, the unavailable ones go first and then available ones down to minAvailable (4 - 1 = 3).
  const roomy = run(deployment({ replicas: 4, image: 'v3', strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } }), [
    replicaSet('v1', 1, 1, 0),
    replicaSet('v2', 2, 2, 2),
    replicaSet('v3', 3, 2, 2),
  ]);
  assert.deepEqual(scales(roomy), ['v1:1->0', 'v2:2->1']);
});

test('recreate: old ReplicaSets go to zero first; the new one grows once their pods are gone', () => {
  const d = deployment({ strategy: { type: 'Recreate' } });
  const old = replicaSet('v1', 1, 3);
  const s1 = run(d, [old], [podOf(old)]);
  assert.equal(s1.createReplicaSet?.spec?.replicas, 0, 'created empty');
  assert.deepEqual(scales(s1), ['v1:3->0']);
  const emptied = replicaSet('v1', 1, 0, 0, { podsLeft: 1 });
  assert.deepEqual(scales(run(d, [emptied, replicaSet('v2', 2, 0, 0)], [podOf(emptied)])), [], 'waits while old pods remain');
  assert.deepEqual(scales(run(d, [replicaSet('v1', 1, 0, 0), replicaSet('v2', 2, 0, 0)])), ['v2:0->3']);
});

test('rollback: an old ReplicaSet running the template becomes new again with the next revision', () => {
  const d = deployment({ image: 'v1', revision: '2' });
  const p = run(d, [replicaSet('v1', 1, 0, 0), replicaSet('v2', 2, 3)]);
  assert.equal(p.createReplicaSet, undefined);
  assert.equal(p.reviseReplicaSet?.rs.metadata.uid, 'rs-v1');
  assert.equal(p.reviseReplicaSet?.revision, '3');
  assert.equal(p.deploymentRevision, '3');
  assert.deepEqual(scales(p), ['v1:0->1']);
});

test('paused: existing ReplicaSets are scaled, nothing rolls out', () => {
  const paused = deployment({ paused: true, replicas: 5, image: 'v1' });
  const p = run(paused, [replicaSet('v1', 1, 3)]);
  assert.deepEqual(scales(p), ['v1:3->5']);
  assert.equal(cond(p, 'Progressing')?.reason, 'DeploymentPaused');
  const changed = run(deployment({ paused: true, image: 'v2' }), [replicaSet('v1', 1, 3)]);
  assert.equal(changed.createReplicaSet, undefined, 'a new template waits for resume');
  assert.deepEqual(changed.scale, []);
});

test('old ReplicaSets scaled to zero beyond revisionHistoryLimit are deleted, oldest revision first', () => {
  const d = deployment({ image: 'v4', revisionHistoryLimit: 1 });
  const p = run(d, [replicaSet('v2', 2, 0, 0), replicaSet('v1', 1, 0, 0), replicaSet('v3', 3, 0, 0), replicaSet('v4', 4, 3)]);
  assert.deepEqual(
    p.deleteReplicaSets.map((r) => r.metadata.uid),
    ['rs-v1', 'rs-v2'],
  );
  assert.deepEqual(
    run(deployment({ image: 'v4' }), [replicaSet('v1', 1, 0, 0), replicaSet('v4', 4, 3)]).deleteReplicaSets,
    [],
    'within the default limit of 10',
  );
});

test('status: counts, Available and Progressing; complete when every replica is updated and available', () => {
  const done = run(deployment({ image: 'v2', revision: '2' }), [replicaSet('v1', 1, 0, 0, { podsLeft: 0 }), replicaSet('v2', 2, 3)]);
  assert.equal(done.complete, true);
  assert.equal(done.requeueAfterMs, undefined);
  const { conditions, ...counts } = done.status!;
  assert.deepEqual(counts, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
  assert.deepEqual(
    conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
    [
      ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
      ['Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${replicaSet('v2', 2, 3).metadata.name}" has successfully progressed.`],
    ],
  );
  assert.equal(
    run(deployment({ image: 'v2', revision: '2', status: done.status! }), [replicaSet('v1', 1, 0, 0, { podsLeft: 0 }), replicaSet('v2', 2, 3)]).status,
    undefined,
    'unchanged status is not written',
  );

  const rolling = run(deployment({ revision: '2', progressDeadlineSeconds: 600 }), [replicaSet('v1', 1, 2), replicaSet('v2', 2, 2, 1)]);
  assert.equal(rolling.complete, false);
  assert.equal(rolling.requeueAfterMs, 10_000);
  assert.deepEqual([rolling.status?.updatedReplicas, rolling.status?.unavailableReplicas], [2, 1]);
});

test('progress deadline: nothing moved for progressDeadlineSeconds turns Progressing False', () => {
  const rss = [replicaSet('v1', 1, 1), replicaSet('v2', 2, 3, 1)];
  const first = run(deployment({ revision: '2', progressDeadlineSeconds: 60 }), rss);
  const stuck = {
    ...first.status!,
    conditions: first.status!.conditions!.map((c) => (c.type === 'Progressing' ? { ...c, lastUpdateTime: iso(NOW - 120_000) } : c)),
  };
  const later = run(deployment({ revision: '2', progressDeadlineSeconds: 60, status: stuck }), rss);
  assert.deepEqual([cond(later, 'Progressing')?.status, cond(later, 'Progressing')?.reason], ['False', 'ProgressDeadlineExceeded']);
});

test('claiming takes the ReplicaSets it controls and orphans its selector matches', () => {
  const mine = replicaSet('v1', 1, 1);
  const orphan: ReplicaSet = { ...replicaSet('v0', 0, 1), metadata: { ...replicaSet('v0', 0, 1).metadata, ownerReferences: [] } };
  const others: ReplicaSet = {
    ...replicaSet('vx', 0, 1),
    metadata: {
      ...replicaSet('vx', 0, 1).metadata,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'other', uid: 'other', controller: true }],
    },
  };
  const elsewhere: ReplicaSet = { ...orphan, metadata: { ...orphan.metadata, uid: 'elsewhere', labels: { app: 'db' } } };
  assert.deepEqual(
    claimReplicaSets(deployment(), [mine, orphan, others, elsewhere]).map((c) => [c.rs.metadata.uid, c.action]),
    [
      ['rs-v1', 'own'],
      ['rs-v0', 'adopt'],
    ],
  );
});

test('revisions are int64: an adopted ReplicaSet of a revision past 2^53 is followed by the next one exactly', () => {
  const old = replicaSet('v1', 1, 3);
  old.metadata.annotations![REVISION] = '3546343826724305832';
  const p = run(deployment(), [old]);
  assert.equal(p.createReplicaSet?.metadata.annotations?.[REVISION], '3546343826724305833');
});
