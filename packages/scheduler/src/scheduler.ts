/**
 * The scheduler (kubernetes pkg/scheduler schedule_one.go): pops the next pod,
 * runs the profile's PreFilter and Filter plugins over a rotating sample of
 * nodes (percentageOfNodesToScore), scores the feasible ones, assumes the pod on
 * the best node in the cache and binds it in the background, so the next pod is
 * placed at once. A pod that fits nowhere gets a FailedScheduling event with the
 * reasons histogram, PodScheduled=False/Unschedulable, and — when DefaultPreemption
 * finds victims — a nominated node while the victims leave.
 */
import { isConflict, isNotFound, jsonEqual, rfc3339 } from '@kubeling/apimachinery';
import { EventRecorder, type Informer, type InformerFactory, type RestClient } from '@kubeling/client';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { SchedulerCache } from './cache.js';
import type { Profile, SchedulerConfig } from './framework/profile.js';
import { PodInfo, podKey, type CycleState, type Node, type NodeInfo, type Pod, type PodDisruptionBudget, type Status } from './framework/types.js';
import { disruptionTargetPatch, eligibleToPreempt, preempt, type Candidate } from './preemption.js';
import { SchedulingQueue, type QueuedPod } from './queue.js';

export const MIN_FEASIBLE_NODES = 100;
const MIN_FEASIBLE_PERCENTAGE = 5;

/** numFeasibleNodesToFind: all nodes under 100, else an adaptive percentage (50 % − nodes/125, at least 5 %), never under 100. */
export function numFeasibleNodesToFind(percentage: number, allNodes: number): number {
  if (allNodes < MIN_FEASIBLE_NODES || percentage >= 100) return allNodes;
  let adaptive = percentage;
  if (adaptive <= 0) adaptive = Math.max(50 - Math.floor(allNodes / 125), MIN_FEASIBLE_PERCENTAGE);
  const n = Math.floor((allNodes * adaptive) / 100);
  return Math.max(n, MIN_FEASIBLE_NODES);
}

