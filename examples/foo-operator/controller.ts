/**
 * The Foo controller (sample-controller controller.go), on kubeling's client
 * machinery: an informer on Foos and one on Deployments, a workqueue of
 * `namespace/name` keys with sample-controller's rate limiter, and workers that
 * run `syncFoo` for one key at a time.
 *
 * Foos enqueue themselves on add and update (resyncs included, so that every
 * Foo is looked at again every resync period). A Deployment enqueues the Foo
 * that controls it (handleObject): on add, on a real update (a resync, with an
 * unchanged resourceVersion, is skipped) and on delete, so that a Deployment
 * deleted by hand is made again and status follows the Deployment's.
 */
import type { EventRecorder, RestClient } from '@kubeling/client';
import { Informer, keyOf, WorkQueue } from '@kubeling/client';
import type { Logger } from 'pino';
import { ControllerRateLimiter } from './ratelimit.js';
import { controllerOf, NotManagedError, syncFoo, type SyncDeps } from './reconcile.js';
import { deploymentsPath, foosPath, KIND, type Deployment, type Foo } from './types.js';

export interface FooControllerOptions {
  client: RestClient;
  recorder: EventRecorder;
  log: Logger;
  /** Watch one namespace only; every namespace when left out. */
  namespace?: string | undefined;
  /** The informers' resync period (sample-controller: 30 s). */
  resyncMs?: number;
}

export class FooController {
  readonly foos: Informer<Foo>;
  readonly deployments: Informer<Deployment>;
  readonly queue = new WorkQueue<string>();
  readonly limiter = new ControllerRateLimiter<string>();
  /** Syncs that ended without an error, for logs and tests. */
  synced = 0;
  private readonly client: RestClient;
  private readonly log: Logger;

  constructor(private readonly o: FooControllerOptions) {
    this.client = o.client;
    this.log = o.log;
    const resyncMs = o.resyncMs ?? 30_000;
    const onError = (path: string) => (err: unknown) => this.log.warn({ path, err: String((err as Error)?.message ?? err) }, 'list/watch failed; retrying');
    this.foos = new Informer<Foo>(o.client, { path: foosPath(o.namespace) }, { resyncMs, onError: onError(foosPath(o.namespace)) });
    this.deployments = new Informer<Deployment>(o.client, { path: deploymentsPath(o.namespace) }, { resyncMs, onError: onError(deploymentsPath(o.namespace)) });
    this.foos.addEventHandler({
      add: (foo) => this.enqueue(foo),
      update: (_old, foo) => this.enqueue(foo),
    });
    this.deployments.addEventHandler({
      add: (d) => this.handleObject(d),
      update: (old, d) => {
        if (old.metadata.resourceVersion === d.metadata.resourceVersion) return;
        this.handleObject(d);
      },
      delete: (d) => this.handleObject(d),
    });
  }

  private enqueue(foo: Foo): void {
    this.queue.add(keyOf(foo));
  }

  /** Enqueues the Foo that controls `obj`, if it is a Foo this operator knows. */
  private handleObject(obj: Deployment): void {
    const ref = controllerOf(obj);
    // As upstream, the kind alone decides: a Foo of this namespace by that name is ours.
    if (!ref || ref.kind !== KIND) return;
    const foo = this.foos.store.get(`${obj.metadata.namespace}/${ref.name}`);
    if (!foo) {
      this.log.debug({ deployment: keyOf(obj), foo: ref.name }, 'ignoring orphaned object');
      return;
    }
    this.enqueue(foo);
  }

  /** The reads come from the informers' stores, the writes go to the apiserver. */
  private deps(): SyncDeps {
    const ns = (o: { metadata: { namespace?: string } }) => o.metadata.namespace!;
    return {
      getFoo: (namespace, name) => this.foos.store.get(`${namespace}/${name}`),
      getDeployment: (namespace, name) => this.deployments.store.get(`${namespace}/${name}`),
      createDeployment: (d) => this.client.post<Deployment>(deploymentsPath(ns(d)), d),
      updateDeployment: (d) => this.client.put<Deployment>(`${deploymentsPath(ns(d))}/${d.metadata.name}`, d),
      updateFooStatus: (foo) => this.client.put<Foo>(`${foosPath(ns(foo))}/${foo.metadata.name}/status`, foo),
      event: (foo, type, reason, message) => void this.o.recorder.event(foo, type, reason, message),
      report: (message) => this.log.error(message),
    };
  }

  /**
   * Starts the informers, waits for both caches to fill (a Foo list that fails,
   * e.g. before the CRD is applied, is retried meanwhile), then runs `workers`
   * workers until `stop`. Resolves when the workers have ended.
   */
  async run(workers: number): Promise<void> {
    this.log.info('starting Foo controller');
    this.foos.start();
    this.deployments.start();
    this.log.info('waiting for informer caches to sync');
    await Promise.all([this.foos.synced(), this.deployments.synced()]);
    this.log.info({ workers }, 'starting workers');
    await Promise.all(Array.from({ length: workers }, () => this.worker()));
    this.log.info('workers stopped');
  }

  /** processNextWorkItem in a loop: one key at a time, never the same key in two workers (the queue sees to that). */
  private async worker(): Promise<void> {
    const deps = this.deps();
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        const res = await syncFoo(key, deps);
        this.limiter.forget(key);
        this.synced++;
        if (res === 'synced') this.log.info({ key }, 'successfully synced');
      } catch (e) {
        const delay = this.limiter.when(key);
        const msg = e instanceof NotManagedError ? e.message : String((e as Error)?.message ?? e);
        this.log.warn({ key, retryInMs: Math.round(delay), requeues: this.limiter.numRequeues(key) }, `error syncing '${key}': ${msg}, requeuing`);
        this.queue.addAfter(key, delay);
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** Stops the informers and the queue; workers finish the key they hold. */
  stop(): void {
    this.queue.shutdown();
    this.foos.stop();
    this.deployments.stop();
  }
}
