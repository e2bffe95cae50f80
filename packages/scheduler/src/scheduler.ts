/**
 * The scheduler (kubernetes pkg/scheduler schedule_one.go): pops the next pod,
 * runs the profile's PreFilter and Filter plugins over a rotating sample of
 * nodes (percentageOfNodesToScore), scores the feasible ones, assumes the pod on
 * the best node in the cache, runs the Reserve plugins and binds it in the
 * background — PreBind plugins (volume binding may wait there for claims to be
 * bound), then the Binding — so the next pod is placed at once. A pod that fits
 * nowhere gets a FailedScheduling event with the reasons histogram,
 * PodScheduled=False/Unschedulable, and — when DefaultPreemption finds victims —
 * a nominated node while the victims leave. A plugin error, a failed Reserve or
 * PreBind fails the attempt with PodScheduled=False/SchedulerError and a retry
 * after backoff, the pod's reservations undone.
 */
import { isConflict, isNotFound, jsonEqual } from '@kubeling/apimachinery';
import { EventRecorder, type Informer, type InformerFactory, type RestClient } from '@kubeling/client';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SchedulerCache } from './cache.js';
import { evict, recordFailure, type FailureDeps } from './failure.js';
import { informerHandle } from './framework/handle.js';
import type { Profile, SchedulerConfig } from './framework/profile.js';
import { isHandlePlugin, type HandlePlugin, type StorageResource } from './framework/storage.js';
import { PodInfo, podKey, type CycleState, type Node, type NodeInfo, type Pod, type PodDisruptionBudget, type Status } from './framework/types.js';
import { schedulerMetrics, type SchedulerMetrics } from './metrics.js';
import { eligibleToPreempt, preempt, type Candidate } from './preemption.js';
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

/**
 * FitError.Error(): "0/N nodes are available: <count reason, ...>." — or, when a
 * PreFilter plugin rejected the pod, its message once — plus the preemption message.
 */
