/**
 * A SPDY/3.1 session over any byte stream (a socket after an HTTP upgrade, or
 * a WebSocket tunnel), as moby/spdystream runs one for Kubernetes'
 * httpstream: streams opened by either side (the client's ids odd, the
 * server's even), each a Node Duplex whose writes become DATA frames and whose
 * end is a FIN; a stream the peer opens is answered with SYN_REPLY or refused
 * with RST_STREAM; PINGs from the peer are echoed; GOAWAY ends the session.
 *
 * Guarantees: frames leave in the order they were queued (header blocks share
 * one compression context, so order matters); a slow transport holds writers
 * back (a stream's write completes once its frame is handed to a transport that
 * is not full); a stream whose reader falls behind pauses the transport. Streams
 * never emit 'error': a reset by the peer is a 'reset' event, then 'close'.
 */
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import { FrameDecoder, FrameEncoder, MAX_DATA_LENGTH, RST_STATUS, splitFrame, type SpdyFrame, type SpdyHeaders } from './spdy.js';

/** How long createStream waits for the peer's SYN_REPLY (spdystream's default). */
const REPLY_TIMEOUT_MS = 30_000;

export interface SpdyConnectionOptions {
  /** The server opens even-numbered streams and accepts odd ones. */
  server: boolean;
  /** Bytes already read past the upgrade response (they start the session). */
  head?: Buffer;
}

/** One SPDY stream. `headers` are the ones it was opened with. */
export class SpdyStream extends Duplex {
  replied = false;
  private localFin = false;
  private remoteFin = false;
  private wasReset = false;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super({ allowHalfOpen: true });
    // A write after the end is a caller's slip, not a reason to bring the process down.
    this.on('error', () => undefined);
  }

  /** The first value of one of the headers it was opened with. */
  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()]?.[0];
  }

  /** Accepts a stream the peer opened. */
  reply(headers: SpdyHeaders = {}): void {
    if (this.replied) return;
    this.replied = true;
    void this.conn.send({ type: 'SYN_REPLY', streamId: this.id, fin: false, headers });
  }

  /** Ends the stream at once both ways (RST_STREAM). */
  reset(status: number = RST_STATUS.CANCEL): void {
    if (this.wasReset) return;
    this.wasReset = true;
    void this.conn.send({ type: 'RST_STREAM', streamId: this.id, status });
    this.destroy();
  }

  /** @internal A DATA frame from the peer. */
  onData(data: Buffer, fin: boolean): void {
    if (data.length && !this.remoteFin && !this.push(data)) this.conn.pauseReading();
    if (fin) this.onRemoteFin();
  }

  /** @internal */
  onRemoteFin(): void {
    if (this.remoteFin) return;
    this.remoteFin = true;
    this.push(null);
  }

  /** @internal The peer reset the stream (or the session ended). */
  onReset(status: number): void {
    if (this.destroyed) return;
    this.wasReset = true;
    this.emit('reset', status);
    this.destroy();
  }

  override _read(): void {
    this.conn.resumeReading();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    if (this.localFin || this.wasReset) return cb();
    const sends: Promise<void>[] = [];
    for (let off = 0; off < chunk.length; off += MAX_DATA_LENGTH) {
      sends.push(this.conn.send({ type: 'DATA', streamId: this.id, fin: false, data: chunk.subarray(off, off + MAX_DATA_LENGTH) }));
    }
    Promise.all(sends).then(() => cb(), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    if (this.localFin || this.wasReset) return cb();
    this.localFin = true;
    this.conn.send({ type: 'DATA', streamId: this.id, fin: true, data: Buffer.alloc(0) }).then(() => cb(), cb);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    // Closed without a FIN each way and without a reset: the peer is told to forget it.
    if (!this.wasReset && !(this.localFin && this.remoteFin)) {
      this.wasReset = true;
      void this.conn.send({ type: 'RST_STREAM', streamId: this.id, status: RST_STATUS.CANCEL });
    }
    this.conn.forget(this.id);
    cb(err);
  }
}

