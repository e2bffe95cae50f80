/**
 * The GET of HTTP probes and lifecycle hooks: over HTTPS the pod's
 * certificate is not checked (upstream's prober and hook handler skip
 * verification: a pod serves what certificate it likes). Resolves with the
 * status code; redirects are not followed; the body is read and dropped.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export function httpGetStatus(url: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const opts = { method: 'GET', headers, timeout: timeoutMs, agent: false as const };
    const onResponse = (res: import('node:http').IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    };
    const req = u.protocol === 'https:' ? httpsRequest(u, { ...opts, rejectUnauthorized: false }, onResponse) : httpRequest(u, opts, onResponse);
    req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('error', reject);
    req.end();
  });
}
