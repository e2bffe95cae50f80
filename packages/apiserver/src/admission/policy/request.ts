/**
 * The `request` variable of admission expressions (k8s.io/apiserver
 * pkg/admission/plugin/cel/condition.go CreateAdmissionRequest), and the
 * match conditions of admission webhooks (webhook/matchconditions): compiled
 * once per distinct list of conditions, evaluated with `object`, `oldObject`,
 * `request` and a null `namespaceObject`.
 */
import type { KubeObject } from '@kubeling/api';
import type { AdmissionAttributes } from '../index.js';
import { compileExpr, type CompiledExpr } from './compile.js';
import { Activation, evalMatchConditions, type MatchResult } from './evaluate.js';
import type { GroupVersionKind, GroupVersionResource } from './matching.js';

/** What the request variable is built from. */
export interface RequestFacts {
  operation: AdmissionAttributes['operation'];
  /** The resource and kind the configuration matched (an equivalent's, or the request's own). */
  resource: GroupVersionResource;
  kind: GroupVersionKind;
  requestResource: GroupVersionResource;
  requestKind: GroupVersionKind;
  subresource: string;
  name: string;
  namespace: string;
  dryRun: boolean;
  user?: { name?: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> } | undefined;
}

/** CreateAdmissionRequest as JSON (omitempty fields left out, as the unstructured conversion leaves them). */
export function admissionRequest(f: RequestFacts): Record<string, unknown> {
  const op = f.operation === 'CREATE' ? 'Create' : f.operation === 'UPDATE' ? 'Update' : 'Delete';
  const u = f.user;
  return {
    kind: f.kind,
    resource: f.resource,
    ...(f.subresource ? { subResource: f.subresource } : {}),
    requestKind: f.requestKind,
    requestResource: f.requestResource,
    ...(f.subresource ? { requestSubResource: f.subresource } : {}),
    name: f.name,
    ...(f.namespace ? { namespace: f.namespace } : {}),
    operation: f.operation,
    userInfo: {
      ...(u?.name ? { username: u.name } : {}),
      ...(u?.uid ? { uid: u.uid } : {}),
      ...(u?.groups?.length ? { groups: u.groups } : {}),
      ...(u?.extra ? { extra: u.extra } : {}),
    },
    dryRun: f.dryRun,
    options: { apiVersion: 'meta.k8s.io/v1', kind: `${op}Options` },
  };
}

type Compiled = { name: string; expr: CompiledExpr }[];
const MAX_CACHED = 256;
const cache = new Map<string, Compiled>();

function compiledConditions(conds: readonly { name: string; expression: string }[]): Compiled {
  const key = JSON.stringify(conds.map((c) => [c.name, c.expression]));
  let c = cache.get(key);
  if (!c) {
    c = conds.map((m) => ({ name: m.name, expr: compileExpr(m.expression, { hasParams: false }, 'bool') }));
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, c);
  }
  return c;
}

/** A webhook's matchConditions against one request; `error` when one failed under failurePolicy Fail. */
export function webhookMatchConditions(
  conds: readonly { name: string; expression: string }[],
  failurePolicy: string | undefined,
  object: KubeObject | null,
  oldObject: KubeObject | null,
  request: Record<string, unknown>,
): MatchResult {
  if (!conds.length) return { matches: true };
  const act = new Activation({ object, oldObject, request, namespaceObject: null });
  return evalMatchConditions(compiledConditions(conds), act, failurePolicy ?? 'Fail');
}
