/**
 * Kubernetes' protobuf encoding of API objects, driven by the wire tables: the
 * `k8s\0` + runtime.Unknown envelope (apimachinery pkg/runtime/serializer/protobuf),
 * and each struct's message as gogo-protobuf writes it (fields in number order;
 * non-pointer fields always, even zero; pointers when set; map entries by key).
 *
 * Decoding gives the JSON form the rest of kubeling handles. Go writes every
 * non-pointer field, so zero values of non-pointer fields are dropped (defaulting
 * then sees them unset, as it would in JSON) and zero values of pointer fields
 * are kept (`replicas: 0`). Malformed input throws a `WireError` (a 400 for the
 * apiserver), never anything else.
 */
import type { WireField, WireStruct, WireType } from './model.js';
import { kindStruct, wireStruct } from './registry.js';
import { formatDuration, formatMicroTime, formatTime, parseDuration, parseTime } from './special.js';

export class WireError extends Error {
  override name = 'WireError';
}

export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
/**
 * How deeply messages may nest, envelopes inside RawExtensions included (a
 * ControllerRevision's data may hold a ControllerRevision ...): far beyond any
 * real object, and far from the stack's limit.
 */
const MAX_DEPTH = 200;

type Obj = Record<string, unknown>;

// ---- reading ---------------------------------------------------------------------

class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }
  /** A varint as a number (exact up to 2^53; int64 values beyond lose precision, as JSON numbers do). */
  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('unexpected EOF');
      const b = this.buf[this.pos++]!;
      if (i === 9 && b > 1) throw new WireError('integer overflow');
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new WireError('integer overflow');
  }
  /** A varint as a 64-bit two's complement value. */
  varint64(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('unexpected EOF');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    throw new WireError('integer overflow');
  }
  /** The bounds of a length-delimited field. */
  delimited(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    if (len > this.end - start) throw new WireError('unexpected EOF');
    this.pos = start + len;
    return [start, start + len];
  }
  skip(wt: number): void {
    if (wt === 0) this.varint64();
    else if (wt === 1) this.pos += 8;
    else if (wt === 2) this.delimited();
    else if (wt === 5) this.pos += 4;
    else throw new WireError(`illegal wireType ${wt}`);
    if (this.pos > this.end) throw new WireError('unexpected EOF');
  }
}

const signed64 = (r: Reader): number => {
  const v = r.varint64();
  return Number(BigInt.asIntN(64, v));
};

function readScalar(r: Reader, s: string, wt: number): unknown {
  switch (s) {
    case 'string':
    case 'bytes': {
      if (wt !== 2) throw new WireError(`wrong wireType ${wt} for a ${s}`);
      const [a, b] = r.delimited();
      return s === 'string' ? r.buf.toString('utf8', a, b) : r.buf.toString('base64', a, b);
    }
    case 'bool':
      if (wt !== 0) throw new WireError(`wrong wireType ${wt} for a bool`);
      return r.varint64() !== 0n;
    case 'int32':
      if (wt !== 0) throw new WireError(`wrong wireType ${wt} for an int32`);
      return Number(BigInt.asIntN(32, r.varint64()));
    case 'int64':
      if (wt !== 0) throw new WireError(`wrong wireType ${wt} for an int64`);
      return signed64(r);
    case 'uint32':
    case 'uint64':
    case 'byte':
      if (wt !== 0) throw new WireError(`wrong wireType ${wt} for an ${s}`);
      return Number(r.varint64());
    case 'float64': {
      if (wt !== 1 || r.pos + 8 > r.end) throw new WireError('bad float64');
      const v = r.buf.readDoubleLE(r.pos);
      r.pos += 8;
      return v;
    }
    case 'float32': {
      if (wt !== 5 || r.pos + 4 > r.end) throw new WireError('bad float32');
      const v = r.buf.readFloatLE(r.pos);
      r.pos += 4;
      return v;
    }
    default:
      r.skip(wt);
      return undefined;
  }
}

const NUMERIC = new Set(['bool', 'int32', 'int64', 'uint32', 'uint64', 'byte', 'float64', 'float32']);

function mustStruct(name: string): WireStruct {
  const st = wireStruct(name);
  if (!st) throw new WireError(`no wire table for ${name}`);
  return st;
}

