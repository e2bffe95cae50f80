/**
 * The DNS server: UDP and TCP on one address, each query answered from the
 * cluster zone or forwarded to the upstream resolvers (CoreDNS's `forward .
 * /etc/resolv.conf`). UDP answers larger than the client's buffer (512 bytes,
 * or what its EDNS OPT record says) are truncated with the TC bit, so the
 * client asks again over TCP. A malformed query is answered FORMERR when its
 * header can be read, and dropped otherwise; nothing a client sends stops the server.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, connect, type Server, type Socket } from 'node:net';
import * as packet from 'dns-packet';
import type { Logger } from 'pino';
import type { Zone, Record as ZoneRecord } from './zone.js';

export interface DnsServerOptions {
  zone: Zone;
  host: string;
  port: number;
  /** `ip:port` of the resolvers other names go to (none: SERVFAIL). */
  upstreams: string[];
  log: Logger;
  /** Milliseconds an upstream has to answer. */
  forwardTimeoutMs?: number;
}

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** The wire form of a zone record. */
function toAnswer(r: ZoneRecord): packet.Answer {
  return { name: r.name, type: r.type, class: 'IN', ttl: r.ttl, data: r.data } as packet.Answer;
}

/** A query's header fields kept in the reply: id, opcode and the RD bit. */
function replyFlags(query: packet.DecodedPacket, rcode: number, authoritative: boolean): number {
  let flags = (query.flags ?? 0) & 0x7900; // opcode and RD
  flags |= packet.RECURSION_AVAILABLE;
  if (authoritative) flags |= packet.AUTHORITATIVE_ANSWER;
  return flags | rcode;
}

export class DnsServer {
  private udp: UdpSocket | undefined;
  private tcp: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private next = 0;
  /** Queries answered, by how: for /metrics and tests. */
  readonly counts = { zone: 0, forwarded: 0, failed: 0 };

  constructor(private readonly o: DnsServerOptions) {}

