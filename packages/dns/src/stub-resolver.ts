/**
 * A stub upstream resolver on loopback for tests: it answers A queries for the
 * names it is given and NXDOMAIN for any other name, over UDP.
 */
import { createSocket } from 'node:dgram';
import * as packet from 'dns-packet';

export interface StubResolver {
  /** `127.0.0.1:<port>`, as the DNS server's upstreams are written. */
  address: string;
  close(): void;
}

export async function startStubResolver(names: Record<string, string>): Promise<StubResolver> {
  const s = createSocket('udp4');
  s.on('message', (m, r) => {
    let q: packet.DecodedPacket;
    try {
      q = packet.decode(m);
    } catch {
      return;
    }
    const question = q.questions?.[0];
    const name = question?.name ?? '';
    const ip = names[name];
    const answers: packet.Answer[] = ip && question?.type === 'A' ? [{ name, type: 'A', ttl: 60, data: ip }] : [];
    // NXDOMAIN (3) for a name it does not know.
    const flags = packet.RECURSION_AVAILABLE | (ip ? 0 : 3);
    s.send(packet.encode({ type: 'response', id: q.id, flags, questions: q.questions ?? [], answers }), r.port, r.address);
  });
  await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', () => resolve()));
  return { address: `127.0.0.1:${s.address().port}`, close: () => s.close() };
}
