/**
 * How `describe` writes: `Key:\tvalue` lines at indent levels, label maps one
 * entry a line, Go's RFC1123Z times, and the header every describer opens
 * with; the lines are aligned by a Go-style tabwriter at the end.
 */
import type { KubeObject, ObjectMeta } from '@kubeling/api';
import { asList, asObject, asObjects } from '../json.js';
import { tabwrite } from '../print/tabwriter.js';

/** Go's RFC1123Z, as describe prints times: `Mon, 23 Nov 2026 10:04:05 +0000`. */
export function rfc1123z(iso: string | undefined): string {
  if (!iso) return '<unset>';
  const d = new Date(iso);
  const off = -d.getTimezoneOffset();
  const local = new Date(d.getTime() + off * 60_000);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  const sign = off >= 0 ? '+' : '-';
  return `${days[local.getUTCDay()]}, ${p(local.getUTCDate())} ${months[local.getUTCMonth()]} ${local.getUTCFullYear()} ${p(local.getUTCHours())}:${p(local.getUTCMinutes())}:${p(local.getUTCSeconds())} ${sign}${p(Math.floor(Math.abs(off) / 60))}${p(Math.abs(off) % 60)}`;
}

export class Lines {
  readonly l: string[] = [];
  add(s: string): this {
    this.l.push(s);
    return this;
  }
  /** `Key:\tvalue` at an indent level (two spaces each). */
  kv(level: number, key: string, value: unknown): this {
    return this.add(`${'  '.repeat(level)}${key}:\t${value === undefined || value === null || value === '' ? '<none>' : String(value)}`);
  }
  /** A map printed as kubectl's printLabelsMultiline: `k=v` one per line, or `<none>`. */
  map(level: number, key: string, m: Record<string, string> | undefined, sep = '='): this {
    const entries = Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    if (!entries.length) return this.kv(level, key, '<none>');
    entries.forEach(([k, v], i) => this.add(i === 0 ? `${'  '.repeat(level)}${key}:\t${k}${sep}${v}` : `\t${k}${sep}${v}`));
    return this;
  }
  text(): string {
    return tabwrite(this.l.join('\n')) + '\n';
  }
}

/** A LabelSelector (or a plain label map) as describe shows it: `k=v,k2 in (a,b)`, or `<none>`. */
export const selectorText = (selector: unknown): string => {
  const sel = asObject(selector);
  if (!sel) return '<none>';
  const parts = Object.entries(asObject(sel.matchLabels) ?? sel)
    .filter(([, v]) => typeof v === 'string')
    .map(([k, v]) => `${k}=${v}`);
  for (const e of asObjects(sel.matchExpressions)) parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${asList(e.values).join(',')})`);
  return parts.join(',') || '<none>';
};

/** The annotations describe shows: all but kubectl's own last-applied copy. */
export function annotationsShown(meta: ObjectMeta): Record<string, string> {
  const a = { ...(meta.annotations ?? {}) };
  delete a['kubectl.kubernetes.io/last-applied-configuration'];
  return a;
}

export function header(d: Lines, o: KubeObject, withNs = true, created = false): void {
  d.kv(0, 'Name', o.metadata.name);
  if (withNs) d.kv(0, 'Namespace', o.metadata.namespace);
  if (created) d.kv(0, 'CreationTimestamp', rfc1123z(o.metadata.creationTimestamp));
  d.map(0, 'Labels', o.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
}
