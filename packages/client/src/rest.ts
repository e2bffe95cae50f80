/**
 * The REST client every component and the CLI share: keep-alive connections,
 * client-side QPS/burst rate limiting, retries on 429 and 5xx with exponential
 * backoff (honouring `Retry-After`), `Status` errors surfaced as `StatusError`,
 * and watch streams read line by line.
 *
 * Retries: reads always; writes only on 429 (the server refused before doing
 * anything). A watch is never retried here: reflectors own that.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { StatusError, failure, internalError, type Status } from '@kubeling/apimachinery';
import WebSocket from 'ws';
import type { ClientConfig } from './kubeconfig.js';

export interface RequestOptions {
  method?: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Milliseconds before the request is abandoned (not for watches). */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** A token bucket: `qps` tokens per second, at most `burst` saved up. */
export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private queue: Promise<void> = Promise.resolve();
  /** Total time callers spent waiting for tokens (ms). */
  waitedMs = 0;

  constructor(
    readonly qps: number,
    readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    const next = this.queue.then(async () => {
      const now = Date.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      const wait = ((1 - this.tokens) / this.qps) * 1000;
      this.waitedMs += wait;
      await new Promise((r) => setTimeout(r, wait));
      this.tokens = 0;
      this.last = Date.now();
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}

export interface RestClientOptions {
  qps?: number;
  burst?: number;
  maxRetries?: number;
  userAgent?: string;
}

export class RestClient {
  private readonly agent: HttpAgent | HttpsAgent;
  private readonly base: URL;
  readonly limiter: TokenBucket;
  private readonly maxRetries: number;
  private readonly userAgent: string;
  /** Requests sent (including retries), for figures and tests. */
  requestCount = 0;

  constructor(
    readonly config: ClientConfig,
    opts: RestClientOptions = {},
  ) {
    this.base = new URL(config.server);
    const tls = this.base.protocol === 'https:';
    this.agent = tls
      ? new HttpsAgent({
          keepAlive: true,
          maxSockets: 64,
          ...(config.ca ? { ca: config.ca } : {}),
          ...(config.cert ? { cert: config.cert } : {}),
          ...(config.key ? { key: config.key } : {}),
          rejectUnauthorized: !config.insecureSkipTLSVerify,
          ...(config.tlsServerName ? { servername: config.tlsServerName } : {}),
        })
      : new HttpAgent({ keepAlive: true, maxSockets: 64 });
    this.limiter = new TokenBucket(opts.qps ?? 50, opts.burst ?? 100);
    this.maxRetries = opts.maxRetries ?? 5;
    this.userAgent = opts.userAgent ?? 'kubeling/v0.1.0';
  }

  private headers(o: RequestOptions, body: Buffer | undefined): Record<string, string | string[]> {
    const h: Record<string, string | string[]> = { 'user-agent': this.userAgent, accept: o.accept ?? 'application/json', ...(o.headers ?? {}) };
    if (body) {
      h['content-type'] = o.contentType ?? 'application/json';
      h['content-length'] = String(body.length);
    }
    // Credentials only go over TLS, as client-go does.
    if (this.base.protocol === 'https:') {
      if (this.config.token) h.authorization = `Bearer ${this.config.token}`;
      else if (this.config.username) h.authorization = `Basic ${Buffer.from(`${this.config.username}:${this.config.password ?? ''}`).toString('base64')}`;
    }
    if (this.config.impersonate) {
      h['impersonate-user'] = this.config.impersonate.user;
      // One header line per group, as client-go sends them.
      if (this.config.impersonate.groups.length) h['impersonate-group'] = this.config.impersonate.groups;
    }
    return h;
  }

  /**
   * Opens a WebSocket (exec and other streaming subresources) with this
   * client's credentials and TLS settings. Resolves once upgraded; a refused
   * upgrade rejects with the server's Status as a StatusError. `onMessage` is
   * attached before the upgrade completes: messages that arrive with the 101
   * are not lost.
   */
  websocket(path: string, query: URLSearchParams, protocols: readonly string[], onMessage: (data: Buffer) => void): Promise<WebSocket> {
    const u = new URL(path, this.base);
    u.search = query.toString();
    u.protocol = this.base.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(u, [...protocols], {
      headers: this.headers({ path }, undefined) as Record<string, string>,
      perMessageDeflate: false,
      ...(this.config.ca ? { ca: this.config.ca } : {}),
      ...(this.config.cert ? { cert: this.config.cert } : {}),
      ...(this.config.key ? { key: this.config.key } : {}),
      rejectUnauthorized: !this.config.insecureSkipTLSVerify,
      ...(this.config.tlsServerName ? { servername: this.config.tlsServerName } : {}),
    });
    this.requestCount++;
    ws.on('message', (d: Buffer) => onMessage(d));
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(toStatusError({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })));
        res.on('error', reject);
      });
      ws.once('error', reject);
    });
  }

  url(path: string, query?: RequestOptions['query']): string {
    const u = new URL(path, this.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.pathname + u.search;
  }

  private once(o: RequestOptions, body: Buffer | undefined): Promise<RawResponse> {
    const send = this.base.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        {
          agent: this.agent,
          host: this.base.hostname,
          port: this.base.port,
          method: o.method ?? 'GET',
          path: this.url(o.path, o.query),
          headers: this.headers(o, body),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (o.timeoutMs) req.setTimeout(o.timeoutMs, () => req.destroy(new Error(`request timed out after ${o.timeoutMs} ms`)));
      req.end(body);
    });
  }

  /**
   * A GET whose body is handed over as it arrives (logs -f). Errors (status ≥ 400)
   * come back as a StatusError; resolves when the stream ends or `signal` aborts.
   */
  async stream(path: string, query: RequestOptions['query'], onChunk: (b: Buffer) => void, signal?: AbortSignal): Promise<void> {
    await this.limiter.take();
    this.requestCount++;
    const send = this.base.protocol === 'https:' ? httpsRequest : httpRequest;
    await new Promise<void>((resolve, reject) => {
      const req = send(
        {
          agent: this.agent,
          host: this.base.hostname,
          port: this.base.port,
          method: 'GET',
          path: this.url(path, query),
          headers: this.headers({ path, accept: '*/*' }, undefined),
          ...(signal ? { signal } : {}),
        },
        (res) => {
          if ((res.statusCode ?? 0) >= 400) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => reject(toStatusError({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })));
            return;
          }
          res.on('data', onChunk);
          res.on('end', () => resolve());
          res.on('error', (e) => (signal?.aborted ? resolve() : reject(e)));
        },
      );
      req.on('error', (e) => (signal?.aborted ? resolve() : reject(e)));
      req.end();
    });
  }

  /** Sends a request with rate limiting and retries; returns the raw response (any status). */
  async raw(o: RequestOptions): Promise<RawResponse> {
    const body =
      o.body === undefined ? undefined : Buffer.isBuffer(o.body) ? o.body : Buffer.from(typeof o.body === 'string' ? o.body : JSON.stringify(o.body));
    const method = (o.method ?? 'GET').toUpperCase();
    const idempotent = method === 'GET' || method === 'HEAD';
    let attempt = 0;
    for (;;) {
      await this.limiter.take();
      this.requestCount++;
      let res: RawResponse;
      try {
        res = await this.once(o, body);
      } catch (e) {
        if (idempotent && attempt < this.maxRetries) {
          await sleep(backoff(attempt++));
          continue;
        }
        throw e;
      }
      const retriable = res.status === 429 || (idempotent && res.status >= 500 && res.status !== 501);
      if (retriable && attempt < this.maxRetries) {
        const ra = Number(res.headers['retry-after']);
        await sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra * 1000, 30_000) : backoff(attempt));
        attempt++;
        continue;
      }
      return res;
    }
  }

  /** A request whose 2xx JSON body is returned; non-2xx become StatusError. */
  async request<T = any>(o: RequestOptions): Promise<T> {
    const res = await this.raw(o);
    if (res.status >= 200 && res.status < 300) {
      const text = res.body.toString('utf8');
      if (!text) return undefined as T;
      const ct = String(res.headers['content-type'] ?? '');
      return (ct.includes('json') ? JSON.parse(text) : text) as T;
    }
    throw toStatusError(res);
  }

  get<T = any>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>({ path, ...(query ? { query } : {}) });
  }
  post<T = any>(path: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>({ method: 'POST', path, body, ...(query ? { query } : {}) });
  }
  put<T = any>(path: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>({ method: 'PUT', path, body, ...(query ? { query } : {}) });
  }
  patch<T = any>(path: string, body: unknown, contentType: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>({ method: 'PATCH', path, body, contentType, ...(query ? { query } : {}) });
  }
  delete<T = any>(path: string, body?: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>({ method: 'DELETE', path, ...(body !== undefined ? { body } : {}), ...(query ? { query } : {}) });
  }

  /**
   * Opens a watch and hands each event to `onEvent`. Resolves when the stream
   * ends (server timeout, error or `signal`); rejects with a StatusError when the
   * server refuses the watch outright.
   */
  async watch<T = Record<string, unknown>>(
    path: string,
    query: RequestOptions['query'],
    onEvent: (ev: WatchEvent<T>) => void,
    signal?: AbortSignal,
    accept?: string,
  ): Promise<void> {
    await this.limiter.take();
    this.requestCount++;
    const send = this.base.protocol === 'https:' ? httpsRequest : httpRequest;
    // One listener per watch on a signal that outlives many watches (an informer's): removed when this one ends.
    let onAbort: (() => void) | undefined;
    await new Promise<void>((resolve, reject) => {
      const req = send(
        {
          agent: this.agent,
          host: this.base.hostname,
          port: this.base.port,
          path: this.url(path, { ...query, watch: 'true' }),
          headers: this.headers({ path, ...(accept ? { accept } : {}) }, undefined),
        },
        (res) => {
          if ((res.statusCode ?? 0) >= 300) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => reject(toStatusError({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })));
            return;
          }
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line.trim()) continue;
              try {
                onEvent(JSON.parse(line) as WatchEvent<T>);
              } catch (e) {
                req.destroy(e as Error);
              }
            }
          });
          res.on('end', () => resolve());
          res.on('close', () => resolve());
          res.on('error', () => resolve());
        },
      );
      req.on('error', (e) => (signal?.aborted ? resolve() : reject(e)));
      onAbort = () => req.destroy();
      signal?.addEventListener('abort', onAbort, { once: true });
      req.end();
    }).finally(() => {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export function toStatusError(res: RawResponse): StatusError {
  const text = res.body.toString('utf8');
  try {
    const s = JSON.parse(text) as Status;
    if (s && s.kind === 'Status') return new StatusError({ ...s, code: s.code || res.status });
  } catch {
    // not a Status
  }
  if (res.status === 404) return failure('NotFound', 'the server could not find the requested resource');
  if (res.status >= 500) return internalError(text.slice(0, 200) || `status ${res.status}`);
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: text.slice(0, 500) || `status ${res.status}`,
    reason: 'Unknown',
    code: res.status,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const backoff = (attempt: number) => Math.min(100 * 2 ** attempt, 5000) * (0.5 + Math.random() / 2);
