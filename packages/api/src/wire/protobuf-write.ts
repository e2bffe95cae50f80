/**
 * Writing API objects in Kubernetes' protobuf encoding, as gogo-protobuf's
 * generated marshalers do (k8s.io/api generated.pb.go): fields in number order,
 * non-pointer fields always (zero values too), pointers and slices when set,
 * map entries sorted by key; the special types as their hand-written
 * marshalers write them (meta/v1 time_proto.go, micro_time_proto.go, resource
 * Quantity, intstr, RawExtension and FieldsV1 as raw JSON).
 *
 * One growable buffer: a length-delimited field reserves one byte for its
 * length and moves its content when the length needs more (rare: the content
 * of a field over 127 bytes moves once per nesting level).
 */
import type { WireField, WireStruct, WireType } from './model.js';
import { kindStruct, wireStruct } from './registry.js';
import { parseDuration, parseTime } from './special.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/**
 * The scratch buffer writers start in (one encoding at a time: `finish` copies
 * the result out), so that an encoding allocates only its result.
 */
let scratch: Buffer | undefined = Buffer.allocUnsafe(64 * 1024);

export class Writer {
  buf: Buffer;
  pos = 0;
  private readonly shared: boolean;
  constructor(size = 1024) {
    this.shared = scratch !== undefined && size <= scratch.length;
    this.buf = this.shared ? scratch! : Buffer.allocUnsafe(size);
    if (this.shared) scratch = undefined;
  }
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }
  /** An unsigned varint; negative numbers as 64-bit two's complement (ten bytes), as Go writes int32 and int64. */
  varint(v: number): void {
    if (v < 0 || !Number.isSafeInteger(v)) return this.varint64(BigInt.asUintN(64, BigInt(Math.trunc(v) || 0)));
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }
  varint64(v: bigint): void {
    this.ensure(10);
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }
  tag(num: number, wt: number): void {
    this.varint(num * 8 + wt);
  }
  string(s: string): void {
    const n = s.length;
    if (n < 128) {
      // Short ASCII (most names, keys and values): written byte by byte, its length one byte.
      this.ensure(n + 1);
      const b = this.buf;
      let p = this.pos + 1;
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[p++] = c;
      }
      if (i === n) {
        b[this.pos] = n;
        this.pos = p;
        return;
      }
    }
    const len = Buffer.byteLength(s);
    this.varint(len);
    this.ensure(len);
    this.buf.write(s, this.pos, 'utf8');
    this.pos += len;
  }
  /** Length-delimited bytes. */
  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.raw(b);
  }
  /** Bytes as they are. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** Starts a length-delimited field's content; `join` with the returned mark ends it. */
  fork(): number {
    this.ensure(1);
    return this.pos++;
  }
  join(mark: number): void {
    const len = this.pos - mark - 1;
    let n = 1;
    for (let l = len; l >= 0x80; l = Math.floor(l / 0x80)) n++;
    if (n > 1) {
      this.ensure(n - 1);
      this.buf.copyWithin(mark + n, mark + 1, this.pos);
      this.pos += n - 1;
    }
    let p = mark;
    let l = len;
    while (l >= 0x80) {
      this.buf[p++] = (l % 0x80) | 0x80;
      l = Math.floor(l / 0x80);
    }
    this.buf[p] = l;
  }
  /** The bytes written (a copy); the writer is done. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    // The scratch buffer goes back for the next encoding (a grown one too, up to a bound).
    if (this.shared || (this.buf.length <= 4 * 1024 * 1024 && !scratch)) scratch = this.buf;
    return out;
  }
}

function mustStruct(name: string): WireStruct {
  const st = wireStruct(name);
  if (!st) throw new Error(`no wire table for ${name}`);
  return st;
}

const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : 0);

function writeScalar(w: Writer, n: number, s: string, v: unknown): void {
  switch (s) {
    case 'string':
      w.tag(n, 2);
      w.string(typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));
      return;
    case 'bytes':
      // A nil []byte is not written; an empty one is.
      if (v === undefined || v === null) return;
      w.tag(n, 2);
      w.bytes(Buffer.from(String(v), 'base64'));
      return;
    case 'bool':
      w.tag(n, 0);
      w.byte(v === true ? 1 : 0);
      return;
    case 'float64':
      w.tag(n, 1);
      writeFixed(w, num(v), 8);
      return;
    case 'float32':
      w.tag(n, 5);
      writeFixed(w, num(v), 4);
      return;
    case 'any':
      return;
    default:
      w.tag(n, 0);
      w.varint(Math.trunc(num(v)));
  }
}

function writeFixed(w: Writer, v: number, size: 4 | 8): void {
  const b = Buffer.alloc(size);
  if (size === 8) b.writeDoubleLE(v);
  else b.writeFloatLE(v);
  w.raw(b);
}

function writeSpecial(w: Writer, s: string, v: unknown): void {
  switch (s) {
    case 'Time':
    case 'MicroTime': {
      const t = typeof v === 'string' ? parseTime(v) : undefined;
      if (!t) return; // the zero time: an empty message
      w.tag(1, 0);
      w.varint(t.seconds);
      w.tag(2, 0);
      w.varint(s === 'MicroTime' ? Math.floor(t.nanos / 1000) * 1000 : 0);
      return;
    }
    case 'Duration':
      w.tag(1, 0);
      w.varint64(BigInt.asUintN(64, typeof v === 'string' ? (parseDuration(v) ?? 0n) : BigInt(Math.trunc(num(v)))));
      return;
    case 'Quantity':
      w.tag(1, 2);
      w.string(v === undefined || v === null ? '0' : String(v));
      return;
    case 'IntOrString': {
      const isStr = typeof v === 'string';
      w.tag(1, 0);
      w.varint(isStr ? 1 : 0);
      w.tag(2, 0);
      w.varint(isStr ? 0 : Math.trunc(num(v)));
      w.tag(3, 2);
      w.string(isStr ? v : '');
      return;
    }
    default:
      // RawExtension and FieldsV1: the raw JSON.
      if (v === undefined || v === null) return;
      w.tag(1, 2);
      w.string(JSON.stringify(v));
  }
}

/** A message-valued field or element: tag, then the content between fork and join. */
function writeMessage(w: Writer, n: number, t: WireType, v: unknown): void {
  w.tag(n, 2);
  const mark = w.fork();
  if (t.k === 'struct') writeStruct(w, isObj(v) ? v : {}, mustStruct(t.name));
  else if (t.k === 'special') writeSpecial(w, t.s, v);
  else if (t.k === 'wrapper' && Array.isArray(v)) for (const x of v) writeElement(w, 1, t.of, x);
  w.join(mark);
}

