/**
 * `apply -f` over files, directories (`-R`), stdin and multi-document YAML:
 * client-side apply (the last-applied annotation and a three-way merge patch)
 * or `--server-side` (an apply patch owned by the field manager `kubectl`).
 */
import type { KubeObject } from '@kubeling/api';
import { isStatusError } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf, dryRunSuffix, kindRef } from '../ctx.js';
import type { JsonObject } from '../json.js';
import { resourcePath } from '../discovery.js';
import { parseOutput, printObjects } from '../print/printers.js';
import { LAST_APPLIED, threeWayMergePatch, withAnnotation } from './apply-merge.js';

export async function apply(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  if (args.length) throw new UsageError(`error: Unexpected args: [${args.join(' ')}]\nSee 'kubectl apply -h' for help and examples`);
  if (!g.filenames.length) throw new UsageError('error: must specify one of -f and -k');
  const manifests = await ctx.manifestsToWrite();
  if (!manifests.length) throw new UsageError('error: no objects passed to apply');
  const out = parseOutput(g.output, g.template);
  const dry = ctx.dryRun;
  let failed = 0;
  for (const { obj, source } of manifests) {
    const mapping = await ctx.mappingFor(obj, source);
    const namespace = mapping.namespaced ? (obj.metadata?.namespace ?? ctx.ns) : undefined;
    const name = obj.metadata.name;
    // As kubectl's builder does: the object carries the namespace it goes to (and so does its annotation).
    if (namespace) obj.metadata.namespace = namespace;
    const path = resourcePath(mapping, namespace, name);
    const report = (verb: string, result: JsonObject) => {
      if (out.t === 'table') ctx.io.out(`${kindRef(mapping)}/${name} ${verb}${dryRunSuffix(dry)}\n`);
      else
        ctx.io.out(
          printObjects(out, [{ apiVersion: apiVersionOf(mapping), kind: mapping.kind, ...result }], true, {
            showManagedFields: g.showManagedFields,
            nameOf: () => `${kindRef(mapping)}/${name}`,
          }),
        );
    };
    try {
      if (g.serverSide) {
        if (dry === 'client') throw new UsageError("error: --dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)");
        const result = await ctx.client.patch<KubeObject>(path, obj, 'application/apply-patch+yaml', {
          ...ctx.writeQuery('kubectl'),
          ...(g.forceConflicts ? { force: 'true' } : {}),
        });
        report('serverside-applied', result);
        continue;
      }
      const live = await ctx.getOrNull(path);
      const modified = withAnnotation(obj);
      if (!live) {
        const result =
          dry === 'client'
            ? modified
            : await ctx.client.post<KubeObject>(resourcePath(mapping, namespace), modified, ctx.writeQuery('kubectl-client-side-apply'));
        report('created', result);
        continue;
      }
      const prev = live.metadata?.annotations?.[LAST_APPLIED];
      const original = prev ? (JSON.parse(prev) as JsonObject) : undefined;
      if (!prev)
        ctx.io.err(
          `Warning: resource ${mapping.resource}/${name} is missing the ${LAST_APPLIED} annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n`,
        );
      const patch = threeWayMergePatch(original, modified, live);
      if (!Object.keys(patch).length) {
        report('unchanged', live);
        continue;
      }
      const result =
        dry === 'client' ? live : await ctx.client.patch<KubeObject>(path, patch, 'application/merge-patch+json', ctx.writeQuery('kubectl-client-side-apply'));
      report('configured', result);
    } catch (e) {
      if (!isStatusError(e)) throw e;
      ctx.io.err(
        `Error from server (${e.status.reason}): error when ${g.serverSide ? 'applying patch' : 'creating or patching'} "${source}": ${e.status.message}\n`,
      );
      failed++;
    }
  }
  return failed ? 1 : 0;
}
