/**
 * Server-side printing: `meta.k8s.io/v1 Table` responses with the columns
 * kubectl users know (kubernetes pkg/printers/internalversion/printers.go),
 * rows carrying PartialObjectMetadata (or the whole object with
 * includeObject=Object), ages pre-rendered as upstream's HumanDuration.
 *
 * This file is the Table machinery; each resource's columns are in printers/.
 * A resource without a printer gets Name and Created At.
 */
import type { KubeObject, ObjectMeta, ResourceDef } from '@kubeling/api';
import type { CrdServing } from '../apiextensions/catalog.js';
import { columnCell } from '../apiextensions/cr-strategy.js';
import { col, NAME, type Column, type Printer } from './printers/columns.js';
import { humanDuration } from '@kubeling/apimachinery';
import { corePrinters } from './printers/core.js';
import { groupPrinters } from './printers/groups.js';
import { workloadPrinters } from './printers/workloads.js';
import { flowcontrolPrinters } from './printers/flowcontrol.js';
import { networkingPrinters } from './printers/networking.js';
import { storagePrinters } from './printers/storage.js';
import { aggregatorPrinters } from '../aggregator/printer.js';

const printers: Record<string, Printer> = {
  ...corePrinters,
  ...workloadPrinters,
  ...groupPrinters,
  ...flowcontrolPrinters,
  ...networkingPrinters,
  ...storagePrinters,
  ...aggregatorPrinters,
};

const DEFAULT_PRINTER: Printer = {
  columns: [NAME, col('Created At', 'CreationTimestamp is a timestamp representing the server time when this object was created.', { type: 'date' })],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
};

/** The printer of a resource, by group and resource name. */
export function printerFor(group: string, resource: string): Printer {
  return printers[`${group}/${resource}`] ?? DEFAULT_PRINTER;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ObjectMeta;
}

export interface TableRow {
  cells: unknown[];
  object?: PartialObjectMetadata | KubeObject;
  conditions?: { type: string; status: string; reason: string; message: string }[];
}

/** A list's metadata (a single object's table carries its resourceVersion). */
export interface TableMeta {
  resourceVersion?: string | undefined;
  continue?: string | undefined;
  remainingItemCount?: number | undefined;
}

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: TableMeta;
  columnDefinitions: Column[] | null;
  rows: TableRow[];
}

export function partialMetadata(o: KubeObject): PartialObjectMetadata {
  const { managedFields: _m, ...meta } = o.metadata;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta };
}

/** A CRD version's printer: Name, then its additionalPrinterColumns (Age when it has none), as apiextensions' tableconvertor. */
function customPrinter(crd: CrdServing): Printer {
  const cols = crd.columns.length ? crd.columns : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: CREATION_TIMESTAMP_DOC }];
  return {
    columns: [
      NAME,
      ...cols.map((c) => ({
        name: c.name,
        type: c.type as Column['type'],
        format: c.format ?? '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ],
    cells: (o, now) => [o.metadata.name, ...cols.map((c) => columnCell(o, c, now, humanDuration))],
  };
}

const CREATION_TIMESTAMP_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

export function toTable(
  def: Pick<ResourceDef, 'group' | 'resource'> & { crd?: CrdServing },
  objects: KubeObject[],
  listMeta: TableMeta,
  include: IncludeObject,
  withColumns = true,
  tableVersion: 'v1' | 'v1beta1' = 'v1',
): Table {
  const { group, resource } = def;
  const p = def.crd ? customPrinter(def.crd) : printerFor(group, resource);
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${tableVersion}`,
    metadata: listMeta,
    ...(withColumns ? { columnDefinitions: p.columns } : { columnDefinitions: null }),
    rows: objects.map((o) => {
      const row: TableRow = { cells: p.cells(o, now) };
      if (include === 'Metadata') row.object = partialMetadata(o);
      else if (include === 'Object') row.object = o;
      if (resource === 'pods' && !group) {
        const phase = (o.status as { phase?: string } | undefined)?.phase;
        if (phase === 'Succeeded' || phase === 'Failed')
          row.conditions = [{ type: 'Completed', status: 'True', reason: phase, message: 'The pod has completed successfully.' }];
      }
      return row;
    }),
  };
}

/** Whether (and which version of) a Table the Accept header asks for. */
export function tableWanted(accept: string | undefined): 'v1' | 'v1beta1' | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const params = part.split(';').map((s) => s.trim());
    if (!params.includes('as=Table') || !params.includes('g=meta.k8s.io')) continue;
    if (params.includes('v=v1')) return 'v1';
    if (params.includes('v=v1beta1')) return 'v1beta1';
  }
  return undefined;
}
