/**
 * CONNECT admission (k8s.io/apiserver pkg/endpoints/handlers/rest.go
 * ConnectResource): before exec or attach reaches a kubelet, the pods' chain
 * sees the request with its options (PodExecOptions or PodAttachOptions, from
 * the query) as the object, mutating then validating plugins, and any of them
 * may refuse it.
 */
import type { KubeObject } from '@kubeling/api';
import { parseBool } from '@kubeling/apimachinery';
import type { Admission, AdmissionAttributes } from '../registry/admission.js';

type Query = Record<string, string | string[] | undefined>;

const first = (q: Query, k: string) => (Array.isArray(q[k]) ? q[k][0] : q[k]);

/** The request's options object, as the query carries them. */
export function connectOptions(kind: 'exec' | 'attach', q: Query): KubeObject {
  const raw = q.command;
  const command = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const container = first(q, 'container');
  return {
    apiVersion: 'v1',
    kind: kind === 'exec' ? 'PodExecOptions' : 'PodAttachOptions',
    metadata: {},
    ...Object.fromEntries(['stdin', 'stdout', 'stderr', 'tty'].map((k) => [k, parseBool(first(q, k)) === true])),
    ...(container ? { container } : {}),
    ...(kind === 'exec' ? { command } : {}),
  } as KubeObject;
}

export interface ConnectRequest {
  subresource: 'exec' | 'attach';
  namespace: string | undefined;
  name: string;
  query: Query;
  user?: { name: string; groups: string[] };
}

/** Runs the chain for a CONNECT; throws the refusal (a StatusError) when a plugin refuses. */
export async function admitConnect(admission: Admission, r: ConnectRequest): Promise<void> {
  const attrs: AdmissionAttributes = {
    operation: 'CONNECT',
    resource: '/pods',
    namespace: r.namespace,
    name: r.name,
    subresource: r.subresource,
    ...(r.user ? { user: { name: r.user.name, groups: r.user.groups } } : {}),
  };
  const options = connectOptions(r.subresource, r.query);
  if (admission.mutates(attrs)) await admission.admit(options, attrs);
  if (admission.validates()) await admission.validate(options, attrs);
}
