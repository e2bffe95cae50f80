/**
 * For tests: kubeling-dns on a loopback port, its zone read from informers of
 * the given client and other names forwarded to a stub upstream that knows
 * `upstreamNames`. Closing it stops the server, the upstream and the informers.
 */
import pino from 'pino';
import { InformerFactory, type RestClient } from '@kubeling/client';
import { DnsServer } from './server.js';
import { informerSource } from './source.js';
import { startStubResolver } from './stub-resolver.js';
import { Zone } from './zone.js';

export interface ZoneServer {
  /** `127.0.0.1:<port>`. */
  address: string;
  port: number;
  server: DnsServer;
  close(): Promise<void>;
}

export async function startZoneServer(client: RestClient, upstreamNames: Record<string, string>): Promise<ZoneServer> {
  const informers = new InformerFactory(client);
  const { source, synced } = informerSource(informers);
  informers.start();
  await synced();
  const upstream = await startStubResolver(upstreamNames);
  const server = new DnsServer({
    zone: new Zone(source, { domain: 'cluster.local', ttl: 30 }),
    host: '127.0.0.1',
    port: 0,
    upstreams: [upstream.address],
    log: pino({ level: 'silent' }),
  });
  const { port } = await server.start();
  return {
    address: `127.0.0.1:${port}`,
    port,
    server,
    close: async () => {
      await server.close();
      upstream.close();
      informers.stop();
    },
  };
}
