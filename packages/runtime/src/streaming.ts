/**
 * The runtime's streaming server (upstream's pkg/kubelet/cri/streaming): CRI
 * Exec and Attach hand out a single-use URL with a random token, valid for a
 * minute; the kubelet bridges the client's WebSocket to it, and the command
 * runs (or the container's own stdio is joined) for that connection with its
 * streams on the remote command channels.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  CHANNEL_CLOSE,
  CHANNEL_ERROR,
  CHANNEL_STDERR,
  CHANNEL_STDIN,
  CHANNEL_STDOUT,
  STREAM_PROTOCOL_V5,
  exitStatus,
  negotiateProtocol,
} from '@kubeling/client/remotecommand';
import type { AttachRequest, ExecRequest } from '@kubeling/cri';

/** Runs one exec for a connection; resolves with the exit code. */
export interface ExecSession {
  stdin?: (data: Buffer) => void;
  endStdin?: () => void;
  onStdout(cb: (b: Buffer) => void): void;
  onStderr(cb: (b: Buffer) => void): void;
  /** Resolves with the exit code once the output is drained, or the message of a command that could not start. */
  exited: Promise<number | string>;
  kill(): void;
}

export type StreamRequest = { kind: 'exec'; req: ExecRequest } | { kind: 'attach'; req: AttachRequest };

export type ExecStarter = (r: StreamRequest) => ExecSession;

const TOKEN_TTL_MS = 60_000;

export class StreamingServer {
  private server: Server | undefined;
  private port = 0;
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (offered) => negotiateProtocol(offered) ?? false });
  private readonly pending = new Map<string, { r: StreamRequest; until: number }>();
  private readonly live = new Set<ExecSession>();

  constructor(private readonly start: ExecStarter) {}

  /** The URL for one exec or attach (the server starts on first use, on loopback). */
  async url(r: StreamRequest): Promise<string> {
    if (!this.server) await this.listen();
    const now = Date.now();
    for (const [t, p] of this.pending) if (p.until < now) this.pending.delete(t);
    const token = randomBytes(16).toString('base64url');
    this.pending.set(token, { r, until: now + TOKEN_TTL_MS });
    return `http://127.0.0.1:${this.port}/${r.kind}/${token}`;
  }

  private listen(): Promise<void> {
    const server = createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Upgrade request required');
    });
    server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    this.server = server;
    return new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        const a = server.address();
        this.port = typeof a === 'object' && a ? a.port : 0;
        resolve();
      }),
    );
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const refuse = (code: number, msg: string) => {
      socket.end(
        `HTTP/1.1 ${code} ${code === 404 ? 'Not Found' : 'Bad Request'}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(msg)}\r\nconnection: close\r\n\r\n${msg}`,
      );
    };
    const m = /^\/(exec|attach)\/([A-Za-z0-9_-]+)$/.exec(new URL(req.url ?? '/', 'http://runtime').pathname);
    const p = m ? this.pending.get(m[2]!) : undefined;
    if (!m || !p || p.r.kind !== m[1] || p.until < Date.now()) return refuse(404, 'session not found or expired');
    this.pending.delete(m[2]!);
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuse(400, 'only WebSocket upgrades are served');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim());
    if (!negotiateProtocol(offered))
      return refuse(400, `none of the offered protocols [${offered.join(', ')}] is served; use v5.channel.k8s.io or v4.channel.k8s.io`);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.run(ws, p.r));
  }

  private run(ws: WebSocket, r: StreamRequest): void {
    const req = r.req;
    let session: ExecSession;
    const send = (ch: number, b: Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([ch]), b]));
    };
    try {
      session = this.start(r);
    } catch (e) {
      send(CHANNEL_ERROR, Buffer.from(JSON.stringify({ metadata: {}, status: 'Failure', message: (e as Error).message, reason: 'InternalError' })));
      ws.close(1000);
      return;
    }
    this.live.add(session);
    const v5 = ws.protocol === STREAM_PROTOCOL_V5;
    if (req.stdout) session.onStdout((b) => send(CHANNEL_STDOUT, b));
    // A terminal has no separate stderr; it comes with stdout, as from a tty.
    if (req.stderr || req.tty) session.onStderr((b) => send(req.tty ? CHANNEL_STDOUT : CHANNEL_STDERR, b));
    ws.on('message', (data: Buffer, isBinary) => {
      if (!isBinary || data.length === 0) return;
      if (v5 && data[0] === CHANNEL_CLOSE) {
        if (data[1] === CHANNEL_STDIN) session.endStdin?.();
        return;
      }
      if (data[0] === CHANNEL_STDIN && req.stdin) session.stdin?.(data.subarray(1));
    });
    ws.on('close', () => session.kill());
    ws.on('error', () => session.kill());
    void session.exited.then((code) => {
      this.live.delete(session);
      // An attach ends in success, whatever the container's exit code (that is in the pod's status).
      const st =
        typeof code !== 'number'
          ? { metadata: {}, status: 'Failure', message: code, reason: 'InternalError' }
          : r.kind === 'exec'
            ? exitStatus(code, r.req.cmd)
            : exitStatus(0, []);
      send(CHANNEL_ERROR, Buffer.from(JSON.stringify(st)));
      if (ws.readyState === ws.OPEN) ws.close(1000);
    });
  }

  close(): void {
    for (const s of this.live) s.kill();
    this.live.clear();
    for (const c of this.wss.clients) c.terminate();
    this.server?.closeAllConnections();
    this.server?.close();
    this.server = undefined;
  }
}
