/**
 * The shape every API object shares, used by the generic machinery (storage,
 * registry, watch) that handles objects of any kind.
 */
import type { ObjectMeta } from './schema/meta.js';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export const apiVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}
