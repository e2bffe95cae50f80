/**
 * The configuration side of API Priority and Fairness (k8s.io/apiserver
 * pkg/util/flowcontrol apf_controller.go): it follows the FlowSchemas and
 * PriorityLevelConfigurations (through the watch cache), and after every change
 * "digests" them into what dispatching uses:
 *
 * - one QueueSet per priority level, kept across changes, with a concurrency
 *   limit of ceil(serverCL × its nominalConcurrencyShares ÷ the sum of all
 *   levels' shares), serverCL being --max-requests-inflight +
 *   --max-mutating-requests-inflight. A level that disappears keeps serving
 *   its queued and executing requests ("quiescing") until idle.
 * - the FlowSchemas in matching order, without those whose priority level does
 *   not exist ("dangling", reported in their status condition `Dangling`).
 * - the mandatory `exempt` and `catch-all` objects are imagined when absent, so
 *   every request always finds a schema and a level.
 *
 * Simplified from upstream: no borrowing between levels (lendablePercent and
 * borrowingLimitPercent are validated and shown, but each level dispatches at
 * its nominal limit).
 */
import type { KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import type { Logger } from 'pino';
import type { Store } from '../registry/store.js';
import type { EventType } from '../storage/cacher.js';
import { type FlowSchema, MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, type PriorityLevel } from '../registry/flowcontrol/bootstrap.js';
import { DroppedRequests } from './dropped.js';
import { type Clock, type QueueSetObserver, type QueuingConfig, QueueSet, realClock, type RequestDescr, type Ticket, type RejectReason } from './queueset.js';
import { classify, flowDistinguisher, type RequestDigest, sortFlowSchemas } from './rule.js';
import { Dealer, hashFlowID } from './shufflesharding.js';

export interface PriorityLevelState {
  pl: PriorityLevel;
  queues: QueueSet;
  nominalCL: number;
  /** The object is gone; the level lives on until its requests are done. */
  quiescing: boolean;
}

export interface Classification {
  flowSchema: FlowSchema;
  priorityLevel: PriorityLevel;
  flowDistinguisher: string;
}

export type Admission = Classification & ({ ticket: Ticket; state: PriorityLevelState } | { rejected: RejectReason });

export interface FlowControlOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight (upstream 400 + 200). */
  serverConcurrencyLimit: number;
  clock?: Clock;
  /** Metrics of a priority level's queue set. */
  observer?: (priorityLevel: string) => QueueSetObserver;
  /** Nominal limit of each level, for the metric. */
  onLimits?: (limits: Map<string, number>) => void;
  logger?: Logger;
}

const FIELD_MANAGER = 'api-priority-and-fairness-config-consumer-v1';
/** How long a failed status write waits before the next try. */
const STATUS_RETRY_MS = 1000;

