/**
 * SPDY/3.1 framing, the subset Kubernetes' port-forward speaks
 * (k8s.io/apimachinery/pkg/util/httpstream/spdy over moby/spdystream, which
 * follows draft-mbelshe-httpbis-spdy-00): data frames, and the control frames
 * SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS and
 * WINDOW_UPDATE. Name/value header blocks are zlib-compressed with the
 * dictionary SPDY/3 mandates, in one compression context per direction for
 * the whole connection, each block ending in a sync flush.
 *
 * What this module does not do: flow control (spdystream neither sends nor
 * honours WINDOW_UPDATE, so neither do we), server push, or SPDY/2. The
 * session on top (streams, replies, pings) is spdy-connection.ts.
 */
import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';

export const SPDY_VERSION = 3;
/** The largest payload of a data frame (24-bit length). */
export const MAX_DATA_LENGTH = 0xffffff;

export const FRAME_TYPES = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes. */
export const RST_STATUS = {
  PROTOCOL_ERROR: 1,
  INVALID_STREAM: 2,
  REFUSED_STREAM: 3,
  UNSUPPORTED_VERSION: 4,
  CANCEL: 5,
  INTERNAL_ERROR: 6,
} as const;

/** Header names are lower case; a name may carry several values (NUL-separated on the wire). */
export type SpdyHeaders = Record<string, string[]>;

export type SpdyFrame =
  | { type: 'DATA'; streamId: number; fin: boolean; data: Buffer }
  | { type: 'SYN_STREAM'; streamId: number; associatedTo: number; priority: number; fin: boolean; unidirectional: boolean; headers: SpdyHeaders }
  | { type: 'SYN_REPLY'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'RST_STREAM'; streamId: number; status: number }
  | { type: 'SETTINGS'; clear: boolean; entries: { flags: number; id: number; value: number }[] }
  | { type: 'PING'; id: number }
  | { type: 'GOAWAY'; lastGoodStreamId: number; status: number }
  | { type: 'HEADERS'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'WINDOW_UPDATE'; streamId: number; delta: number }
  | { type: 'UNKNOWN'; frameType: number; flags: number; payload: Buffer };

/** A protocol violation by the peer: the session answers with GOAWAY and ends. */
export class SpdyProtocolError extends Error {
  override name = 'SpdyProtocolError';
}

// The SPDY/3 header compression dictionary (draft-mbelshe-httpbis-spdy-00,
// 2.6.10.1): these words, each prefixed by its 32-bit length, then the
// status lines, dates and media types as one run of text.
const DICTIONARY_WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

export const HEADER_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.map((w) => {
    const b = Buffer.alloc(4 + w.length);
    b.writeUInt32BE(w.length, 0);
    b.write(w, 4, 'latin1');
    return b;
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** A name/value header block, uncompressed. */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const entries = Object.entries(headers);
  const count = Buffer.alloc(4);
  count.writeUInt32BE(entries.length, 0);
  parts.push(count);
  for (const [name, values] of entries) {
    for (const s of [name.toLowerCase(), values.join('\0')]) {
      const b = Buffer.from(s, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length, 0);
      parts.push(len, b);
    }
  }
  return Buffer.concat(parts);
}

/** Parses an uncompressed header block; a truncated one, or a name twice, is a protocol error. */
export function decodeHeaderBlock(buf: Buffer): SpdyHeaders {
  const out: SpdyHeaders = {};
  let off = 0;
  const u32 = () => {
    if (off + 4 > buf.length) throw new SpdyProtocolError('truncated header block');
    const v = buf.readUInt32BE(off);
    off += 4;
    return v;
  };
  const str = () => {
    const n = u32();
    if (off + n > buf.length) throw new SpdyProtocolError('truncated header block');
    const s = buf.toString('utf8', off, off + n);
    off += n;
    return s;
  };
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = str().toLowerCase();
    const value = str();
    if (Object.hasOwn(out, name)) throw new SpdyProtocolError(`header ${name} given twice`);
    out[name] = value.split('\0');
  }
  return out;
}

