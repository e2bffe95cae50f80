/**
 * The scrape loop (metrics-server pkg/scraper and pkg/server/server.go tick):
 * every resolution, each known node's kubelet is asked for /metrics/resource
 * at its InternalIP and status.daemonEndpoints.kubeletEndpoint.Port (10250
 * when unset), at most `concurrency` at a time, each bounded by a timeout
 * (0.9 × resolution upstream). What came back is decoded into one batch and
 * stored at once; a node that failed is logged with its reason and left out
 * of the batch (so the store forgets it, as upstream).
 *
 * Cycles never overlap: the next starts one resolution after the previous
 * started, or at once if it took longer. Kubelets are reached over HTTPS with
 * the client certificate; without a CA their serving certificate is not
 * verified (--kubelet-insecure-tls). `scheme: 'http'` reaches kubelets that
 * serve plain HTTP (hollow kubelets without TLS).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import type { KubeObject } from '@kubeling/api';
import { decodeResourceMetrics, type MetricsBatch } from './decode.js';
import type { MetricsStorage } from './storage.js';

export interface KubeletClientOptions {
  scheme?: 'https' | 'http';
  /** Client certificate and key (PEM) presented to kubelets. */
  cert?: string | Buffer | undefined;
  key?: string | Buffer | undefined;
  /** CA bundle that signed the kubelets' serving certificates; without it they are not verified. */
  ca?: string | Buffer | undefined;
  insecureSkipVerify?: boolean;
}

export interface ScraperOptions {
  nodes: () => KubeObject[];
  storage: MetricsStorage;
  resolutionMs: number;
  /** Per-node request timeout (0.9 × resolution when left out). */
  timeoutMs?: number;
  concurrency?: number;
  kubelet: KubeletClientOptions;
  log: Logger;
  /** Largest body accepted from a kubelet. */
  maxBytes?: number;
}

/** The figures of one scrape cycle. */
export interface CycleResult {
  nodes: number;
  succeeded: number;
  failed: number;
  startedMs: number;
  durationMs: number;
}

interface NodeStatusView {
  addresses?: { type?: string; address?: string }[];
  daemonEndpoints?: { kubeletEndpoint?: { Port?: number } };
}

/** Where a node's kubelet listens: its InternalIP and the port it reported. */
export function kubeletAddress(node: KubeObject): { host: string; port: number } | undefined {
  const st = (node.status ?? {}) as NodeStatusView;
  const ip = st.addresses?.find((a) => a.type === 'InternalIP' && a.address)?.address;
  if (!ip) return undefined;
  const port = st.daemonEndpoints?.kubeletEndpoint?.Port || 10250;
  return { host: ip, port };
}

export class Scraper {
  private readonly agent: HttpAgent | HttpsAgent;
  private readonly https: boolean;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private current: Promise<CycleResult> | undefined;
  /** When the last cycle started (ms since the epoch); 0 before the first. */
  lastCycleStartMs = 0;
  lastCycle: CycleResult | undefined;

  constructor(private readonly o: ScraperOptions) {
    this.https = (o.kubelet.scheme ?? 'https') === 'https';
    const concurrency = o.concurrency ?? 20;
    const k = o.kubelet;
    this.agent = this.https
      ? new HttpsAgent({
          keepAlive: true,
          maxSockets: concurrency,
          ...(k.cert ? { cert: k.cert } : {}),
          ...(k.key ? { key: k.key } : {}),
          ...(k.ca ? { ca: k.ca } : {}),
          rejectUnauthorized: !!k.ca && !k.insecureSkipVerify,
        })
      : new HttpAgent({ keepAlive: true, maxSockets: concurrency });
  }

  /** Starts the loop: a first cycle at once, then one per resolution. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop();
  }

  private loop(): void {
    if (!this.running) return;
    const started = Date.now();
    this.current = this.cycle();
    void this.current.then(() => {
      if (!this.running) return;
      this.timer = setTimeout(() => this.loop(), Math.max(0, started + this.o.resolutionMs - Date.now()));
    });
  }

  /** Stops the loop and waits for a cycle in flight; closes the kubelet connections. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.current?.catch(() => undefined);
    this.agent.destroy();
  }

  /** One cycle: scrapes every node, stores the batch. Never throws. */
  async cycle(): Promise<CycleResult> {
    const startedMs = Date.now();
    this.lastCycleStartMs = startedMs;
    const t0 = performance.now();
    const nodes = this.o.nodes();
    const batch: MetricsBatch = { nodes: new Map(), pods: new Map() };
    let next = 0;
    let succeeded = 0;
    const worker = async () => {
      while (next < nodes.length) {
        const node = nodes[next++]!;
        const name = node.metadata.name ?? '';
        try {
          const requestTime = Date.now();
          const text = await this.fetch(node);
          decodeResourceMetrics(text, requestTime, name, batch);
          succeeded++;
        } catch (e) {
          this.o.log.warn({ node: name, err: (e as Error).message }, 'failed to scrape node');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 20, nodes.length) }, worker));
    this.o.storage.store(batch);
    const result = { nodes: nodes.length, succeeded, failed: nodes.length - succeeded, startedMs, durationMs: performance.now() - t0 };
    this.lastCycle = result;
    this.o.log.debug(result, 'scrape cycle done');
    return result;
  }

  /** GET /metrics/resource of one node's kubelet. */
  private fetch(node: KubeObject): Promise<string> {
    const addr = kubeletAddress(node);
    if (!addr) return Promise.reject(new Error('node has no InternalIP address'));
    const timeoutMs = this.o.timeoutMs ?? this.o.resolutionMs * 0.9;
    const maxBytes = this.o.maxBytes ?? 10 * 1024 * 1024;
    const send = this.https ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        {
          agent: this.agent,
          host: addr.host,
          port: addr.port,
          path: '/metrics/resource',
          method: 'GET',
          headers: { accept: 'text/plain', 'user-agent': 'kubeling-metrics-server' },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) req.destroy(new Error(`response larger than ${maxBytes} bytes`));
            else chunks.push(c);
          });
          res.on('end', () => {
            clearTimeout(timer);
            if (res.statusCode !== 200) reject(new Error(`request failed, status: ${JSON.stringify(`${res.statusCode} ${res.statusMessage ?? ''}`.trim())}`));
            else resolve(Buffer.concat(chunks).toString('utf8'));
          });
          res.on('error', (e) => {
            clearTimeout(timer);
            reject(e);
          });
        },
      );
      const timer = setTimeout(() => req.destroy(new Error(`request timed out after ${Math.round(timeoutMs)} ms`)), timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end();
    });
  }
}
