/**
 * `diff -f`: what `apply` would change, as kubectl shows it — each object as
 * it is now and as the server would make it (a dry run of the same client-side
 * apply patch, or of a create), written as YAML into two folders that `diff
 * -u -N` (or `$KUBECTL_EXTERNAL_DIFF`) compares. Exit code 0: no differences,
 * 1: differences, >1: an error.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf } from '../ctx.js';
import type { JsonObject } from '../json.js';
import { resourcePath } from '../discovery.js';
import { printable, toYaml } from '../print/printers.js';
import { LAST_APPLIED, threeWayMergePatch } from './apply-merge.js';

/** An object as diff shows it: managed fields left out, as kubectl does. */
function masked(o: JsonObject | undefined): string {
  if (!o) return '';
  return toYaml(printable(o, false));
}

export async function diff(ctx: Ctx, args: string[]): Promise<number> {
  if (args.length) throw new UsageError(`error: Unexpected args: [${args.join(' ')}]`);
  if (!ctx.g.filenames.length) throw new UsageError('error: the path "" does not exist');
  const manifests = await ctx.manifestsToWrite();
  const root = mkdtempSync(join(tmpdir(), 'kubectl-diff-'));
  const live = join(root, 'LIVE');
  const merged = join(root, 'MERGED');
  mkdirSync(live);
  mkdirSync(merged);
  try {
    for (const { obj, source } of manifests) {
      const m = await ctx.mappingFor(obj, source);
      const ns = m.namespaced ? (obj.metadata?.namespace ?? ctx.ns) : undefined;
      if (ns) obj.metadata.namespace = ns;
      const path = resourcePath(m, ns, obj.metadata.name);
      const cur = await ctx.getOrNull(path);
      let next: KubeObject;
      if (ctx.g.serverSide) {
        next = await ctx.client.patch<KubeObject>(path, obj, 'application/apply-patch+yaml', {
          fieldManager: 'kubectl',
          dryRun: 'All',
          ...(ctx.g.forceConflicts ? { force: 'true' } : {}),
        });
      } else if (!cur) {
        next = await ctx.client.post<KubeObject>(resourcePath(m, ns), obj, { fieldManager: 'kubectl-client-side-apply', dryRun: 'All' });
      } else {
        // As kubectl diff: the apply patch without updating the last-applied annotation itself.
        const prev = cur.metadata?.annotations?.[LAST_APPLIED];
        const modified = structuredClone(obj);
        const annotations = { ...(modified.metadata?.annotations ?? {}) };
        delete annotations[LAST_APPLIED];
        modified.metadata = { ...modified.metadata, annotations };
        const patch = threeWayMergePatch(prev ? (JSON.parse(prev) as JsonObject) : undefined, modified, cur);
        next = Object.keys(patch).length
          ? await ctx.client.patch<KubeObject>(path, patch, 'application/merge-patch+json', { fieldManager: 'kubectl-client-side-apply', dryRun: 'All' })
          : cur;
      }
      // kubectl's file names: <group>.<version>.<Kind>.<namespace>.<name>
      const file = [m.group || '', m.version, m.kind, ns ?? '', obj.metadata.name].filter(Boolean).join('.');
      const withType = (o: KubeObject | undefined) => (o ? { apiVersion: apiVersionOf(m), kind: m.kind, ...o } : undefined);
      // A new object has no live file: `diff -N` shows it whole as added.
      if (cur) writeFileSync(join(live, file), masked(withType(cur)));
      writeFileSync(join(merged, file), masked(withType(next)));
    }
    const external = ctx.io.env.KUBECTL_EXTERNAL_DIFF;
    const [cmd, ...flags] = external ? external.split(/\s+/) : ['diff', '-u', '-N'];
    const r = spawnSync(cmd!, [...flags, live, merged], { encoding: 'utf8' });
    if (r.error) throw new UsageError(`error: failed to run "${cmd}": ${r.error.message}`);
    ctx.io.out(r.stdout ?? '');
    if (r.stderr) ctx.io.err(r.stderr);
    return r.status ?? 2;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
