/**
 * The scale subresource of Deployments, ReplicaSets, StatefulSets and
 * ReplicationControllers (autoscaling/v1 Scale): read from the parent's spec and status, written to
 * the parent's spec.replicas in one guaranteed update.
 */
import type { KubeObject, ResourceDef } from '@kubeling/api';
import { StatusError, badRequest, conflict, isPlainObject, labelSelectorToString, OPTIMISTIC_LOCK_MESSAGE } from '@kubeling/apimachinery';
import type { Store, WriteContext } from '../store.js';

export interface Scale {
  kind: 'Scale';
  apiVersion: 'autoscaling/v1';
  metadata: Record<string, unknown>;
  spec: { replicas: number };
  status: { replicas: number; selector: string };
}

/** A schema for patches of a Scale: no merge keys, no directives. */
export const SCALE_SCHEMA = { type: 'object', properties: {} } as unknown as ResourceDef['schema'];

/** Where a custom resource keeps what its Scale shows (its CRD's scale subresource). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string | undefined;
}

const at = (obj: unknown, path: string): unknown => {
  let cur = obj;
  for (const p of path.replace(/^\./, '').split('.')) {
    if (!p) continue;
    if (!isPlainObject(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
};

/** What a Scale carries of its parent's metadata. */
const scaleMeta = (obj: KubeObject) => ({
  name: obj.metadata.name,
  namespace: obj.metadata.namespace,
  uid: obj.metadata.uid,
  resourceVersion: obj.metadata.resourceVersion,
  creationTimestamp: obj.metadata.creationTimestamp,
});

/** A custom resource's Scale (apiextensions' scaleFromCustomResource): missing replicas are 0. */
function customScaleOf(obj: KubeObject, paths: ScalePaths): Scale {
  const num = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : 0);
  const selector = paths.labelSelectorPath ? at(obj, paths.labelSelectorPath) : undefined;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: scaleMeta(obj),
    spec: { replicas: num(at(obj, paths.specReplicasPath)) },
    status: { replicas: num(at(obj, paths.statusReplicasPath)), selector: typeof selector === 'string' ? selector : '' },
  };
}

export function scaleOf(obj: KubeObject, paths?: ScalePaths): Scale {
  if (paths) return customScaleOf(obj, paths);
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: { matchLabels?: Record<string, string>; matchExpressions?: [] } };
  // A ReplicationController's selector is a plain label map.
  const selector = obj.kind === 'ReplicationController' && spec.selector ? { matchLabels: spec.selector as Record<string, string> } : spec.selector;
  const status = (obj.status ?? {}) as { replicas?: number };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: scaleMeta(obj),
    spec: { replicas: spec.replicas ?? 1 },
    status: { replicas: status.replicas ?? 0, selector: selector ? labelSelectorToString(selector) : '' },
  };
}

/**
 * Writes a Scale: `next` makes the new Scale from the current one (the body of
 * a PUT, or the current one patched); a resourceVersion in it must be the
 * parent's. Answers the Scale written.
 */
export async function updateScale(
  store: Store,
  def: ResourceDef,
  ns: string | undefined,
  name: string,
  next: (current: Scale) => unknown,
  ctx: WriteContext,
  paths?: ScalePaths,
): Promise<Scale> {
  const res = await store.guaranteedUpdate(
    ns,
    name,
    (cur) => {
      const s = next(scaleOf(cur, paths));
      if (!isPlainObject(s)) throw badRequest('Scale must be a JSON object');
      const want = s as { spec?: { replicas?: unknown }; metadata?: { resourceVersion?: string } };
      if (want.metadata?.resourceVersion && want.metadata.resourceVersion !== cur.metadata.resourceVersion) {
        throw conflict({ group: def.group, resource: def.resource }, name, OPTIMISTIC_LOCK_MESSAGE);
      }
      const replicas = want.spec?.replicas ?? 0;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas))
        throw badRequest('Scale in version "v1" cannot be handled as a Scale: spec.replicas must be an integer');
      if (replicas < 0) {
        throw new StatusError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`,
          reason: 'Invalid',
          details: {
            name,
            group: 'autoscaling',
            kind: 'Scale',
            causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${replicas}: must be greater than or equal to 0`, field: 'spec.replicas' }],
          },
          code: 422,
        });
      }
      if (paths) {
        const out = structuredClone(cur) as unknown as Record<string, unknown>;
        const parts = paths.specReplicasPath.replace(/^\./, '').split('.').filter(Boolean);
        let o = out;
        for (const p of parts.slice(0, -1)) {
          if (!isPlainObject(o[p])) o[p] = {};
          o = o[p] as Record<string, unknown>;
        }
        o[parts[parts.length - 1]!] = replicas;
        return out as unknown as KubeObject;
      }
      return { ...cur, spec: { ...((cur.spec ?? {}) as Record<string, unknown>), replicas } };
    },
    { ctx },
  );
  return scaleOf(res.obj, paths);
}
