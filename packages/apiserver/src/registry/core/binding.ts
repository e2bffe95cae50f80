/**
 * Binding a pod to a node (POST pods/<name>/binding, or the `bindings`
 * collection): spec.nodeName is set once, never changed, and the pod gains the
 * PodScheduled condition (pkg/registry/core/pod/storage BindingREST).
 */
import { StatusError, badRequest, conflict, isPlainObject, rfc3339, successStatus, type Status } from '@kubeling/apimachinery';
import type { Store, WriteContext } from '../store.js';

export async function bindPod(pods: Store, ns: string | undefined, podName: string, body: unknown, ctx: WriteContext): Promise<Status> {
  if (!isPlainObject(body)) throw badRequest('Binding must be a JSON object');
  const b = body as { metadata?: { name?: string; annotations?: Record<string, string> }; target?: { kind?: string; name?: string } };
  const node = b.target?.name;
  const gr = { group: '', resource: 'pods/binding' };
  if (b.metadata?.name && b.metadata.name !== podName)
    throw badRequest(`the name of the object (${b.metadata.name}) does not match the name on the URL (${podName})`);
  if (!node) {
    throw new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `Binding "${podName}" is invalid: target.name: Required value`,
      reason: 'Invalid',
      details: { name: podName, kind: 'Binding', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' }] },
      code: 422,
    });
  }
  if (b.target?.kind && b.target.kind !== 'Node') throw badRequest(`binding target kind must be Node, got ${b.target.kind}`);
  await pods.guaranteedUpdate(
    ns,
    podName,
    (pod) => {
      const spec = (pod.spec ?? {}) as { nodeName?: string };
      if (pod.metadata.deletionTimestamp) throw conflict(gr, podName, `pod ${podName} is being deleted, cannot be assigned to a host`);
      if (spec.nodeName) throw conflict(gr, podName, `pod ${podName} is already assigned to node "${spec.nodeName}"`);
      const next = structuredClone(pod);
      (next.spec as { nodeName?: string }).nodeName = node;
      if (b.metadata?.annotations) next.metadata.annotations = { ...(next.metadata.annotations ?? {}), ...b.metadata.annotations };
      const status = (next.status ??= {}) as { conditions?: { type: string; status: string; lastProbeTime?: null; lastTransitionTime?: string }[] };
      const conds = (status.conditions ??= []);
      const cond = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339() };
      const i = conds.findIndex((x) => x.type === 'PodScheduled');
      if (i >= 0) conds[i] = cond;
      else conds.push(cond);
      return next;
    },
    { subresource: 'binding-internal', ctx },
  );
  return successStatus();
}