/** FitError.Error(): "0/N nodes are available: <count reason, ...>." plus the preemption message. */
export function fitErrorMessage(total: number, diagnosis: Map<string, Status>, postFilter = ''): string {
  if (total === 0) return 'no nodes available to schedule pods';
  const counts = new Map<string, number>();
  for (const st of diagnosis.values()) for (const r of st.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  const msg = `0/${total} nodes are available: ${parts.join(', ')}.`;
  return postFilter ? `${msg} ${postFilter}` : msg;
}

export interface SchedulerOptions {
  client: RestClient;
  /** Events go through their own client so they never take binding's rate. */
  eventClient?: RestClient;
  informers: InformerFactory;
  config: SchedulerConfig;
  log: Logger;
  metrics?: Registry;
}

interface ScheduleResult {
  node?: NodeInfo;
  diagnosis: Map<string, Status>;
  evaluated: number;
  feasible: number;
}

export class Scheduler {
  readonly cache = new SchedulerCache();
  readonly queue: SchedulingQueue;
  private readonly profiles = new Map<string, Profile>();
  private pods!: Informer<Pod>;
  private nodes!: Informer<Node>;
  private pdbs!: Informer<PodDisruptionBudget>;
  private nextStartNodeIndex = 0;
  private readonly recorder: EventRecorder;
  /** Pods nominated to nodes by preemption, until bound or deleted. */
  private readonly nominated = new Map<string, { info: PodInfo; node: string }>();
  private running = false;
  private loopDone: Promise<void> | undefined;
  /** Bindings in flight (each a request). */
  private inflight = 0;
  private readonly m: {
    attempts: Counter<'result' | 'profile'>;
    attemptDuration: Histogram<'result' | 'profile'>;
    e2e: Histogram<'attempts'>;
    preemptionAttempts: Counter;
    preemptionVictims: Histogram;
  };
  /** Pods assumed (a node chosen) and pods whose binding succeeded. */
  scheduled = 0;
  bound = 0;
  /** Milliseconds spent in the scheduling algorithm (filter + score), for figures. */
  algorithmMs = 0;

  constructor(private readonly o: SchedulerOptions) {
    for (const p of o.config.profiles) this.profiles.set(p.schedulerName, p);
    this.queue = new SchedulingQueue({ initialBackoffMs: o.config.podInitialBackoffSeconds * 1000, maxBackoffMs: o.config.podMaxBackoffSeconds * 1000 });
    this.recorder = new EventRecorder(o.eventClient ?? o.client, { component: 'default-scheduler' });
    const registers = o.metrics ? [o.metrics] : [];
    const self = this;
    this.m = {
      attempts: new Counter({
        name: 'scheduler_schedule_attempts_total',
        help: 'Number of attempts to schedule pods, by the result.',
        labelNames: ['result', 'profile'],
        registers,
      }),
      attemptDuration: new Histogram({
        name: 'scheduler_scheduling_attempt_duration_seconds',
        help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding).',
        labelNames: ['result', 'profile'],
        buckets: [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048],
        registers,
      }),
      e2e: new Histogram({
        name: 'scheduler_pod_scheduling_sli_duration_seconds',
        help: 'E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue.',
        labelNames: ['attempts'],
        buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96],
        registers,
      }),
      preemptionAttempts: new Counter({ name: 'scheduler_preemption_attempts_total', help: 'Total preemption attempts in the cluster till now.', registers }),
      preemptionVictims: new Histogram({
        name: 'scheduler_preemption_victims',
        help: 'Number of selected preemption victims.',
        buckets: [1, 2, 4, 8, 16, 32, 64],
        registers,
      }),
    };
    new Gauge({
      name: 'scheduler_pending_pods',
      help: 'Number of pending pods, by the queue type.',
      labelNames: ['queue'],
      registers,
      collect() {
        const p = self.queue.pending;
        this.set({ queue: 'active' }, p.active);
        this.set({ queue: 'backoff' }, p.backoff);
        this.set({ queue: 'unschedulable' }, p.unschedulable);
      },
    });
  }

  private responsible(pod: Pod): boolean {
    return this.profiles.has(pod.spec?.schedulerName ?? 'default-scheduler');
  }

  private static assigned(pod: Pod): boolean {
    return !!pod.spec?.nodeName;
  }

  private static terminal(pod: Pod): boolean {
    const phase = pod.status?.phase;
    return phase === 'Succeeded' || phase === 'Failed';
  }

  /** Registers informers and handlers; call before the factory starts. */
  init(): void {
    const f = this.o.informers;
    this.pods = f.informer<Pod>({ path: '/api/v1/pods', fieldSelector: 'status.phase!=Succeeded,status.phase!=Failed' });
    this.nodes = f.informer<Node>({ path: '/api/v1/nodes' });
    this.pdbs = f.informer<PodDisruptionBudget>({ path: '/apis/policy/v1/poddisruptionbudgets' });
    this.nodes.addEventHandler({
      add: (n) => {
        this.cache.addNode(n);
        this.queue.moveAllToActiveOrBackoff('NodeAdd');
      },
      update: (old, n) => {
        this.cache.updateNode(n);
        if (!jsonEqual(old.metadata.labels, n.metadata.labels) || !jsonEqual(old.spec, n.spec) || !jsonEqual(old.status?.allocatable, n.status?.allocatable)) {
          this.queue.moveAllToActiveOrBackoff('NodeUpdate');
        }
      },
      delete: (n) => this.cache.removeNode(n),
    });
    this.pods.addEventHandler({
      add: (p) => this.podAdded(p),
      update: (old, p) => this.podUpdated(old, p),
      delete: (p) => this.podDeleted(p),
    });
  }

  private podAdded(p: Pod): void {
    if (Scheduler.terminal(p)) return;
    if (Scheduler.assigned(p)) {
      this.cache.addPod(p);
      this.nominated.delete(podKey(p));
      this.queue.moveAllToActiveOrBackoff('AssignedPodAdd');
    } else if (this.responsible(p) && !p.metadata.deletionTimestamp) {
      this.trackNomination(p);
      this.queue.add(p);
    }
  }

  private podUpdated(old: Pod, p: Pod): void {
    if (Scheduler.terminal(p)) return this.podDeleted(p);
    if (Scheduler.assigned(p)) {
      if (!Scheduler.assigned(old)) {
        this.queue.delete(old);
        this.nominated.delete(podKey(p));
        this.cache.addPod(p);
        this.queue.moveAllToActiveOrBackoff('AssignedPodAdd');
      } else {
        this.cache.updatePod(p);
        if (!old.metadata.deletionTimestamp && p.metadata.deletionTimestamp) this.queue.moveAllToActiveOrBackoff('AssignedPodUpdate');
      }
    } else if (this.responsible(p)) {
      if (p.metadata.deletionTimestamp) {
        this.queue.delete(p);
        this.nominated.delete(podKey(p));
      } else {
        this.trackNomination(p);
        // Status-only changes (our own condition updates among them) do not
        // make a pod schedulable: leave it where it is (upstream isPodUpdated).
        if (Scheduler.specOrMetaChanged(old, p)) this.queue.update(p);
      }
    }
  }

  private podDeleted(p: Pod): void {
    this.nominated.delete(podKey(p));
    if (Scheduler.assigned(p)) {
      this.cache.removePod(p);
      this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
    } else this.queue.delete(p);
  }

  private static specOrMetaChanged(a: Pod, b: Pod): boolean {
    const strip = (o: Pod) => ({ ...o.metadata, resourceVersion: undefined, generation: undefined, managedFields: undefined });
    return !jsonEqual(a.spec, b.spec) || !jsonEqual(strip(a), strip(b));
  }

  private trackNomination(p: Pod): void {
    const node = p.status?.nominatedNodeName;
    if (node) this.nominated.set(podKey(p), { info: new PodInfo(p), node });
    else this.nominated.delete(podKey(p));
  }

  /** Starts scheduling; the informers must have been started. */
  async run(): Promise<void> {
    await this.o.informers.waitForSync();
    this.running = true;
    this.queue.run();
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.queue.close();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const q = await this.queue.pop();
      if (!q) return;
      try {
        this.scheduleOne(q);
      } catch (e) {
        this.o.log.error({ err: String(e), pod: q.info.key }, 'scheduling attempt failed');
        this.queue.addBackoff(q);
      }
      // Let informer events and binding responses in between pods.
      if (this.queue.pending.active === 0 || this.scheduled % 16 === 0) await new Promise((r) => setImmediate(r));
    }
  }

  // ---- one pod ------------------------------------------------------------------

  private scheduleOne(q: QueuedPod): void {
    const key = q.info.key;
    const pod = this.pods.store.get(key);
    if (!pod || Scheduler.assigned(pod) || pod.metadata.deletionTimestamp || !this.responsible(pod)) {
      this.queue.done(key);
      return;
    }
    const profile = this.profiles.get(pod.spec?.schedulerName ?? 'default-scheduler')!;
    const info = new PodInfo(pod);
    const cycle = this.queue.schedulingCycle;
    const started = performance.now();
    const result = this.schedulePod(profile, info);
    this.algorithmMs += performance.now() - started;
    if (!result.node) {
      const nodes = this.cache.nodes();
      let postFilter = '';
      let candidate: Candidate | undefined;
      if (profile.preemption && nodes.length) {
        const why = eligibleToPreempt(info, (n) => this.cache.node(n));
        if (why) postFilter = `preemption: ${why}`;
        else {
          this.m.preemptionAttempts.inc();
          const r = preempt(
            { profile, nodes, pdbs: this.pdbs.store.list(), fits: (p, view, n) => this.fitsAfterPrefilter(profile, p, view, n) },
            info,
            result.diagnosis,
          );
          candidate = r.candidate;
          postFilter = r.message;
        }
      }
      const message = fitErrorMessage(nodes.length, result.diagnosis, postFilter);
      this.m.attempts.inc({ result: 'unschedulable', profile: profile.schedulerName });
      this.m.attemptDuration.observe({ result: 'unschedulable', profile: profile.schedulerName }, (performance.now() - started) / 1000);
      const rejectedBy = new Set([...result.diagnosis.values()].map((s) => s.plugin));
      if (candidate) {
        rejectedBy.add('DefaultPreemption');
        this.nominated.set(key, { info, node: candidate.node });
        void this.evict(pod, candidate, profile);
      }
      this.queue.addUnschedulable(q, cycle, rejectedBy);
      void this.recordFailure(pod, message, candidate?.node);
      return;
    }
    const node = result.node.name;
    this.cache.assume(pod, node);
    this.nominated.delete(key);
    this.scheduled++;
    this.inflight++;
    void this.bind(q, pod, node, profile, started);
  }

  /** PreFilter over `view` then Filter on `node` (preemption dry runs). */
  private fitsAfterPrefilter(profile: Profile, pod: PodInfo, view: readonly NodeInfo[], node: NodeInfo): Status | null {
    const state: CycleState = new Map();
    for (const pf of profile.preFilter) {
      const st = pf.preFilter(state, pod, view);
      if (st) return st;
    }
    return this.runFilters(profile, state, pod, node);
  }

  private nominatedOn(node: string, pod: PodInfo): PodInfo[] {
    const out: PodInfo[] = [];
    for (const [k, n] of this.nominated) if (n.node === node && k !== pod.key && n.info.priority >= pod.priority) out.push(n.info);
    return out;
  }

  private runFilters(profile: Profile, state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    let target = node;
    if (this.nominated.size) {
      const extra = this.nominatedOn(node.name, pod);
      if (extra.length) {
        target = node.clone();
        for (const e of extra) target.addPod(e);
      }
    }
    for (const f of profile.filter) {
      const st = f.filter(state, pod, target);
      if (st) return st;
    }
    return null;
  }

  /** The scheduling algorithm: filter, then score; synchronous. */
  schedulePod(profile: Profile, pod: PodInfo): ScheduleResult {
    const nodes = this.cache.nodes();
    const diagnosis = new Map<string, Status>();
    if (!nodes.length) return { diagnosis, evaluated: 0, feasible: 0 };
    const state: CycleState = new Map();
    for (const pf of profile.preFilter) {
      const st = pf.preFilter(state, pod, nodes);
      if (st) {
        for (const n of nodes) diagnosis.set(n.name, st);
        return { diagnosis, evaluated: 0, feasible: 0 };
      }
    }
    // A node nominated by an earlier preemption is tried first, alone.
    const nominatedName = pod.pod.status?.nominatedNodeName;
    if (nominatedName) {
      const n = this.cache.node(nominatedName);
      if (n && !this.runFilters(profile, state, pod, n)) return { node: n, diagnosis, evaluated: 1, feasible: 1 };
    }
    const want = numFeasibleNodesToFind(this.o.config.percentageOfNodesToScore, nodes.length);
    const feasible: NodeInfo[] = [];
    let processed = 0;
    for (let i = 0; i < nodes.length && feasible.length < want; i++) {
      const n = nodes[(this.nextStartNodeIndex + i) % nodes.length]!;
      processed++;
      const st = this.runFilters(profile, state, pod, n);
      if (st) diagnosis.set(n.name, st);
      else feasible.push(n);
    }
    this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % nodes.length;
    if (feasible.length <= 1) return { ...(feasible[0] ? { node: feasible[0] } : {}), diagnosis, evaluated: processed, feasible: feasible.length };
    for (const ps of profile.preScore) ps.preScore(state, pod, feasible);
    const totals = new Array<number>(feasible.length).fill(0);
    for (const { plugin, weight } of profile.score) {
      if (weight === 0) continue;
      const scores = feasible.map((n) => plugin.score(state, pod, n));
      plugin.normalize?.(state, pod, scores);
      for (let i = 0; i < totals.length; i++) totals[i]! += scores[i]! * weight;
    }
    // selectHost: the highest total, a random one among ties (reservoir sampling).
    let best = 0;
    let ties = 1;
    for (let i = 1; i < totals.length; i++) {
      if (totals[i]! > totals[best]!) {
        best = i;
        ties = 1;
      } else if (totals[i] === totals[best]) {
        ties++;
        if (Math.random() * ties < 1) best = i;
      }
    }
    return { node: feasible[best]!, diagnosis, evaluated: processed, feasible: feasible.length };
  }

  // ---- binding and failure ------------------------------------------------------

  private async bind(q: QueuedPod, pod: Pod, node: string, profile: Profile, started: number): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    const key = q.info.key;
    try {
      await this.o.client.post(`/api/v1/namespaces/${namespace}/pods/${name}/binding`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace, uid },
        target: { apiVersion: 'v1', kind: 'Node', name: node },
      });
      this.queue.done(key);
      this.bound++;
      this.m.attempts.inc({ result: 'scheduled', profile: profile.schedulerName });
      this.m.attemptDuration.observe({ result: 'scheduled', profile: profile.schedulerName }, (performance.now() - started) / 1000);
      this.m.e2e.observe({ attempts: String(Math.min(q.attempts + 1, 16)) }, (Date.now() - q.initialAttempt) / 1000);
      void this.recorder.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${node}`);
    } catch (e) {
      this.cache.forget(key);
      this.m.attempts.inc({ result: 'error', profile: profile.schedulerName });
      if (isNotFound(e) || (isConflict(e) && /already assigned|being deleted/.test((e as Error).message))) {
        // Deleted or bound by someone else: nothing left to do for it.
        this.queue.done(key);
        return;
      }
      this.o.log.warn({ pod: key, node, err: (e as Error).message }, 'binding failed');
      void this.recorder.event(pod, 'Warning', 'FailedScheduling', `Binding rejected: ${(e as Error).message}`);
      this.queue.addBackoff(q);
    } finally {
      this.inflight--;
    }
  }

  private async recordFailure(pod: Pod, message: string, nominatedNode: string | undefined): Promise<void> {
    await this.recorder.event(pod, 'Warning', 'FailedScheduling', message);
    const status = pod.status ?? {};
    const conditions = (status.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
    const old = (status.conditions ?? []).find((c) => c.type === 'PodScheduled');
    const changed = old?.status !== 'False' || old.reason !== 'Unschedulable' || old.message !== message;
    const cond = changed
      ? {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime: old?.status === 'False' ? old.lastTransitionTime : rfc3339(),
          reason: 'Unschedulable',
          message,
        }
      : old;
    // A merge patch of the status: `lastProbeTime: null` clears the field.
    const patch: { conditions?: unknown[]; nominatedNodeName?: string } = {};
    if (changed) patch.conditions = [...conditions, cond];
    if (nominatedNode && status.nominatedNodeName !== nominatedNode) patch.nominatedNodeName = nominatedNode;
    if (!Object.keys(patch).length) return;
    try {
      await this.o.client.patch(
        `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`,
        { status: patch },
        'application/merge-patch+json',
      );
    } catch (e) {
      if (!isNotFound(e)) this.o.log.warn({ pod: podKey(pod), err: (e as Error).message }, 'updating pod condition failed');
    }
  }

  /** Deletes the victims (after marking them DisruptionTarget) so the preemptor can take their place. */
  private async evict(preemptor: Pod, c: Candidate, profile: Profile): Promise<void> {
    this.m.preemptionVictims.observe(c.victims.length);
    await Promise.all(
      c.victims.map(async (v) => {
        const { namespace, name } = v.pod.metadata;
        try {
          const patch = disruptionTargetPatch(v.pod, profile.schedulerName);
          await this.o.client.patch(`/api/v1/namespaces/${namespace}/pods/${name}/status`, patch, 'application/merge-patch+json');
          await this.o.client.delete(`/api/v1/namespaces/${namespace}/pods/${name}`);
          void this.recorder.event(v.pod, 'Normal', 'Preempted', `Preempted by pod ${preemptor.metadata.uid} on node ${c.node}`);
        } catch (e) {
          if (!isNotFound(e)) this.o.log.warn({ pod: v.key, err: (e as Error).message }, 'preempting a victim failed');
        }
      }),
    );
  }

  get bindingsInFlight(): number {
    return this.inflight;
  }
}
