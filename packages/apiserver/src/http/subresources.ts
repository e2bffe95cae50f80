/**
 * The subresources every client relies on — status, finalize and
 * ephemeralcontainers (the parent's update), scale, binding, log, exec/attach, token — and the create-only
 * kinds that store nothing (bindings and the reviews). The HTTP layer only
 * decodes, dispatches and encodes; what each one does lives in the registry.
 */
import type { KubeObject } from '@kubeling/api';
import { badRequest, failure, methodNotAllowed, notAcceptable, unsupportedMediaType } from '@kubeling/apimachinery';
import { SCALE_SCHEMA, scaleOf, updateScale } from '../registry/apps/scale.js';
import { isCustom } from '../apiextensions/catalog.js';
import { selfSubjectReview, tokenReview } from '../registry/authentication/reviews.js';
import { createTokenRequest } from '../registry/authentication/tokenrequest.js';
import { selfSubjectRulesReview, subjectAccessReview } from '../registry/authorization/reviews.js';
import { bindPod } from '../registry/core/binding.js';
import { evictPod } from '../registry/core/eviction.js';
import { getComponentStatus, listComponentStatuses } from '../registry/core/componentstatuses.js';
import type { Store } from '../registry/store.js';
import { PATCH_TYPES, checkObjectBody, fieldValidationOf, mediaType, parseBody } from './codec.js';
import { checkName, checkNamespace, decodeObject, send, type HandlerContext } from './context.js';
import { podLogs, podStream } from './kubelet-proxy.js';
import { proxySubresource } from './proxy.js';
import { podPortForward } from './proxy-portforward.js';
import { includeObject, writeContext } from './options.js';
import { applyPatch, patch } from './patch.js';
import { q1, type Query } from './request-info.js';
import { tableWanted, toTable } from './table.js';

const contentTypeOf = (c: HandlerContext) => c.req.headers['content-type'] ?? 'application/json';

export async function handleSubresource(c: HandlerContext, store: Store, ns: string | undefined) {
  const { info, def } = c;
  const q = c.req.query as Query;
  const sub = info.subresource;
  const verbs = def.subresources[sub]!.verbs;
  const verb = info.verb === 'create' ? 'create' : info.verb;
  if (!verbs.includes(verb)) throw methodNotAllowed();
  switch (sub) {
    case 'status':
    case 'finalize':
    case 'approval':
    case 'ephemeralcontainers': {
      if (verb === 'get') return send(c, 200, await store.get(ns, info.name));
      const ctx = writeContext(c);
      if (verb === 'patch') {
        const res = await patch(c, store, ns, sub, ctx);
        return send(c, 200, res.obj, ctx.warnings);
      }
      const { obj, warnings } = decodeObject(c, def, fieldValidationOf(q1(q, 'fieldValidation')));
      checkNamespace(obj, ns);
      checkName(obj, info.name);
      const res = await store.update(ns, info.name, obj, sub, ctx);
      return send(c, 200, res.obj, warnings);
    }
    case 'scale':
      return scale(c, store, ns);
    case 'binding':
      return send(c, 201, await bindPod(store, ns, info.name, parseBody(c.req.body as Buffer | undefined, contentTypeOf(c)), writeContext(c)));
    case 'eviction': {
      const stores = { pods: store, pdbs: c.registry.get('policy/v1/poddisruptionbudgets') };
      return send(c, 201, await evictPod(stores, ns!, info.name, parseBody(c.req.body as Buffer | undefined, contentTypeOf(c)), writeContext(c)));
    }
    case 'log':
      return podLogs(c, store, ns);
    case 'exec':
    case 'attach':
      return podStream(c, store, ns, sub);
    case 'portforward':
      return podPortForward(c, store, ns);
    case 'proxy':
      return proxySubresource(c, ns);
    case 'token': {
      if (!c.saTokens) throw failure('ServiceUnavailable', 'no service account token signing key is configured');
      const body = parseBody(c.req.body as Buffer | undefined, contentTypeOf(c));
      const user = c.req.user ? { name: c.req.user.name, groups: c.req.user.groups } : undefined;
      return send(
        c,
        201,
        await createTokenRequest({ serviceAccounts: store, pods: c.registry.get('/v1/pods')!, tokens: c.saTokens }, ns, info.name, body, user),
      );
    }
    default:
      throw failure('MethodNotAllowed', `the server does not allow this method on the requested resource (${info.verb} ${def.resource}/${sub})`);
  }
}

