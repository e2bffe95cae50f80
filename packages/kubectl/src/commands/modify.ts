/**
 * Commands that change existing objects: `patch`, `label`, `annotate`,
 * `scale`, `set image` and `edit` (through `$EDITOR`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeObject } from '@kubeling/api';
import { isStatusError } from '@kubeling/apimachinery';
import { UsageError } from '../flags.js';
import { type Ctx, apiVersionOf, dryRunSuffix, kindRef, pathOf, type Target } from '../ctx.js';
import { asObject, asObjects, nested, type JsonObject } from '../json.js';
import { parseOutput, printable, printObjects, toYaml } from '../print/printers.js';
import { twoWayMergePatch } from './apply-merge.js';

const PATCH_TYPES: Record<string, string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
};

/** Prints `<kind>/<name> <verb>` or the `-o` form of the result. */
function report(ctx: Ctx, t: Target, name: string, verb: string, result: JsonObject | undefined): void {
  const out = parseOutput(ctx.g.output, ctx.g.template);
  if (out.t === 'table' || !result) ctx.io.out(`${kindRef(t.mapping)}/${name} ${verb}${dryRunSuffix(ctx.dryRun)}\n`);
  else
    ctx.io.out(
      printObjects(out, [{ apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...result }], true, { nameOf: () => `${kindRef(t.mapping)}/${name}` }),
    );
}

/** Each named object, or each object of a collection with `-l`/`--all`. */
async function named(ctx: Ctx, args: string[]): Promise<{ t: Target; name: string }[]> {
  const targets = await ctx.targets(args, { allowList: ctx.g.all || !!ctx.g.selector });
  const out: { t: Target; name: string }[] = [];
  for (const t of targets) {
    if (t.name) out.push({ t, name: t.name });
    else for (const o of await ctx.list(t)) out.push({ t, name: o.metadata.name ?? '' });
  }
  return out;
}

export async function patch(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  if (!g.patch) throw new UsageError('error: must specify -p to patch');
  const type = g.type ?? 'strategic';
  const ct = PATCH_TYPES[type];
  if (!ct) throw new UsageError(`error: --type must be one of [json merge strategic], not "${type}"`);
  let body: unknown;
  try {
    body = parse(g.patch);
  } catch (e) {
    throw new UsageError(`error: unable to parse "${g.patch}": ${(e as Error).message}`);
  }
  if (type === 'json' ? !Array.isArray(body) : !body || typeof body !== 'object' || Array.isArray(body))
    throw new UsageError(`error: unable to parse "${g.patch}": the patch is not a ${type === 'json' ? 'JSON array' : 'JSON object'}`);
  for (const { t, name } of await named(ctx, args)) {
    const path = g.subresource ? `${pathOf(t, name)}/${g.subresource}` : pathOf(t, name);
    const before = await ctx.client.get<KubeObject>(path);
    // A client dry run of a patch is worked out by the server's dry run: nothing is stored either way.
    const after = await ctx.client.patch<KubeObject>(path, body, ct, {
      ...ctx.writeQuery('kubectl-patch'),
      ...(ctx.dryRun === 'client' ? { dryRun: 'All' } : {}),
    });
    // As kubectl: "no change" when the object came back exactly as it was read.
    report(ctx, t, name, JSON.stringify(printable(before, true)) === JSON.stringify(printable(after, true)) ? 'patched (no change)' : 'patched', after);
  }
  return 0;
}

export async function labelOrAnnotate(ctx: Ctx, cmd: 'label' | 'annotate', args: string[]): Promise<number> {
  const g = ctx.g;
  const changes: Record<string, string | null> = {};
  const objArgs: string[] = [];
  for (const a of args) {
    if (a.endsWith('-') && !a.includes('=') && objArgs.length) changes[a.slice(0, -1)] = null;
    else if (a.includes('=') && objArgs.length) {
      const i = a.indexOf('=');
      if (i <= 0) throw new UsageError(`error: invalid ${cmd === 'label' ? 'label' : 'annotation'} spec: ${a}`);
      changes[a.slice(0, i)] = a.slice(i + 1);
    } else objArgs.push(a);
  }
  if (!objArgs.length && !g.filenames.length) throw new UsageError('error: one or more resources must be specified as <resource> <name> or <resource>/<name>');
  // `label deploy web tier=x`: the type and names come first.
  if (!Object.keys(changes).length) throw new UsageError(`error: at least one ${cmd === 'label' ? 'label' : 'annotation'} update is required`);
  const field = cmd === 'label' ? 'labels' : 'annotations';
  for (const { t, name } of await named(ctx, objArgs)) {
    const path = pathOf(t, name);
    const live = await ctx.client.get<KubeObject>(path);
    if (!g.overwrite) {
      for (const [key, v] of Object.entries(changes)) {
        const have = live.metadata?.[field]?.[key];
        if (v !== null && have !== undefined && have !== v) throw new UsageError(`error: '${key}' already has a value (${have}), and --overwrite is false`);
      }
    }
    const unchanged = Object.entries(changes).every(([k, v]) => (v === null ? live.metadata?.[field]?.[k] === undefined : live.metadata?.[field]?.[k] === v));
    const result =
      ctx.dryRun === 'client' || unchanged
        ? live
        : await ctx.client.patch<KubeObject>(path, { metadata: { [field]: changes } }, 'application/merge-patch+json', ctx.writeQuery(`kubectl-${cmd}`));
    const verb = cmd === 'label' ? 'labeled' : 'annotated';
    report(ctx, t, name, unchanged ? `not ${verb}` : verb, result);
  }
  return 0;
}

