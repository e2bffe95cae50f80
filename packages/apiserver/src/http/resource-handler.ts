/**
 * The resource endpoints: one function per verb over the generic store. Bodies
 * and options are decoded here so that every failure is a Status (codec.ts,
 * options.ts); objects are validated by the store's strategy, never by route
 * schemas. Watches, patches and subresources have modules of their own.
 */
import { failure, methodNotAllowed, notFoundPath, successStatus } from '@kubeling/apimachinery';
import { isCustom } from '../apiextensions/catalog.js';
import { fieldValidationOf, negotiate } from './codec.js';
import { checkName, checkNamespace, decodeObject, send, type HandlerContext } from './context.js';
import { deleteOptions, includeObject, listQuery, writeContext } from './options.js';
import { patch } from './patch.js';
import { hasProtobuf } from './protobuf.js';
import { q1, type Query } from './request-info.js';
import { handleSubresource, handleVirtual } from './subresources.js';
import { tableWanted, toTable } from './table.js';
import { serveWatch } from './watch.js';

export type { HandlerContext, Registry } from './context.js';

export async function handleResource(c: HandlerContext): Promise<unknown> {
  const { info, def } = c;
  const q = c.req.query as Query;
  if (def.namespaced === false && c.req.url.includes('/namespaces/') && def.resource !== 'namespaces') throw notFoundPath();
  if (info.subresource && !def.subresources[info.subresource]) throw notFoundPath();
  // Only JSON and YAML for kinds without a protobuf encoding: 406 when the client takes nothing else.
  negotiate(c.req.headers.accept, { protobuf: hasProtobuf(def.group ? `${def.group}/${def.version}` : def.version, def.kind) });
  // Deprecated kinds warn on every request (pkg/endpoints/deprecation: "<group/version> <Kind> is deprecated in v1.19+").
  if (def.deprecatedSince)
    c.reply.header('Warning', `299 - "${def.group ? `${def.group}/` : ''}${def.version} ${def.kind} is deprecated in v${def.deprecatedSince}+"`);
  if (isCustom(def) && def.crd.deprecationWarning) c.reply.header('Warning', `299 - ${JSON.stringify(def.crd.deprecationWarning)}`);
  const verb = info.verb;
  // PUT and PATCH name an object; POST makes one in a collection (or acts on a subresource).
  if (!info.name && (verb === 'update' || verb === 'patch')) throw methodNotAllowed();
  if (info.name && verb === 'create' && !info.subresource) throw methodNotAllowed();
  if (def.namespaced && !info.namespace && !['list', 'watch'].includes(verb)) {
    // Only list and watch exist across all namespaces.
    throw info.name ? notFoundPath() : methodNotAllowed();
  }
  if (!info.subresource && !def.verbs.includes(verb)) throw methodNotAllowed();
  if (def.virtual) return handleVirtual(c);
  const store = c.registry.get(`${def.group}/${def.version}/${def.resource}`);
  if (!store) throw notFoundPath();
  const ns = def.namespaced ? info.namespace : undefined;

  if (info.subresource) return handleSubresource(c, store, ns);

  switch (verb) {
    case 'get': {
      const obj = await store.get(ns, info.name, q1(q, 'resourceVersion'));
      const table = tableWanted(c.req.headers.accept);
      if (table) return send(c, 200, toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject(q), true, table));
      return send(c, 200, obj);
    }
    case 'list': {
      const list = await store.list(ns, listQuery(q, false));
      const table = tableWanted(c.req.headers.accept);
      if (table) return send(c, 200, toTable(def, list.items, list.metadata, includeObject(q), true, table));
      return send(c, 200, list);
    }
    case 'watch':
      return serveWatch(c, store, ns);
    case 'create': {
      // crdHandler: a CRD being deleted takes no new objects.
      if (isCustom(def) && c.opts.crdTerminating?.(def.crd.name)) {
        throw failure('MethodNotAllowed', 'create not allowed while custom resource definition is terminating', { group: def.group, kind: def.resource });
      }
      const ctx = writeContext(c);
      const { obj, warnings } = decodeObject(c, def, fieldValidationOf(q1(q, 'fieldValidation')));
      checkNamespace(obj, ns);
      const created = await store.create(ns, obj, ctx);
      if (created.metadata.name) c.req.objectName = created.metadata.name;
      return send(c, 201, created, [...warnings, ...(ctx.warnings ?? [])]);
    }
    case 'update': {
      const ctx = writeContext(c);
      const { obj, warnings } = decodeObject(c, def, fieldValidationOf(q1(q, 'fieldValidation')));
      checkNamespace(obj, ns);
      checkName(obj, info.name);
      const res = await store.update(ns, info.name, obj, undefined, ctx);
      return send(c, res.created ? 201 : 200, res.obj, [...warnings, ...(ctx.warnings ?? [])]);
    }
    case 'patch': {
      const ctx = writeContext(c);
      const res = await patch(c, store, ns, undefined, ctx);
      return send(c, res.created ? 201 : 200, res.obj, ctx.warnings);
    }
    case 'delete': {
      const ctx = writeContext(c);
      const opts = deleteOptions(c);
      if (opts.dryRun?.length) ctx.dryRun = true;
      const { obj, deleted } = await store.delete(ns, info.name, opts, ctx);
      if (deleted && !store.strategy.returnDeletedObject) {
        return send(c, 200, successStatus({ name: info.name, ...(def.group ? { group: def.group } : {}), kind: def.resource, uid: obj.metadata.uid ?? '' }));
      }
      return send(c, !deleted && opts.orphanDependents === false ? 202 : 200, obj);
    }
    case 'deletecollection': {
      const ctx = writeContext(c);
      const opts = deleteOptions(c);
      if (opts.dryRun?.length) ctx.dryRun = true;
      return send(c, 200, await store.deleteCollection(ns, listQuery(q, false), opts, ctx));
    }
    default:
      throw methodNotAllowed();
  }
}
