/**
 * The resource endpoints: one function per verb over the generic store, plus the
 * subresources every client relies on (status, scale, binding, finalize). Bodies
 * are decoded here so that every failure is a Status (see codec.ts); objects are
 * validated by the store's strategy, never by route schemas.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject, ResourceDef } from '@kubeling/api';
import {
  StatusError,
  badRequest,
  field,
  type FieldError,
  OPTIMISTIC_LOCK_MESSAGE,
  conflict,
  failure,
  isPlainObject,
  labelSelectorToString,
  methodNotAllowed,
  notFoundPath,
  rfc3339,
  successStatus,
  unsupportedMediaType,
} from '@kubeling/apimachinery';
import { q1, queryBool, type Query, type RequestInfo } from './request-info.js';
import { podLogs, podStream } from './kubelet-proxy.js';
import { BODY_TYPES, BodySyntaxError, PATCH_TYPES, PROTOBUF_TYPE, YAML_TYPE, checkObjectBody, encode, fieldValidationOf, mediaType, negotiate, parseBody, parseBodyFull, summarizeBody, wantsYaml, type FieldValidation } from './codec.js';
import type { DeleteOptions, Store, WriteContext } from '../registry/store.js';
import type { EtcdStorage } from '../storage/etcd.js';
import { WatchStream } from './watch.js';
import { int64Param, invalidOptions, listQuery } from './options.js';
import { parseResourceVersion } from '../registry/versions.js';
import { applyPatch } from './patch.js';
import { apply, managerFromUserAgent } from '../fieldmanager/index.js';
import type { Attributes, Authenticator, Authorizer, RbacAuthorizer, ServiceAccountTokens, UserInfo } from '../auth/index.js';
import { tableWanted, toTable, type IncludeObject } from './table.js';
import { admit } from '../admission/index.js';

const APPLY_TYPE = 'application/apply-patch+yaml';

export type Registry = Map<string, Store>;

export interface HandlerContext {
  req: FastifyRequest;
  reply: FastifyReply;
  info: RequestInfo;
  def: ResourceDef;
  registry: Registry;
  storage: EtcdStorage;
  opts: {
    bookmarkIntervalMs: number;
    minRequestTimeoutSeconds: number;
    kubeletClient?: { cert: string; key: string; ca?: string };
    /** Called when a request was upgraded and handed over (no response hooks run for it). */
    upgraded?: (req: FastifyRequest) => void;
  };
  /** Undefined: every request is allowed (no authentication configured). */
  authorizer?: Authorizer;
  rbac?: RbacAuthorizer;
  saTokens?: ServiceAccountTokens;
  authenticator?: Authenticator;
}


function send(c: HandlerContext, code: number, body: unknown, warnings: string[] = []) {
  for (const w of warnings) c.reply.header('Warning', `299 - ${JSON.stringify(w)}`);
  const { payload, contentType } = encode(body, wantsYaml(c.req.headers.accept));
  return c.reply.code(code).type(contentType).send(payload);
}

const OPTIONS_KIND: Record<string, string> = { POST: 'CreateOptions', PUT: 'UpdateOptions', PATCH: 'PatchOptions', DELETE: 'DeleteOptions' };

/** dryRun values as ValidateDryRun checks them. */
function dryRunErrors(values: unknown[]): FieldError[] {
  return values.some((v) => v !== 'All') ? [field.notSupported('dryRun', values, ['All'])] : [];
}

