/**
 * The `paths` of the OpenAPI v2 document: one path item per collection, object
 * and subresource of each served resource, with the operations its verbs allow,
 * named and described as kube-apiserver names them (k8s.io/apiserver
 * pkg/endpoints/installer.go: `list…`, `create…`, `deleteCollection…`,
 * `read…`, `replace…`, `patch…`, `delete…`, `connect…`), each carrying
 * `x-kubernetes-action` and `x-kubernetes-group-version-kind`.
 *
 * Parameters that recur are written once under the document's `parameters` and
 * referred to as `#/parameters/<name>-<hash>` (k8s.io/kube-openapi
 * pkg/builder/parameters.go); `dryRun`, `fieldValidation`, `name` and request
 * bodies stay inline, as upstream's document has them. kubectl's
 * QueryParamVerifier reads `fieldValidation` on the PATCH operation of a kind.
 */
import { createHash } from 'node:crypto';
import type { ResourceDef } from '@kubeling/api';
import { COMMON_PARAMS, type Json } from './openapi.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const JSON_YAML_PB = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const WATCH_TYPES = [...JSON_YAML_PB, 'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
/** Subresources that stream or upgrade: `connect` operations answering a string. */
const CONNECT = new Set(['exec', 'attach', 'portforward', 'proxy']);

const query = (name: string, type: string, description: string): Json => ({ description, in: 'query', name, type, uniqueItems: true });

