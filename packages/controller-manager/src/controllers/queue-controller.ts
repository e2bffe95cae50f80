/**
 * The common shape of a controller: informer handlers put keys on a workqueue,
 * workers call `reconcile(key)`. A thrown error requeues the key with backoff;
 * `{ requeueAfterMs }` requeues it later; success forgets its failures.
 */
import { WorkQueue, runWorkers } from '@kubeling/client';
import type { Controller, ControllerContext } from '../context.js';

export abstract class QueueController implements Controller {
  readonly queue = new WorkQueue<string>();
  abstract readonly name: string;

  constructor(protected readonly ctx: ControllerContext) {}

  abstract init(): void;
  abstract reconcile(key: string): Promise<{ requeueAfterMs?: number } | void>;

  async run(signal: AbortSignal): Promise<void> {
    signal.addEventListener('abort', () => this.queue.shutdown(), { once: true });
    const log = this.ctx.log.child({ controller: this.name });
    await runWorkers(
      this.queue,
      this.ctx.workers,
      (key) => this.reconcile(key),
      (key, err) => log.warn({ key, err: String((err as Error)?.message ?? err) }, 'reconcile failed'),
    );
  }
}
