/**
 * `config view|get-contexts|current-context|use-context|set-context`: reads
 * the kubeconfig files in kubectl's order and writes back to the file that
 * holds what changes (the current context: the file that set it, else the
 * first file), keeping the rest of each file as it was.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseDocument } from 'yaml';
import { kubeconfigPaths, loadKubeConfig, type KubeConfig } from '@kubeling/client';
import { UsageError } from '../flags.js';
import type { Ctx } from '../ctx.js';
import type { JsonObject } from '../json.js';
import { columns, parseOutput, printable, printObjects, toYaml } from '../print/printers.js';

function load(ctx: Ctx): KubeConfig {
  return loadKubeConfig({ explicitPath: ctx.g.kubeconfig, env: ctx.io.env });
}

/** The file `config` commands write the current context to. */
function fileFor(ctx: Ctx, kc: KubeConfig, what: 'current' | { context: string }): string {
  if (what === 'current' && kc.origins.currentContext) return kc.origins.currentContext;
  if (what !== 'current' && kc.origins.contexts[what.context]) return kc.origins.contexts[what.context]!;
  const paths = kubeconfigPaths({ explicitPath: ctx.g.kubeconfig, env: ctx.io.env });
  return paths.find((p) => existsSync(p)) ?? paths[0]!;
}

function edit(file: string, change: (doc: ReturnType<typeof parseDocument>) => void): void {
  const doc = parseDocument(
    existsSync(file) ? readFileSync(file, 'utf8') : 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\npreferences: {}\n',
  );
  change(doc);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, doc.toString(), { mode: 0o600 });
}

const REDACT = new Set(['certificate-authority-data', 'client-certificate-data', 'client-key-data']);

export async function config(ctx: Ctx, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const kc = load(ctx);
  const current = ctx.g.context ?? kc['current-context'];
  switch (sub) {
    case 'view': {
      let clusters = kc.clusters;
      let users = kc.users;
      let contexts = kc.contexts;
      if (ctx.g.minify) {
        const c = kc.contexts.find((x) => x.name === current);
        if (!c) throw new UsageError('error: current-context must exist in order to minify');
        contexts = [c];
        clusters = kc.clusters.filter((x) => x.name === c.context.cluster);
        users = kc.users.filter((x) => x.name === c.context.user);
      }
      const redact = (o: object): object => {
        if (ctx.g.raw) return o;
        const out: JsonObject = {};
        for (const [k, v] of Object.entries(o)) out[k] = REDACT.has(k) ? 'DATA+OMITTED' : k === 'token' || k === 'password' ? 'REDACTED' : v;
        return out;
      };
      const view: JsonObject = {
        apiVersion: 'v1',
        clusters: clusters.map((c) => ({ cluster: redact(c.cluster), name: c.name })),
        contexts: contexts.map((c) => ({ context: c.context, name: c.name })),
        'current-context': current ?? '',
        kind: 'Config',
        preferences: kc.preferences ?? {},
        users: users.map((u) => ({ name: u.name, user: redact(u.user) })),
      };
      const out = parseOutput(ctx.g.output ?? 'yaml', ctx.g.template);
      ctx.io.out(out.t === 'table' ? toYaml(printable(view, true)) : printObjects(out, [view], true, { nameOf: () => 'config' }));
      return 0;
    }
    case 'current-context':
      if (!current) throw new UsageError('error: current-context is not set');
      ctx.io.out(`${current}\n`);
      return 0;
    case 'get-contexts': {
      const names = rest.length ? rest : kc.contexts.map((c) => c.name);
      const rows = [['CURRENT', 'NAME', 'CLUSTER', 'AUTHINFO', 'NAMESPACE']];
      for (const n of names) {
        const c = kc.contexts.find((x) => x.name === n);
        if (!c) throw new UsageError(`error: context ${n} not found`);
        rows.push([c.name === current ? '*' : '', c.name, c.context.cluster ?? '', c.context.user ?? '', c.context.namespace ?? '']);
      }
      if (ctx.g.output === 'name') ctx.io.out(names.map((n) => `${n}\n`).join(''));
      else ctx.io.out(columns(ctx.g.noHeaders ? rows.slice(1) : rows));
      return 0;
    }
    case 'use-context':
    case 'use': {
      const [name] = rest;
      if (!name) throw new UsageError('error: Unexpected args: []');
      if (!kc.contexts.some((c) => c.name === name)) throw new UsageError(`error: no context exists with the name: "${name}"`);
      edit(fileFor(ctx, kc, 'current'), (doc) => doc.set('current-context', name));
      ctx.io.out(`Switched to context "${name}".\n`);
      return 0;
    }
    case 'set-context': {
      const name = ctx.g.current ? current : rest[0];
      if (!name) throw new UsageError(ctx.g.current ? 'error: no current context is set' : 'error: you must specify a non-empty context name or --current');
      if (ctx.g.current && rest.length) throw new UsageError('error: you cannot specify both a context name and --current');
      const existing = kc.contexts.find((c) => c.name === name);
      const changes: Record<string, string> = {};
      if (ctx.g.namespace !== undefined) changes.namespace = ctx.g.namespace;
      if (ctx.g.cluster !== undefined) changes.cluster = ctx.g.cluster;
      if (ctx.g.user !== undefined) changes.user = ctx.g.user;
      edit(fileFor(ctx, kc, { context: name }), (doc) => {
        const idx = (doc.toJS()?.contexts ?? []).findIndex((c: JsonObject) => c.name === name);
        if (idx < 0)
          doc.addIn(
            ['contexts'],
            doc.createNode({
              context: { cluster: changes.cluster ?? '', user: changes.user ?? '', ...(changes.namespace ? { namespace: changes.namespace } : {}) },
              name,
            }),
          );
        else for (const [k, v] of Object.entries(changes)) doc.setIn(['contexts', idx, 'context', k], v);
      });
      ctx.io.out(`Context "${name}" ${existing ? 'modified' : 'created'}.\n`);
      return 0;
    }
    default:
      throw new UsageError(
        `error: unknown command "${sub ?? ''}" for "kubectl config"\nAvailable Commands: current-context, get-contexts, set-context, use-context, view`,
      );
  }
}