export class FlowControl {
  private readonly fsObjects = new Map<string, FlowSchema>();
  private readonly plObjects = new Map<string, PriorityLevel>();
  private sorted: FlowSchema[] = [];
  private readonly states = new Map<string, PriorityLevelState>();
  private readonly clock: Clock;
  readonly dropped: DroppedRequests;
  private digestScheduled = false;
  private readonly unsubscribe: (() => void)[] = [];
  private fsStore: Store | undefined;
  private readonly pendingStatus = new Set<string>();
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: FlowControlOptions) {
    this.clock = opts.clock ?? realClock;
    this.dropped = new DroppedRequests(() => this.clock.now());
    this.digest();
  }

  /** Follows the objects of the two stores (an ADDED per object first, then changes). */
  follow(flowSchemas: Store, priorityLevels: Store): void {
    this.fsStore = flowSchemas;
    this.unsubscribe.push(flowSchemas.subscribe((t, o) => this.apply('FlowSchema', t, o)));
    this.unsubscribe.push(priorityLevels.subscribe((t, o) => this.apply('PriorityLevelConfiguration', t, o)));
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  /** An informer event; the digest runs once per burst of events. */
  apply(kind: 'FlowSchema' | 'PriorityLevelConfiguration', type: EventType, obj: KubeObject): void {
    const map = (kind === 'FlowSchema' ? this.fsObjects : this.plObjects) as Map<string, KubeObject>;
    const name = obj.metadata.name ?? '';
    if (type === 'DELETED') map.delete(name);
    else map.set(name, obj);
    this.scheduleDigest();
  }

  private scheduleDigest(): void {
    if (this.digestScheduled || this.stopped) return;
    this.digestScheduled = true;
    setImmediate(() => {
      this.digestScheduled = false;
      this.digest();
    });
  }

  /** Recomputes levels, limits and the schema order from the objects seen. */
  digest(): void {
    // A level whose queuing cannot be dealt (stored before validation refused it) is ignored, as upstream does.
    const real = new Map([...this.plObjects].filter(([, pl]) => dealable(queuingConfig(pl))));
    const pls = new Map(real);
    for (const m of MANDATORY_PRIORITY_LEVELS) if (!pls.has(m.metadata.name!)) pls.set(m.metadata.name!, m);
    let shareSum = 0;
    for (const pl of pls.values()) shareSum += shares(pl);
    const limits = new Map<string, number>();
    for (const [name, pl] of pls) {
      const nominalCL = shareSum > 0 ? Math.ceil((this.opts.serverConcurrencyLimit * shares(pl)) / shareSum) : 0;
      limits.set(name, nominalCL);
      const cfg = queuingConfig(pl);
      const st = this.states.get(name);
      if (st) {
        st.queues.setConfiguration(cfg, nominalCL);
        Object.assign(st, { pl, nominalCL, quiescing: false });
      } else this.states.set(name, { pl, nominalCL, quiescing: false, queues: new QueueSet(cfg, nominalCL, this.clock, this.opts.observer?.(name) ?? {}) });
    }
    for (const [name, st] of this.states) {
      if (pls.has(name)) continue;
      if (st.queues.isIdle) this.states.delete(name);
      else st.quiescing = true;
    }
    const good: FlowSchema[] = [];
    for (const fs of this.fsObjects.values()) {
      const plName = fs.spec?.priorityLevelConfiguration?.name ?? '';
      const ok = real.has(plName);
      this.syncDanglingCondition(fs, !ok, plName);
      if (ok) good.push(fs);
    }
    sortFlowSchemas(good);
    if (!good.some((f) => f.metadata.name === 'exempt')) good.unshift(MANDATORY_FLOW_SCHEMAS[0]!);
    if (!good.some((f) => f.metadata.name === 'catch-all')) good.push(MANDATORY_FLOW_SCHEMAS[1]!);
    this.sorted = good;
    this.opts.onLimits?.(limits);
  }

  /** Classifies a request and lets it into its level (or says why not). */
  admit(d: RequestDigest, descr: Omit<RequestDescr, 'flowSchema' | 'flowDistinguisher'>, waitLimitMs: number): Admission {
    const flowSchema = classify(d, this.sorted) ?? MANDATORY_FLOW_SCHEMAS[1]!;
    const state = this.states.get(flowSchema.spec?.priorityLevelConfiguration?.name ?? '') ?? this.states.get('catch-all')!;
    const distinguisher = flowDistinguisher(d, flowSchema);
    const fsName = flowSchema.metadata.name ?? '';
    // Only queues need the flow's hash (exempt and Reject levels deal no hands).
    const hash = state.queues.config.desiredNumQueues > 0 ? hashFlowID(fsName, distinguisher) : 0n;
    const res = state.queues.start({ ...descr, flowSchema: fsName, flowDistinguisher: distinguisher }, hash, waitLimitMs);
    const base = { flowSchema, priorityLevel: state.pl, flowDistinguisher: distinguisher };
    if ('rejected' in res) return { ...base, rejected: res.rejected };
    return { ...base, ticket: res, state };
  }

  /** After a request of a quiescing level ends: the level goes once idle. */
  released(state: PriorityLevelState): void {
    if (state.quiescing && state.queues.isIdle) this.scheduleDigest();
  }

  /** The levels, sorted by name (dumps). */
  levels(): [string, PriorityLevelState][] {
    return [...this.states.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** The FlowSchemas in matching order (dangling ones left out). */
  flowSchemas(): readonly FlowSchema[] {
    return this.sorted;
  }

  /**
   * Keeps the `Dangling` condition of a FlowSchema true exactly while its
   * priority level is missing (upstream writes it by server-side apply as
   * api-priority-and-fairness-config-consumer-v1).
   */
  private syncDanglingCondition(fs: FlowSchema, dangling: boolean, plName: string): void {
    const want = desiredDangling(dangling, plName);
    const cur = fs.status?.conditions?.find((c) => c.type === 'Dangling');
    const name = fs.metadata.name ?? '';
    if (!this.fsStore || !fs.metadata.uid || (cur && cur.status === want.status && cur.reason === want.reason && cur.message === want.message)) return;
    if (this.pendingStatus.has(name)) return;
    this.pendingStatus.add(name);
    const store = this.fsStore;
    void store
      .guaranteedUpdate(
        undefined,
        name,
        (obj) => {
          const all = (obj.status as FlowSchema['status'])?.conditions ?? [];
          // What this server's cache has not seen yet may already be right: then nothing is written.
          if (all.some((c) => c.type === 'Dangling' && c.status === want.status && c.reason === want.reason && c.message === want.message)) return obj;
          const conds = all.filter((c) => c.type !== 'Dangling');
          const now = new Date(Math.floor(this.clock.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
          return { ...obj, status: { ...(obj.status ?? {}), conditions: [...conds, { ...want, lastTransitionTime: now }] } };
        },
        { subresource: 'status', ctx: { fieldManager: FIELD_MANAGER } },
      )
      .then(
        () => {
          this.pendingStatus.delete(name);
          // Changes that came meanwhile were not acted on: look again (nothing is written when all is as wanted).
          this.scheduleDigest();
        },
        (err: unknown) => {
          this.pendingStatus.delete(name);
          if (err instanceof StatusError && err.status.reason === 'NotFound') return this.scheduleDigest();
          this.opts.logger?.warn({ err, flowSchema: name }, 'cannot update FlowSchema status');
          // Storage failing (etcd away, the server closing): try again in a while, not at once.
          if (this.stopped || this.retryTimer) return;
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.scheduleDigest();
          }, STATUS_RETRY_MS);
          this.retryTimer.unref();
        },
      );
  }
}

function desiredDangling(dangling: boolean, plName: string) {
  return dangling
    ? {
        type: 'Dangling',
        status: 'True',
        reason: 'NotFound',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" but there is no such object`,
      }
    : {
        type: 'Dangling',
        status: 'False',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named "${plName}" and it exists`,
      };
}

/** A level's nominal concurrency shares (exempt levels have them too, 0 by default). */
function shares(pl: PriorityLevel): number {
  const s = pl.spec?.type === 'Exempt' ? pl.spec.exempt?.nominalConcurrencyShares : pl.spec?.limited?.nominalConcurrencyShares;
  return typeof s === 'number' && s > 0 ? s : 0;
}

function dealable(cfg: QueuingConfig): boolean {
  if (cfg.desiredNumQueues <= 0) return true;
  try {
    new Dealer(cfg.desiredNumQueues, cfg.handSize);
    return cfg.queueLengthLimit > 0;
  } catch {
    return false;
  }
}

function queuingConfig(pl: PriorityLevel): QueuingConfig {
  const name = pl.metadata.name ?? '';
  if (pl.spec?.type === 'Exempt') return { name, desiredNumQueues: -1, queueLengthLimit: 0, handSize: 0 };
  const q = pl.spec?.limited?.limitResponse?.type === 'Queue' ? pl.spec.limited.limitResponse.queuing : undefined;
  if (!q) return { name, desiredNumQueues: 0, queueLengthLimit: 0, handSize: 0 };
  return { name, desiredNumQueues: q.queues ?? 64, queueLengthLimit: q.queueLengthLimit ?? 50, handSize: q.handSize ?? 8 };
}