function writeElement(w: Writer, n: number, t: WireType, v: unknown): void {
  if (t.k === 'scalar') writeScalar(w, n, t.s, v ?? (t.s === 'bytes' ? '' : v));
  else if (t.k === 'struct' || t.k === 'special' || t.k === 'wrapper') writeMessage(w, n, t, v);
}

function writeField(w: Writer, f: WireField, v: unknown): void {
  const t = f.type;
  const n = f.num;
  switch (t.k) {
    case 'scalar':
      if (f.ptr && (v === undefined || v === null)) return;
      writeScalar(w, n, t.s, v);
      return;
    case 'struct':
    case 'special':
      if (f.ptr && (t.k === 'struct' ? !isObj(v) : v === undefined || v === null)) return;
      writeMessage(w, n, t, v);
      return;
    case 'wrapper':
      if (Array.isArray(v)) writeMessage(w, n, t, v);
      return;
    case 'slice':
      if (Array.isArray(v)) for (const x of v) writeElement(w, n, t.of, x);
      return;
    case 'map': {
      if (!isObj(v)) return;
      for (const key of Object.keys(v).sort()) {
        const x = v[key];
        w.tag(n, 2);
        const mark = w.fork();
        w.tag(1, 2);
        w.string(key);
        if (t.of.k === 'scalar') {
          if (!(t.of.s === 'bytes' && (x === undefined || x === null))) writeScalar(w, 2, t.of.s, x);
        } else writeMessage(w, 2, t.of, x);
        w.join(mark);
      }
    }
  }
}

function writeStruct(w: Writer, obj: Obj, st: WireStruct): void {
  for (const f of st.protoOrder) writeField(w, f, f.inline ? obj : obj[f.json]);
}

/** The message of `obj` as struct `st`. */
export function encodeMessage(obj: unknown, st: WireStruct): Buffer {
  const w = new Writer();
  writeStruct(w, isObj(obj) ? obj : {}, st);
  return w.finish();
}

function writeEnvelope(w: Writer, apiVersion: string, kind: string, raw: (w: Writer) => void): void {
  w.raw(MAGIC);
  w.tag(1, 2);
  const tm = w.fork();
  w.tag(1, 2);
  w.string(apiVersion);
  w.tag(2, 2);
  w.string(kind);
  w.join(tm);
  w.tag(2, 2);
  const mark = w.fork();
  raw(w);
  w.join(mark);
  // contentEncoding and contentType: empty, and written (non-pointer strings).
  w.tag(3, 2);
  w.string('');
  w.tag(4, 2);
  w.string('');
}

/** `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding: "", contentType: ""}. */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const w = new Writer(raw.length + 64);
  writeEnvelope(w, apiVersion, kind, (x) => x.raw(raw));
  return w.finish();
}

/** The enveloped protobuf of an object of a kind the tables know (by its apiVersion and kind); undefined otherwise. */
export function encodeObject(obj: { apiVersion?: unknown; kind?: unknown; [field: string]: unknown }): Buffer | undefined {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const st = kind ? kindStruct(apiVersion, kind) : undefined;
  if (!st) return undefined;
  const w = new Writer(4096);
  writeEnvelope(w, apiVersion, kind, (x) => writeStruct(x, obj as Obj, st));
  return w.finish();
}

/**
 * One frame of a protobuf watch: a 4-byte big-endian length, then a meta/v1
 * WatchEvent whose object (a RawExtension) holds the enveloped object. The
 * event itself has no `k8s\0` envelope: watch streams use the raw protobuf
 * serializer (apimachinery pkg/runtime/serializer codec_factory.go,
 * StreamSerializer = protobuf.NewRawSerializer; streaming framer).
 */
export function encodeWatchEvent(type: string, object: Uint8Array): Buffer {
  const w = new Writer(object.length + 64);
  for (let i = 0; i < 4; i++) w.byte(0);
  w.tag(1, 2);
  w.string(type);
  w.tag(2, 2);
  const m = w.fork();
  w.tag(1, 2);
  w.bytes(object);
  w.join(m);
  const out = w.finish();
  out.writeUInt32BE(out.length - 4, 0);
  return out;
}
