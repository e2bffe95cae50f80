/**
 * `delete`: by name, `-f`, `-l`, `--all` or `--field-selector`; `--cascade=
 * background|foreground|orphan`, `--grace-period`, `--now`, `--force`,
 * `--ignore-not-found`, `--dry-run`, and `--wait` (on by default, as in
 * kubectl: the command returns once the objects are gone).
 */
import { isStatusError } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, dryRunSuffix, kindRef, pathOf, resourceRef, type Target } from '../ctx.js';
import { asString, nested, type JsonObject } from '../json.js';

function propagation(cascade: string | undefined): string {
  switch (cascade ?? 'background') {
    case 'background':
    case 'true':
      return 'Background';
    case 'foreground':
      return 'Foreground';
    case 'orphan':
    case 'false':
      return 'Orphan';
    default:
      throw new UsageError(`error: invalid cascade value (${cascade}). Must be "background", "foreground", or "orphan".`);
  }
}

export async function del(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const policy = propagation(g.cascade);
  let grace: number | undefined = g.gracePeriod !== undefined ? Number(g.gracePeriod) : undefined;
  if (grace !== undefined && !Number.isInteger(grace)) throw new UsageError(`error: invalid argument "${g.gracePeriod}" for "--grace-period" flag`);
  if (g.now) {
    if (grace !== undefined && grace >= 0) throw new UsageError('error: --now and --grace-period cannot be specified together');
    grace = 1;
  }
  if (g.force && grace === undefined) grace = 0;
  if (grace === 0 && !g.force) grace = 1; // kubectl: 0 means 1 unless --force
  if (grace !== undefined && grace < 0) grace = undefined;
  if (g.force && grace === 0)
    ctx.io.err(
      'Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n',
    );
  const collection = !g.filenames.length && args.length === 1 && !args[0]!.includes('/');
  if (collection && !g.all && !g.selector && !g.fieldSelector) throw new UsageError('error: resource(s) were provided, but no name was specified');
  if (g.all && (g.selector || g.fieldSelector)) throw new UsageError('error: cannot set --all and --selector/--field-selector at the same time');
  const targets = await ctx.targets(args, { allowList: true });
  const objects: { t: Target; name: string; uid?: string | undefined }[] = [];
  for (const t of targets) {
    if (t.name) objects.push({ t, name: t.name });
    else
      for (const o of await ctx.list(t))
        objects.push({ t: { ...t, namespace: o.metadata.namespace ?? t.namespace }, name: o.metadata.name ?? '', uid: o.metadata.uid });
  }
  if (!objects.length && !g.ignoreNotFound) {
    const t = targets[0];
    ctx.io.err(t?.namespace && !g.allNamespaces ? `No resources found in ${t.namespace} namespace.\n` : 'No resources found\n');
    return 0;
  }
  const dry = ctx.dryRun;
  const body: JsonObject = {
    kind: 'DeleteOptions',
    apiVersion: 'v1',
    propagationPolicy: policy,
    ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}),
    ...(dry === 'server' ? { dryRun: ['All'] } : {}),
  };
  const deleted: { t: Target; name: string; uid?: string | undefined }[] = [];
  let failed = 0;
  for (const o of objects) {
    try {
      if (dry === 'client') await ctx.client.get(pathOf(o.t, o.name));
      else {
        // The deleted object, or a Status naming it in its details.
        const res = await ctx.client.delete<JsonObject | undefined>(pathOf(o.t, o.name), body);
        o.uid ??= asString(nested(res, 'metadata', 'uid')) ?? asString(nested(res, 'details', 'uid'));
      }
      ctx.io.out(`${kindRef(o.t.mapping)} "${o.name}" deleted${dryRunSuffix(dry)}\n`);
      deleted.push(o);
    } catch (e) {
      if (isStatusError(e) && e.status.reason === 'NotFound' && g.ignoreNotFound) continue;
      if (!isStatusError(e)) throw e;
      ctx.io.err(`Error from server (${e.status.reason}): ${e.status.message}\n`);
      failed++;
    }
  }
  if (g.wait !== false && dry === 'none' && deleted.length) {
    const deadline = Date.now() + ctx.duration(g.timeout, 0);
    for (const o of deleted) {
      const gone = await waitGone(ctx, o.t, o.name, o.uid, g.timeout ? deadline : Infinity);
      if (!gone) {
        ctx.io.err(`error: timed out waiting for the condition on ${resourceRef(o.t.mapping)}/${o.name}\n`);
        failed++;
      }
    }
  }
  return failed ? 1 : 0;
}

/** Polls until the object is gone (or replaced by one with another uid); false on the deadline. */
export async function waitGone(ctx: Ctx, t: Target, name: string, uid: string | undefined, deadline: number): Promise<boolean> {
  for (let delay = 100; ; delay = Math.min(delay * 2, 1000)) {
    const live = await ctx.getOrNull(pathOf(t, name));
    if (!live || (uid && live.metadata?.uid !== uid)) return true;
    if (Date.now() >= deadline || ctx.io.signal?.aborted) return false;
    await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, deadline - Date.now()))));
  }
}
