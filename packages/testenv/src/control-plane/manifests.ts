/**
 * Manifests from files and folders, applied as `kubectl apply --server-side -f`
 * would: every `.yaml`, `.yml` and `.json` file below a folder, in name order,
 * each document of each file (`List`s opened up). Namespaces and
 * CustomResourceDefinitions go first, and the definitions are waited on until
 * Established, so the custom resources of the same folder can follow them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject, ObjectClient } from './objects.js';

export interface WaitOptions {
  /** Give up after this long (10 s). */
  timeoutMs?: number;
  /** Between tries (25 ms). */
  intervalMs?: number;
  /** What is waited for, for the error. */
  message?: string;
}

/** What a truthy answer can be. */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/**
 * Calls `condition` until it returns something truthy and returns that; a
 * throw counts as "not yet", and the last one is in the timeout's error.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, o: WaitOptions = {}): Promise<Truthy<T>> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await condition();
      if (v) return v as Truthy<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline) {
      const why = last ? `: ${(last as Error).message ?? String(last)}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${o.message ?? 'the condition'}${why}`);
    }
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 25));
  }
}

const MANIFEST = /\.(ya?ml|json)$/i;

function files(path: string, acc: string[] = []): string[] {
  const st = statSync(path);
  if (!st.isDirectory()) {
    acc.push(path);
    return acc;
  }
  for (const name of readdirSync(path).sort()) {
    if (name.startsWith('.')) continue;
    const p = join(path, name);
    if (statSync(p).isDirectory()) files(p, acc);
    else if (MANIFEST.test(name)) acc.push(p);
  }
  return acc;
}

/** The objects of files and folders, in order; a file that does not parse throws naming it. */
export function readManifests(paths: string | readonly string[]): KubeObject[] {
  const out: KubeObject[] = [];
  for (const p of typeof paths === 'string' ? [paths] : paths) {
    for (const f of files(p)) {
      const docs = parseAllDocuments(readFileSync(f, 'utf8'));
      for (const d of Array.isArray(docs) ? docs : [docs]) {
        if (d.errors.length) throw new Error(`${f}: ${d.errors[0]!.message}`);
        const obj = d.toJS() as KubeObject | null;
        if (!obj) continue;
        if (typeof obj !== 'object' || !obj.apiVersion || !obj.kind) throw new Error(`${f}: a document without apiVersion and kind`);
        if (obj.kind.endsWith('List') && Array.isArray(obj.items)) out.push(...(obj.items as KubeObject[]));
        else out.push(obj);
      }
    }
  }
  return out;
}

const FIRST = new Set(['Namespace', 'CustomResourceDefinition']);

interface CRDStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

/** Waits until every named CustomResourceDefinition is Established. */
export async function waitForCRDs(client: ObjectClient, names: readonly string[], o: WaitOptions = {}): Promise<void> {
  for (const name of names) {
    await waitFor(
      async () => {
        const crd = (await client.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name })) as KubeObject & CRDStatus;
        return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      },
      { timeoutMs: 30_000, ...o, message: o.message ?? `CustomResourceDefinition ${name} to be Established` },
    );
  }
  client.invalidate();
}

/**
 * Applies (server-side) every object of the files and folders; returns the
 * objects as the server stored them.
 */
export async function applyManifests(
  client: ObjectClient,
  paths: string | readonly string[],
  o: { fieldManager?: string; force?: boolean } = {},
): Promise<KubeObject[]> {
  const objs = readManifests(paths);
  const first = objs.filter((x) => FIRST.has(x.kind));
  const rest = objs.filter((x) => !FIRST.has(x.kind));
  const applied: KubeObject[] = [];
  for (const x of first) applied.push(await client.apply(x, { force: true, ...o }));
  const crds = first.filter((x) => x.kind === 'CustomResourceDefinition').map((x) => x.metadata.name!);
  if (crds.length) await waitForCRDs(client, crds);
  for (const x of rest) applied.push(await client.apply(x, { force: true, ...o }));
  return applied;
}