const PARAMS = {
  allowWatchBookmarks: query('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK".'),
  continue: query('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  fieldSelector: query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  labelSelector: query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  limit: query('limit', 'integer', 'limit is a maximum number of responses to return for a list call.'),
  resourceVersion: query('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
  resourceVersionMatch: query('resourceVersionMatch', 'string', 'resourceVersionMatch determines how resourceVersion is applied to list calls.'),
  sendInitialEvents: query('sendInitialEvents', 'boolean', '`sendInitialEvents=true` may be set together with `watch=true`.'),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  watch: query('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.'),
  pretty: query('pretty', 'string', COMMON_PARAMS.pretty.description),
  dryRun: query('dryRun', 'string', COMMON_PARAMS.dryRun.description),
  fieldValidation: query('fieldValidation', 'string', COMMON_PARAMS.fieldValidation.description),
  fieldManager: query('fieldManager', 'string', COMMON_PARAMS.fieldManager.description),
  fieldManagerApply: query(
    'fieldManager',
    'string',
    `${COMMON_PARAMS.fieldManager.description} This field is required for apply requests (application/apply-patch) but optional for non-apply patch types.`,
  ),
  force: query('force', 'boolean', COMMON_PARAMS.force.description),
  gracePeriodSeconds: query('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated: please use the PropagationPolicy.'),
  propagationPolicy: query('propagationPolicy', 'string', "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'."),
  ignoreStoreRead: query(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.',
  ),
  namespace: {
    description: 'object name and auth scope, such as for teams and projects',
    in: 'path',
    name: 'namespace',
    required: true,
    type: 'string',
    uniqueItems: true,
  },
  deleteBody: { in: 'body', name: 'body', schema: { $ref: `#/definitions/${META}DeleteOptions` } },
  patchBody: { in: 'body', name: 'body', required: true, schema: { $ref: `#/definitions/${META}Patch` } },
};
type ParamName = keyof typeof PARAMS;

const LIST: ParamName[] = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
];
const DELETE_COLLECTION: ParamName[] = [
  'continue',
  'dryRun',
  'fieldSelector',
  'gracePeriodSeconds',
  'ignoreStoreRead',
  'labelSelector',
  'limit',
  'orphanDependents',
  'propagationPolicy',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
];

const upper = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `CoreV1`, `AppsV1`, `RbacAuthorizationV1`: the group-version part of operation ids and (lower-cased) tags. */
export function gvName(group: string, version: string): string {
  const g = group
    ? group
        .replace(/\.k8s\.io$/, '')
        .split('.')
        .map(upper)
        .join('')
    : 'Core';
  return g + upper(version);
}

/** Builds the path items of the served resources, collecting the shared parameters. */
export class PathsBuilder {
  readonly paths: Record<string, Json> = {};
  readonly parameters: Record<string, Json> = {};
  private readonly names = new Map<ParamName, string>();

  /** `schemaOf(gvk)` names the definition of a kind (undefined when the catalogue has no schema for it). */
  constructor(private readonly schemaOf: (gvk: { group: string; version: string; kind: string }) => string | undefined) {}

  /**
   * A parameter: `dryRun` and `fieldValidation` inline, the others as a `$ref`
   * to the document's `parameters`, registered under `<name>-<hash>`, the hash
   * being 6 bytes of the SHA-224 of the parameter's JSON in base64url
   * (pkg/builder/parameters.go `base64Hash`).
   */
  private param(p: ParamName): Json {
    const param = PARAMS[p];
    if (p === 'dryRun' || p === 'fieldValidation') return param;
    let name = this.names.get(p);
    if (!name) {
      name = `${param.name}-${createHash('sha224').update(JSON.stringify(param)).digest().subarray(0, 6).toString('base64url')}`;
      this.names.set(p, name);
      this.parameters[name] = param;
    }
    return { $ref: `#/parameters/${name}` };
  }

  private params(names: ParamName[]): Json[] {
    return names.map((p) => this.param(p));
  }

  /** The paths of resource `r`, whose own definition is `id`. */
  add(r: ResourceDef, id: string): void {
    const gvk = { group: r.group, kind: r.kind, version: r.version };
    const gv = gvName(r.group, r.version);
    const tag = `${gv.charAt(0).toLowerCase()}${gv.slice(1, gv.length - r.version.length)}_${r.version}`;
    const ns = r.namespaced ? 'Namespaced' : '';
    const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    const coll = `${prefix}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
    const a = /^[AEIOU]/.test(r.kind) ? 'an' : 'a';
    const def = (s: string) => ({ $ref: `#/definitions/${s}` });
    const ok = (s: Json | undefined, code = 'OK') => (s ? { description: code, schema: s } : { description: code });
    const op = (action: string, operationId: string, description: string, rest: Json, opGvk: Json = gvk): Json => ({
      consumes: ['*/*'],
      description,
      operationId,
      produces: JSON_YAML_PB,
      ...rest,
      responses: { ...(rest.responses as Json), 401: { description: 'Unauthorized' } },
      schemes: ['https'],
      tags: [tag],
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': opGvk,
    });
    const body = (s: string) => ({ in: 'body', name: 'body', required: true, schema: def(s) });
    const writeParams = (s: string) => [body(s), ...this.params(['dryRun', 'fieldManager', 'fieldValidation'])];
    const patchParams = () => this.params(['patchBody', 'dryRun', 'fieldManagerApply', 'fieldValidation', 'force']);
    const pathParams = (kind?: string) => [
      ...(kind ? [{ description: `name of the ${kind}`, in: 'path', name: 'name', required: true, type: 'string', uniqueItems: true }] : []),
      ...(r.namespaced ? [this.param('namespace')] : []),
      this.param('pretty'),
    ];
    const has = (v: string) => r.verbs.includes(v);
    const status = def(`${META}Status`);

    const collection: Json = {};
    if (has('list'))
      collection.get = op('list', `list${gv}${ns}${r.kind}`, `list or watch objects of kind ${r.kind}`, {
        parameters: this.params(LIST),
        produces: WATCH_TYPES,
        responses: { 200: ok(def(`${id}List`)) },
      });
    if (has('create'))
      collection.post = op('post', `create${gv}${ns}${r.kind}`, `create ${a} ${r.kind}`, {
        parameters: writeParams(id),
        responses: { 200: ok(def(id)), 201: ok(def(id), 'Created'), 202: ok(def(id), 'Accepted') },
      });
    if (has('deletecollection'))
      collection.delete = op('deletecollection', `delete${gv}Collection${ns}${r.kind}`, `delete collection of ${r.kind}`, {
        parameters: this.params(['deleteBody', ...DELETE_COLLECTION]),
        responses: { 200: ok(status) },
      });
    if (Object.keys(collection).length) this.paths[coll] = { ...collection, parameters: pathParams() };

    if (r.namespaced && has('list'))
      this.paths[`${prefix}/${r.resource}`] = {
        get: op('list', `list${gv}${r.kind}ForAllNamespaces`, `list or watch objects of kind ${r.kind}`, {
          produces: WATCH_TYPES,
          responses: { 200: ok(def(`${id}List`)) },
        }),
        parameters: this.params([...LIST, 'pretty' as const].sort()),
      };

    const object: Json = {};
    if (has('get')) object.get = op('get', `read${gv}${ns}${r.kind}`, `read the specified ${r.kind}`, { responses: { 200: ok(def(id)) } });
    if (has('update'))
      object.put = op('put', `replace${gv}${ns}${r.kind}`, `replace the specified ${r.kind}`, {
        parameters: writeParams(id),
        responses: { 200: ok(def(id)), 201: ok(def(id), 'Created') },
      });
    if (has('patch'))
      object.patch = op('patch', `patch${gv}${ns}${r.kind}`, `partially update the specified ${r.kind}`, {
        consumes: PATCH_TYPES,
        parameters: patchParams(),
        responses: { 200: ok(def(id)), 201: ok(def(id), 'Created') },
      });
    if (has('delete'))
      object.delete = op('delete', `delete${gv}${ns}${r.kind}`, `delete ${a} ${r.kind}`, {
        parameters: this.params(['deleteBody', 'dryRun', 'gracePeriodSeconds', 'ignoreStoreRead', 'orphanDependents', 'propagationPolicy']),
        responses: { 200: ok(status), 202: ok(status, 'Accepted') },
      });
    if (Object.keys(object).length) this.paths[`${coll}/{name}`] = { ...object, parameters: pathParams(r.kind) };

    for (const [sub, s] of Object.entries(r.subresources)) {
      const subGvk = s.kind ? { group: s.kind.group, kind: s.kind.kind, version: s.kind.version } : gvk;
      const subId = subGvk.kind === r.kind && subGvk.group === r.group ? id : this.schemaOf(subGvk);
      const Sub = upper(sub);
      const can = (v: string) => s.verbs.includes(v);
      const ops: Json = {};
      if (CONNECT.has(sub)) {
        // pkg/endpoints/installer.go: connecters answer whatever the backend streams.
        const methods = { get: 'get', post: 'create', put: 'update', patch: 'patch', delete: 'delete' };
        for (const [method, verb] of Object.entries(methods))
          if (can(verb))
            ops[method] = op(
              'connect',
              `connect${gv}${upper(method)}${ns}${r.kind}${Sub}`,
              `connect ${method.toUpperCase()} requests to ${sub} of ${r.kind}`,
              { produces: ['*/*'], responses: { 200: ok({ type: 'string' }) } },
              subGvk,
            );
      } else if (sub === 'log') {
        if (can('get'))
          ops.get = op(
            'get',
            `read${gv}${ns}${r.kind}Log`,
            `read log of the specified ${r.kind}`,
            { produces: ['text/plain', ...JSON_YAML_PB], responses: { 200: ok({ type: 'string' }) } },
            subGvk,
          );
      } else if (subId) {
        if (can('get'))
          ops.get = op('get', `read${gv}${ns}${r.kind}${Sub}`, `read ${sub} of the specified ${r.kind}`, { responses: { 200: ok(def(subId)) } }, subGvk);
        if (can('create'))
          ops.post = op(
            'post',
            `create${gv}${ns}${r.kind}${Sub}`,
            `create ${sub} of ${a} ${r.kind}`,
            { parameters: writeParams(subId), responses: { 200: ok(def(subId)), 201: ok(def(subId), 'Created'), 202: ok(def(subId), 'Accepted') } },
            subGvk,
          );
        if (can('update'))
          ops.put = op(
            'put',
            `replace${gv}${ns}${r.kind}${Sub}`,
            `replace ${sub} of the specified ${r.kind}`,
            { parameters: writeParams(subId), responses: { 200: ok(def(subId)), 201: ok(def(subId), 'Created') } },
            subGvk,
          );
        if (can('patch'))
          ops.patch = op(
            'patch',
            `patch${gv}${ns}${r.kind}${Sub}`,
            `partially update ${sub} of the specified ${r.kind}`,
            { consumes: PATCH_TYPES, parameters: patchParams(), responses: { 200: ok(def(subId)), 201: ok(def(subId), 'Created') } },
            subGvk,
          );
      }
      if (Object.keys(ops).length) this.paths[`${coll}/{name}/${sub}`] = { ...ops, parameters: pathParams(subGvk.kind) };
    }
  }
}