/** One value of type `t` at the reader (the field's wire type `wt`). */
function readValue(r: Reader, t: WireType, wt: number, depth: number): unknown {
  if (t.k === 'scalar') return readScalar(r, t.s, wt);
  if (wt !== 2) throw new WireError(`wrong wireType ${wt} for a message`);
  const [a, b] = r.delimited();
  if (t.k === 'struct') return decodeInto({}, r.buf, a, b, mustStruct(t.name), depth + 1);
  if (t.k === 'special') return readSpecial(r.buf, a, b, t.s, depth);
  if (t.k === 'wrapper') {
    const items: unknown[] = [];
    const sub = new Reader(r.buf, a, b);
    while (sub.pos < sub.end) {
      const tag = sub.varint();
      if (tag >>> 3 === 1) pushRepeated(items, sub, t.of, tag & 7, depth);
      else sub.skip(tag & 7);
    }
    return items;
  }
  throw new WireError('nested collections are not supported');
}

function pushRepeated(list: unknown[], r: Reader, t: WireType, wt: number, depth: number): void {
  if (wt === 2 && t.k === 'scalar' && NUMERIC.has(t.s)) {
    // A packed run of numbers.
    const [a, b] = r.delimited();
    const sub = new Reader(r.buf, a, b);
    const elemWt = t.s === 'float64' ? 1 : t.s === 'float32' ? 5 : 0;
    while (sub.pos < sub.end) list.push(readScalar(sub, t.s, elemWt));
    return;
  }
  list.push(readValue(r, t, wt, depth));
}

function readSpecial(buf: Buffer, a: number, b: number, s: string, depth: number): unknown {
  const r = new Reader(buf, a, b);
  let n1: number | bigint = 0;
  let n2 = 0;
  let str = '';
  let raw: [number, number] | undefined;
  while (r.pos < r.end) {
    const tag = r.varint();
    const num = tag >>> 3;
    const wt = tag & 7;
    if (num === 1 && wt === 0) n1 = s === 'Duration' ? BigInt.asIntN(64, r.varint64()) : signed64(r);
    else if (num === 2 && wt === 0) n2 = Number(BigInt.asIntN(32, r.varint64()));
    else if (wt === 2 && ((num === 1 && (s === 'Quantity' || s === 'RawExtension' || s === 'FieldsV1')) || (num === 3 && s === 'IntOrString'))) {
      raw = r.delimited();
      str = buf.toString('utf8', raw[0], raw[1]);
    } else r.skip(wt);
  }
  switch (s) {
    case 'Time':
    case 'MicroTime':
      if (a === b) return undefined;
      try {
        return s === 'Time' ? formatTime(Number(n1)) : formatMicroTime(Number(n1), n2);
      } catch (e) {
        throw new WireError((e as Error).message);
      }
    case 'Duration':
      return formatDuration(BigInt(n1));
    case 'Quantity':
      return str;
    case 'IntOrString':
      return Number(n1) === 1 ? str : n2;
    default: {
      if (!raw || raw[0] === raw[1]) return undefined;
      const bytes = buf.subarray(raw[0], raw[1]);
      if (s === 'RawExtension' && bytes.length >= 4 && bytes.subarray(0, 4).equals(PROTOBUF_MAGIC)) return decodeObject(bytes, depth + 1);
      try {
        return JSON.parse(str);
      } catch {
        throw new WireError(`${s} does not hold JSON`);
      }
    }
  }
}

/** Whether a decoded value is what Go writes for a zero non-pointer field. */
function isZero(v: unknown, t: WireType): boolean {
  if (v === undefined || v === '' || v === 0 || v === false) return true;
  if (t.k === 'struct' && typeof v === 'object' && v !== null) return Object.keys(v).length === 0;
  // Go writes a zero Quantity as "0" and a zero Duration as 0 (`0s`).
  if (t.k === 'special') return (t.s === 'Quantity' && v === '0') || (t.s === 'Duration' && v === '0s');
  return false;
}

function decodeInto(out: Obj, buf: Buffer, start: number, end: number, st: WireStruct, depth: number): Obj {
  if (depth > MAX_DEPTH) throw new WireError('message nested too deeply');
  const r = new Reader(buf, start, end);
  while (r.pos < r.end) {
    const tag = r.varint();
    const num = tag >>> 3;
    const wt = tag & 7;
    if (num === 0) throw new WireError('illegal tag 0');
    const f = st.byNum.get(num);
    if (!f || f.noJson || (f.type.k === 'scalar' && f.type.s === 'any')) {
      r.skip(wt);
      continue;
    }
    readField(out, r, f, wt, depth);
  }
  return out;
}

