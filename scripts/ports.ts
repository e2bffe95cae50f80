/**
 * Ports for the processes `npm run up` starts: each port is handed out once, and
 * held (a listening socket of ours) until the process that will bind it is about
 * to start, so neither another member of the same cluster nor another program
 * can be given it in between.
 */
import { createServer, type Server } from 'node:net';

function listen(port: number, host: string): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen({ port, host, exclusive: true }, () => resolve(srv));
  });
}

export class PortReservations {
  private readonly held = new Map<number, Server>();
  private readonly given = new Set<number>();

  constructor(private readonly host = '127.0.0.1') {}

  /** The first port from `preferred` on that is free and not handed out yet; held until `release`. */
  async take(preferred: number, span = 100): Promise<number> {
    for (let p = preferred; p < preferred + span && p < 65536; p++) {
      if (this.given.has(p)) continue;
      const srv = await listen(p, this.host);
      if (!srv) continue;
      this.held.set(p, srv);
      this.given.add(p);
      return p;
    }
    throw new Error(`no free port in ${preferred}..${preferred + span - 1}`);
  }

  /** Lets go of ports right before the process that binds them starts. */
  async release(...ports: number[]): Promise<void> {
    await Promise.all(
      ports.map((p) => {
        const srv = this.held.get(p);
        this.held.delete(p);
        return srv ? new Promise<void>((r) => srv.close(() => r())) : undefined;
      }),
    );
  }

  /** Lets go of every port still held (on failure or at the end). */
  async releaseAll(): Promise<void> {
    await this.release(...this.held.keys());
  }
}