  /**
   * Listens on UDP and TCP on one port. Asked for any port (0), the UDP one the
   * system picks may be taken on TCP: then another is tried, a few times.
   */
  async start(): Promise<{ host: string; port: number }> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.listen();
      } catch (e) {
        this.udp?.close();
        this.udp = undefined;
        if (this.o.port !== 0 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 9) throw e;
      }
    }
  }

  private async listen(): Promise<{ host: string; port: number }> {
    const udp = createSocket(this.o.host.includes(':') ? 'udp6' : 'udp4');
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(this.o.port, this.o.host, () => resolve());
    });
    udp.on('error', (e) => this.o.log.warn({ err: e.message }, 'udp socket error'));
    const port = udp.address().port;
    udp.on('message', (msg, rinfo) => {
      void this.handle(msg, 'udp')
        .then((out) => {
          if (out) udp.send(out, rinfo.port, rinfo.address);
        })
        .catch((e: Error) => this.o.log.warn({ err: e.message }, 'udp query failed'));
    });
    this.udp = udp;
    const tcp = createServer((c) => this.serveTcp(c));
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen({ host: this.o.host, port }, () => resolve());
    });
    this.tcp = tcp;
    return { host: this.o.host, port };
  }

  /** TCP: each message is prefixed by its two-byte length; a connection may carry several. */
  private serveTcp(c: Socket): void {
    this.sockets.add(c);
    c.setTimeout(10_000, () => c.destroy());
    let buf = Buffer.alloc(0);
    c.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const msg = buf.subarray(2, 2 + len);
        buf = buf.subarray(2 + len);
        void this.handle(msg, 'tcp')
          .then((out) => {
            if (!out || c.destroyed) return;
            const len2 = Buffer.alloc(2);
            len2.writeUInt16BE(out.length);
            c.write(Buffer.concat([len2, out]));
          })
          .catch(() => c.destroy());
      }
      if (buf.length > 65_537) c.destroy();
    });
    c.on('error', () => c.destroy());
    c.on('close', () => this.sockets.delete(c));
  }

  /** One query's reply, or undefined when it cannot be answered at all. */
  async handle(msg: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    let query: packet.DecodedPacket;
    try {
      query = packet.decode(msg);
    } catch {
      // Only the header can be trusted: FORMERR with the id, when there is one.
      if (msg.length < 12) return undefined;
      const out = Buffer.alloc(12);
      msg.copy(out, 0, 0, 2);
      out.writeUInt16BE(0x8000 | RCODE.FORMERR, 2);
      return out;
    }
    if (query.type !== 'query') return undefined;
    const q = query.questions?.[0];
    const opcode = ((query.flags ?? 0) >> 11) & 0xf;
    if (!q || (query.questions?.length ?? 0) !== 1 || opcode !== 0) {
      return packet.encode({
        type: 'response',
        id: query.id,
        flags: replyFlags(query, opcode !== 0 ? RCODE.NOTIMP : RCODE.FORMERR, false),
        questions: query.questions ?? [],
      });
    }
    let a: ReturnType<Zone['answer']>;
    try {
      a = this.o.zone.answer(q.name, q.type);
    } catch (e) {
      // A question the zone cannot answer is the server's failure, never its end.
      this.counts.failed++;
      this.o.log.warn({ name: q.name, type: q.type, err: (e as Error).message }, 'cannot answer');
      return packet.encode({ type: 'response', id: query.id, flags: replyFlags(query, RCODE.SERVFAIL, false), questions: [q] });
    }
    if (a.rcode === 'forward') return this.forward(msg, query, transport);
    this.counts.zone++;
    const res: packet.Packet = {
      type: 'response',
      id: query.id,
      flags: replyFlags(query, RCODE[a.rcode], true),
      questions: [q],
      answers: a.answers.map(toAnswer),
      authorities: a.authorities.map(toAnswer),
      additionals: a.additionals.map(toAnswer),
    };
    let out = packet.encode(res);
    if (transport === 'udp') {
      const opt = (query.additionals ?? []).find((r) => r.type === 'OPT') as { udpPayloadSize?: number } | undefined;
      const limit = Math.max(512, Math.min(opt?.udpPayloadSize ?? 512, 4096));
      if (out.length > limit) {
        out = packet.encode({ ...res, flags: (res.flags ?? 0) | packet.TRUNCATED_RESPONSE, answers: [], authorities: [], additionals: [] });
      }
    }
    return out;
  }

  /** Sends the query as it came to an upstream resolver over the same transport, and returns its reply. */
  private async forward(msg: Buffer, query: packet.DecodedPacket, transport: 'udp' | 'tcp'): Promise<Buffer> {
    const ups = this.o.upstreams;
    const fail = () => {
      this.counts.failed++;
      return packet.encode({ type: 'response', id: query.id, flags: replyFlags(query, RCODE.SERVFAIL, false), questions: query.questions ?? [] });
    };
    if (!ups.length) return fail();
    for (let i = 0; i < ups.length; i++) {
      const up = ups[(this.next + i) % ups.length]!;
      const at = up.lastIndexOf(':');
      const host = up.slice(0, at).replace(/^\[|\]$/g, '');
      const port = Number(up.slice(at + 1));
      try {
        const out = transport === 'udp' ? await this.udpExchange(msg, host, port) : await this.tcpExchange(msg, host, port);
        this.next = (this.next + i + 1) % ups.length;
        this.counts.forwarded++;
        return out;
      } catch (e) {
        this.o.log.debug({ upstream: up, err: (e as Error).message }, 'forward failed');
      }
    }
    return fail();
  }

  private udpExchange(msg: Buffer, host: string, port: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      const timer = setTimeout(() => done(new Error('timeout')), this.o.forwardTimeoutMs ?? 2000);
      const done = (err?: Error, out?: Buffer) => {
        clearTimeout(timer);
        s.close();
        if (err) reject(err);
        else resolve(out!);
      };
      s.on('error', (e) => done(e));
      s.on('message', (m) => {
        // Only the reply to this query's id.
        if (m.length >= 2 && m.readUInt16BE(0) === msg.readUInt16BE(0)) done(undefined, m);
      });
      s.send(msg, port, host);
    });
  }

  private tcpExchange(msg: Buffer, host: string, port: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const c = connect({ host, port });
      const timer = setTimeout(() => done(new Error('timeout')), this.o.forwardTimeoutMs ?? 2000);
      let buf = Buffer.alloc(0);
      const done = (err?: Error, out?: Buffer) => {
        clearTimeout(timer);
        c.destroy();
        if (err) reject(err);
        else resolve(out!);
      };
      c.on('error', (e) => done(e));
      c.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(msg.length);
        c.write(Buffer.concat([len, msg]));
      });
      c.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) done(undefined, buf.subarray(2, 2 + buf.readUInt16BE(0)));
      });
      c.on('end', () => done(new Error('closed')));
    });
  }

  async close(): Promise<void> {
    this.udp?.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r()));
  }
}
