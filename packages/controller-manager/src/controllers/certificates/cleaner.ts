/**
 * The CSR cleaner, `csrcleaner` (kubernetes pkg/controller/certificates/
 * cleaner): every pass (an hour upstream) deletes the requests that are
 * - approved and issued, approved longer ago than 1 hour;
 * - denied, or failed, longer ago than 1 hour (the condition's lastUpdateTime);
 * - pending (no condition at all) and created more than 24 hours ago;
 * - approved and issued with a certificate already expired.
 * The durations and the clock are settings, so tests need not wait hours.
 */
import { isNotFound } from '@kubeling/apimachinery';
import type { Informer } from '@kubeling/client';
import { parseCertificates } from '@kubeling/pki';
import type { Controller, ControllerContext, CSRCleanerSettings } from '../../context.js';
import { runEvery } from '../periodic.js';
import { CSR_PATH, pemOf, type CSR } from './common.js';

const HOUR = 3_600_000;

export const CSRCLEANER_DEFAULTS: CSRCleanerSettings = { periodMs: HOUR, approvedMs: HOUR, deniedMs: HOUR, pendingMs: 24 * HOUR, now: Date.now };

/** isOlderThan: a set time more than `d` before `now`. */
const olderThan = (t: string | null | undefined, d: number, now: number) => !!t && now - Date.parse(t) > d;

function certificateExpired(csr: CSR, now: number): boolean {
  try {
    const [cert] = parseCertificates(pemOf(csr.status?.certificate));
    return !!cert && now > cert.notAfter.getTime();
  } catch {
    return false;
  }
}

/** Why the cleaner would delete the request now, or undefined to keep it. */
export function cleanupReason(csr: CSR, o: CSRCleanerSettings, now = o.now()): string | undefined {
  const conds = csr.status?.conditions ?? [];
  const issued = !!csr.status?.certificate;
  for (const c of conds) {
    if (c.type === 'Approved' && issued && olderThan(c.lastUpdateTime, o.approvedMs, now)) return 'approved and issued past the approved deadline';
    if (c.type === 'Denied' && olderThan(c.lastUpdateTime, o.deniedMs, now)) return 'denied past the denied deadline';
    if (c.type === 'Failed' && olderThan(c.lastUpdateTime, o.deniedMs, now)) return 'failed past the denied deadline';
  }
  if (!conds.length && olderThan(csr.metadata.creationTimestamp, o.pendingMs, now)) return 'pending past the pending deadline';
  if (issued && conds.some((c) => c.type === 'Approved') && certificateExpired(csr, now)) return 'its certificate has expired';
  return undefined;
}

export class CSRCleanerController implements Controller {
  readonly name = 'csrcleaner';
  private csrs!: Informer<CSR>;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly o: CSRCleanerSettings = CSRCLEANER_DEFAULTS,
  ) {}

  init(): void {
    this.csrs = this.ctx.informers.informer<CSR>({ path: CSR_PATH });
  }

  async run(signal: AbortSignal): Promise<void> {
    const log = this.ctx.log.child({ controller: this.name });
    await runEvery(
      signal,
      this.o.periodMs,
      async () => {
        await this.clean(log);
      },
      (e) => log.warn({ err: String((e as Error).message ?? e) }, 'csr cleaning failed'),
    );
  }

  /** One pass over the cache; a failed delete is logged and the pass goes on. */
  async clean(log: ControllerContext['log'] = this.ctx.log): Promise<string[]> {
    const deleted: string[] = [];
    const now = this.o.now();
    for (const csr of this.csrs.store.list()) {
      const reason = cleanupReason(csr, this.o, now);
      if (!reason) continue;
      const name = csr.metadata.name!;
      try {
        await this.ctx.client.delete(`${CSR_PATH}/${encodeURIComponent(name)}`);
        log.info({ key: name, reason }, 'cleaned CSR');
        deleted.push(name);
      } catch (e) {
        if (!isNotFound(e)) log.warn({ key: name, err: String((e as Error).message ?? e) }, 'unable to delete CSR');
      }
    }
    return deleted;
  }
}
