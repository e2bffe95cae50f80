/**
 * Port forwarding over SPDY (portforward.k8s.io), both ends of it:
 *
 * - the server side (kubelet pkg/kubelet/cri/streaming/portforward/httpstream.go):
 *   the client opens, per forwarded connection, an error stream and a data
 *   stream with the same `requestID` and `port` headers; once both are there
 *   the pod's port is dialled and joined to the data stream; a failure is
 *   written as text on the error stream, and both streams end when the
 *   connection does (after a grace second for the other direction, as
 *   containerd's forwarder waits);
 * - the client side, as client-go's tools/portforward opens those streams.
 *
 * Plus what the HTTP hops need to know: the SPDY/3.1 upgrade headers and the
 * `SPDY/3.1+` WebSocket subprotocols kubectl 1.30+ tunnels SPDY through
 * (client-go tools/portforward/tunneling_dialer.go).
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { RST_STATUS } from './spdy.js';
import { SpdyConnection, type SpdyStream } from './spdy-connection.js';

export const PORT_FORWARD_PROTOCOL_V1 = 'portforward.k8s.io';
export const SPDY_31 = 'SPDY/3.1';
/** The prefix kubectl puts on SPDY protocols offered as WebSocket subprotocols. */
export const SPDY_TUNNEL_PREFIX = 'SPDY/3.1+';
export const HEADER_STREAM_PROTOCOL = 'x-stream-protocol-version';
export const STREAM_TYPE_ERROR = 'error';
export const STREAM_TYPE_DATA = 'data';

/** How long the server waits for the second stream of a pair (upstream's streamCreationTimeout default). */
const STREAM_CREATION_TIMEOUT_MS = 30_000;
/** After one direction of a forwarded connection ends, how long the other may go on. */
const OTHER_DIRECTION_GRACE_MS = 1_000;

/** True when the request asks for a SPDY/3.1 upgrade (any method: kubectl POSTs it). */
export function isSpdyUpgrade(headers: IncomingHttpHeaders): boolean {
  return /\bspdy\/3\.1\b/i.test(String(headers.upgrade ?? '')) && /\bupgrade\b/i.test(String(headers.connection ?? ''));
}

/** The SPDY protocols tunneled through the WebSocket subprotocols offered (apiserver streamtunnel.go). */
export function spdyTunnelProtocols(headers: IncomingHttpHeaders): string[] {
  return String(headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.startsWith(SPDY_TUNNEL_PREFIX) && p.endsWith('.k8s.io'))
    .map((p) => p.slice(SPDY_TUNNEL_PREFIX.length));
}

/** The protocols a client lists in X-Stream-Protocol-Version (repeated or comma-separated). */
export function offeredStreamProtocols(headers: IncomingHttpHeaders): string[] {
  const v = headers[HEADER_STREAM_PROTOCOL];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v])
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean);
}

export interface PortForwardServerOptions {
  /** What messages call the pod (upstream: the sandbox id) and its uid (upstream: empty from the CRI streaming server). */
  pod: string;
  uid: string;
  /** Connects to the pod's port; rejects with the reason it could not. */
  dial: (port: number) => Promise<Duplex>;
  streamCreationTimeoutMs?: number;
  /** Told about each forwarded connection's end (undefined: no error). */
  onDone?: (port: number, error?: string) => void;
}

interface Pair {
  id: string;
  error?: SpdyStream;
  data?: SpdyStream;
  timer?: NodeJS.Timeout;
}

/** The reason a new stream is refused, with upstream's messages (httpStreamReceived). */
function invalidStream(s: SpdyStream): string | undefined {
  const port = s.header('port');
  if (!port) return '"port" header is required';
  if (!/^\d+$/.test(port) || Number(port) > 65535) return `unable to parse "${port}" as a port`;
  if (Number(port) < 1) return `port "${port}" must be > 0`;
  const type = s.header('streamtype');
  if (!type) return '"streamType" header is required';
  if (type !== STREAM_TYPE_ERROR && type !== STREAM_TYPE_DATA) return `invalid stream type "${type}"`;
  return undefined;
}

/** Serves port forwarding on a SPDY session the server side of which is `conn`. */
export function servePortForward(conn: SpdyConnection, o: PortForwardServerOptions): void {
  const pairs = new Map<string, Pair>();
  const printError = (p: Pair, msg: string) => {
    if (p.error?.writable) p.error.write(msg);
  };
  conn.on('stream', (s) => {
    if (invalidStream(s)) return s.reset(RST_STATUS.CANCEL);
    s.reply();
    const type = s.header('streamtype')!;
    // Clients before request ids paired streams by id: the error stream's id, the data stream's id minus 2.
    const id = s.header('requestid') ?? String(type === STREAM_TYPE_ERROR ? s.id : s.id - 2);
    let p = pairs.get(id);
    if (!p) {
      const np: Pair = { id };
      np.timer = setTimeout(() => {
        pairs.delete(id);
        printError(np, `timed out waiting for streams of request ${id}`);
        np.error?.end();
        np.data?.end();
      }, o.streamCreationTimeoutMs ?? STREAM_CREATION_TIMEOUT_MS);
      pairs.set(id, np);
      p = np;
    }
    if (type === STREAM_TYPE_ERROR) {
      // Nothing is read from the error stream; what the client sends there is drained.
      s.resume();
      if (p.error) return printError(p, `error processing stream for request ${id}: error stream already assigned`);
      p.error = s;
    } else {
      if (p.data) return printError(p, `error processing stream for request ${id}: data stream already assigned`);
      p.data = s;
    }
    if (p.error && p.data) {
      clearTimeout(p.timer);
      pairs.delete(id);
      void forward(p.data, p.error, o);
    }
  });
  conn.on('close', () => {
    for (const p of pairs.values()) clearTimeout(p.timer);
    pairs.clear();
  });
}

