/**
 * The quotable resources (resource_quota_controller.go GetQuotableResources):
 * the namespaced resources discovery lists, in their group's preferred
 * version, that support create, list, watch and delete — custom resources
 * included, each counted as `count/<plural>.<group>`. Read through the
 * process's shared discovery client at most every `refreshMs` (upstream
 * re-reads discovery every 30 s); a failed read keeps the last answer and is
 * retried a second later, and a group that could not be discovered keeps the
 * resources it had (Sync's partial-discovery case).
 */
import { groupResourceKey, parseGroupVersion, supportsAllVerbs, type DiscoveredResource, type DiscoveryClient, type RestClient } from '@kubeling/client';
import { sharedDiscovery } from '../../discovery.js';

const QUOTABLE_VERBS = ['create', 'list', 'watch', 'delete'];

export const quotableResources = (rs: readonly DiscoveredResource[]): DiscoveredResource[] =>
  rs.filter((r) => r.namespaced && supportsAllVerbs(r, QUOTABLE_VERBS));

export class QuotableResources {
  /** `group/resource` → the resource. */
  private byKey = new Map<string, DiscoveredResource>();
  private fetchedAt = -Infinity;
  private inflight: Promise<boolean> | undefined;
  private readonly discovery: DiscoveryClient;

  constructor(
    client: RestClient,
    private readonly refreshMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {
    this.discovery = sharedDiscovery(client);
  }

  /** The quotable resource of a `group/resource` key, after a refresh if the last one is old. */
  async resourceOf(key: string): Promise<DiscoveredResource | undefined> {
    await this.refresh();
    return this.byKey.get(key);
  }

  /** What the last discovery said (no request). */
  served(key: string): boolean {
    return this.byKey.has(key);
  }

  /** The resource the last discovery listed under a `group/resource` key (no request). */
  get(key: string): DiscoveredResource | undefined {
    return this.byKey.get(key);
  }

  /** Every quotable `group/resource` the last discovery listed. */
  keys(): string[] {
    return [...this.byKey.keys()];
  }

  /** Reads discovery when the last read is `refreshMs` old (now, with `force`); answers whether the quotable resources changed. */
  async refresh(force = false): Promise<boolean> {
    if (!force && this.now() - this.fetchedAt < this.refreshMs) return false;
    this.inflight ??= this.fetch(force).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetch(force: boolean): Promise<boolean> {
    try {
      // A read by another controller within the last second is as good as a new one.
      const snap = await this.discovery.discover(force ? 1000 : Math.min(1000, this.refreshMs));
      const next = new Map(quotableResources(snap.preferred).map((r) => [groupResourceKey(r), r]));
      const failed = new Set([...snap.failed.keys()].map((gv) => parseGroupVersion(gv).group));
      for (const [key, r] of this.byKey) if (!next.has(key) && failed.has(r.group)) next.set(key, r);
      const changed = next.size !== this.byKey.size || [...next].some(([k, r]) => this.byKey.get(k)?.version !== r.version);
      this.byKey = next;
      this.fetchedAt = this.now();
      return changed;
    } catch {
      this.fetchedAt = this.now() - this.refreshMs + 1000;
      return false;
    }
  }
}
