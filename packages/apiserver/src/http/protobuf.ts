/**
 * The protobuf side of the HTTP layer: request bodies in Kubernetes' protobuf
 * encoding decoded into the JSON the rest of the server handles, and response
 * objects, lists, Statuses and watch events encoded as client-go reads them.
 * The codec itself (the `k8s\0` envelope, every kind's message, from tables
 * generated from the Go types) lives in @kubeling/api `wire`; this module only
 * maps its failures to 400s: a malformed body is never a 500.
 */
import { wire } from '@kubeling/api';
import { badRequest } from '@kubeling/apimachinery';

export const PROTOBUF_MAGIC = wire.PROTOBUF_MAGIC;

/** Decodes a `k8s\0`-prefixed body into the JSON object it carries. 400 on anything malformed or of a kind without protobuf. */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> {
  try {
    return wire.decodeObject(body);
  } catch (e) {
    if (!(e instanceof wire.WireError)) throw e;
    const msg = e.message;
    if (msg.startsWith('provided protobuf data') || msg.startsWith('no kind ')) throw badRequest(msg);
    throw badRequest(`unable to decode protobuf body: ${msg}`);
  }
}

/** Whether objects of this apiVersion and kind have a protobuf encoding (Tables and unknown kinds have none). */
export function hasProtobuf(apiVersion: string, kind: string): boolean {
  const st = wire.kindStruct(apiVersion, kind);
  return st !== undefined && st.protoOrder.length > 0;
}

/** The enveloped protobuf of a response body, or undefined when its kind has no protobuf encoding. */
export function encodeProtobufBody(body: unknown): Buffer | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as { apiVersion?: unknown; kind?: unknown };
  if (typeof b.kind !== 'string' || !hasProtobuf(typeof b.apiVersion === 'string' ? b.apiVersion : '', b.kind)) return undefined;
  return wire.encodeObject(b);
}

/** One length-prefixed frame of a protobuf watch (`application/vnd.kubernetes.protobuf;stream=watch`). */
export function protobufWatchFrame(type: string, object: Buffer): Buffer {
  return wire.encodeWatchEvent(type, object);
}
