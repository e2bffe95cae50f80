/**
 * The served resources: the built-in catalogue of @kubeling/api plus those
 * CustomResourceDefinitions add while the server runs. Discovery, OpenAPI, the
 * routes and the admission plugins that look resources up read this, so a
 * CRD's resources appear and leave without a restart (upstream: the
 * apiextensions-apiserver's discovery controller and crdHandler, behind the
 * aggregator's merged discovery).
 */
import { compareKubeAwareVersions, GROUP_ORDER, type GroupVersion, type ResourceDef, resources as builtins } from '@kubeling/api';
import type { CustomResourceDefinitionSpec, JSONSchemaProps } from './types.js';

/** What the custom-resource machinery needs to serve one version of a CRD. */
export interface CrdServing {
  /** The CRD's name and uid (a re-created CRD is a new one). */
  name: string;
  uid: string;
  listKind: string;
  /** The version objects are stored in. */
  storageVersion: string;
  /** The structural schema of this version (absent: anything is kept). */
  schema: JSONSchemaProps | undefined;
  statusSubresource: boolean;
  scale: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } | undefined;
  columns: { name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }[];
  selectableFields: string[];
  /** The Warning a deprecated version answers with. */
  deprecationWarning: string | undefined;
  spec: CustomResourceDefinitionSpec;
}

export interface CustomResourceDef extends ResourceDef {
  crd: CrdServing;
}

export const isCustom = (def: ResourceDef): def is CustomResourceDef => 'crd' in def;

/** Kubernetes' version order; the one definition is @kubeling/api's (groupVersions of the static table sorts by it too). */
export { compareKubeAwareVersions };

export class ResourceCatalog {
  private readonly custom = new Map<string, CustomResourceDef[]>();
  private all: readonly ResourceDef[] = builtins;
  private gvs: GroupVersion[] | undefined;
  private readonly listeners = new Set<() => void>();
  /** Bumped on every change (caches of documents built from the catalogue key on it). */
  generation = 0;

  resources(): readonly ResourceDef[] {
    return this.all;
  }

  find(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.all.find((r) => r.group === group && r.version === version && r.resource === resource);
  }

  findByKind(group: string, version: string, kind: string): ResourceDef | undefined {
    return this.all.find((r) => r.group === group && r.version === version && r.kind === kind);
  }

  /** Served group-versions in discovery order: the built-in groups, then CRD groups by name; each group's versions in Kubernetes' order. */
  groupVersions(): GroupVersion[] {
    if (this.gvs) return this.gvs;
    const out: GroupVersion[] = [];
    const groups = [...GROUP_ORDER];
    const extra = [...new Set(this.all.map((r) => r.group))].filter((g) => !groups.includes(g)).sort();
    for (const g of [...groups, ...extra]) {
      // Every group's versions in Kubernetes' order, built-in ones too (autoscaling: v2 before v1, so v2 is preferred).
      const versions = [...new Set(this.all.filter((r) => r.group === g).map((r) => r.version))].sort(compareKubeAwareVersions);
      for (const v of versions) out.push({ group: g, version: v });
    }
    this.gvs = out;
    return out;
  }

  /** The resources a CRD serves now (one per served version); replaces what it served before. */
  setCustom(crdName: string, defs: CustomResourceDef[]): void {
    if (defs.length) this.custom.set(crdName, defs);
    else this.custom.delete(crdName);
    this.changed();
  }

  removeCustom(crdName: string): void {
    if (!this.custom.delete(crdName)) return;
    this.changed();
  }

  customOf(crdName: string): readonly CustomResourceDef[] {
    return this.custom.get(crdName) ?? [];
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.all = [...builtins, ...[...this.custom.values()].flat()];
    this.gvs = undefined;
    this.generation++;
    for (const fn of this.listeners) fn();
  }
}
