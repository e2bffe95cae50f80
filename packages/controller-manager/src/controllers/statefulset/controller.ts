/**
 * StatefulSet controller (kubernetes pkg/controller/statefulset): pods with
 * stable names `<set>-<ordinal>` (hostname and the governing Service as
 * subdomain), created and removed in order under OrderedReady — one at a time,
 * each Running and Ready before the next, scale-down from the highest ordinal —
 * or all at once under Parallel. Each template version is a ControllerRevision
 * `<set>-<hash>` (the pods' `controller-revision-hash`); RollingUpdate replaces
 * pods from the highest ordinal down to the partition, one at a time, and pods
 * below the partition are (re)made from the current revision. Claims from
 * volumeClaimTemplates are created as PersistentVolumeClaims `<claim>-<pod>` and
 * kept, as upstream's Retain policy.
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isConflict, isNotFound, jsonEqual, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { keyOf } from '@kubeling/client';
import { QueueController } from '../queue-controller.js';
import { ensureRevision, pruneRevisions } from '../history.js';
import { controllerRef, isPodAvailable, isPodReady } from '@kubeling/component-helpers';

type Obj = Record<string, any>;
const HASH = 'controller-revision-hash';
const POD_NAME = 'statefulset.kubernetes.io/pod-name';
const POD_INDEX = 'apps.kubernetes.io/pod-index';

/** The ordinal in a pod name `<set>-<n>`, or undefined for other names. */
const ordinalOf = (set: string, pod: KubeObject): number | undefined => {
  const n = pod.metadata.name ?? '';
  const rest = n.startsWith(`${set}-`) ? n.slice(set.length + 1) : '';
  return /^\d+$/.test(rest) ? Number(rest) : undefined;
};
const finished = (p: KubeObject) => ['Succeeded', 'Failed'].includes((p.status as Obj | undefined)?.phase);
const runningAndReady = (p: KubeObject) => (p.status as Obj | undefined)?.phase === 'Running' && isPodReady(p);

export class StatefulSetController extends QueueController {
  readonly name = 'statefulset';
  private sets!: Informer;
  private pods!: Informer;
  private revisions!: Informer;

  init(): void {
    this.sets = this.ctx.informers.informer({ path: '/apis/apps/v1/statefulsets' });
    this.pods = this.ctx.informers.informer({ path: '/api/v1/pods' });
    this.revisions = this.ctx.informers.informer({ path: '/apis/apps/v1/controllerrevisions' });
    this.sets.addEventHandler({ add: (s) => this.queue.add(keyOf(s)), update: (_o, s) => this.queue.add(keyOf(s)) });
    const podChanged = (p: KubeObject) => {
      const ref = controllerRef(p);
      if (ref?.kind === 'StatefulSet') this.queue.add(`${p.metadata.namespace}/${ref.name}`);
    };
    this.pods.addEventHandler({ add: podChanged, update: (_o, p) => podChanged(p), delete: podChanged });
  }

  private owned(set: KubeObject, informer: Informer): KubeObject[] {
    return informer.store.byIndex('namespace', set.metadata.namespace ?? '').filter((o) => controllerRef(o)?.uid === set.metadata.uid);
  }

