/**
 * The client of a webhook named by a kubeconfig file (k8s.io/apiserver
 * pkg/util/webhook): the current context's cluster is the URL POSTed to, its
 * CA checks the server, and its user's client certificate or bearer token is
 * how the apiserver presents itself. TokenReview, SubjectAccessReview and
 * ImageReview webhooks all speak through it: a JSON object out, one back.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { loadKubeConfig, resolveClientConfig, type ClientConfig } from '@kubeling/client';

export interface WebhookReply<T> {
  status: number;
  body: T | undefined;
}

export interface WebhookClient {
  readonly url: string;
  /** POSTs `body` as JSON; rejects on a transport failure or the timeout, resolves with any HTTP answer. */
  post<T = Record<string, unknown>>(body: unknown): Promise<WebhookReply<T>>;
}

/** Most of a webhook's answer that is read; anything longer is refused. */
const MAX_REPLY_BYTES = 3 * 1024 * 1024;

export function webhookClient(cfg: ClientConfig, timeoutMs = 30_000): WebhookClient {
  const url = new URL(cfg.server);
  const tls = url.protocol === 'https:';
  return {
    url: cfg.server,
    post<T>(body: unknown): Promise<WebhookReply<T>> {
      const data = Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': data.length,
      };
      if (cfg.token) headers.authorization = `Bearer ${cfg.token}`;
      const options = {
        method: 'POST',
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (tls ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers,
        timeout: timeoutMs,
        ...(tls
          ? {
              ...(cfg.ca ? { ca: cfg.ca } : {}),
              ...(cfg.cert && cfg.key ? { cert: cfg.cert, key: cfg.key } : {}),
              ...(cfg.tlsServerName ? { servername: cfg.tlsServerName } : {}),
              rejectUnauthorized: !cfg.insecureSkipTLSVerify,
            }
          : {}),
      };
      return new Promise((resolve, reject) => {
        const req = (tls ? httpsRequest : httpRequest)(options, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_REPLY_BYTES) {
              req.destroy(new Error(`webhook ${cfg.server}: reply larger than ${MAX_REPLY_BYTES} bytes`));
              return;
            }
            chunks.push(c);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: T | undefined;
            try {
              parsed = text ? (JSON.parse(text) as T) : undefined;
            } catch {
              parsed = undefined;
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`webhook ${cfg.server}: no answer within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(data);
      });
    },
  };
}

/** A webhook from a kubeconfig file (--authentication-token-webhook-config-file and the like). */
export function webhookFromKubeconfig(path: string, timeoutMs?: number): WebhookClient {
  return webhookClient(resolveClientConfig(loadKubeConfig({ explicitPath: path })), timeoutMs);
}
