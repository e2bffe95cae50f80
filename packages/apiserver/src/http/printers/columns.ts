/**
 * What a resource's printer is (its column definitions and how one object
 * becomes a row of cells), and the cell formats the printers share: ages as
 * upstream's HumanDuration, selectors and lists as kubectl shows them
 * (kubernetes pkg/printers/internalversion/printers.go).
 */
import type { KubeObject, LabelSelector, corev1 } from '@kubeling/api';
import { humanDuration } from '@kubeling/apimachinery';

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

export interface Printer {
  columns: Column[];
  cells(o: KubeObject, now: number): unknown[];
}

/** A printer of one kind: the objects it is given are of kind `T`. */
export const printer = <T>(columns: Column[], cells: (o: T, now: number) => unknown[]): Printer => ({ columns, cells: (o, now) => cells(o as T, now) });

export const col = (name: string, description: string, opts: Partial<Column> = {}): Column => ({
  name,
  type: 'string',
  format: '',
  description,
  priority: 0,
  ...opts,
});
export const NAME = col(
  'Name',
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.',
  { format: 'name' },
);
export const AGE = col('Age', 'CreationTimestamp is a timestamp representing the server time when this object was created.');
/** A column `kubectl get -o wide` adds. */
export const wide = (name: string, description: string) => col(name, description, { priority: 1 });

export const age = (o: { metadata?: { creationTimestamp?: string } }, now: number): string => {
  const t = o.metadata?.creationTimestamp;
  return t ? humanDuration(now - Date.parse(t)) : '<unknown>';
};

export const containersOf = (spec: corev1.PodSpec | undefined): corev1.Container[] => spec?.containers ?? [];
export const names = (cs: corev1.Container[]) => cs.map((c) => c.name).join(',');
export const images = (cs: corev1.Container[]) => cs.map((c) => c.image).join(',');

export function selectorString(sel: LabelSelector | undefined): string {
  if (!sel) return '<none>';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) parts.push(`${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const vals = (e.values ?? []).slice().sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

export const mapSelector = (m: Record<string, string> | undefined) =>
  m && Object.keys(m).length
    ? Object.entries(m)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
    : '<none>';

/** At most three items, then how many more, as upstream's printers shorten lists. */
export function firstThree(items: string[], none: string): string {
  if (!items.length) return none;
  return items.length > 3 ? `${items.slice(0, 3).join(',')} + ${items.length - 3} more...` : items.join(',');
}