/** One direction's zlib context: each call handles one header block and ends in a sync flush. */
class ZlibContext {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly z: Deflate | Inflate,
    private readonly limit: number,
  ) {
    // Errors reach the caller through process(); nothing may go unhandled.
    z.on('error', () => undefined);
  }

  process(input: Buffer): Promise<Buffer> {
    const run = () =>
      new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const onData = (d: Buffer) => {
          size += d.length;
          if (size <= this.limit) chunks.push(d);
        };
        const onError = (e: Error) => {
          this.z.off('data', onData);
          reject(new SpdyProtocolError(`header block: ${e.message}`));
        };
        this.z.on('data', onData);
        this.z.once('error', onError);
        if (input.length) this.z.write(input);
        // Output pushed while the flush completes may still be on its way to 'data': it is collected a turn later.
        this.z.flush(constants.Z_SYNC_FLUSH, () =>
          setImmediate(() => {
            this.z.off('data', onData);
            this.z.off('error', onError);
            if (size > this.limit) reject(new SpdyProtocolError(`header block larger than ${this.limit} bytes`));
            else resolve(Buffer.concat(chunks));
          }),
        );
      });
    const p = this.tail.then(run, run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  close(): void {
    this.z.destroy();
  }
}

function controlHeader(type: number, flags: number, length: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  b.writeUInt16BE(type, 2);
  b.writeUInt32BE(((flags & 0xff) << 24) | (length & 0xffffff), 4);
  return b;
}

const u32 = (...vs: number[]) => {
  const b = Buffer.alloc(4 * vs.length);
  vs.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
};

/** Encodes frames for one connection (its header compression context is kept between frames). */
export class FrameEncoder {
  private readonly zlib = new ZlibContext(createDeflate({ level: 9, dictionary: HEADER_DICTIONARY }), Number.MAX_SAFE_INTEGER);

  /** Data frames need no context: they are encoded at once. */
  static data(streamId: number, data: Buffer, fin: boolean): Buffer {
    if (data.length > MAX_DATA_LENGTH) throw new RangeError('data frame too large');
    const h = Buffer.alloc(8);
    h.writeUInt32BE(streamId & 0x7fffffff, 0);
    h.writeUInt32BE(((fin ? FLAG_FIN : 0) << 24) | data.length, 4);
    return Buffer.concat([h, data]);
  }

  async encode(f: SpdyFrame): Promise<Buffer> {
    switch (f.type) {
      case 'DATA':
        return FrameEncoder.data(f.streamId, f.data, f.fin);
      case 'SYN_STREAM': {
        const block = await this.zlib.process(encodeHeaderBlock(f.headers));
        const flags = (f.fin ? FLAG_FIN : 0) | (f.unidirectional ? FLAG_UNIDIRECTIONAL : 0);
        const fixed = Buffer.alloc(10);
        fixed.writeUInt32BE(f.streamId & 0x7fffffff, 0);
        fixed.writeUInt32BE(f.associatedTo & 0x7fffffff, 4);
        fixed.writeUInt8((f.priority & 0x7) << 5, 8);
        return Buffer.concat([controlHeader(FRAME_TYPES.SYN_STREAM, flags, 10 + block.length), fixed, block]);
      }
      case 'SYN_REPLY':
      case 'HEADERS': {
        const block = await this.zlib.process(encodeHeaderBlock(f.headers));
        const type = f.type === 'SYN_REPLY' ? FRAME_TYPES.SYN_REPLY : FRAME_TYPES.HEADERS;
        return Buffer.concat([controlHeader(type, f.fin ? FLAG_FIN : 0, 4 + block.length), u32(f.streamId & 0x7fffffff), block]);
      }
      case 'RST_STREAM':
        return Buffer.concat([controlHeader(FRAME_TYPES.RST_STREAM, 0, 8), u32(f.streamId & 0x7fffffff, f.status)]);
      case 'SETTINGS': {
        const body = f.entries.map((e) => u32(((e.flags & 0xff) << 24) | (e.id & 0xffffff), e.value));
        return Buffer.concat([controlHeader(FRAME_TYPES.SETTINGS, f.clear ? 1 : 0, 4 + 8 * f.entries.length), u32(f.entries.length), ...body]);
      }
      case 'PING':
        return Buffer.concat([controlHeader(FRAME_TYPES.PING, 0, 4), u32(f.id)]);
      case 'GOAWAY':
        return Buffer.concat([controlHeader(FRAME_TYPES.GOAWAY, 0, 8), u32(f.lastGoodStreamId & 0x7fffffff, f.status)]);
      case 'WINDOW_UPDATE':
        return Buffer.concat([controlHeader(FRAME_TYPES.WINDOW_UPDATE, 0, 8), u32(f.streamId & 0x7fffffff, f.delta & 0x7fffffff)]);
      case 'UNKNOWN':
        return Buffer.concat([controlHeader(f.frameType, f.flags, f.payload.length), f.payload]);
    }
  }

  close(): void {
    this.zlib.close();
  }
}

/** A frame as cut from the byte stream, before its header block is decompressed. */
export interface RawFrame {
  control: boolean;
  /** Control frames: the version and type; data frames: the stream. */
  version: number;
  type: number;
  streamId: number;
  flags: number;
  payload: Buffer;
}