/** GET, PUT or PATCH of a workload's scale. */
async function scale(c: HandlerContext, store: Store, ns: string | undefined) {
  const { info, def } = c;
  const paths = isCustom(def) ? def.crd.scale : undefined;
  if (info.verb === 'get') return send(c, 200, scaleOf(await store.get(ns, info.name), paths));
  const ctx = writeContext(c);
  const ct = contentTypeOf(c);
  const patchType = info.verb === 'patch' ? mediaType(ct) : undefined;
  if (patchType && !(PATCH_TYPES as readonly string[]).includes(patchType)) throw unsupportedMediaType(ct, [...PATCH_TYPES]);
  const body = parseBody(c.req.body as Buffer | undefined, ct);
  const next = patchType ? (cur: object) => applyPatch(patchType, cur as unknown as KubeObject, body, SCALE_SCHEMA) : () => body;
  return send(c, 200, await updateScale(store, def, ns, info.name, next, ctx, paths));
}

/** POST of a kind that stores nothing: the bindings collection and the reviews. */
export async function handleVirtual(c: HandlerContext) {
  const { def, info } = c;
  if (def.resource === 'componentstatuses') return componentStatuses(c);
  if (info.verb !== 'create') throw methodNotAllowed();
  // Reviews and bindings have no Table conversion: asking for one is refused at negotiation, as upstream.
  if (tableWanted(c.req.headers.accept) && !plainAccepted(c.req.headers.accept))
    throw notAcceptable(['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
  const body = parseBody(c.req.body as Buffer | undefined, contentTypeOf(c));
  if (def.resource === 'bindings') {
    const name = (body as { metadata?: { name?: string } } | null)?.metadata?.name;
    if (!name) throw badRequest('Binding must have metadata.name');
    return send(c, 201, await bindPod(c.registry.get('/v1/pods')!, info.namespace, name, body, writeContext(c)));
  }
  const { obj } = checkObjectBody(def, body, 'Ignore');
  const requester = c.req.user;
  switch (def.resource) {
    case 'selfsubjectaccessreviews':
    case 'subjectaccessreviews':
    case 'localsubjectaccessreviews':
      return send(
        c,
        201,
        await subjectAccessReview(def.kind as 'SubjectAccessReview', obj, { authorizer: c.authorizer, requester, namespace: info.namespace }),
      );
    case 'selfsubjectrulesreviews':
      return send(c, 201, selfSubjectRulesReview(obj, { authorizer: c.authorizer, rbac: c.rbac, requester }));
    case 'selfsubjectreviews':
      return send(c, 201, selfSubjectReview(obj, requester));
    case 'tokenreviews':
      return send(c, 201, await tokenReview(obj, { authenticator: c.authenticator, tokens: c.saTokens }));
    default:
      throw failure('MethodNotAllowed', `${def.resource} are not served until authentication is configured`);
  }
}

/** GET of ComponentStatuses: probed on each read, as JSON or a Table. */
async function componentStatuses(c: HandlerContext) {
  const { info, def } = c;
  const probes = c.opts.componentProbes;
  const table = tableWanted(c.req.headers.accept);
  if (info.verb === 'get') {
    const cs = await getComponentStatus(probes, info.name);
    return send(c, 200, table ? toTable(def, [cs], {}, includeObject(c.req.query as Query), true, table) : cs);
  }
  if (info.verb !== 'list') throw methodNotAllowed();
  const list = await listComponentStatuses(probes);
  return send(c, 200, table ? toTable(def, list.items, {}, includeObject(c.req.query as Query), true, table) : list);
}

/** Whether Accept also lists a plain media range (no `as=` conversion) the server serves. */
function plainAccepted(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type = '', ...params] = part.split(';').map((x) => x.trim());
    if (params.some((p) => p.startsWith('as='))) return false;
    return ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf', 'application/*', '*/*'].includes(type);
  });
}
