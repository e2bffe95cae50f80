/**
 * Parses a request path into what the rest of the server reasons about: API
 * prefix, group, version, namespace, resource, name, subresource and verb
 * (k8s.io/apiserver pkg/endpoints/request/requestinfo.go).
 *
 * `/api/v1/namespaces/x/status` is the status of Namespace x, while
 * `/api/v1/namespaces/x/pods` is the pods collection in x: the third segment is
 * a subresource of namespaces only when it is not a served resource name.
 */
import { badRequest } from '@kubeling/apimachinery';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection */
  verb: string;
  apiPrefix: 'api' | 'apis' | '';
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Path segments after the subresource (e.g. proxy paths). */
  rest: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: Record<string, string | string[] | undefined>): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    rest: [],
  };
  const parts = path.split('/').filter((p, i) => i > 0 || p !== '');
  if (parts[0] === '') parts.shift();
  const segs = parts.map(decodeSegment);
  if (segs[0] !== 'api' && segs[0] !== 'apis') return info;
  info.apiPrefix = segs[0];
  let i = 1;
  if (info.apiPrefix === 'apis') {
    if (segs.length < 3) return info; // /apis, /apis/<group>: discovery
    info.apiGroup = segs[1]!;
    info.apiVersion = segs[2]!;
    i = 3;
  } else {
    if (segs.length < 2) return info; // /api
    info.apiVersion = segs[1]!;
    i = 2;
  }
  if (segs.length <= i) return info; // /api/v1, /apis/g/v: discovery
  // The deprecated /watch/ paths: a watch of what follows (of one object, with a name).
  const watchPath = segs[i] === 'watch' && segs.length > i + 1;
  if (watchPath) i++;
  info.isResourceRequest = true;
  let rest = segs.slice(i);
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1]!;
      // /namespaces/{ns} and /namespaces/{ns}/{status|finalize} are the Namespace itself.
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
    }
  }
  info.resource = rest[0] ?? '';
  if (rest.length > 1) info.name = rest[1]!;
  if (rest.length > 2) info.subresource = rest[2]!;
  if (rest.length > 3) info.rest = rest.slice(3);
  if (info.resource === 'namespaces' && info.namespace && !info.name) {
    // /api/v1/namespaces/{name}: the namespace object is cluster-scoped
    info.name = info.namespace;
  }
  if (info.resource === 'namespaces') info.namespace = '';

  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') {
    if (watchPath) info.verb = 'watch';
    else if (info.name) info.verb = 'get';
    else info.verb = watchParam(query.watch) ? 'watch' : 'list';
  } else if (m === 'POST') info.verb = 'create';
  else if (m === 'PUT') info.verb = 'update';
  else if (m === 'PATCH') info.verb = 'patch';
  else if (m === 'DELETE') info.verb = info.name ? 'delete' : 'deletecollection';
  return info;
}

/**
 * A boolean query parameter as upstream converts it (Convert_Slice_string_To_bool):
 * absent is undefined, "false" and "0" (any case) are false, anything else —
 * the empty string and `maybe` included — is true.
 */
export function queryBool(v: string | string[] | undefined): boolean | undefined {
  const first = Array.isArray(v) ? v[0] : v;
  if (first === undefined) return undefined;
  const lower = first.toLowerCase();
  return !(lower === 'false' || lower === '0');
}

const watchParam = (v: string | string[] | undefined): boolean => queryBool(v) === true;

/** A path segment, percent-decoded; 400 for an escape that does not decode. */
function decodeSegment(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    throw badRequest(`invalid URL escape ${JSON.stringify(p)}`);
  }
}

export type Query = Record<string, string | string[] | undefined>;

/** A query parameter's first value. */
export const q1 = (q: Query, k: string): string | undefined => {
  const v = q[k];
  return Array.isArray(v) ? v[0] : v;
};