function readField(out: Obj, r: Reader, f: WireField, wt: number, depth: number): void {
  const t = f.type;
  if (f.inline && t.k === 'struct') {
    if (wt !== 2) throw new WireError(`wrong wireType ${wt} for a message`);
    const [a, b] = r.delimited();
    decodeInto(out, r.buf, a, b, mustStruct(t.name), depth + 1);
    return;
  }
  if (t.k === 'slice') {
    const list = (Array.isArray(out[f.json]) ? out[f.json] : (out[f.json] = [])) as unknown[];
    pushRepeated(list, r, t.of, wt, depth);
    return;
  }
  if (t.k === 'map') {
    if (wt !== 2) throw new WireError(`wrong wireType ${wt} for a map entry`);
    const [a, b] = r.delimited();
    const e = new Reader(r.buf, a, b);
    let key = '';
    let value: unknown;
    while (e.pos < e.end) {
      const et = e.varint();
      if (et >>> 3 === 1) key = String(readScalar(e, 'string', et & 7));
      else if (et >>> 3 === 2) value = readValue(e, t.of, et & 7, depth);
      else e.skip(et & 7);
    }
    const m = (out[f.json] ??= {}) as Obj;
    m[key] = value ?? zeroMapValue(t.of);
    return;
  }
  const v = readValue(r, t, wt, depth);
  if (!f.ptr && isZero(v, t)) delete out[f.json];
  else if (v === undefined) delete out[f.json];
  else out[f.json] = v;
}

/** A map entry without its value holds the value type's zero. */
function zeroMapValue(t: WireType): unknown {
  if (t.k === 'scalar') return t.s === 'string' || t.s === 'bytes' ? '' : t.s === 'bool' ? false : 0;
  if (t.k === 'special') return t.s === 'Quantity' ? '0' : t.s === 'IntOrString' ? 0 : null;
  return t.k === 'struct' ? {} : null;
}

/** The JSON form of a message of struct `st`. */
export function decodeMessage(buf: Buffer, st: WireStruct): Obj {
  return decodeInto({}, buf, 0, buf.length, st, 0);
}

/** The `typeMeta` and `raw` of a `k8s\0` envelope. */
export function decodeEnvelope(body: Buffer): { apiVersion: string; kind: string; raw: Buffer } {
  if (body.length < 4 || !body.subarray(0, 4).equals(PROTOBUF_MAGIC))
    throw new WireError('provided protobuf data is not a Kubernetes object: missing magic prefix');
  const r = new Reader(body, 4);
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  while (r.pos < r.end) {
    const tag = r.varint();
    const num = tag >>> 3;
    const wt = tag & 7;
    if (num === 1 && wt === 2) {
      const [a, b] = r.delimited();
      const tm = new Reader(body, a, b);
      while (tm.pos < tm.end) {
        const t2 = tm.varint();
        if (t2 >>> 3 === 1) apiVersion = String(readScalar(tm, 'string', t2 & 7));
        else if (t2 >>> 3 === 2) kind = String(readScalar(tm, 'string', t2 & 7));
        else tm.skip(t2 & 7);
      }
    } else if (num === 2 && wt === 2) {
      const [a, b] = r.delimited();
      raw = body.subarray(a, b);
    } else r.skip(wt);
  }
  return { apiVersion, kind, raw };
}

/** The JSON object a `k8s\0` envelope carries, with its apiVersion and kind; a WireError for a kind without tables. */
export function decodeObject(body: Buffer, depth = 0): Obj {
  const env = decodeEnvelope(body);
  const st = kindStruct(env.apiVersion, env.kind);
  if (!st) throw new WireError(`no kind "${env.kind}" is registered for the protobuf encoding of version "${env.apiVersion}"`);
  const obj = decodeInto({}, env.raw, 0, env.raw.length, st, depth + 1);
  return { apiVersion: env.apiVersion, kind: env.kind, ...obj };
}

// ---- writing ---------------------------------------------------------------------

export { Writer, encodeMessage, encodeEnvelope, encodeObject, encodeWatchEvent } from './protobuf-write.js';
export { formatDuration, parseDuration, parseTime };
