/**
 * Leader election on a coordination.k8s.io/v1 Lease (client-go
 * tools/leaderelection): acquire when the lease is free or expired, renew every
 * `retryPeriodMs`, give up leadership when a renewal has not succeeded within
 * `renewDeadlineMs`. Updates are optimistic (resourceVersion), so two candidates
 * can never both win the same term.
 */
import { isConflict, isNotFound, rfc3339Micro } from '@kubeling/apimachinery';
import type { RestClient } from './rest.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  onNewLeader?(identity: string): void;
}

interface Lease {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The attempt under way, which `stop` waits for (a renewal landing after it would hold the lease again). */
  private inflight: Promise<unknown> | undefined;
  private lastRenew = 0;
  private observedHolder = '';
  private observedRenew = '';
  private observedAt = 0;

  constructor(
    private readonly client: RestClient,
    private readonly o: LeaderElectionOptions,
  ) {}

  get isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.o.namespace}/leases`;
  }

  start(): void {
    this.loop();
  }

  private loop(): void {
    if (this.stopped) return;
    const attempt = this.tryAcquireOrRenew().catch(() => false);
    this.inflight = attempt;
    void attempt.then((ok) => {
      this.inflight = undefined;
      if (this.stopped) return;
      const now = Date.now();
      if (ok) this.lastRenew = now;
      if (this.leading && !ok && now - this.lastRenew > (this.o.renewDeadlineMs ?? 10_000)) {
        this.leading = false;
        this.o.onStoppedLeading();
      }
      this.timer = setTimeout(() => this.loop(), this.o.retryPeriodMs ?? 2_000);
    });
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const durationS = Math.ceil((this.o.leaseDurationMs ?? 15_000) / 1000);
    const now = rfc3339Micro();
    let lease: Lease | undefined;
    try {
      lease = await this.client.get<Lease>(`${this.path}/${this.o.name}`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    if (!lease) {
      try {
        await this.client.post(this.path, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.o.name, namespace: this.o.namespace },
          spec: { holderIdentity: this.o.identity, leaseDurationSeconds: durationS, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        });
        this.becomeLeader();
        return true;
      } catch {
        return false;
      }
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (holder !== this.observedHolder || spec.renewTime !== this.observedRenew) {
      if (holder !== this.observedHolder && holder) this.o.onNewLeader?.(holder);
      this.observedHolder = holder;
      this.observedRenew = spec.renewTime ?? '';
      this.observedAt = Date.now();
    }
    const mine = holder === this.o.identity;
    // The lease is judged by when we last saw it change, not by the holder's clock.
    const expired = !holder || Date.now() - this.observedAt > (spec.leaseDurationSeconds ?? durationS) * 1000;
    if (!mine && !expired) {
      if (this.leading) {
        this.leading = false;
        this.o.onStoppedLeading();
      }
      return false;
    }
    const next: Lease = {
      ...lease,
      spec: {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationS,
        acquireTime: mine ? (spec.acquireTime ?? now) : now,
        renewTime: now,
        leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    };
    try {
      await this.client.put(`${this.path}/${this.o.name}`, next);
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
    this.observedHolder = this.o.identity;
    this.observedRenew = now;
    this.observedAt = Date.now();
    this.becomeLeader();
    return true;
  }

  private becomeLeader(): void {
    if (this.leading || this.stopped) return;
    this.leading = true;
    this.o.onStartedLeading();
  }

  /** Stops campaigning; a leader releases the lease so another can take over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const attempt = this.inflight;
    const mayHold = this.leading || attempt !== undefined;
    await attempt;
    if (!mayHold) return;
    this.leading = false;
    try {
      const lease = await this.client.get<Lease>(`${this.path}/${this.o.name}`);
      if (lease.spec?.holderIdentity === this.o.identity) {
        await this.client.put(`${this.path}/${this.o.name}`, { ...lease, spec: { ...lease.spec, holderIdentity: '', renewTime: rfc3339Micro() } });
      }
    } catch {
      // best effort
    }
  }
}