/** The write's options (dryRun, fieldManager), checked as upstream's Validate{Create,Update,Patch}Options. */
function writeContext(c: HandlerContext): WriteContext {
  const q = c.req.query as Query;
  const dry = q.dryRun;
  const values = Array.isArray(dry) ? dry : dry !== undefined ? [dry] : [];
  const fm = q1(q, 'fieldManager');
  const errs = dryRunErrors(values);
  if (fm !== undefined) {
    if (fm.length > 128) errs.push(field.tooLong('fieldManager', fm, 128));
    let i = 0;
    for (const ch of fm) {
      const cp = ch.codePointAt(0)!;
      if (/[\p{C}\p{Z}]/u.test(ch) && ch !== ' ') errs.push(field.invalid('fieldManager', fm, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${i})`));
      i += Buffer.byteLength(ch);
    }
  }
  if (errs.length) throw invalidOptions(OPTIONS_KIND[c.req.method] ?? 'CreateOptions', errs);
  const user = c.req.user;
  return { dryRun: values.length > 0, warnings: [], fieldManager: fm || managerFromUserAgent(c.req.headers['user-agent']), ...(user ? { user: { name: user.name, groups: user.groups } } : {}) };
}

export async function handleResource(c: HandlerContext): Promise<unknown> {
  const { info, def } = c;
  const q = c.req.query as Query;
  if (def.namespaced === false && c.req.url.includes('/namespaces/') && def.resource !== 'namespaces') throw notFoundPath();
  if (info.subresource && !def.subresources[info.subresource]) throw notFoundPath();
  negotiate(c.req.headers.accept);
  const verb = info.verb;
  // PUT and PATCH name an object; POST makes one in a collection (or acts on a subresource).
  if (!info.name && (verb === 'update' || verb === 'patch')) throw methodNotAllowed();
  if (info.name && verb === 'create' && !info.subresource) throw methodNotAllowed();
  if (def.namespaced && !info.namespace && !['list', 'watch'].includes(verb)) {
    // Only list and watch exist across all namespaces.
    throw info.name ? notFoundPath() : methodNotAllowed();
  }
  if (!info.subresource && !def.verbs.includes(verb)) throw methodNotAllowed();
  if (def.virtual) return createVirtual(c);
  const store = c.registry.get(`${def.group}/${def.version}/${def.resource}`);
  if (!store) throw notFoundPath();
  const ns = def.namespaced ? info.namespace : undefined;

  if (info.subresource) return handleSubresource(c, store, ns);

  switch (verb) {
    case 'get': {
      const obj = await store.get(ns, info.name, q1(q, 'resourceVersion'));
      const table = tableWanted(c.req.headers.accept);
      if (table) return send(c, 200, toTable(def.group, def.resource, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject(q), true, table));
      return send(c, 200, obj);
    }
    case 'list': {
      const list = await store.list(ns, listQuery(q, false));
      const table = tableWanted(c.req.headers.accept);
      if (table) return send(c, 200, toTable(def.group, def.resource, list.items, list.metadata, includeObject(q), true, table));
      return send(c, 200, list);
    }
    case 'watch':
      return watch(c, store, ns);
    case 'create': {
      const ctx = writeContext(c);
      const { obj, warnings } = decodeObject(c, def, fieldValidationOf(q1(q, 'fieldValidation')));
      checkNamespace(obj, ns);
      const created = await store.create(ns, obj, ctx);
      if (created.metadata.name) c.req.objectName = created.metadata.name;
      return send(c, 201, created, warnings);
    }
    case 'update': {
      const ctx = writeContext(c);
      const { obj, warnings } = decodeObject(c, def, fieldValidationOf(q1(q, 'fieldValidation')));
      checkNamespace(obj, ns);
      checkName(obj, info.name);
      const res = await store.update(ns, info.name, obj, undefined, ctx);
      return send(c, res.created ? 201 : 200, res.obj, warnings);
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

function includeObject(q: Query): IncludeObject {
  const v = q1(q, 'includeObject');
  if (v === undefined || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: Unsupported value: "${v}": supported values: "Metadata", "None", "Object"`);
}

const GO_TYPEMETA = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * The body of a create or update as an object of `def`'s kind: a body that does
 * not parse, or is no object, is 400 `the object provided is unrecognized (must
 * be of type Pod): ...` with the start of the body, as upstream's decoder says it.
 */
function decodeObject(c: HandlerContext, def: ResourceDef, validation: FieldValidation, kind = def.kind) {
  const ct = c.req.headers['content-type'] ?? 'application/json';
  const mt = mediaType(ct);
  if (!BODY_TYPES.includes(mt) && mt !== '') throw unsupportedMediaType(ct, ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
  const raw = c.req.body as Buffer | undefined;
  const unrecognized = (why: string) => badRequest(`the object provided is unrecognized (must be of type ${kind}): ${why} (${summarizeBody(raw)})`);
  const json = mt !== YAML_TYPE && mt !== PROTOBUF_TYPE;
  let parsed;
  try {
    parsed = parseBodyFull(raw, ct);
  } catch (e) {
    if (e instanceof BodySyntaxError) throw unrecognized(json ? `couldn't get version/kind; json parse error: ${e.detail}` : e.detail);
    throw e;
  }
  const body = parsed.value;
  if (body !== null && body !== undefined && !isPlainObject(body)) {
    const got = Array.isArray(body) ? 'array' : typeof body === 'boolean' ? 'bool' : typeof body;
    throw unrecognized(`couldn't get version/kind; json parse error: json: cannot unmarshal ${got} into Go value of type ${GO_TYPEMETA}`);
  }
  return checkObjectBody(def, body ?? {}, validation, kind, parsed.numberText);
}

function checkNamespace(obj: KubeObject, ns: string | undefined): void {
  if (ns === undefined) return;
  const bodyNs = obj.metadata.namespace;
  if (bodyNs && bodyNs !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  obj.metadata.namespace = ns;
}

function checkName(obj: KubeObject, name: string): void {
  if (obj.metadata.name && obj.metadata.name !== name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
  }
  obj.metadata.name = name;
}

/** Kinds meta/v1 registers beside DeleteOptions: a body of one of them does not convert. */
const META_KINDS = new Set(['Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList', 'ListOptions', 'GetOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'WatchEvent', 'Table', 'PartialObjectMetadata', 'PartialObjectMetadataList']);
const DELETE_FIELDS: Record<string, string> = { gracePeriodSeconds: 'int64', propagationPolicy: 'string', orphanDependents: 'bool', dryRun: '[]string', preconditions: 'v1.Preconditions', ignoreStoreReadErrorWithClusterBreakingPotential: 'bool' };

const goJsonKind = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v);

/**
 * The DeleteOptions of a DELETE: from the body when there is one (JSON or YAML
 * of kind DeleteOptions), else from the query; 400 for a body that is no
 * DeleteOptions, 422 for options that break ValidateDeleteOptions.
 */
function deleteOptions(c: HandlerContext): DeleteOptions {
  const q = c.req.query as Query;
  let body: Record<string, unknown> | undefined;
  const raw = c.req.body as Buffer | undefined;
  if (raw && raw.length) {
    const parsed = parseBody(raw, c.req.headers['content-type'] ?? 'application/json');
    if (parsed !== null) {
      if (!isPlainObject(parsed)) {
        throw badRequest(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(parsed)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
      }
      const kind = parsed.kind;
      if (kind !== undefined && kind !== '' && kind !== 'DeleteOptions') {
        const version = typeof parsed.apiVersion === 'string' && parsed.apiVersion ? parsed.apiVersion.split('/').pop() : 'v1';
        if (META_KINDS.has(String(kind))) throw badRequest(`converting (v1.${String(kind)}) to (v1.DeleteOptions): unknown conversion`);
        throw badRequest(`no kind ${field.goQuote(String(kind))} is registered for version ${field.goQuote(version ?? 'v1')} in scheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"`);
      }
      for (const [k, type] of Object.entries(DELETE_FIELDS)) {
        const v = parsed[k];
        if (v === undefined || v === null) continue;
        const ok =
          type === 'int64' ? typeof v === 'number' && Number.isSafeInteger(v) :
          type === 'string' ? typeof v === 'string' :
          type === 'bool' ? typeof v === 'boolean' :
          type === '[]string' ? Array.isArray(v) && v.every((x) => typeof x === 'string') :
          isPlainObject(v) && ['uid', 'resourceVersion'].every((f) => (v as Record<string, unknown>)[f] === undefined || (v as Record<string, unknown>)[f] === null || typeof (v as Record<string, unknown>)[f] === 'string');
        if (!ok) {
          const got = type === 'int64' && typeof v === 'number' ? `number ${v}` : type === '[]string' && Array.isArray(v) ? goJsonKind(v.find((x) => typeof x !== 'string')) : goJsonKind(v);
          throw badRequest(`json: cannot unmarshal ${got} into Go struct field DeleteOptions.${k} of type ${type}`);
        }
      }
      body = parsed;
    }
  }
  const src = body ?? {
    gracePeriodSeconds: int64Param(q, 'gracePeriodSeconds'),
    propagationPolicy: q1(q, 'propagationPolicy'),
    orphanDependents: queryBool(q.orphanDependents),
    dryRun: q.dryRun === undefined ? undefined : Array.isArray(q.dryRun) ? q.dryRun : [q.dryRun],
  };
  const out: DeleteOptions = {};
  const errs: FieldError[] = [];
  if (typeof src.gracePeriodSeconds === 'number') out.gracePeriodSeconds = src.gracePeriodSeconds;
  const policy = src.propagationPolicy;
  const orphan = src.orphanDependents;
  if (typeof orphan === 'boolean' && typeof policy === 'string') errs.push(field.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  if (typeof policy === 'string') {
    if (!['Orphan', 'Background', 'Foreground'].includes(policy)) errs.push(field.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
    out.propagationPolicy = policy;
  }
  if (typeof orphan === 'boolean') out.orphanDependents = orphan;
  if (isPlainObject(src.preconditions)) out.preconditions = src.preconditions as DeleteOptions['preconditions'];
  if (Array.isArray(src.dryRun)) {
    errs.push(...dryRunErrors(src.dryRun));
    out.dryRun = src.dryRun as string[];
  }
  if (errs.length) throw invalidOptions('DeleteOptions', errs);
  return out;
}

async function watch(c: HandlerContext, store: Store, ns: string | undefined) {
  const q = c.req.query as Query;
  const opts = listQuery(q, true);
  // A watch of one object (the /watch/ paths with a name) is a watch of its name.
  if (c.info.name) opts.fieldSelector = [`metadata.name=${c.info.name}`, ...(opts.fieldSelector ? [opts.fieldSelector] : [])].join(',');
  const timeoutParam = opts.timeoutSeconds;
  const min = c.opts.minRequestTimeoutSeconds;
  const timeoutSeconds = timeoutParam && timeoutParam > 0 ? timeoutParam : min + Math.floor(Math.random() * min);
  const sendInitial = opts.sendInitialEvents === true;
  parseResourceVersion(opts.resourceVersion); // 400 before the stream starts
  store.filter(opts); // 400 on bad selectors before the stream starts
  c.reply.hijack();
  const typeMeta = { apiVersion: c.def.group ? `${c.def.group}/${c.def.version}` : c.def.version, kind: c.def.kind };
  const table = tableWanted(c.req.headers.accept);
  const include = includeObject(q);
  let columnsSent = false;
  const cacheable = !store.strategy.toExternal && !table;
  const stream = new WatchStream(c.req.raw, c.reply.raw, {
    timeoutSeconds,
    bookmarks: opts.allowWatchBookmarks,
    bookmarkIntervalMs: c.opts.bookmarkIntervalMs,
    encode: (obj, ev) => {
      if (table) {
        const t = toTable(c.def.group, c.def.resource, [store.external(obj)], { resourceVersion: obj.metadata.resourceVersion }, include, !columnsSent, table);
        columnsSent = true;
        return JSON.stringify(t);
      }
      if (cacheable && ev && ev.obj === obj) return (ev.json ??= JSON.stringify(store.external(obj)));
      return JSON.stringify(store.external(obj));
    },
    currentRevision: () => store.cacher.rev,
    typeMeta,
  });
  try {
    const stop = await store.watch(
      ns,
      opts,
      {
        event: (type, obj, ev) => stream.event(type, obj, ev),
        error: (err) => stream.error(err),
      },
      sendInitial ? { ...(opts.resourceVersion !== undefined && opts.resourceVersion !== '' ? { notOlderThan: opts.resourceVersion } : {}) } : undefined,
    );
    if (stream.isClosed) stop();
    else stream.stop = stop;
    if (sendInitial) stream.bookmark({ 'k8s.io/initial-events-end': 'true' });
  } catch (e) {
    stream.error(e);
  }
}

// ---- subresources --------------------------------------------------------------

async function handleSubresource(c: HandlerContext, store: Store, ns: string | undefined) {
  const { info, def } = c;
  const q = c.req.query as Query;
  const sub = info.subresource;
  const verbs = def.subresources[sub]!.verbs;
  const verb = info.verb === 'create' ? 'create' : info.verb;
  if (!verbs.includes(verb)) throw methodNotAllowed();
  switch (sub) {
    case 'status':
    case 'finalize': {
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
      return binding(c, store, ns);
    case 'log':
      return podLogs(c, store, ns);
    case 'exec':
    case 'attach':
      return podStream(c, store, ns, sub);
    case 'token':
      return tokenRequest(c, store, ns);
    default:
      throw failure('MethodNotAllowed', `the server does not allow this method on the requested resource (${info.verb} ${def.resource}/${sub})`);
  }
}

async function patch(c: HandlerContext, store: Store, ns: string | undefined, subresource: string | undefined, ctx: WriteContext) {
  const q = c.req.query as Query;
  const ct = c.req.headers['content-type'] ?? '';
  const mt = mediaType(ct);
  if (!(PATCH_TYPES as readonly string[]).includes(mt)) throw unsupportedMediaType(ct, [...PATCH_TYPES]);
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
        failure('Invalid', ` "" is invalid: patch: Invalid value: ${field.goQuote(JSON.stringify(patchBody))}: ${text}`, { causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${field.goQuote(JSON.stringify(patchBody))}: ${text}`, field: 'patch' }] }),
      );
      ctx.warnings?.push(...warnings);
      return obj;
    },
    { ...(subresource ? { subresource } : {}), ctx },
  );
}

/** PATCH with application/apply-patch+yaml: server-side apply, creating the object when missing. */
async function serverSideApply(c: HandlerContext, store: Store, ns: string | undefined, subresource: string | undefined, ctx: WriteContext, body: unknown, validation: FieldValidation, force: boolean) {
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
  if (!applied.apiVersion || !applied.kind) throw badRequest('Object \'Kind\' is missing in the applied configuration: apiVersion and kind are required');
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
      if (precondition && cur && precondition !== cur.metadata.resourceVersion) throw conflict({ group: c.def.group, resource: c.def.resource }, c.info.name, OPTIMISTIC_LOCK_MESSAGE);
      return apply(cur ?? undefined, applied, fctx, force);
    },
    { ...(subresource ? { subresource } : {}), ctx: { ...ctx, applied: true }, createIfMissing: !subresource },
  );
}

/** POST serviceaccounts/<name>/token (TokenRequest): a signed, expiring, optionally pod-bound token. */
async function tokenRequest(c: HandlerContext, store: Store, ns: string | undefined) {
  if (!c.saTokens) throw failure('ServiceUnavailable', 'no service account token signing key is configured');
  const sa = await store.get(ns, c.info.name);
  const body = parseBody(c.req.body as Buffer | undefined, c.req.headers['content-type'] ?? 'application/json') as { spec?: { audiences?: string[]; expirationSeconds?: number; boundObjectRef?: { kind?: string; name?: string; uid?: string } } } | null;
  if (!isPlainObject(body)) throw badRequest('TokenRequest must be a JSON object');
  const spec = body.spec ?? {};
  // Admission sees the TokenRequest as written (NodeRestriction binds kubelets' tokens to their pods).
  await admit(store.admission, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name: c.info.name, namespace: ns }, spec } as unknown as KubeObject, {
    operation: 'CREATE',
    resource: '/serviceaccounts',
    subresource: 'token',
    namespace: ns,
    name: c.info.name,
    ...(c.req.user ? { user: { name: c.req.user.name, groups: c.req.user.groups } } : {}),
  });
  const exp = spec.expirationSeconds ?? 3600;
  if (!Number.isInteger(exp) || exp < 600) throw failure('Invalid', `TokenRequest.authentication.k8s.io "${c.info.name}" is invalid: spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration less than 10 minutes`);
  if (exp > 2 ** 32) throw failure('Invalid', `TokenRequest.authentication.k8s.io "${c.info.name}" is invalid: spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds`);
  let pod: KubeObject | undefined;
  const ref = spec.boundObjectRef;
  if (ref) {
    if (ref.kind !== 'Pod' && ref.kind !== 'Secret') throw failure('Invalid', `TokenRequest.authentication.k8s.io "${c.info.name}" is invalid: spec.boundObjectRef.kind: Unsupported value: "${ref.kind}": supported values: "Pod", "Secret"`);
    if (ref.kind === 'Pod') {
      pod = await c.registry.get('/v1/pods')!.get(ns, ref.name ?? '');
      if (ref.uid && ref.uid !== pod.metadata.uid) throw failure('Conflict', `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
  }
  const audiences = spec.audiences?.length ? spec.audiences : c.saTokens.audiences;
  const t = await c.saTokens.issue(sa, { audiences, expirationSeconds: exp, ...(pod ? { pod } : {}) });
  return send(c, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: c.info.name, namespace: ns, creationTimestamp: null },
    spec: { audiences, expirationSeconds: exp, boundObjectRef: ref ? { ...ref, apiVersion: 'v1', ...(pod ? { uid: pod.metadata.uid } : {}) } : null },
    status: { token: t.token, expirationTimestamp: rfc3339(t.expirationTimestamp) },
  });
}

function scaleOf(def: ResourceDef, obj: KubeObject) {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: { matchLabels?: Record<string, string>; matchExpressions?: [] } };
  const status = (obj.status ?? {}) as { replicas?: number };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? (def.kind === 'StatefulSet' ? 1 : 1) },
    status: { replicas: status.replicas ?? 0, selector: spec.selector ? labelSelectorToString(spec.selector) : '' },
  };
}

async function scale(c: HandlerContext, store: Store, ns: string | undefined) {
  const { info, def } = c;
  if (info.verb === 'get') return send(c, 200, scaleOf(def, await store.get(ns, info.name)));
  const ctx = writeContext(c);
  let patchType: string | undefined;
  let body: unknown;
  const ct = c.req.headers['content-type'] ?? 'application/json';
  if (info.verb === 'patch') {
    patchType = mediaType(ct);
    if (!(PATCH_TYPES as readonly string[]).includes(patchType)) throw unsupportedMediaType(ct, [...PATCH_TYPES]);
  }
  body = parseBody(c.req.body as Buffer | undefined, ct);
  let preconditionRV: string | undefined;
  const res = await store.guaranteedUpdate(
    ns,
    info.name,
    (cur) => {
      const current = scaleOf(def, cur);
      let next: unknown = body;
      if (patchType) next = applyPatch(patchType, current as unknown as KubeObject, body, SCALE_SCHEMA);
      if (!isPlainObject(next)) throw badRequest('Scale must be a JSON object');
      const s = next as { spec?: { replicas?: unknown }; metadata?: { resourceVersion?: string; name?: string } };
      if (!patchType) preconditionRV = s.metadata?.resourceVersion;
      if (s.metadata?.resourceVersion && s.metadata.resourceVersion !== cur.metadata.resourceVersion) {
        throw conflict({ group: def.group, resource: def.resource }, info.name, 'the object has been modified; please apply your changes to the latest version and try again');
      }
      const replicas = s.spec?.replicas ?? 0;
      if (typeof replicas !== 'number' || !Number.isInteger(replicas)) throw badRequest('Scale in version "v1" cannot be handled as a Scale: spec.replicas must be an integer');
      if (replicas < 0) {
        throw new StatusError({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `Scale.autoscaling "${info.name}" is invalid: spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`,
          reason: 'Invalid',
          details: { name: info.name, group: 'autoscaling', kind: 'Scale', causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${replicas}: must be greater than or equal to 0`, field: 'spec.replicas' }] },
          code: 422,
        });
      }
      const spec = { ...((cur.spec ?? {}) as Record<string, unknown>), replicas };
      return { ...cur, spec };
    },
    { ctx, preconditionRV },
  );
  return send(c, 200, scaleOf(def, res.obj));
}

const SCALE_SCHEMA = { type: 'object', properties: {} } as unknown as ResourceDef['schema'];

/** POST pods/<name>/binding (or the `bindings` collection): sets spec.nodeName once. */
async function binding(c: HandlerContext, store: Store, ns: string | undefined) {
  const body = parseBody(c.req.body as Buffer | undefined, c.req.headers['content-type'] ?? 'application/json');
  return bindPod(c, store, ns, c.info.name, body);
}

async function bindPod(c: HandlerContext, store: Store, ns: string | undefined, podName: string, body: unknown) {
  if (!isPlainObject(body)) throw badRequest('Binding must be a JSON object');
  const b = body as { metadata?: { name?: string; annotations?: Record<string, string> }; target?: { kind?: string; name?: string } };
  const node = b.target?.name;
  const gr = { group: '', resource: 'pods/binding' };
  if (b.metadata?.name && b.metadata.name !== podName) throw badRequest(`the name of the object (${b.metadata.name}) does not match the name on the URL (${podName})`);
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
  await store.guaranteedUpdate(ns, podName, (pod) => {
    const spec = (pod.spec ?? {}) as { nodeName?: string };
    if (pod.metadata.deletionTimestamp) throw conflict(gr, podName, `pod ${podName} is being deleted, cannot be assigned to a host`);
    if (spec.nodeName) throw conflict(gr, podName, `pod ${podName} is already assigned to node "${spec.nodeName}"`);
    const next = structuredClone(pod);
    (next.spec as { nodeName?: string }).nodeName = node;
    if (b.metadata?.annotations) next.metadata.annotations = { ...(next.metadata.annotations ?? {}), ...b.metadata.annotations };
    const status = (next.status ??= {}) as { conditions?: { type: string; status: string; lastProbeTime?: null; lastTransitionTime?: string }[] };
    const conds = (status.conditions ??= []);
    const now = rfc3339();
    const i = conds.findIndex((x) => x.type === 'PodScheduled');
    const cond = { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now };
    if (i >= 0) conds[i] = cond;
    else conds.push(cond);
    return next;
  }, { subresource: 'binding-internal', ctx: writeContext(c) });
  return send(c, 201, successStatus());
}

/** Create-only resources that store nothing (reviews, bindings). */
async function createVirtual(c: HandlerContext) {
  const { def, info } = c;
  if (info.verb !== 'create') throw methodNotAllowed();
  const body = parseBody(c.req.body as Buffer | undefined, c.req.headers['content-type'] ?? 'application/json');
  if (def.resource === 'bindings') {
    const pods = c.registry.get('/v1/pods')!;
    const name = (body as { metadata?: { name?: string } } | null)?.metadata?.name;
    if (!name) throw badRequest('Binding must have metadata.name');
    return bindPod(c, pods, info.namespace, name, body);
  }
  if (def.resource === 'selfsubjectaccessreviews' || def.resource === 'subjectaccessreviews' || def.resource === 'localsubjectaccessreviews') {
    const { obj } = checkObjectBody(def, body, 'Ignore');
    const spec = ((obj as { spec?: Record<string, any> }).spec ?? {}) as Record<string, any>;
    const out = { ...obj, apiVersion: 'authorization.k8s.io/v1', kind: def.kind, metadata: { ...(obj.metadata ?? {}), creationTimestamp: null } };
    if (!c.authorizer) return send(c, 201, { ...out, status: { allowed: true, reason: 'no authorizer is configured: every request is allowed' } });
    let user: UserInfo;
    if (def.resource === 'selfsubjectaccessreviews') user = c.req.user!;
    else {
      if (!spec.user && !(spec.groups ?? []).length) throw failure('Invalid', `${def.kind}.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`);
      user = { name: spec.user ?? '', ...(spec.uid ? { uid: spec.uid } : {}), groups: spec.groups ?? [] };
    }
    const ra = spec.resourceAttributes as Record<string, string> | undefined;
    const nra = spec.nonResourceAttributes as Record<string, string> | undefined;
    if (!ra && !nra) throw failure('Invalid', `${def.kind}.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`);
    if (def.resource === 'localsubjectaccessreviews' && ra && ra.namespace !== info.namespace) throw failure('BadRequest', `spec.resourceAttributes.namespace must match namespace: ${info.namespace}`);
    const attrs: Attributes = ra
      ? { user, verb: ra.verb ?? '', isResourceRequest: true, ...(ra.namespace ? { namespace: ra.namespace } : {}), apiGroup: ra.group ?? '', resource: ra.resource ?? '', ...(ra.subresource ? { subresource: ra.subresource } : {}), ...(ra.name ? { name: ra.name } : {}) }
      : { user, verb: nra!.verb ?? '', isResourceRequest: false, path: nra!.path ?? '' };
    const d = c.authorizer.authorize(attrs);
    return send(c, 201, { ...out, status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) } });
  }
  if (def.resource === 'selfsubjectreviews') {
    const { obj } = checkObjectBody(def, body, 'Ignore');
    const u = c.req.user ?? { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] };
    return send(c, 201, { ...obj, apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: { ...(obj.metadata ?? {}), creationTimestamp: null }, status: { userInfo: { username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}) } } });
  }
  if (def.resource === 'tokenreviews') {
    const { obj } = checkObjectBody(def, body, 'Ignore');
    const spec = ((obj as { spec?: { token?: string; audiences?: string[] } }).spec ?? {});
    const out = { ...obj, apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: { ...(obj.metadata ?? {}), creationTimestamp: null } };
    if (!c.authenticator) return send(c, 201, { ...out, status: { authenticated: false, error: 'no authenticator is configured' } });
    const token = spec.token ?? '';
    let u: UserInfo | undefined;
    if (spec.audiences?.length && c.saTokens) u = await c.saTokens.authenticateToken(token, spec.audiences).then((x) => (x ? { ...x, groups: [...x.groups, 'system:authenticated'] } : undefined));
    else u = await c.authenticator.authenticateBearer(token);
    if (!u) return send(c, 201, { ...out, status: { authenticated: false, user: {}, error: 'invalid bearer token' } });
    return send(c, 201, { ...out, status: { authenticated: true, user: { username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}) }, audiences: spec.audiences?.length ? spec.audiences : (c.saTokens?.audiences ?? []) } });
  }
  if (def.resource === 'selfsubjectrulesreviews') {
    const { obj } = checkObjectBody(def, body, 'Ignore');
    const ns = ((obj as { spec?: { namespace?: string } }).spec ?? {}).namespace;
    let resourceRules: Record<string, unknown>[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
    let nonResourceRules: Record<string, unknown>[] = [{ verbs: ['*'], nonResourceURLs: ['*'] }];
    if (c.authorizer && c.rbac) {
      const user = c.req.user!;
      const rules = c.rbac.rulesFor(user, ns);
      if (user.groups.includes('system:masters')) rules.unshift({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] });
      resourceRules = rules.filter((r) => r.resources?.length).map((r) => ({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}) }));
      nonResourceRules = rules.filter((r) => r.nonResourceURLs?.length).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs }));
      const dedupe = <T,>(list: T[]) => [...new Map(list.map((x) => [JSON.stringify(x), x])).values()];
      resourceRules = dedupe(resourceRules);
      nonResourceRules = dedupe(nonResourceRules);
    }
    return send(c, 201, { ...obj, apiVersion: 'authorization.k8s.io/v1', kind: def.kind, metadata: { ...(obj.metadata ?? {}), creationTimestamp: null }, status: { resourceRules, nonResourceRules, incomplete: false } });
  }
  throw failure('MethodNotAllowed', `${def.resource} are not served until authentication is configured`);
}
