/**
 * SPDY tunneled through a WebSocket, as kubectl 1.31+ port-forwards
 * (client-go tools/portforward/tunneling_connection.go, apiserver
 * util/proxy/streamtunnel.go): the WebSocket's subprotocol is
 * `SPDY/3.1+portforward.k8s.io`, and each binary message carries a piece of
 * the SPDY byte stream, either way.
 *
 * That subprotocol has a '/' in it, which RFC 6455 does not allow in a
 * subprotocol token and the `ws` package therefore refuses on both sides (its
 * server answers 400, and kubectl quietly falls back to SPDY). So the server
 * side hands `ws` a request whose offered protocol is a plain token and
 * answers with the real one; the client side frames its messages itself
 * (masked binary frames, pings answered, a close frame at the end).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { SpdyConnection } from './spdy-connection.js';
import { PORT_FORWARD_PROTOCOL_V1, readBody, SPDY_TUNNEL_PREFIX, tlsOf, UpgradeRefused, type PortForwardDialOptions } from './spdy-portforward.js';

/** Above this many bytes waiting in the WebSocket, the SPDY side is paused. */
const TUNNEL_HIGH_WATER = 1 << 20;
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/**
 * Completes the client's WebSocket upgrade with the subprotocol
 * `SPDY/3.1+<protocol>` and carries bytes between its binary messages and
 * `backend`, a connection already upgraded to SPDY/3.1. Either side ending
 * ends both.
 */
export function tunnelSpdyOverWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, protocol: string, backend: { socket: Duplex; head: Buffer }): void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: () => SPDY_TUNNEL_PREFIX + protocol });
  // A token `ws` accepts; the answer names the real protocol (see above).
  req.headers['sec-websocket-protocol'] = 'portforward.k8s.io';
  const up = backend.socket;
  wss.handleUpgrade(req, socket, head, (ws) => {
    let closed = false;
    const end = () => {
      if (closed) return;
      closed = true;
      up.destroy();
      if (ws.readyState === ws.OPEN) ws.close(1000);
      else ws.terminate();
    };
    const toClient = (d: Buffer) => {
      if (ws.readyState !== ws.OPEN) return;
      ws.send(d, { binary: true }, () => {
        if (ws.bufferedAmount < TUNNEL_HIGH_WATER && up.isPaused()) up.resume();
      });
      if (ws.bufferedAmount >= TUNNEL_HIGH_WATER) up.pause();
    };
    if (backend.head.length) toClient(backend.head);
    up.on('data', toClient);
    ws.on('message', (d: Buffer, isBinary) => {
      // kubectl's tunnel sends binary messages only; anything else breaks the SPDY stream.
      if (!isBinary) return end();
      if (!up.write(d)) {
        ws.pause();
        up.once('drain', () => ws.resume());
      }
    });
    up.on('end', end).on('close', end).on('error', end);
    ws.on('close', end).on('error', end);
  });
}

/** A client WebSocket as a byte stream: writes go out as masked binary messages, messages read as bytes. */
class WebSocketBytes extends Duplex {
  private buf: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private closeSent = false;
  private ended = false;

  constructor(
    private readonly sock: Duplex,
    head: Buffer,
  ) {
    super();
    sock.on('data', (d: Buffer) => this.onBytes(d));
    sock.on('end', () => this.eof());
    sock.on('close', () => this.destroy());
    sock.on('error', () => this.destroy());
    if (head.length) this.onBytes(head);
  }

  private frame(opcode: number, payload: Buffer): Buffer {
    const n = payload.length;
    const hdr = Buffer.alloc(n < 126 ? 2 : n < 65536 ? 4 : 10);
    hdr[0] = 0x80 | opcode;
    if (n < 126) hdr[1] = 0x80 | n;
    else if (n < 65536) {
      hdr[1] = 0x80 | 126;
      hdr.writeUInt16BE(n, 2);
    } else {
      hdr[1] = 0x80 | 127;
      hdr.writeBigUInt64BE(BigInt(n), 2);
    }
    const mask = randomBytes(4);
    const body = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) body[i] = payload[i]! ^ mask[i & 3]!;
    return Buffer.concat([hdr, mask, body]);
  }

  override _write(chunk: Buffer, _e: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.sock.write(this.frame(2, chunk), cb);
  }

  override _final(cb: (e?: Error | null) => void): void {
    if (this.closeSent) return cb();
    this.closeSent = true;
    this.sock.write(this.frame(8, Buffer.from([0x03, 0xe8])), () => cb());
  }

  override _read(): void {
    this.sock.resume();
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    this.sock.destroy();
    cb(err);
  }

  private eof(): void {
    if (this.ended) return;
    this.ended = true;
    this.push(null);
  }

  private onBytes(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      const b = this.buf;
      if (b.length < 2) return;
      let len = b[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        off = 10;
      }
      const mask = b[1]! & 0x80 ? b.subarray(off, off + 4) : undefined;
      if (mask) off += 4;
      if (b.length < off + len) return;
      const payload = Buffer.from(b.subarray(off, off + len));
      if (mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
      this.buf = b.subarray(off + len);
      const fin = (b[0]! & 0x80) !== 0;
      switch (b[0]! & 0x0f) {
        case 0:
        case 2:
          this.fragments.push(payload);
          if (fin && !this.push(Buffer.concat(this.fragments.splice(0)))) this.sock.pause();
          break;
        case 8:
          if (!this.closeSent) {
            this.closeSent = true;
            this.sock.write(this.frame(8, payload.subarray(0, 2)));
          }
          this.eof();
          this.sock.end();
          return;
        case 9:
          this.sock.write(this.frame(10, payload));
          break;
        case 10:
          break;
        default:
          // Text messages have no place in the tunnel.
          this.destroy();
          return;
      }
    }
  }
}

/**
 * The client side of pods/<name>/portforward as kubectl 1.31+ dials it: a
 * WebSocket offering `SPDY/3.1+portforward.k8s.io`, a SPDY session inside.
 * `url` is the subresource's https:// (or http://) URL.
 */
export function dialPortForwardTunnel(url: string, o: PortForwardDialOptions = {}): Promise<SpdyConnection> {
  const u = new URL(url);
  const key = randomBytes(16).toString('base64');
  const protocol = SPDY_TUNNEL_PREFIX + PORT_FORWARD_PROTOCOL_V1;
  return new Promise((resolve, reject) => {
    const opts = {
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method: 'GET',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': key,
        'sec-websocket-protocol': protocol,
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      },
      timeout: o.timeoutMs ?? 30_000,
      // A connection to upgrade is never one from a pool (a refused upgrade closes it).
      agent: false as const,
    };
    const req = u.protocol === 'https:' ? httpsRequest({ ...opts, ...tlsOf(o) }) : httpRequest(opts);
    req.on('upgrade', (res, socket, head) => {
      socket.setTimeout(0);
      const accept = createHash('sha1')
        .update(key + WS_GUID)
        .digest('base64');
      if (res.headers['sec-websocket-accept'] !== accept || res.headers['sec-websocket-protocol'] !== protocol) {
        socket.destroy();
        return reject(new Error(`bad WebSocket handshake (protocol ${JSON.stringify(res.headers['sec-websocket-protocol'])})`));
      }
      resolve(new SpdyConnection(new WebSocketBytes(socket, head), { server: false }));
    });
    req.on('response', (res) => void readBody(res).then((b) => reject(new UpgradeRefused(res.statusCode ?? 0, b))));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
