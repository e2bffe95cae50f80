/**
 * The event recorder (client-go tools/record): core/v1 Events about objects,
 * with count aggregation — the same (object, type, reason, message, source)
 * again within the cache's memory bumps `count` and `lastTimestamp` of the
 * existing Event instead of creating another. Recording never throws; a failed
 * write is dropped, as upstream's broadcaster does after its retries.
 */
import type { KubeObject } from '@kubeling/api';
import { isNotFound, rfc3339 } from '@kubeling/apimachinery';
import type { RestClient } from './rest.js';

export interface EventSource {
  component: string;
  host?: string;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  first: string;
}

const MAX_CACHE = 4096;

export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: RestClient,
    private readonly source: EventSource,
  ) {}

  /** Records an event; resolves when it has been written (or given up). */
  event(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const p = this.chain.then(() => this.write(obj, type, reason, message)).catch(() => undefined);
    this.chain = p;
    return p;
  }

  private async write(obj: KubeObject, type: string, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace || 'default';
    const involvedObject = {
      kind: obj.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      apiVersion: obj.apiVersion,
      resourceVersion: obj.metadata.resourceVersion,
    };
    const key = [obj.metadata.uid, type, reason, message, this.source.component, this.source.host ?? ''].join('\u0000');
    const now = rfc3339();
    const prev = this.seen.get(key);
    if (prev) {
      prev.count++;
      try {
        await this.client.patch(
          `/api/v1/namespaces/${prev.namespace}/events/${prev.name}`,
          { count: prev.count, lastTimestamp: now },
          'application/merge-patch+json',
        );
        return;
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.seen.delete(key);
      }
    }
    // As upstream: the name carries the time in nanoseconds, in hex (BigInt, as a double would drop the low digits).
    const name = `${obj.metadata.name}.${(BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    await this.client.post(`/api/v1/namespaces/${namespace}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject,
      reason,
      message,
      type,
      source: this.source,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.source.component,
      reportingInstance: this.source.host ?? '',
    });
    if (this.seen.size >= MAX_CACHE) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(key, { name, namespace, count: 1, first: now });
  }
}
