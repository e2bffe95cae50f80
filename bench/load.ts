/**
 * What the request-rate benchmarks share: a closed loop of `count` operations
 * with `inflight` of them outstanding (the figures: per second, p50, p99), and
 * a keep-alive HTTP request that answers the status code and body.
 */
import { type Agent, request as httpRequest } from 'node:http';

export interface Result {
  perSecond: number;
  p50: number;
  p99: number;
  seconds: number;
}

export async function run(count: number, inflight: number, op: (i: number) => Promise<void>): Promise<Result> {
  const lat: number[] = [];
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const t = performance.now();
      await op(i);
      lat.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  const seconds = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!;
  return { perSecond: count / seconds, p50: q(0.5), p99: q(0.99), seconds };
}

export function send(agent: Agent, base: URL, method: string, path: string, body?: string): Promise<{ code: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        path,
        method,
        headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const fmt = (r: Result) =>
  `${r.perSecond.toFixed(0).padStart(6)} /s   p50 ${r.p50.toFixed(1).padStart(6)} ms   p99 ${r.p99.toFixed(1).padStart(6)} ms   (${r.seconds.toFixed(1)} s)`;
