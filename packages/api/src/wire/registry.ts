/**
 * The wire tables, merged and compiled: the generated tables of Kubernetes'
 * Go types (gen/) with the overlay (fields, structs and group-versions newer
 * than the generator's source). Structs are compiled on first use.
 *
 * Kinds are found by apiVersion and kind, as a Kubernetes scheme finds them:
 * the group-version's own kinds, then (for a group-version that took its kinds
 * over from an older one, like policy/v1 from policy/v1beta1) the older one's,
 * then the kinds meta/v1 registers in every group-version (DeleteOptions,
 * WatchEvent, the options) and its unversioned ones (Status, discovery).
 */
import { generated } from './gen/index.js';
import { compileStruct, type WirePackage, type WireRow, type WireStruct } from './model.js';
import { overlay } from './overlay.js';

const rows = new Map<string, readonly WireRow[]>();
const wrappers = new Map<string, string>();
/** apiVersion → package key. */
const packageOf = new Map<string, string>();
/** package key → older package keys whose structs stand in for missing ones. */
const fallbacks = new Map<string, readonly string[]>();
const kindsOf = new Map<string, Set<string>>();

function addPackage(p: WirePackage): void {
  for (const [name, r] of Object.entries(p.structs)) rows.set(`${p.key}.${name}`, r);
  for (const [name, w] of Object.entries(p.wrappers ?? {})) wrappers.set(`${p.key}.${name}`, w);
  if (p.version) packageOf.set(p.group ? `${p.group}/${p.version}` : p.version, p.key);
  const ks = kindsOf.get(p.key) ?? new Set<string>();
  for (const k of p.kinds) ks.add(k);
  kindsOf.set(p.key, ks);
}

for (const p of generated) addPackage(p);
for (const p of overlay.packages) addPackage(p);
for (const [key, added] of Object.entries(overlay.fields)) {
  const base = rows.get(key);
  if (!base) throw new Error(`wire overlay: no struct ${key}`);
  const out = [...base];
  for (const [after, row] of added) {
    if (after === '=') {
      // A field whose type changed upstream (Handler split into ProbeHandler and LifecycleHandler): same number, new row.
      const j = out.findIndex((r) => (row[3] ? r[3] === row[3] : r[0] === row[0]));
      if (j < 0) throw new Error(`wire overlay: ${key} has no field ${row[3] ?? row[0]} to replace`);
      out[j] = row;
      continue;
    }
    if (out.some((r) => r[0] === row[0] && !r[2].includes('i'))) throw new Error(`wire overlay: ${key}.${row[0]} is already there`);
    const i = after === '' ? -1 : out.findIndex((r) => r[0] === after);
    if (after !== '' && i < 0) throw new Error(`wire overlay: ${key} has no field ${after}`);
    out.splice(i + 1, 0, row);
  }
  rows.set(key, out);
}
for (const [key, olders] of Object.entries(overlay.aliases)) {
  fallbacks.set(key, olders);
  if (!kindsOf.has(key)) kindsOf.set(key, new Set());
  for (const o of olders) for (const k of kindsOf.get(o) ?? []) kindsOf.get(key)!.add(k);
}
for (const [apiVersion, key] of Object.entries(overlay.apiVersions)) packageOf.set(apiVersion, key);

const compiled = new Map<string, WireStruct | null>();

/** The compiled struct of a key (`apps/v1.Deployment`), through the aliases; undefined if none. */
export function wireStruct(key: string): WireStruct | undefined {
  let s = compiled.get(key);
  if (s === undefined) {
    const dot = key.lastIndexOf('.');
    const pkg = key.slice(0, dot);
    let r = rows.get(key);
    for (const older of fallbacks.get(pkg) ?? []) r ??= rows.get(`${older}.${key.slice(dot + 1)}`);
    s = r ? compileStruct(key, r, wrappers) : null;
    compiled.set(key, s);
  }
  return s ?? undefined;
}

const META_EVERYWHERE = new Set(['DeleteOptions', 'ListOptions', 'GetOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'WatchEvent']);
const META_UNVERSIONED = new Set(['Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList']);

/** The struct of a kind sent or served as `apiVersion`; undefined when the tables have none. */
export function kindStruct(apiVersion: string, kind: string): WireStruct | undefined {
  const key = packageOf.get(apiVersion);
  if (key && kindsOf.get(key)?.has(kind)) return wireStruct(`${key}.${kind}`);
  if (META_EVERYWHERE.has(kind) || (META_UNVERSIONED.has(kind) && apiVersion === 'v1') || (key === 'meta/v1' && kindsOf.get(key)?.has(kind))) {
    return wireStruct(`meta/v1.${kind}`);
  }
  return undefined;
}

/** Every struct key of the tables (for tests and checks). */
export function wireStructKeys(): string[] {
  return [...rows.keys()];
}

/** Every kind of the tables as [apiVersion, kind]. */
export function wireKinds(): [string, string][] {
  const out: [string, string][] = [];
  for (const [apiVersion, key] of packageOf) for (const k of kindsOf.get(key) ?? []) out.push([apiVersion, k]);
  return out;
}
