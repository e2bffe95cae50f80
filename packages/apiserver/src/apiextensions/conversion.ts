/**
 * Conversion of custom resources between the versions of their CRD
 * (k8s.io/apiextensions-apiserver pkg/apiserver/conversion): `None` rewrites
 * apiVersion only (cr-strategy.ts does that without a round trip); `Webhook`
 * posts an `apiextensions.k8s.io/v1` (or v1beta1) ConversionReview over HTTPS,
 * to `url` or to the Service named (its cluster IP, with the service's DNS name
 * as the TLS server name), trusting `caBundle`, within 30 s. The answer is
 * checked as upstream's webhook converter checks it: same uid, Success, one
 * object per object sent, each in the desired apiVersion and of the same
 * kind; only labels and annotations of the metadata may change.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeObject } from '@kubeling/api';
import { failure } from '@kubeling/apimachinery';
import type { CustomResourceConversion } from './types.js';

const TIMEOUT_MS = 30_000;

export type ServiceAddress = (namespace: string, name: string) => Promise<string | undefined>;

interface Target {
  url: URL;
  servername?: string;
  ca?: string;
}

function post(t: Target, body: string): Promise<unknown> {
  const send = t.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: t.url.hostname,
        port: t.url.port,
        path: t.url.pathname + t.url.search,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        ...(t.ca ? { ca: t.ca } : {}),
        ...(t.servername ? { servername: t.servername } : {}),
        timeout: TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300)
            return reject(new Error(`the server responded with the status code ${res.statusCode} but did not return more information`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          } catch {
            reject(new Error('the webhook response is not valid JSON'));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
    req.on('error', reject);
    req.end(body);
  });
}

interface ReviewResponse {
  uid?: string;
  convertedObjects?: KubeObject[];
  result?: { status?: string; message?: string };
}

export class WebhookConverter {
  constructor(
    private readonly conversion: CustomResourceConversion,
    private readonly kind: string,
    private readonly service: ServiceAddress,
  ) {}

  private async target(): Promise<Target> {
    const cc = this.conversion.webhook?.clientConfig ?? {};
    const ca = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString() : undefined;
    if (cc.url) return { url: new URL(cc.url), ...(ca ? { ca } : {}) };
    const svc = cc.service;
    if (!svc) throw new Error('the conversion webhook has neither url nor service');
    const ip = await this.service(svc.namespace, svc.name);
    if (!ip) throw new Error(`service "${svc.name}" in namespace "${svc.namespace}" has no cluster IP`);
    const host = ip.includes(':') ? `[${ip}]` : ip;
    return { url: new URL(`https://${host}:${svc.port ?? 443}${svc.path ?? ''}`), servername: `${svc.name}.${svc.namespace}.svc`, ...(ca ? { ca } : {}) };
  }

  /** Converts `objs` (all in one apiVersion) to `desired`; objects already there are left alone. */
  async convert(objs: KubeObject[], desired: string): Promise<KubeObject[]> {
    const todo = objs.map((o, i) => [o, i] as const).filter(([o]) => o.apiVersion !== desired);
    if (!todo.length) return objs;
    const fromGv = todo[0]![0].apiVersion;
    const fail = (why: string) =>
      failure('InternalError', `conversion webhook for ${fromGv}, Kind=${this.kind} failed: ${why}`, {
        causes: [{ reason: 'UnexpectedServerResponse', message: why }],
      });
    const versions = this.conversion.webhook?.conversionReviewVersions ?? ['v1'];
    const reviewVersion = versions.find((v) => v === 'v1' || v === 'v1beta1') ?? 'v1';
    const uid = randomUUID();
    const review = {
      apiVersion: `apiextensions.k8s.io/${reviewVersion}`,
      kind: 'ConversionReview',
      request: { uid, desiredAPIVersion: desired, objects: todo.map(([o]) => o) },
    };
    let answer: { response?: ReviewResponse };
    try {
      answer = (await post(await this.target(), JSON.stringify(review))) as { response?: ReviewResponse };
    } catch (e) {
      throw fail((e as Error).message);
    }
    const res = answer?.response;
    if (!res) throw fail('no response provided');
    if (res.uid !== uid) throw fail(`expected response.uid="${uid}", got "${res.uid ?? ''}"`);
    if (res.result?.status !== 'Success') throw fail(res.result?.message ?? 'conversion failed');
    const converted = res.convertedObjects ?? [];
    if (converted.length !== todo.length) throw fail(`returned ${converted.length} objects, expected ${todo.length}`);
    const out = [...objs];
    for (let i = 0; i < todo.length; i++) {
      const [orig, at] = todo[i]!;
      const c = converted[i]!;
      if (c?.apiVersion !== desired) throw fail(`invalid converted object at index ${i}: invalid apiVersion "${c?.apiVersion ?? ''}", expected "${desired}"`);
      if (c.kind !== orig.kind) throw fail(`invalid converted object at index ${i}: invalid kind "${c.kind ?? ''}", expected "${orig.kind ?? ''}"`);
      // restoreObjectMeta: the metadata stays the original's, but for labels and annotations.
      const meta = { ...orig.metadata };
      if (c.metadata?.labels) meta.labels = c.metadata.labels;
      else delete meta.labels;
      if (c.metadata?.annotations) meta.annotations = c.metadata.annotations;
      else delete meta.annotations;
      out[at] = { ...c, metadata: meta };
    }
    return out;
  }
}
