/**
 * UDP for the userspace proxy, as upstream's userspace proxier relayed it:
 * a socket on the Service's cluster IP and port; each client address gets a
 * session with an endpoint chosen when it first speaks, its datagrams sent
 * on from a socket of the session's own and the endpoint's replies sent back
 * from the Service's address. A session idle for `idleMs` is closed, so the
 * next datagram of that client may go to another endpoint.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { Backend } from './proxier.js';

interface Session {
  upstream: Socket;
  timer: NodeJS.Timeout;
}

export class UdpRelay {
  private socket: Socket | undefined;
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly pick: (clientIP: string) => Backend | undefined,
    private readonly idleMs = 30_000,
  ) {}

  listen(host: string, port: number): Promise<void> {
    const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    this.socket = s;
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.bind(port, host, () => {
        s.removeListener('error', reject);
        s.on('error', () => undefined);
        s.on('message', (msg, from) => this.forward(msg, from.address, from.port));
        resolve();
      });
    });
  }

  private forward(msg: Buffer, address: string, port: number): void {
    const key = `${address}:${port}`;
    let session = this.sessions.get(key);
    if (!session) {
      const b = this.pick(address);
      if (!b) return;
      const upstream = createSocket(b.ip.includes(':') ? 'udp6' : 'udp4');
      upstream.on('error', () => this.end(key));
      upstream.on('message', (reply) => {
        this.touch(key);
        this.socket?.send(reply, port, address);
      });
      upstream.connect(b.port, b.ip);
      session = { upstream, timer: setTimeout(() => this.end(key), this.idleMs) };
      this.sessions.set(key, session);
      const s = session;
      upstream.once('connect', () => s.upstream.send(msg));
      return;
    }
    this.touch(key);
    try {
      session.upstream.send(msg);
    } catch {
      // not connected yet: the first datagram is still on its way; a client retries
    }
  }

  private touch(key: string): void {
    const s = this.sessions.get(key);
    if (s) s.timer.refresh();
  }

  private end(key: string): void {
    const s = this.sessions.get(key);
    if (!s) return;
    this.sessions.delete(key);
    clearTimeout(s.timer);
    try {
      s.upstream.close();
    } catch {
      // already closed
    }
  }

  close(): void {
    for (const k of [...this.sessions.keys()]) this.end(k);
    try {
      this.socket?.close();
    } catch {
      // already closed
    }
  }
}
