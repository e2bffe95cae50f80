/**
 * Resource lists of exact quantities, as quota arithmetic needs them
 * (k8s.io/apiserver/pkg/quota/v1/resources.go over resource.Quantity): values
 * in signed nano-units, so that `252Mi` plus `100Mi` is exactly `352Mi` and a
 * sum keeps the format of its first non-zero term, as Quantity.Add does. Lists
 * are plain records from resource name to quantity; nothing here throws on a
 * bad quantity: it counts as zero, as a quantity that never passed validation
 * cannot be stored.
 */
import { canonicalQuantity, parseExactQuantity, type ExactQuantity } from '@kubeling/api';

export interface Quantity {
  /** Signed value × 10⁹. */
  nanos: bigint;
  format: ExactQuantity['format'];
}

export type QuantityList = Record<string, Quantity>;

const NANO = 1_000_000_000n;

export const ZERO_QUANTITY: Quantity = Object.freeze({ nanos: 0n, format: 'DecimalSI' });

/** A quantity from its string (or number) form; zero for what does not parse. */
export function toQuantity(q: unknown): Quantity {
  const p = parseExactQuantity(q);
  if (!p) return ZERO_QUANTITY;
  return { nanos: p.negative ? -p.nanos : p.nanos, format: p.format };
}

/** An integer count (object counts, node ports). */
export const countQuantity = (n: number): Quantity => ({ nanos: BigInt(n) * NANO, format: 'DecimalSI' });

/** Quantity.String(): the canonical form (`1536Mi`, `500m`, `0`). */
export function formatQuantity(q: Quantity): string {
  return canonicalQuantity({ negative: q.nanos < 0n, nanos: q.nanos < 0n ? -q.nanos : q.nanos, format: q.format });
}

/** Quantity.Add: the receiver's format, or the addend's when the receiver is zero. */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

export function subQuantity(a: Quantity, b: Quantity): Quantity {
  return { nanos: a.nanos - b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

/** Quantity.Cmp. */
export const cmpQuantity = (a: Quantity, b: Quantity): number => (a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0);

/** RoundUp(0): the value rounded up to a whole unit (PVC storage requests). */
export function roundUpQuantity(q: Quantity): Quantity {
  const r = q.nanos % NANO;
  return r === 0n || q.nanos < 0n ? q : { nanos: q.nanos - r + NANO, format: q.format };
}

/** A ResourceList as stored (`{cpu: "500m"}`) as quantities. */
export function toQuantityList(rl: Readonly<Record<string, unknown>> | undefined | null): QuantityList {
  const out: QuantityList = {};
  for (const [k, v] of Object.entries(rl ?? {})) out[k] = toQuantity(v);
  return out;
}

/** As stored: canonical strings. */
export function fromQuantityList(l: QuantityList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(l).sort()) out[k] = formatQuantity(l[k]!);
  return out;
}

/** quota.Add: every key of either list, summed. */
export function addLists(a: QuantityList, b: QuantityList): QuantityList {
  const out: QuantityList = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? addQuantity(out[k]!, v) : v;
  return out;
}

/** quota.SubtractWithNonNegativeResult: the keys of `a`, less `b`, never below zero. */
export function subtractNonNegative(a: QuantityList, b: QuantityList): QuantityList {
  const out: QuantityList = {};
  for (const [k, v] of Object.entries(a)) {
    const d = k in b ? subQuantity(v, b[k]!) : v;
    out[k] = d.nanos < 0n ? { nanos: 0n, format: d.format } : d;
  }
  return out;
}

/** quota.Max: every key, the larger value. */
export function maxLists(a: QuantityList, b: QuantityList): QuantityList {
  const out: QuantityList = { ...a };
  for (const [k, v] of Object.entries(b)) if (!(k in out) || cmpQuantity(v, out[k]!) > 0) out[k] = v;
  return out;
}

/** quota.Mask: only the named keys. */
export function maskList(l: QuantityList, names: Iterable<string>): QuantityList {
  const out: QuantityList = {};
  for (const n of names) if (n in l) out[n] = l[n]!;
  return out;
}

/** quota.RemoveZeros. */
export function removeZeros(l: QuantityList): QuantityList {
  return Object.fromEntries(Object.entries(l).filter(([, v]) => v.nanos !== 0n));
}

/** quota.Equals: the same keys with equal values. */
export function equalLists(a: QuantityList, b: QuantityList): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => k in b && cmpQuantity(a[k]!, b[k]!) === 0);
}

/** quota.LessThanOrEqual: the keys of `a` over their limit in `b` (a key `b` lacks is unlimited). */
export function exceededNames(a: QuantityList, b: QuantityList): string[] {
  return Object.keys(a)
    .filter((k) => k in b && cmpQuantity(a[k]!, b[k]!) > 0)
    .sort();
}

/** `cpu=500m,memory=1Gi`: upstream's prettyPrint of a ResourceList, keys sorted. */
export function prettyPrintList(l: QuantityList): string {
  return Object.keys(l)
    .sort()
    .map((k) => `${k}=${formatQuantity(l[k]!)}`)
    .join(',');
}