  async reconcile(key: string): Promise<void> {
    const set = this.sets.store.get(key);
    if (!set || set.metadata.deletionTimestamp) return;
    const spec = set.spec as Obj;
    const ns = set.metadata.namespace!;
    const name = set.metadata.name!;
    const selector = selectorFromLabelSelector(spec.selector);
    const replicas: number = spec.replicas ?? 1;
    const start: number = spec.ordinals?.start ?? 0;
    const parallel = spec.podManagementPolicy === 'Parallel';
    const rolling = (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    const partition: number = rolling ? (spec.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
    const revs = this.owned(set, this.revisions);
    const updateRevision = (await ensureRevision(this.ctx.client, set, 'StatefulSet', spec.template ?? {}, revs, (n) => n)).name;
    const status0 = (set.status ?? {}) as Obj;
    let currentRevision: string = status0.currentRevision || updateRevision;
    const templateOf = (rev: string): Obj => {
      if (rev === updateRevision) return spec.template ?? {};
      const r = revs.find((x) => x.metadata.name === rev) as Obj | undefined;
      const t = { ...(r?.data?.spec?.template ?? spec.template ?? {}) };
      delete t.$patch;
      return t;
    };
    const pods = this.owned(set, this.pods).filter((p) => selector.matches(p.metadata.labels));
    const byOrdinal = new Map<number, KubeObject>();
    for (const p of pods) {
      const i = ordinalOf(name, p);
      if (i !== undefined) byOrdinal.set(i, p);
    }
    const base = `/api/v1/namespaces/${ns}/pods`;
    const event = (reason: string, message: string) => void this.ctx.recorder('statefulset-controller').event({ ...set, kind: 'StatefulSet', apiVersion: 'apps/v1' }, 'Normal', reason, message);
    const create = async (i: number) => {
      // Pods below the partition keep the current revision while an update rolls.
      const rev = rolling && i - start < partition ? currentRevision : updateRevision;
      const tpl = structuredClone(templateOf(rev)) as Obj;
      const podName = `${name}-${i}`;
      const podSpec = { ...(tpl.spec ?? {}), hostname: podName, ...(spec.serviceName ? { subdomain: spec.serviceName } : {}) } as Obj;
      for (const claim of (spec.volumeClaimTemplates ?? []) as Obj[]) {
        const claimName = `${claim.metadata?.name}-${podName}`;
        await this.ctx.client
          .post(`/api/v1/namespaces/${ns}/persistentvolumeclaims`, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claimName, labels: { ...(tpl.metadata?.labels ?? {}) } }, spec: claim.spec ?? {} })
          .catch((e) => {
            if (!isAlreadyExists(e)) throw e;
          });
        const vols = ((podSpec.volumes ?? []) as Obj[]).filter((v) => v.name !== claim.metadata?.name);
        podSpec.volumes = [...vols, { name: claim.metadata?.name, persistentVolumeClaim: { claimName } }];
      }
      try {
        await this.ctx.client.post(base, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: podName,
            labels: { ...(tpl.metadata?.labels ?? {}), [HASH]: rev, [POD_NAME]: podName, [POD_INDEX]: String(i) },
            ...(tpl.metadata?.annotations ? { annotations: tpl.metadata.annotations } : {}),
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid: set.metadata.uid, controller: true, blockOwnerDeletion: true }],
          },
          spec: podSpec,
        });
        event('SuccessfulCreate', `create Pod ${podName} in StatefulSet ${name} successful`);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
    };
    const remove = async (p: KubeObject) => {
      await this.ctx.client.delete(`${base}/${p.metadata.name}`, { preconditions: { uid: p.metadata.uid } }).then(
        () => event('SuccessfulDelete', `delete Pod ${p.metadata.name} in StatefulSet ${name} successful`),
        (e) => {
          if (!isNotFound(e) && !isConflict(e)) throw e;
        },
      );
    };

    await (async () => {
      const wanted = Array.from({ length: replicas }, (_, k) => start + k);
      // Failed or finished pods are replaced.
      for (const i of wanted) {
        const p = byOrdinal.get(i);
        if (p && finished(p) && !p.metadata.deletionTimestamp) {
          await remove(p);
          if (!parallel) return;
        }
      }
      // Create the missing ones in order (all at once when Parallel), waiting under OrderedReady.
      for (const i of wanted) {
        const p = byOrdinal.get(i);
        if (!p) {
          await create(i);
          if (!parallel) return;
          continue;
        }
        if (!parallel && (p.metadata.deletionTimestamp || !runningAndReady(p))) return;
      }
      // Scale down from the highest ordinal, one at a time under OrderedReady.
      const condemned = [...byOrdinal.entries()].filter(([i]) => !wanted.includes(i)).sort(([a], [b]) => b - a);
      for (const [, p] of condemned) {
        if (p.metadata.deletionTimestamp) {
          if (!parallel) return;
          continue;
        }
        await remove(p);
        if (!parallel) return;
      }
      if (!rolling) return;
      // RollingUpdate: from the highest ordinal down to the partition, one pod at a time.
      for (const i of [...wanted].reverse()) {
        if (i - start < partition) break;
        const p = byOrdinal.get(i)!;
        if (p.metadata.labels?.[HASH] === updateRevision) {
          if (p.metadata.deletionTimestamp || !runningAndReady(p)) return;
          continue;
        }
        if (!p.metadata.deletionTimestamp) await remove(p);
        return;
      }
    })();

    const live = pods.filter((p) => !p.metadata.deletionTimestamp);
    const updated = live.filter((p) => p.metadata.labels?.[HASH] === updateRevision).length;
    const ready = live.filter(isPodReady).length;
    // Once every pod runs the update revision it becomes the current one.
    if (updated === replicas && live.length === replicas && ready === replicas) currentRevision = updateRevision;
    const status: Obj = {
      observedGeneration: set.metadata.generation ?? 1,
      replicas: live.length,
      readyReplicas: ready,
      currentReplicas: live.filter((p) => p.metadata.labels?.[HASH] === currentRevision).length,
      updatedReplicas: updated,
      currentRevision,
      updateRevision,
      collisionCount: 0,
      availableReplicas: live.filter((p) => isPodAvailable(p, spec.minReadySeconds ?? 0, Date.now())).length,
    };
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas']) if (status[k] === 0) delete status[k];
    await pruneRevisions(this.ctx.client, ns, revs, new Set([currentRevision, updateRevision, ...live.map((p) => p.metadata.labels?.[HASH] ?? '')]), spec.revisionHistoryLimit ?? 10);
    if (jsonEqual(status, status0)) return;
    try {
      await this.ctx.client.put(`/apis/apps/v1/namespaces/${ns}/statefulsets/${name}/status`, { ...set, status });
    } catch (e) {
      if (!isConflict(e) && !isNotFound(e)) throw e;
      this.queue.addAfter(key, 100);
    }
    // Waiting on minReadySeconds: look again when the pods could be available.
    if ((spec.minReadySeconds ?? 0) > 0 && status.availableReplicas < ready) this.queue.addAfter(key, 1000);
  }
}
