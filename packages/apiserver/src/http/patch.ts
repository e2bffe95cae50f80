/**
 * PATCH bodies by content type: RFC 6902 JSON patch, RFC 7386 merge patch, and
 * strategic merge patch driven by the kind's schema (merge keys and directives).
 */
import type { KubeObject } from '@kubeling/api';
import { PatchError, applyJsonPatch, applyMergePatch, applyStrategicMergePatch, badRequest, failure, isPlainObject } from '@kubeling/apimachinery';

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
        throw failure('UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
    }
  } catch (e) {
    if (e instanceof PatchError) throw failure('Invalid', e.message);
    throw e;
  }
}
