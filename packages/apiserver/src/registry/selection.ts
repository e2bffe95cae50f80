/**
 * Label and field selectors as a filter over stored objects (kubernetes/apiserver
 * pkg/storage/selection_predicate.go). `metadata.name` and `metadata.namespace`
 * are selectable on every resource; other fields only where the strategy lists
 * them. A malformed selector, or a field the resource does not offer, is 400.
 */
import type { KubeObject } from '@kubeling/api';
import { badRequest, parseFieldSelector, parseLabelSelector } from '@kubeling/apimachinery';
import type { Filter } from '../storage/cacher.js';
import type { Strategy } from './strategy.js';

export interface SelectorOptions {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

/** The selectable fields of a strategy, read once from an empty object. */
const fieldNames = new WeakMap<Strategy, Set<string>>();

function supportsField(strategy: Strategy, f: string): boolean {
  if (!strategy.fields) return false;
  let names = fieldNames.get(strategy);
  if (!names) fieldNames.set(strategy, (names = new Set(Object.keys(strategy.fields({ metadata: {} } as KubeObject)))));
  return names.has(f);
}

/** Builds the filter of label and field selectors; 400 on malformed selectors. */
export function selectionFilter(strategy: Strategy, opts: SelectorOptions): Filter {
  let labels: ReturnType<typeof parseLabelSelector> | undefined;
  let fields: ReturnType<typeof parseFieldSelector> | undefined;
  try {
    if (opts.labelSelector) labels = parseLabelSelector(opts.labelSelector);
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  try {
    if (opts.fieldSelector) fields = parseFieldSelector(opts.fieldSelector);
  } catch (e) {
    throw badRequest((e as Error).message);
  }
  if (fields) {
    for (const r of fields.requirements) {
      if (r.field === 'metadata.name' || r.field === 'metadata.namespace') continue;
      if (!supportsField(strategy, r.field)) throw badRequest(`field label not supported: ${r.field}`);
    }
  }
  if (!labels && !fields) return () => true;
  return (obj) => {
    if (labels && !labels.matches(obj.metadata.labels ?? {})) return false;
    if (fields) {
      const extra = strategy.fields ? strategy.fields(obj) : {};
      const get = (f: string) =>
        f === 'metadata.name' ? (obj.metadata.name ?? '') : f === 'metadata.namespace' ? (obj.metadata.namespace ?? '') : (extra[f] ?? '');
      if (!fields.matches(get)) return false;
    }
    return true;
  };
}
