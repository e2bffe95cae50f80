/**
 * Token cleaner (pkg/controller/bootstrap/tokencleaner.go): deletes bootstrap
 * token Secrets in kube-system once their `expiration` has passed, looking again
 * at each Secret when it is due. Disabled by default, as upstream.
 */
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';
import { BOOTSTRAP_TOKEN_TYPE, expiresAt, type Secret } from './tokens.js';

export class TokenCleaner extends QueueController {
  readonly name = 'tokencleaner';
  private secrets!: Informer<Secret>;

  constructor(
    ctx: ConstructorParameters<typeof QueueController>[0],
    private readonly now: () => number = Date.now,
  ) {
    super(ctx);
  }

  init(): void {
    this.secrets = this.ctx.informers.informer<Secret>({ path: '/api/v1/namespaces/kube-system/secrets', fieldSelector: `type=${BOOTSTRAP_TOKEN_TYPE}` });
    enqueueOn(this.secrets, this.queue, { on: ['add', 'update'] });
  }

  async reconcile(key: string): Promise<{ requeueAfterMs?: number } | void> {
    const s = this.secrets.store.get(key);
    if (!s || s.metadata.deletionTimestamp) return;
    const exp = expiresAt(s);
    if (exp === undefined) return;
    const left = exp - this.now();
    // An unparsable expiration is left alone, as upstream (it logs and skips).
    if (Number.isNaN(left)) return;
    if (left > 0) return { requeueAfterMs: left };
    try {
      await this.ctx.client.delete(`/api/v1/namespaces/kube-system/secrets/${s.metadata.name}`, { preconditions: { uid: s.metadata.uid } });
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) throw e;
    }
  }
}
