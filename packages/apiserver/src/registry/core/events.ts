/**
 * Events: core/v1 Events, and the events.k8s.io/v1 view of the same stored objects
 * (the conversion upstream does between the two versions: regarding ↔
 * involvedObject, note ↔ message, reportingController ↔ reportingComponent, ...).
 */
import type { KubeObject } from '@kubeling/api';
import { field, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type Obj = Record<string, unknown>;

const ref = (o: KubeObject) => (o.involvedObject ?? {}) as Obj;

export const eventStrategy: Strategy = {
  validate(obj): FieldError[] {
    const errs: FieldError[] = [];
    const inv = ref(obj);
    if (inv.namespace && obj.metadata.namespace && inv.namespace !== obj.metadata.namespace) {
      errs.push(field.invalid('involvedObject.namespace', inv.namespace, 'does not match event.namespace'));
    }
    return errs;
  },
  fields(obj) {
    const inv = ref(obj);
    const src = (obj.source ?? {}) as Obj;
    return {
      'involvedObject.kind': String(inv.kind ?? ''),
      'involvedObject.namespace': String(inv.namespace ?? ''),
      'involvedObject.name': String(inv.name ?? ''),
      'involvedObject.uid': String(inv.uid ?? ''),
      'involvedObject.apiVersion': String(inv.apiVersion ?? ''),
      'involvedObject.resourceVersion': String(inv.resourceVersion ?? ''),
      'involvedObject.fieldPath': String(inv.fieldPath ?? ''),
      reason: String(obj.reason ?? ''),
      reportingComponent: String(obj.reportingComponent ?? ''),
      // ToSelectableFields: an events.k8s.io Event has no source; its reporting controller stands in.
      source: String(src.component || obj.reportingComponent || ''),
      type: String(obj.type ?? ''),
    };
  },
};

const CORE_TO_V1: [string, string][] = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];
const SAME = ['eventTime', 'series', 'action', 'reason', 'related', 'reportingInstance', 'type'];

function convert(o: KubeObject, pairs: [string, string][]): KubeObject {
  const out: KubeObject = { metadata: o.metadata };
  for (const k of SAME) if (o[k] !== undefined) out[k] = o[k];
  for (const [from, to] of pairs) if (o[from] !== undefined) out[to] = o[from];
  return out;
}

export const eventsV1Strategy: Strategy = {
  ...eventStrategy,
  validate(obj) {
    // validation runs on the stored (core) form
    return eventStrategy.validate!(obj);
  },
  fields(obj) {
    // events.k8s.io/v1 field labels name the v1 fields (pkg/apis/events/v1 conversion): regarding.*, reportingController.
    const core = eventStrategy.fields!(obj);
    const out: Record<string, string> = { reason: core.reason!, type: core.type!, reportingController: core.reportingComponent! };
    for (const [k, v] of Object.entries(core)) if (k.startsWith('involvedObject.')) out[`regarding.${k.slice('involvedObject.'.length)}`] = v;
    return out;
  },
  toExternal: (stored) => convert(stored, CORE_TO_V1),
  fromExternal: (obj) =>
    convert(
      obj,
      CORE_TO_V1.map(([a, b]) => [b, a] as [string, string]),
    ),
};