export async function scale(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  if (!g.replicas || !/^\d+$/.test(g.replicas))
    throw new UsageError('error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0');
  const objs = await named(ctx, args);
  if (!objs.length) throw new UsageError('error: resource(s) were provided, but no name was specified');
  for (const { t, name } of objs) {
    if (ctx.dryRun !== 'client')
      await ctx.client.patch(
        `${pathOf(t, name)}/scale`,
        { spec: { replicas: Number(g.replicas) } },
        'application/merge-patch+json',
        ctx.dryRun === 'server' ? { dryRun: 'All' } : undefined,
      );
    report(ctx, t, name, 'scaled', undefined);
  }
  return 0;
}

/** The pod template spec of a workload, where `set image` changes containers. */
export function podSpecOf(o: JsonObject): JsonObject | undefined {
  if (o.kind === 'Pod') return asObject(o.spec);
  if (o.kind === 'CronJob') return asObject(nested(o.spec, 'jobTemplate', 'spec', 'template', 'spec'));
  return asObject(nested(o.spec, 'template', 'spec'));
}

export async function setImage(ctx: Ctx, args: string[]): Promise<number> {
  const pairs: [string, string][] = [];
  const objArgs: string[] = [];
  for (const a of args) {
    const i = a.indexOf('=');
    if (i > 0) pairs.push([a.slice(0, i), a.slice(i + 1)]);
    else objArgs.push(a);
  }
  if (!pairs.length) throw new UsageError('error: at least one image update is required');
  for (const { t, name } of await named(ctx, objArgs)) {
    const live: KubeObject = { apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...(await ctx.client.get<KubeObject>(pathOf(t, name))) };
    const spec = podSpecOf(live);
    if (!spec) throw new UsageError(`error: ${kindRef(t.mapping)}/${name} has no pod template`);
    const next = structuredClone(live);
    const nextSpec = podSpecOf(next)!;
    for (const [cname, image] of pairs) {
      let found = false;
      for (const list of ['initContainers', 'containers']) {
        for (const c of asObjects(nextSpec[list])) {
          if (cname === '*' || c.name === cname) {
            c.image = image;
            found = true;
          }
        }
      }
      if (!found) {
        ctx.io.err(`error: unable to find container named "${cname}"\n`);
        return 1;
      }
    }
    const p = twoWayMergePatch(live, next);
    if (!Object.keys(p).length) continue;
    const result =
      ctx.dryRun === 'client' ? next : await ctx.client.patch<KubeObject>(pathOf(t, name), p, 'application/merge-patch+json', ctx.writeQuery('kubectl-set'));
    report(ctx, t, name, 'image updated', parseOutput(ctx.g.output).t === 'table' ? undefined : result);
  }
  return 0;
}

/** `edit`: the object as YAML in `$EDITOR`; the difference is sent as a merge patch guarded by resourceVersion. */
export async function edit(ctx: Ctx, args: string[]): Promise<number> {
  const objs = await named(ctx, args);
  if (!objs.length) throw new UsageError('error: no objects to edit');
  const dir = mkdtempSync(join(tmpdir(), 'kubectl-edit-'));
  try {
    for (const { t, name } of objs) {
      const live: KubeObject = { apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...(await ctx.client.get<KubeObject>(pathOf(t, name))) };
      const file = join(dir, `${t.mapping.resource}-${name}.yaml`);
      const header =
        "# Please edit the object below. Lines beginning with a '#' will be ignored,\n# and an empty file will abort the edit. If an error occurs while saving this file will be\n# reopened with the relevant failures.\n#\n";
      const original = printable(live, false);
      writeFileSync(file, header + (ctx.g.output === 'json' ? JSON.stringify(original, null, 4) + '\n' : toYaml(original)));
      const code = (ctx.io.edit ?? defaultEditor(ctx))(file);
      if (code !== 0) throw new UsageError(`error: there was a problem with the editor "${ctx.io.env.KUBE_EDITOR ?? ctx.io.env.EDITOR ?? 'vi'}"`);
      const text = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n');
      if (!text.trim()) {
        ctx.io.out('Edit cancelled, no changes made.\n');
        continue;
      }
      let edited: JsonObject;
      try {
        edited = parse(text) as JsonObject;
      } catch (e) {
        throw new UsageError(`error: the edited file had a syntax error: ${(e as Error).message}`);
      }
      const p = twoWayMergePatch(original, edited);
      if (!Object.keys(p).length) {
        ctx.io.out('Edit cancelled, no changes made.\n');
        continue;
      }
      if (p.apiVersion !== undefined || p.kind !== undefined || nested(p, 'metadata', 'name') !== undefined)
        throw new UsageError('error: At least one of apiVersion, kind and name was changed');
      try {
        await ctx.client.patch(
          pathOf(t, name),
          { ...p, metadata: { ...asObject(p.metadata), resourceVersion: live.metadata.resourceVersion } },
          'application/merge-patch+json',
          ctx.writeQuery('kubectl-edit'),
        );
      } catch (e) {
        if (!isStatusError(e)) throw e;
        ctx.io.err(
          `error: ${kindRef(t.mapping)} "${name}" could not be patched: ${e.status.message}\nYou can run \`kubectl replace -f ${file}\` to try this update again.\n`,
        );
        return 1;
      }
      ctx.io.out(`${kindRef(t.mapping)}/${name} edited\n`);
    }
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function defaultEditor(ctx: Ctx): (file: string) => number {
  const editor = ctx.io.env.KUBE_EDITOR ?? ctx.io.env.EDITOR ?? 'vi';
  return (file) => spawnSync('sh', ['-c', `${editor} "$1"`, 'editor', file], { stdio: 'inherit', env: ctx.io.env as NodeJS.ProcessEnv }).status ?? 1;
}
