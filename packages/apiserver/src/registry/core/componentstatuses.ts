/**
 * core/v1 ComponentStatus (pkg/registry/core/componentstatus): nothing is
 * stored; each read probes the scheduler's and the controller-manager's
 * /healthz (over HTTPS without verifying the certificate, as upstream) and
 * each etcd server. Deprecated upstream since 1.19 but still served.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeObject, corev1 } from '@kubeling/api';
import { notFound } from '@kubeling/apimachinery';

export interface ComponentProbe {
  name: string;
  /** A health URL: 2xx/3xx is healthy, the body is the message. */
  url: string;
}

/** Where upstream looks: the components' default secure ports on loopback. */
export const DEFAULT_COMPONENT_PROBES: readonly ComponentProbe[] = [
  { name: 'scheduler', url: 'https://127.0.0.1:10259/healthz' },
  { name: 'controller-manager', url: 'https://127.0.0.1:10257/healthz' },
];

const PROBE_TIMEOUT_MS = 10_000;

interface ProbeResult {
  healthy: boolean;
  message: string;
  error: string;
}

/** GET the URL; never throws. The error reads like Go's net/http error (`Get "url": ...`). */
export function probe(url: string): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, { method: 'GET', rejectUnauthorized: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 64 * 1024) chunks.push(c);
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 400) resolve({ healthy: true, message: body, error: '' });
        else resolve({ healthy: false, message: body, error: `unhealthy http status code: ${code} (${res.statusMessage ?? ''})` });
      });
      res.on('error', (e) => resolve({ healthy: false, message: '', error: `Get "${url}": ${e.message}` }));
    });
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', (e) => resolve({ healthy: false, message: '', error: `Get "${url}": ${e.message}` }));
    req.end();
  });
}

type ComponentStatus = corev1.ComponentStatus & KubeObject;

function toStatus(name: string, r: ProbeResult): ComponentStatus {
  return {
    kind: 'ComponentStatus',
    apiVersion: 'v1',
    metadata: { name },
    conditions: [{ type: 'Healthy', status: r.healthy ? 'True' : 'False', message: r.message, error: r.error }],
  };
}

/** The probes of every component: the configured ones, then etcd-0, etcd-1, ... */
export function componentProbes(configured: readonly ComponentProbe[], etcdServers: readonly string[]): ComponentProbe[] {
  return [...configured, ...etcdServers.map((s, i) => ({ name: `etcd-${i}`, url: `${s.replace(/\/+$/, '')}/health` }))];
}

/** etcd's /health answers `{"health":"true",...}`; upstream reports a healthy server as `ok`. */
async function probeComponent(p: ComponentProbe): Promise<ProbeResult> {
  const r = await probe(p.url);
  if (!p.name.startsWith('etcd-') || !r.healthy) return r;
  try {
    const h = JSON.parse(r.message) as { health?: string; reason?: string };
    return h.health === 'true' ? { healthy: true, message: 'ok', error: '' } : { healthy: false, message: '', error: h.reason || 'etcd reports unhealthy' };
  } catch {
    return { healthy: false, message: '', error: `unexpected etcd health answer: ${r.message.slice(0, 200)}` };
  }
}

export async function listComponentStatuses(
  probes: readonly ComponentProbe[],
): Promise<{ apiVersion: 'v1'; kind: 'ComponentStatusList'; metadata: object; items: ComponentStatus[] }> {
  const results = await Promise.all(probes.map(probeComponent));
  return { apiVersion: 'v1', kind: 'ComponentStatusList', metadata: {}, items: probes.map((p, i) => toStatus(p.name, results[i]!)) };
}

export async function getComponentStatus(probes: readonly ComponentProbe[], name: string): Promise<ComponentStatus> {
  const p = probes.find((x) => x.name === name);
  if (!p) throw notFound({ group: '', resource: 'componentstatus' }, name);
  return toStatus(name, await probeComponent(p));
}
