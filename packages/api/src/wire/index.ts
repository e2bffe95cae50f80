/**
 * The wire forms of the API types: Kubernetes' protobuf encoding and JSON as Go
 * writes it, both driven by tables generated from the Go type definitions
 * (scripts/gen-wire-types.mjs) plus a hand-written overlay of newer fields.
 */
export type { WireField, WirePackage, WireRow, WireStruct, WireType } from './model.js';
export { kindStruct, wireKinds, wireStruct, wireStructKeys } from './registry.js';
export { goJson, toGoJson } from './json.js';
export { goJsonText } from './json-text.js';
export {
  PROTOBUF_MAGIC,
  WireError,
  decodeEnvelope,
  decodeMessage,
  decodeObject,
  encodeEnvelope,
  encodeMessage,
  encodeObject,
  encodeWatchEvent,
} from './protobuf.js';
export { formatDuration, formatMicroTime, formatTime, parseDuration, parseTime } from './special.js';
