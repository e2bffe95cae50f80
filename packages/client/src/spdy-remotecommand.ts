/**
 * exec and attach over SPDY/3.1, the server side, as client-go's SPDY
 * executor (remotecommand.NewSPDYExecutor) expects it of the kubelet
 * (upstream kubelet/cri/streaming/remotecommand/httpstream.go): the upgrade
 * negotiates one of v4/v3/v2.channel.k8s.io or channel.k8s.io; the client
 * opens a stream per stdio with a `streamtype` header (error, stdin, stdout,
 * stderr, resize); once every stream the request asked for is there, the
 * command runs; at its end the error stream carries the v4 Status (for v2
 * and v3, the failure's message only) and every stream ends.
 *
 * Here the command runs behind a WebSocket streaming URL (the runtime's, in
 * the v5 or v4 channel protocol), and the two are bridged: channel 1 and 2 to
 * the stdout and stderr streams, channel 3 (the Status) to the error stream,
 * the stdin stream to channel 0 (its end closes the channel under v5), the
 * resize stream to channel 4.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { SpdyConnection, type SpdyStream } from './spdy-connection.js';
import { HEADER_STREAM_PROTOCOL, offeredStreamProtocols, SPDY_31 } from './spdy-portforward.js';

/** The SPDY remotecommand protocols served, best first. */
export const SPDY_STREAM_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'] as const;

/** How long the server waits for the client's streams (upstream's streamCreationTimeout default). */
const STREAM_CREATION_TIMEOUT_MS = 30_000;

export interface SpdyRemoteCommandOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
  streamCreationTimeoutMs?: number;
}

/** Why an upgrade is not made: what to answer instead. */
export interface SpdyRefusal {
  code: number;
  message: string;
  headers?: Record<string, string>;
}

/** The protocol to answer with (upstream's httpstream.Handshake: the client's first the server serves), or why none. */
export function negotiateSpdyStreamProtocol(headers: IncomingHttpHeaders): string | SpdyRefusal {
  const offered = offeredStreamProtocols(headers);
  // Clients of Kubernetes 1.0 offered none: they speak the first protocol.
  if (!offered.length) return 'channel.k8s.io';
  const chosen = offered.find((p) => (SPDY_STREAM_PROTOCOLS as readonly string[]).includes(p));
  if (chosen) return chosen;
  return {
    code: 403,
    message: `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${SPDY_STREAM_PROTOCOLS.join(' ')}]`,
    headers: { 'X-Accepted-Stream-Protocol-Versions': SPDY_STREAM_PROTOCOLS.join(', ') },
  };
}

/** Opens the WebSocket session to the streaming URL; rejects with the server's answer when it refuses. */
function dialStreaming(target: string): Promise<WebSocket> {
  const ws = new WebSocket(target, ['v5.channel.k8s.io', 'v4.channel.k8s.io'], { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_q, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => reject(new Error(text.trim() || `the streaming server answered ${res.statusCode}`)));
    });
    ws.once('error', reject);
  });
}

/**
 * Upgrades `req` to SPDY and runs the session against the streaming URL
 * `target`. Resolves with the session, or with a refusal to answer instead
 * (nothing has been written to the socket then).
 */
export async function serveSpdyRemoteCommand(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  target: string,
  o: SpdyRemoteCommandOptions,
): Promise<SpdyConnection | SpdyRefusal> {
  const protocol = negotiateSpdyStreamProtocol(req.headers);
  if (typeof protocol !== 'string') return protocol;
  let ws: WebSocket;
  try {
    ws = await dialStreaming(target);
  } catch (e) {
    return { code: 500, message: (e as Error).message };
  }
  // What the command says before the client's streams are there waits for them.
  const early: Buffer[] = [];
  let onMessage = (d: Buffer) => void early.push(d);
  ws.on('message', (d: Buffer) => onMessage(d));
  let wsClosed = false;
  ws.once('close', () => (wsClosed = true));
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_31}\r\n${HEADER_STREAM_PROTOCOL}: ${protocol}\r\n\r\n`);
  const conn = new SpdyConnection(socket, { server: true, head });
  const v4 = protocol === 'v4.channel.k8s.io';
  const v1 = protocol === 'channel.k8s.io';
  // stderr goes over stdout with a tty; v1 has no error stream, v1 and v2 no resize stream.
  const wanted = new Set<string>([...(v1 ? [] : ['error']), ...(o.stdin ? ['stdin'] : []), ...(o.stdout ? ['stdout'] : [])]);
  if (o.stderr && !o.tty) wanted.add('stderr');
  if (o.tty && !v1 && protocol !== 'v2.channel.k8s.io') wanted.add('resize');
  const streams = new Map<string, SpdyStream>();
  const timer = setTimeout(() => {
    ws.terminate();
    const error = streams.get('error');
    if (error) error.end('timed out waiting for client to create streams', () => conn.close());
    else conn.close();
  }, o.streamCreationTimeoutMs ?? STREAM_CREATION_TIMEOUT_MS);
  conn.on('close', () => {
    clearTimeout(timer);
    ws.terminate();
  });
  conn.on('stream', (s) => {
    const type = s.header('streamtype') ?? '';
    if (!wanted.has(type) || streams.has(type)) return s.reset();
    s.reply();
    streams.set(type, s);
    if (type !== 'stdin' && type !== 'resize') s.resume();
    if (streams.size === wanted.size) {
      clearTimeout(timer);
      run();
    }
  });

  const run = () => {
    const out = streams.get('stdout');
    const err = streams.get('stderr');
    const errorStream = streams.get('error');
    let status = Buffer.alloc(0);
    onMessage = (d) => {
      const payload = d.subarray(1);
      if (d[0] === 1) out?.write(payload);
      else if (d[0] === 2) err?.write(payload);
      else if (d[0] === 3) status = Buffer.concat([status, payload]);
    };
    for (const d of early.splice(0)) onMessage(d);
    const send = (channel: number, data: Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([channel]), data]));
    };
    const stdin = streams.get('stdin');
    stdin?.on('data', (d: Buffer) => send(0, d));
    stdin?.on('end', () => {
      if (ws.protocol === 'v5.channel.k8s.io') send(255, Buffer.from([0]));
    });
    streams.get('resize')?.on('data', (d: Buffer) => send(4, d));
    const finish = () => {
      const ends: Promise<void>[] = [];
      const endStream = (s: SpdyStream | undefined, data?: Buffer) =>
        s && ends.push(new Promise<void>((resolve) => s.end(data?.length ? data : undefined, () => resolve())));
      endStream(out);
      endStream(err);
      endStream(errorStream, v4 ? status : failureMessage(status));
      void Promise.all(ends).then(() => conn.close());
    };
    if (wsClosed) finish();
    else ws.once('close', finish);
  };
  return conn;
}

/** For v2 and v3, whose error stream holds only a failure's message: the Status's message, nothing on success. */
function failureMessage(status: Buffer): Buffer {
  if (!status.length) return status;
  try {
    const s = JSON.parse(status.toString('utf8')) as { status?: string; message?: string };
    return s.status === 'Success' ? Buffer.alloc(0) : Buffer.from(s.message ?? 'error');
  } catch {
    return status;
  }
}