/** The first whole frame in `buf` and its size on the wire, or undefined while it is incomplete. */
export function splitFrame(buf: Buffer): { frame: RawFrame; size: number } | undefined {
  if (buf.length < 8) return undefined;
  const first = buf.readUInt32BE(0);
  const word = buf.readUInt32BE(4);
  const flags = word >>> 24;
  const length = word & 0xffffff;
  if (buf.length < 8 + length) return undefined;
  const payload = buf.subarray(8, 8 + length);
  const control = (first & 0x80000000) !== 0;
  const frame: RawFrame = control
    ? { control, version: (first >>> 16) & 0x7fff, type: first & 0xffff, streamId: 0, flags, payload }
    : { control, version: SPDY_VERSION, type: 0, streamId: first & 0x7fffffff, flags, payload };
  return { frame, size: 8 + length };
}

/** Decodes frames for one connection (its header decompression context is kept between frames). */
export class FrameDecoder {
  private readonly zlib: ZlibContext;

  /** `maxHeaderBytes` bounds one decompressed header block. */
  constructor(maxHeaderBytes = 1 << 20) {
    this.zlib = new ZlibContext(createInflate({ dictionary: HEADER_DICTIONARY }), maxHeaderBytes);
  }

  async decode(raw: RawFrame): Promise<SpdyFrame> {
    const p = raw.payload;
    const need = (n: number) => {
      if (p.length < n) throw new SpdyProtocolError(`control frame ${raw.type} too short`);
    };
    if (!raw.control) {
      if (raw.streamId === 0) throw new SpdyProtocolError('data frame on stream 0');
      return { type: 'DATA', streamId: raw.streamId, fin: (raw.flags & FLAG_FIN) !== 0, data: p };
    }
    if (raw.version !== SPDY_VERSION) throw new SpdyProtocolError(`unsupported SPDY version ${raw.version}`);
    const fin = (raw.flags & FLAG_FIN) !== 0;
    switch (raw.type) {
      case FRAME_TYPES.SYN_STREAM: {
        need(10);
        const headers = decodeHeaderBlock(await this.zlib.process(p.subarray(10)));
        const streamId = p.readUInt32BE(0) & 0x7fffffff;
        if (streamId === 0) throw new SpdyProtocolError('SYN_STREAM on stream 0');
        return {
          type: 'SYN_STREAM',
          streamId,
          associatedTo: p.readUInt32BE(4) & 0x7fffffff,
          priority: p.readUInt8(8) >>> 5,
          fin,
          unidirectional: (raw.flags & FLAG_UNIDIRECTIONAL) !== 0,
          headers,
        };
      }
      case FRAME_TYPES.SYN_REPLY:
      case FRAME_TYPES.HEADERS: {
        need(4);
        const headers = decodeHeaderBlock(await this.zlib.process(p.subarray(4)));
        const streamId = p.readUInt32BE(0) & 0x7fffffff;
        return raw.type === FRAME_TYPES.SYN_REPLY ? { type: 'SYN_REPLY', streamId, fin, headers } : { type: 'HEADERS', streamId, fin, headers };
      }
      case FRAME_TYPES.RST_STREAM:
        need(8);
        return { type: 'RST_STREAM', streamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case FRAME_TYPES.SETTINGS: {
        need(4);
        const n = p.readUInt32BE(0);
        need(4 + 8 * n);
        const entries = Array.from({ length: n }, (_, i) => {
          const w = p.readUInt32BE(4 + 8 * i);
          return { flags: w >>> 24, id: w & 0xffffff, value: p.readUInt32BE(8 + 8 * i) };
        });
        return { type: 'SETTINGS', clear: (raw.flags & 1) !== 0, entries };
      }
      case FRAME_TYPES.PING:
        need(4);
        return { type: 'PING', id: p.readUInt32BE(0) };
      case FRAME_TYPES.GOAWAY:
        need(8);
        return { type: 'GOAWAY', lastGoodStreamId: p.readUInt32BE(0) & 0x7fffffff, status: p.readUInt32BE(4) };
      case FRAME_TYPES.WINDOW_UPDATE:
        need(8);
        return { type: 'WINDOW_UPDATE', streamId: p.readUInt32BE(0) & 0x7fffffff, delta: p.readUInt32BE(4) & 0x7fffffff };
      default:
        return { type: 'UNKNOWN', frameType: raw.type, flags: raw.flags, payload: p };
    }
  }

  close(): void {
    this.zlib.close();
  }
}
