/**
 * What every component process shares: /healthz, /livez, /readyz and /metrics
 * on its own port, and a clean stop on SIGTERM/SIGINT (forced after 10 s).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';

export interface MetricsSource {
  metrics(): Promise<string>;
  contentType: string;
}

/**
 * Serves health and metrics on `bindAddress:port` (0 for any free port): over
 * HTTPS with `tls` (a component's secure port, as upstream), plain HTTP without.
 */
export function serveHealth(metrics: MetricsSource, port: number, bindAddress = '127.0.0.1', tls?: { certPem: string; keyPem: string }): Promise<Server> {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/healthz' || req.url === '/livez' || req.url === '/readyz') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    else if (req.url === '/metrics') void metrics.metrics().then((m) => res.writeHead(200, { 'content-type': metrics.contentType }).end(m));
    else res.writeHead(404).end();
  };
  const server = tls ? createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, handler) : createServer(handler);
  return new Promise((resolve) => server.listen(port, bindAddress, () => resolve(server)));
}

/** Runs `stop` on SIGTERM or SIGINT, then exits (1 if it takes over 10 s). */
export function stopOnSignals(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    const t = setTimeout(() => process.exit(1), 10_000);
    t.unref();
    void stop()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
