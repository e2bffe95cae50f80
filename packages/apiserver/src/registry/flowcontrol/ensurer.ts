/**
 * Keeps the bootstrap configuration of API Priority and Fairness in the
 * cluster (kubernetes pkg/registry/flowcontrol/ensurer and rest
 * storage_flowcontrol.go, the "priority-and-fairness-config-producer"): at
 * start and then every minute,
 *
 * 1. suggested objects are created when absent, and their spec is put back to
 *    the bootstrap value while `apf.kubernetes.io/autoupdate-spec` is "true"
 *    (an object without a readable annotation counts as "true" only while its
 *    generation is 1, i.e. nobody changed its spec);
 * 2. mandatory objects are created when absent and their spec always put back
 *    (the exempt level's `spec.exempt` excepted), the annotation set to "true";
 * 3. objects annotated "true" that are no longer part of the bootstrap set are
 *    deleted.
 *
 * A conflict means someone else changed the object meanwhile: it is looked at
 * again at the next round.
 */
import { flowcontrolv1, type KubeObject } from '@kubeling/api';
import { StatusError } from '@kubeling/apimachinery';
import type { Logger } from 'pino';
import type { Store } from '../store.js';
import { MANDATORY_FLOW_SCHEMAS, MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS, SUGGESTED_PRIORITY_LEVELS } from './bootstrap.js';
import { defaultFlowSchemaSpec, defaultPriorityLevelSpec, semanticEqual } from './defaults.js';

const FIELD_MANAGER = 'api-priority-and-fairness-config-producer-v1';
const KEY = flowcontrolv1.AUTO_UPDATE_ANNOTATION;

const reason = (e: unknown) => (e instanceof StatusError ? e.status.reason : undefined);

/** Go's strconv.ParseBool; undefined when the text is not a boolean. */
function parseBool(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

type SpecEqual = (bootstrap: KubeObject, current: KubeObject) => boolean;

const fsSpecEqual: SpecEqual = (boot, cur) => {
  const want = structuredClone(boot.spec) as Record<string, unknown>;
  defaultFlowSchemaSpec(want);
  return semanticEqual(want, cur.spec);
};

const plSpecEqual: SpecEqual = (boot, cur) => {
  const want = structuredClone(boot.spec) as Record<string, unknown>;
  defaultPriorityLevelSpec(want);
  if (boot.metadata.name === 'exempt') {
    // The exempt level's spec.exempt belongs to the operator.
    const have = (cur.spec as { exempt?: unknown } | undefined)?.exempt;
    if (have === undefined) return false;
    want.exempt = have;
  }
  return semanticEqual(want, cur.spec);
};

async function ensureOne(store: Store, boot: KubeObject, mandatory: boolean, specEqual: SpecEqual): Promise<void> {
  const name = boot.metadata.name!;
  let cur: KubeObject | undefined;
  for (let attempt = 0; attempt < 3 && !cur; attempt++) {
    try {
      // From the watch cache, as upstream reads its informer's lister: a stale read only costs a conflict.
      cur = await store.get(undefined, name, '0');
    } catch (e) {
      if (reason(e) !== 'NotFound') throw e;
      try {
        await store.create(undefined, structuredClone(boot), { fieldManager: FIELD_MANAGER });
        return;
      } catch (err) {
        if (reason(err) !== 'AlreadyExists') throw err;
      }
    }
  }
  if (!cur) return;
  const annotation = parseBool(cur.metadata.annotations?.[KEY]);
  const autoUpdate = mandatory || (annotation ?? cur.metadata.generation === 1);
  const updateAnnotation = annotation !== autoUpdate;
  const specChanged = autoUpdate && !specEqual(boot, cur);
  if (!updateAnnotation && !specChanged) return;
  const revised = structuredClone(cur);
  if (specChanged) revised.spec = structuredClone(boot.spec);
  if (updateAnnotation) revised.metadata.annotations = { ...(revised.metadata.annotations ?? {}), [KEY]: String(autoUpdate) };
  try {
    await store.update(undefined, name, revised, undefined, { fieldManager: FIELD_MANAGER });
  } catch (e) {
    if (reason(e) !== 'Conflict' && reason(e) !== 'NotFound') throw e;
  }
}

/** Deletes objects annotated for auto-update that the bootstrap set no longer has. */
async function removeUnwanted(store: Store, wanted: readonly KubeObject[]): Promise<void> {
  const names = new Set(wanted.map((o) => o.metadata.name));
  for (const o of (await store.list(undefined, { resourceVersion: '0' })).items) {
    if (names.has(o.metadata.name) || parseBool(o.metadata.annotations?.[KEY]) !== true) continue;
    try {
      await store.delete(undefined, o.metadata.name!, o.metadata.resourceVersion ? { preconditions: { resourceVersion: o.metadata.resourceVersion } } : {});
    } catch (e) {
      if (reason(e) !== 'NotFound' && reason(e) !== 'Conflict') throw e;
    }
  }
}

/** One round: suggested, then mandatory, then what is no longer wanted (the objects of a step in parallel). */
export async function ensureFlowControlConfiguration(flowSchemas: Store, priorityLevels: Store): Promise<void> {
  const all = (store: Store, objs: readonly object[], mandatory: boolean, eq: SpecEqual) =>
    Promise.all(objs.map((o) => ensureOne(store, o as KubeObject, mandatory, eq)));
  // Every object is its own; none is read by another's write: all at once.
  await Promise.all([
    all(priorityLevels, SUGGESTED_PRIORITY_LEVELS, false, plSpecEqual),
    all(flowSchemas, SUGGESTED_FLOW_SCHEMAS, false, fsSpecEqual),
    all(priorityLevels, MANDATORY_PRIORITY_LEVELS, true, plSpecEqual),
    all(flowSchemas, MANDATORY_FLOW_SCHEMAS, true, fsSpecEqual),
  ]);
  await Promise.all([
    removeUnwanted(flowSchemas, [...MANDATORY_FLOW_SCHEMAS, ...SUGGESTED_FLOW_SCHEMAS] as KubeObject[]),
    removeUnwanted(priorityLevels, [...MANDATORY_PRIORITY_LEVELS, ...SUGGESTED_PRIORITY_LEVELS] as KubeObject[]),
  ]);
}

/** Runs a round every `intervalMs` (upstream: a minute) until stopped; failures are logged and retried next round. */
export function startFlowControlEnsurer(flowSchemas: Store, priorityLevels: Store, intervalMs: number, logger?: Logger): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    ensureFlowControlConfiguration(flowSchemas, priorityLevels)
      .catch((err: unknown) => logger?.warn({ err }, 'APF bootstrap ensurer ran into an error, will retry later'))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
