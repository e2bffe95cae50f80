/**
 * What every resource endpoint works with: the request's context (its parsed
 * path, the resource, the registry, the authorizers), the encoding of an
 * answer, and the decoding of an object body (every failure a Status: see
 * codec.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KubeObject, ResourceDef } from '@kubeling/api';
import { badRequest, goJSONKind, isPlainObject, unsupportedMediaType } from '@kubeling/apimachinery';
import type { RequestInfo } from './request-info.js';
import { hasProtobuf } from './protobuf.js';
import {
  BODY_TYPES,
  BodySyntaxError,
  PROTOBUF_TYPE,
  YAML_TYPE,
  checkObjectBody,
  encodeFor,
  mediaType,
  parseBodyFull,
  summarizeBody,
  type FieldValidation,
  type ParsedBody,
} from './codec.js';
import type { Store } from '../registry/store.js';
import type { ComponentProbe } from '../registry/core/componentstatuses.js';
import type { EtcdStorage } from '../storage/etcd.js';
import type { Authenticator, Authorizer, RbacAuthorizer, ServiceAccountTokens } from '../auth/index.js';

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
    /** What ComponentStatus reads probe (the components' health URLs and etcd's). */
    componentProbes: readonly ComponentProbe[];
    /** Whether the named CRD is being deleted (its resources take no creates then). */
    crdTerminating?: (crdName: string) => boolean;
    /** Called when a request was upgraded and handed over (no response hooks run for it). */
    upgraded?: (req: FastifyRequest) => void;
  };
  /** Undefined: every request is allowed (no authentication configured). */
  authorizer?: Authorizer;
  rbac?: RbacAuthorizer;
  saTokens?: ServiceAccountTokens;
  authenticator?: Authenticator;
}

/** The answer, as JSON, YAML or protobuf per Accept, with warnings as `Warning: 299` headers. */
export function send(c: HandlerContext, code: number, body: unknown, warnings: string[] = []) {
  // One header line per warning: reply.header() replaces a header set twice, so they are set at once.
  if (warnings.length)
    c.reply.header(
      'Warning',
      warnings.map((w) => `299 - ${JSON.stringify(w)}`),
    );
  const { payload, contentType } = encodeFor(body, c.req.headers.accept);
  return c.reply.code(code).type(contentType).send(payload);
}

const GO_TYPEMETA = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * The body of a create or update as an object of `def`'s kind: a body that does
 * not parse, or is no object, is 400 `the object provided is unrecognized (must
 * be of type Pod): ...` with the start of the body, as upstream's decoder says it.
 */
export function decodeObject(c: HandlerContext, def: ResourceDef, validation: FieldValidation, kind = def.kind) {
  const ct = c.req.headers['content-type'] ?? 'application/json';
  const mt = mediaType(ct);
  if (!BODY_TYPES.includes(mt) && mt !== '') throw unsupportedMediaType(ct, ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
  const raw = c.req.body as Buffer | undefined;
  const unrecognized = (why: string) => badRequest(`the object provided is unrecognized (must be of type ${kind}): ${why} (${summarizeBody(raw)})`);
  // A kind without a protobuf encoding (custom resources, as crdHandler's serializers) takes JSON and YAML only.
  if (mt === PROTOBUF_TYPE && !hasProtobuf(def.group ? `${def.group}/${def.version}` : def.version, kind))
    throw unsupportedMediaType(ct, ['application/json', 'application/yaml']);
  const json = mt !== YAML_TYPE && mt !== PROTOBUF_TYPE;
  let parsed: ParsedBody;
  try {
    parsed = parseBodyFull(raw, ct);
  } catch (e) {
    if (e instanceof BodySyntaxError) throw unrecognized(json ? `couldn't get version/kind; json parse error: ${e.detail}` : e.detail);
    throw e;
  }
  const body = parsed.value;
  if (body !== null && body !== undefined && !isPlainObject(body)) {
    throw unrecognized(`couldn't get version/kind; json parse error: json: cannot unmarshal ${goJSONKind(body)} into Go value of type ${GO_TYPEMETA}`);
  }
  return checkObjectBody(def, body ?? {}, validation, kind, parsed.numberText);
}

export function checkNamespace(obj: KubeObject, ns: string | undefined): void {
  if (ns === undefined) return;
  const bodyNs = obj.metadata.namespace;
  if (bodyNs && bodyNs !== ns) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  obj.metadata.namespace = ns;
}

export function checkName(obj: KubeObject, name: string): void {
  if (obj.metadata.name && obj.metadata.name !== name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
  }
  obj.metadata.name = name;
}