export function fitErrorMessage(total: number, diagnosis: Map<string, Status>, postFilter = '', preFilterMsg = ''): string {
  if (total === 0) return 'no nodes available to schedule pods';
  const counts = new Map<string, number>();
  if (!preFilterMsg) for (const st of diagnosis.values()) for (const r of st.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort();
  const msg = `0/${total} nodes are available: ${preFilterMsg || parts.join(', ')}.`;
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
  /** What the plugins shared during the cycle (Reserve and PreBind read it). */
  state?: CycleState;
  /** A plugin error that failed the attempt as a whole. */
  error?: string;
  /** The message of the PreFilter plugin that rejected the pod on every node. */
  preFilterMsg?: string;
}

/** The text of a failed status: a rejection's reasons, or an error as upstream wraps it. */
const statusMessage = (st: Status, point: string): string =>
  st.code === 'Error' ? `running ${point} plugin "${st.plugin}": ${st.reasons.join(', ')}` : st.reasons.join(', ');

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
  private readonly m: SchedulerMetrics;
  private readonly failures: FailureDeps;
  /** Aborts PreBind waits when the scheduler stops. */
  private readonly stopping = new AbortController();
  /** Pods assumed (a node chosen) and pods whose binding succeeded. */
  scheduled = 0;
  bound = 0;
  /** Milliseconds spent in the scheduling algorithm (filter + score), for figures. */
  algorithmMs = 0;

  constructor(private readonly o: SchedulerOptions) {
    for (const p of o.config.profiles) this.profiles.set(p.schedulerName, p);
    this.queue = new SchedulingQueue({ initialBackoffMs: o.config.podInitialBackoffSeconds * 1000, maxBackoffMs: o.config.podMaxBackoffSeconds * 1000 });
    this.recorder = new EventRecorder(o.eventClient ?? o.client, { component: 'default-scheduler' });
    this.m = schedulerMetrics(o.metrics, this.queue);
    this.failures = { client: o.client, recorder: this.recorder, log: o.log };
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
    this.initStorage();
  }

  /** Informers for the storage kinds the profiles' plugins need (none when no plugin reads them), handed to those plugins. */
  private initStorage(): void {
    const users: HandlePlugin[] = [];
    const needs = new Set<StorageResource>();
    for (const p of this.profiles.values()) {
      for (const pl of p.plugins) {
        if (!isHandlePlugin(pl)) continue;
        users.push(pl);
        for (const r of pl.needs) needs.add(r);
      }
    }
    if (!users.length) return;
    const handle = informerHandle(needs, {
      informers: this.o.informers,
      api: this.o.client,
      pod: (key) => this.pods.store.get(key),
      node: (name) => this.nodes.store.get(name),
      move: (event) => this.queue.moveAllToActiveOrBackoff(event),
    });
    for (const u of users) u.setHandle(handle);
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
    this.stopping.abort();
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
    if (result.error) return this.failAttempt(q, pod, profile, result.error, started);
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
      const message = fitErrorMessage(nodes.length, result.diagnosis, postFilter, result.preFilterMsg);
      this.m.attempts.inc({ result: 'unschedulable', profile: profile.schedulerName });
      this.m.attemptDuration.observe({ result: 'unschedulable', profile: profile.schedulerName }, (performance.now() - started) / 1000);
      const rejectedBy = new Set([...result.diagnosis.values()].map((s) => s.plugin));
      if (candidate) {
        rejectedBy.add('DefaultPreemption');
        this.nominated.set(key, { info, node: candidate.node });
        this.m.preemptionVictims.observe(candidate.victims.length);
        void evict(this.failures, pod, candidate, profile.schedulerName);
      }
      this.queue.addUnschedulable(q, cycle, rejectedBy);
      void recordFailure(this.failures, pod, message, candidate?.node);
      return;
    }
    const node = result.node.name;
    const state = result.state ?? new Map();
    this.cache.assume(pod, node);
    const reserveFailed = this.runReserve(profile, state, info, node);
    if (reserveFailed) {
      this.unreserve(profile, state, info, node);
      this.cache.forget(key);
      return this.failAttempt(q, pod, profile, statusMessage(reserveFailed, 'Reserve'), started);
    }
    this.nominated.delete(key);
    this.scheduled++;
    this.inflight++;
    void this.bind(q, pod, node, profile, state, started);
  }

  private runReserve(profile: Profile, state: CycleState, pod: PodInfo, node: string): Status | null {
    for (const r of profile.reserve) {
      const st = r.reserve(state, pod, node);
      if (st) return st;
    }
    return null;
  }

  /** Unreserve in the reverse order of Reserve (every plugin: each undoes only what it did). */
  private unreserve(profile: Profile, state: CycleState, pod: PodInfo, node: string): void {
    for (let i = profile.reserve.length - 1; i >= 0; i--) profile.reserve[i]!.unreserve(state, pod, node);
  }

  /** An attempt that failed with an error: FailedScheduling, PodScheduled=False/SchedulerError, retry after backoff. */
  private failAttempt(q: QueuedPod, pod: Pod, profile: Profile, message: string, started: number): void {
    this.m.attempts.inc({ result: 'error', profile: profile.schedulerName });
    this.m.attemptDuration.observe({ result: 'error', profile: profile.schedulerName }, (performance.now() - started) / 1000);
    this.queue.addBackoff(q);
    void recordFailure(this.failures, pod, message, undefined, 'SchedulerError');
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
      if (st?.code === 'Error') return { diagnosis, evaluated: 0, feasible: 0, error: statusMessage(st, 'PreFilter') };
      if (st) {
        for (const n of nodes) diagnosis.set(n.name, st);
        return { diagnosis, evaluated: 0, feasible: 0, preFilterMsg: st.reasons.join(', ') };
      }
    }
    // A node nominated by an earlier preemption is tried first, alone.
    const nominatedName = pod.pod.status?.nominatedNodeName;
    if (nominatedName) {
      const n = this.cache.node(nominatedName);
      if (n && !this.runFilters(profile, state, pod, n)) return { node: n, diagnosis, evaluated: 1, feasible: 1, state };
    }
    const want = numFeasibleNodesToFind(this.o.config.percentageOfNodesToScore, nodes.length);
    const feasible: NodeInfo[] = [];
    let processed = 0;
    for (let i = 0; i < nodes.length && feasible.length < want; i++) {
      const n = nodes[(this.nextStartNodeIndex + i) % nodes.length]!;
      processed++;
      const st = this.runFilters(profile, state, pod, n);
      if (st?.code === 'Error')
        return { diagnosis, evaluated: processed, feasible: 0, error: `running "${st.plugin}" filter plugin: ${st.reasons.join(', ')}` };
      if (st) diagnosis.set(n.name, st);
      else feasible.push(n);
    }
    this.nextStartNodeIndex = (this.nextStartNodeIndex + processed) % nodes.length;
    if (feasible.length <= 1) return { ...(feasible[0] ? { node: feasible[0] } : {}), diagnosis, evaluated: processed, feasible: feasible.length, state };
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
    return { node: feasible[best]!, diagnosis, evaluated: processed, feasible: feasible.length, state };
  }

  // ---- binding and failure ------------------------------------------------------

  /** The binding cycle: PreBind plugins, then the Binding; a failure undoes the reservations and retries. */
  private async bind(q: QueuedPod, pod: Pod, node: string, profile: Profile, state: CycleState, started: number): Promise<void> {
    const { namespace, name, uid } = pod.metadata;
    const key = q.info.key;
    try {
      for (const pb of profile.preBind) {
        const st = await pb.preBind(state, q.info, node, this.stopping.signal);
        if (st) return this.bindingFailed(q, pod, node, profile, state, started, st);
      }
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
      this.unreserve(profile, state, q.info, node);
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

  /** handleBindingCycleError: unreserve, forget (its room frees up for others), then fail the attempt. */
  private bindingFailed(q: QueuedPod, pod: Pod, node: string, profile: Profile, state: CycleState, started: number, st: Status): void {
    this.unreserve(profile, state, q.info, node);
    this.cache.forget(q.info.key);
    this.queue.moveAllToActiveOrBackoff('AssignedPodDelete');
    if (this.stopping.signal.aborted) return;
    this.o.log.info({ pod: q.info.key, node, plugin: st.plugin, reasons: st.reasons }, 'PreBind failed');
    if (st.code === 'Error') return this.failAttempt(q, pod, profile, statusMessage(st, 'PreBind'), started);
    this.m.attempts.inc({ result: 'unschedulable', profile: profile.schedulerName });
    this.queue.addUnschedulable(q, this.queue.schedulingCycle, [st.plugin]);
    void recordFailure(this.failures, pod, statusMessage(st, 'PreBind'), undefined);
  }

  get bindingsInFlight(): number {
    return this.inflight;
  }
}