async function forward(data: SpdyStream, error: SpdyStream, o: PortForwardServerOptions): Promise<void> {
  const port = Number(data.header('port'));
  const fail = (why: string) => `error forwarding port ${port} to pod ${o.pod}, uid ${o.uid}: ${why}`;
  let sock: Duplex;
  try {
    sock = await o.dial(port);
  } catch (e) {
    const msg = fail((e as Error).message);
    if (!error.destroyed) error.end(msg);
    if (!data.destroyed) data.end();
    o.onDone?.(port, msg);
    return;
  }
  let firstError: string | undefined;
  let finished = false;
  let grace: NodeJS.Timeout | undefined;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(grace);
    sock.destroy();
    if (!data.destroyed) data.end();
    if (!error.destroyed) error.end(firstError ? fail(firstError) : undefined);
    o.onDone?.(port, firstError && fail(firstError));
  };
  const oneDirectionDone = () => {
    if (finished) return;
    if (grace) return finish();
    grace = setTimeout(finish, OTHER_DIRECTION_GRACE_MS);
  };
  data.pipe(sock);
  sock.pipe(data);
  data.on('end', oneDirectionDone);
  sock.on('end', oneDirectionDone);
  sock.on('error', (e: Error) => {
    firstError ??= e.message;
    finish();
  });
  // The client reset the stream or the session ended: nothing more to carry.
  data.on('close', finish);
  error.on('close', finish);
}

/** Dials `host:port` over TCP, with Go's wording for the usual failures (for the error stream). */
export function dialTCP(host: string, port: number, timeoutMs = 30_000): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const family = host.includes(':') ? 'tcp6' : 'tcp4';
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const sock = connect({ host, port, timeout: timeoutMs });
    const onError = (e: NodeJS.ErrnoException) => {
      sock.destroy();
      const why = e.code === 'ECONNREFUSED' ? 'connect: connection refused' : e.code === 'ETIMEDOUT' ? 'i/o timeout' : e.message;
      reject(new Error(`dial ${family} ${where}: ${why}`));
    };
    sock.once('error', onError);
    sock.once('timeout', () => onError(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    sock.once('connect', () => {
      sock.off('error', onError);
      sock.setTimeout(0);
      resolve(sock);
    });
  });
}

/**
 * The client side of one forwarded connection, as client-go opens it: the
 * error stream (closed for writing at once), then the data stream. `error`
 * resolves with what the server wrote on the error stream ('' when nothing).
 */
export async function openPortForward(conn: SpdyConnection, port: number, requestId: number): Promise<{ data: SpdyStream; error: Promise<string> }> {
  const base = { port: [String(port)], requestid: [String(requestId)] };
  const errStream = await conn.createStream({ ...base, streamtype: [STREAM_TYPE_ERROR] });
  errStream.end();
  const error = new Promise<string>((resolve) => {
    let text = '';
    errStream.on('data', (d: Buffer) => (text += d.toString()));
    errStream.on('end', () => resolve(text));
    errStream.on('close', () => resolve(text));
  });
  const data = await conn.createStream({ ...base, streamtype: [STREAM_TYPE_DATA] });
  return { data, error };
}

/** How a port-forward client reaches the apiserver. */
export interface PortForwardDialOptions {
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  /** Without a CA the server's certificate is not checked. */
  timeoutMs?: number;
}

/** A refused upgrade: the HTTP status and the body the server answered with. */
export class UpgradeRefused extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`unable to upgrade connection: ${body.trim() || code}`);
  }
}

export const tlsOf = (o: PortForwardDialOptions) => ({
  ...(o.ca ? { ca: o.ca } : { rejectUnauthorized: false }),
  ...(o.cert ? { cert: o.cert, key: o.key } : {}),
});

export const readBody = (res: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let b = '';
    res.on('data', (d: Buffer) => (b += d.toString()));
    res.on('end', () => resolve(b));
    res.on('error', () => resolve(b));
  });

/** The same over a plain SPDY/3.1 upgrade (a POST), as kubectl before 1.31 dials it. */
export function dialPortForwardSpdy(url: string, o: PortForwardDialOptions = {}): Promise<SpdyConnection> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const opts = {
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method: 'POST',
      headers: {
        connection: 'Upgrade',
        upgrade: SPDY_31,
        [HEADER_STREAM_PROTOCOL]: PORT_FORWARD_PROTOCOL_V1,
        // No body, and said so (Node would otherwise send a POST chunked, whose end the upgraded stream swallows).
        'content-length': '0',
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      },
      timeout: o.timeoutMs ?? 30_000,
      // A connection to upgrade is never one from a pool (a refused upgrade closes it).
      agent: false as const,
    };
    const req = u.protocol === 'https:' ? httpsRequest({ ...opts, ...tlsOf(o) }) : httpRequest(opts);
    req.on('upgrade', (_res, socket, head) => {
      socket.setTimeout(0);
      resolve(new SpdyConnection(socket, { server: false, head }));
    });
    req.on('response', (res) => void readBody(res).then((b) => reject(new UpgradeRefused(res.statusCode ?? 0, b))));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
