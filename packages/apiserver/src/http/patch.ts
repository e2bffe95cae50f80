/**
 * PATCH: bodies by content type — RFC 6902 JSON patch, RFC 7386 merge patch,
 * strategic merge patch driven by the kind's schema (merge keys and
 * directives) — applied in a guaranteed update, and server-side apply.
 */
import type { KubeObject } from '@kubeling/api';
import {
  PatchError,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  badRequest,
  conflict,
  failure,
  field,
  isPlainObject,
  OPTIMISTIC_LOCK_MESSAGE,
  unsupportedMediaType,
} from '@kubeling/apimachinery';
import { apply } from '../fieldmanager/index.js';
import { isCustom } from '../apiextensions/catalog.js';
import type { Store, WriteContext } from '../registry/store.js';
import { BodySyntaxError, PATCH_TYPES, checkObjectBody, fieldValidationOf, mediaType, parseBody, type FieldValidation } from './codec.js';
import type { HandlerContext } from './context.js';
import { q1, type Query } from './request-info.js';

const APPLY_TYPE = 'application/apply-patch+yaml';

export function applyPatch(mediaType: string, current: KubeObject, patch: unknown, schema: unknown): unknown {
  try {
    switch (mediaType) {
      case 'application/json-patch+json':
        if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
        return applyJsonPatch(current, patch);
      case 'application/merge-patch+json':
        if (!isPlainObject(patch)) throw badRequest('the body of a merge patch must be a JSON object');
        return applyMergePatch(current, patch);
      case 'application/strategic-merge-patch+json':
        if (!isPlainObject(patch)) throw badRequest('the body of a strategic merge patch must be a JSON object');
        return applyStrategicMergePatch(current, patch, schema as never);
      default:
        throw failure(
          'UnsupportedMediaType',
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
        );
    }
  } catch (e) {
    if (e instanceof PatchError) throw failure('Invalid', e.message);
    throw e;
  }
}

export async function patch(c: HandlerContext, store: Store, ns: string | undefined, subresource: string | undefined, ctx: WriteContext) {
  const q = c.req.query as Query;
  const ct = c.req.headers['content-type'] ?? '';
  const mt = mediaType(ct);
  if (!(PATCH_TYPES as readonly string[]).includes(mt)) throw unsupportedMediaType(ct, [...PATCH_TYPES]);
  // Custom resources have no Go struct to take strategic merge keys from: 415, as upstream.
  if (isCustom(c.def) && mt === 'application/strategic-merge-patch+json')
    throw unsupportedMediaType(ct, ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
  let patchBody: unknown;
  try {
    patchBody = parseBody(c.req.body as Buffer | undefined, ct);
  } catch (e) {
    // As upstream words it: the decoder's error for a strategic merge patch, with a prefix for the others.
    if (e instanceof BodySyntaxError) {
      if (mt === APPLY_TYPE) throw badRequest(`error decoding YAML: ${e.detail}`);
      throw badRequest(mt === 'application/strategic-merge-patch+json' ? e.detail : `error decoding patch: ${e.detail}`);
    }
    throw e;
  }
  const validation = fieldValidationOf(q1(q, 'fieldValidation'));
  const force = q1(q, 'force');
  if (mt === APPLY_TYPE) return serverSideApply(c, store, ns, subresource, ctx, patchBody, validation, force === 'true');
  if (force !== undefined) throw failure('Invalid', 'force: Forbidden: may not be specified for non-apply patch');
  return store.guaranteedUpdate(
    ns,
    c.info.name,
    (cur) => {
      const patched = applyPatch(mt, cur, patchBody, c.def.schema);
      // A patched object that does not decode is the patch's fault: 422 as upstream's patcher says it.
      const { obj, warnings } = checkObjectBody(c.def, patched, validation, c.def.kind, undefined, (text) =>
        failure('Invalid', ` "" is invalid: patch: Invalid value: ${field.goQuote(JSON.stringify(patchBody))}: ${text}`, {
          causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${field.goQuote(JSON.stringify(patchBody))}: ${text}`, field: 'patch' }],
        }),
      );
      ctx.warnings?.push(...warnings);
      return obj;
    },
    { ...(subresource ? { subresource } : {}), ctx },
  );
}

/** PATCH with application/apply-patch+yaml: server-side apply, creating the object when missing. */
async function serverSideApply(
  c: HandlerContext,
  store: Store,
  ns: string | undefined,
  subresource: string | undefined,
  ctx: WriteContext,
  body: unknown,
  validation: FieldValidation,
  force: boolean,
) {
  const q = c.req.query as Query;
  if (!q1(q, 'fieldManager')) {
    throw failure('Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch', {
      group: 'meta.k8s.io',
      kind: 'PatchOptions',
      causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
    });
  }
  const { obj: applied, warnings } = checkObjectBody(c.def, body, validation);
  ctx.warnings?.push(...warnings);
  if (!applied.apiVersion || !applied.kind) throw badRequest("Object 'Kind' is missing in the applied configuration: apiVersion and kind are required");
  if (applied.metadata?.name !== undefined && applied.metadata.name !== c.info.name) {
    throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${c.info.name})`);
  }
  applied.metadata = { ...(applied.metadata ?? {}), name: c.info.name };
  delete applied.metadata.managedFields;
  const precondition = applied.metadata.resourceVersion;
  delete applied.metadata.resourceVersion;
  const fctx = store.fieldContext(ctx, subresource);
  return store.guaranteedUpdate(
    ns,
    c.info.name,
    (cur) => {
      if (precondition && cur && precondition !== cur.metadata.resourceVersion)
        throw conflict({ group: c.def.group, resource: c.def.resource }, c.info.name, OPTIMISTIC_LOCK_MESSAGE);
      return apply(cur ?? undefined, applied, fctx, force);
    },
    { ...(subresource ? { subresource } : {}), ctx: { ...ctx, applied: true }, createIfMissing: !subresource },
  );
}