export class SpdyConnection extends EventEmitter {
  private readonly streams = new Map<number, SpdyStream>();
  private readonly encoder = new FrameEncoder();
  private readonly decoder = new FrameDecoder();
  private readonly pending = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private readonly pings = new Map<number, () => void>();
  private nextStreamId: number;
  private nextPingId: number;
  private lastRemoteId = 0;
  private buf: Buffer = Buffer.alloc(0);
  private reading = false;
  private out: Promise<void> = Promise.resolve();
  private closed = false;
  private goneAway = false;

  constructor(
    readonly transport: Duplex,
    private readonly opts: SpdyConnectionOptions,
  ) {
    super();
    this.nextStreamId = opts.server ? 2 : 1;
    this.nextPingId = opts.server ? 2 : 1;
    transport.on('data', (d: Buffer) => this.onBytes(d));
    transport.on('end', () => this.destroy());
    transport.on('close', () => this.destroy());
    transport.on('error', () => this.destroy());
    if (opts.head?.length) this.onBytes(opts.head);
  }

  override on(event: 'stream', fn: (s: SpdyStream) => void): this;
  override on(event: 'close', fn: () => void): this;
  override on(event: 'goaway', fn: (status: number) => void): this;
  override on(event: 'protocolError', fn: (e: Error) => void): this;
  override on(event: string, fn: (...args: never[]) => void): this {
    return super.on(event, fn as (...args: unknown[]) => void);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Queues a frame; resolves once it is on a transport with room (or the session is gone). */
  send(f: SpdyFrame): Promise<void> {
    const run = async () => {
      if (this.closed) return;
      const bytes = f.type === 'DATA' ? FrameEncoder.data(f.streamId, f.data, f.fin) : await this.encoder.encode(f);
      if (this.closed) return;
      if (!this.transport.write(bytes)) await this.drained();
    };
    const p = this.out.then(run).catch(() => this.destroy());
    this.out = p;
    return p;
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.transport.off('drain', done);
        this.transport.off('close', done);
        resolve();
      };
      this.transport.on('drain', done);
      this.transport.on('close', done);
    });
  }

  /** Opens a stream and waits for the peer's SYN_REPLY (rejects on RST_STREAM, the session's end or a timeout). */
  async createStream(headers: SpdyHeaders, fin = false): Promise<SpdyStream> {
    if (this.closed || this.goneAway) throw new Error('the SPDY session is closed');
    const id = this.nextStreamId;
    this.nextStreamId += 2;
    const s = new SpdyStream(this, id, headers);
    this.streams.set(id, s);
    const replied = new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error('timed out waiting for the stream to be accepted'));
        s.destroy();
      }, REPLY_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      });
    });
    void this.send({ type: 'SYN_STREAM', streamId: id, associatedTo: 0, priority: 0, fin, unidirectional: false, headers });
    if (fin) s.end();
    await replied;
    return s;
  }

  /** Round trip of a PING, in milliseconds. */
  ping(timeoutMs = 10_000): Promise<number> {
    const id = this.nextPingId;
    this.nextPingId = this.nextPingId > 0x7ffffffd ? this.nextPingId - 0x7ffffffe : this.nextPingId + 2;
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.pings.delete(id);
        reject(new Error('ping timed out'));
      }, timeoutMs);
      this.pings.set(id, () => {
        clearTimeout(t);
        resolve(performance.now() - t0);
      });
      void this.send({ type: 'PING', id });
    });
  }

  /** Says GOAWAY, then ends the transport once what is queued is written. */
  close(): void {
    if (this.closed) return;
    if (!this.goneAway) {
      this.goneAway = true;
      void this.send({ type: 'GOAWAY', lastGoodStreamId: this.lastRemoteId, status: 0 });
    }
    void this.out.then(() => this.transport.end());
  }

  /** Ends everything at once: every stream is reset locally, the transport destroyed. */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [, p] of this.pending) p.reject(new Error('the SPDY session ended'));
    this.pending.clear();
    for (const s of [...this.streams.values()]) s.onReset(RST_STATUS.CANCEL);
    this.streams.clear();
    this.transport.destroy();
    this.encoder.close();
    this.decoder.close();
    this.emit('close');
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
  }

  /** @internal */
  pauseReading(): void {
    this.transport.pause();
  }

  /** @internal */
  resumeReading(): void {
    if (!this.closed) this.transport.resume();
  }

  private onBytes(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    void this.pump();
  }

  /** Handles whole frames in order, one at a time (a header block waits for the frames before it). */
  private async pump(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      for (;;) {
        if (this.closed) return;
        const cut = splitFrame(this.buf);
        if (!cut) return;
        this.buf = this.buf.subarray(cut.size);
        this.handle(await this.decoder.decode(cut.frame));
      }
    } catch (e) {
      this.emit('protocolError', e as Error);
      if (!this.goneAway) {
        this.goneAway = true;
        void this.send({ type: 'GOAWAY', lastGoodStreamId: this.lastRemoteId, status: 1 });
      }
      void this.out.then(() => this.destroy());
    } finally {
      this.reading = false;
    }
  }

  private handle(f: SpdyFrame): void {
    switch (f.type) {
      case 'SYN_STREAM': {
        // The peer's ids have the peer's parity and only grow.
        const peerParity = this.opts.server ? 1 : 0;
        if (f.streamId % 2 !== peerParity || f.streamId <= this.lastRemoteId) {
          void this.send({ type: 'RST_STREAM', streamId: f.streamId, status: RST_STATUS.PROTOCOL_ERROR });
          return;
        }
        this.lastRemoteId = f.streamId;
        if (this.goneAway) {
          void this.send({ type: 'RST_STREAM', streamId: f.streamId, status: RST_STATUS.REFUSED_STREAM });
          return;
        }
        const s = new SpdyStream(this, f.streamId, f.headers);
        this.streams.set(f.streamId, s);
        if (f.fin || f.unidirectional) s.onRemoteFin();
        if (this.listenerCount('stream') === 0) s.reset(RST_STATUS.REFUSED_STREAM);
        else this.emit('stream', s);
        return;
      }
      case 'SYN_REPLY': {
        const s = this.streams.get(f.streamId);
        if (!s || s.replied) return;
        s.replied = true;
        this.pending.get(f.streamId)?.resolve();
        this.pending.delete(f.streamId);
        if (f.fin) s.onRemoteFin();
        return;
      }
      case 'DATA': {
        const s = this.streams.get(f.streamId);
        // Data for a stream that is gone, or not yet accepted, is dropped (as spdystream does).
        if (!s?.replied) return;
        s.onData(f.data, f.fin);
        return;
      }
      case 'HEADERS': {
        const s = this.streams.get(f.streamId);
        if (s && f.fin) s.onRemoteFin();
        return;
      }
      case 'RST_STREAM': {
        const s = this.streams.get(f.streamId);
        if (!s) return;
        this.streams.delete(f.streamId);
        this.pending.get(f.streamId)?.reject(new Error(`stream reset by the peer (status ${f.status})`));
        this.pending.delete(f.streamId);
        s.onReset(f.status);
        return;
      }
      case 'PING': {
        const ours = this.opts.server ? 0 : 1;
        if (f.id % 2 !== ours) void this.send(f);
        else {
          this.pings.get(f.id)?.();
          this.pings.delete(f.id);
        }
        return;
      }
      case 'GOAWAY':
        this.goneAway = true;
        this.emit('goaway', f.status);
        this.destroy();
        return;
      default:
        // SETTINGS and WINDOW_UPDATE: no flow control here, as in spdystream.
        return;
    }
  }
}
