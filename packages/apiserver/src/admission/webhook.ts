/**
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook (k8s.io/apiserver
 * pkg/admission/plugin/webhook): the webhooks of the cluster's
 * Mutating/ValidatingWebhookConfigurations whose rules, namespaceSelector and
 * objectSelector match are called with an `admission.k8s.io/v1` AdmissionReview
 * over HTTPS (caBundle trusted), within `timeoutSeconds` (10). A mutating
 * webhook's JSONPatch is applied to the object; a refusal is the request's
 * answer; a failed call fails the request unless `failurePolicy: Ignore`.
 * A webhook's `matchConditions` (CEL) are evaluated before it is called
 * (webhook/generic/webhook.go ShouldCallHook): one false skips it; an error
 * is a 403 under failurePolicy Fail and skips it under Ignore.
 */
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { KubeObject, admissionregistrationv1, dsl } from '@kubeling/api';
import { StatusError, applyJsonPatch, failure, selectorFromLabelSelector } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectGetter, ObjectLister, ObjectSubscriber } from './lookups.js';
import { admissionRequest, webhookMatchConditions } from './policy/request.js';

type WebhookConfiguration = admissionregistrationv1.MutatingWebhookConfiguration | admissionregistrationv1.ValidatingWebhookConfiguration;
type Webhook = dsl.Static<typeof admissionregistrationv1.MutatingWebhook> | dsl.Static<typeof admissionregistrationv1.ValidatingWebhook>;

/** What the plugins read of a webhook's AdmissionReview answer. */
interface AdmissionResponse {
  uid?: string;
  allowed?: boolean;
  patch?: string;
  patchType?: string;
  status?: { code?: number; message?: string; reason?: string };
}

export interface WebhookContext {
  configurations: () => ObjectLister & ObjectSubscriber;
  namespaces: () => ObjectGetter;
  /** group/version of a resource, for the review's kind and resource. */
  gvk(resource: string): { group: string; version: string; kind: string } | undefined;
  /**
   * Where a Service reference sends its calls: a ready endpoint behind the
   * Service's port (as --enable-aggregator-routing resolves), or why none.
   */
  resolveService?(namespace: string, name: string, port: number): Promise<{ host: string; port: number } | { error: string }>;
}

/** A webhook's clientConfig: a URL, or a Service in the cluster. */
interface ClientConfig {
  url?: string;
  caBundle?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
}

const matchList = (list: string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

/**
 * rules.Matcher's resource check: `res/sub` with `*` for either part, a bare
 * resource naming no subresource (`*` is every resource, but no exec, status...).
 */
const resourceMatches = (list: string[] | undefined, resource: string, sub = '') =>
  !!list &&
  list.some((rule) => {
    const i = rule.indexOf('/');
    const [rr, rs] = i < 0 ? [rule, ''] : [rule.slice(0, i), rule.slice(i + 1)];
    return (rr === '*' || rr === resource) && (rs === '*' || rs === sub);
  });

/** POSTs to `url` (dialing `dial` instead of its host when given, the TLS name staying the URL's host). */
function post(
  url: string,
  body: string,
  caBundle: string | undefined,
  timeoutMs: number,
  dial?: { host: string; port: number },
): Promise<{ response?: AdmissionResponse }> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: dial?.host ?? u.hostname,
        port: dial?.port ?? u.port,
        ...(dial ? { servername: u.hostname } : {}),
        path: u.pathname + u.search,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
        ...(caBundle ? { ca: Buffer.from(caBundle, 'base64').toString() } : {}),
        timeout: timeoutMs,
      },
      (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300)
            return reject(new Error(`the server responded with the status code ${res.statusCode} but did not return more information`));
          try {
            resolve(JSON.parse(b));
          } catch {
            reject(new Error('the webhook response is not valid JSON'));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('error', reject);
    req.end(body);
  });
}

abstract class WebhookPlugin {
  abstract readonly name: string;
  /** How many configurations exist (kept from the watch cache): none means nothing to call. */
  private configured = new Set<string>();

  constructor(protected readonly ctx: WebhookContext) {
    ctx.configurations().subscribe((type, obj) => (type === 'DELETED' ? this.configured.delete(obj.metadata.name!) : this.configured.add(obj.metadata.name!)));
  }

  handles(a: AdmissionAttributes): boolean {
    return (
      this.configured.size > 0 &&
      a.resource !== 'admissionregistration.k8s.io/mutatingwebhookconfigurations' &&
      a.resource !== 'admissionregistration.k8s.io/validatingwebhookconfigurations'
    );
  }

  protected async matching(obj: KubeObject, a: AdmissionAttributes): Promise<Webhook[]> {
    const { items } = await this.ctx.configurations().list(undefined, { resourceVersion: '0' });
    if (!items.length) return [];
    const [group, resource] = a.resource.split('/') as [string, string];
    const gvk = this.ctx.gvk(a.resource);
    let nsLabels: Record<string, string> | undefined;
    const out: Webhook[] = [];
    for (const cfg of items) {
      for (const w of (cfg as WebhookConfiguration).webhooks ?? []) {
        const ruleOk = (w.rules ?? []).some(
          (r) =>
            matchList(r.operations, a.operation) &&
            matchList(r.apiGroups, group) &&
            matchList(r.apiVersions, gvk?.version ?? 'v1') &&
            resourceMatches(r.resources, resource, a.subresource) &&
            (!r.scope || r.scope === '*' || (r.scope === 'Namespaced') === !!a.namespace),
        );
        if (!ruleOk) continue;
        try {
          if (w.objectSelector && !selectorFromLabelSelector(w.objectSelector).matches(obj.metadata.labels ?? {})) continue;
          if (w.namespaceSelector && a.namespace) {
            nsLabels ??=
              (
                await this.ctx
                  .namespaces()
                  .get(undefined, a.namespace, '0')
                  .catch(() => undefined)
              )?.metadata.labels ?? {};
            if (!selectorFromLabelSelector(w.namespaceSelector).matches(nsLabels)) continue;
          }
        } catch {
          continue;
        }
        if (w.matchConditions?.length && !this.conditionsMatch(w, obj, a, gvk ?? { group, version: 'v1', kind: '' })) continue;
        out.push(w);
      }
    }
    return out;
  }

  /** The webhook's matchConditions: false skips it; an error is a 403 (failurePolicy Fail) or skips it (Ignore). */
  private conditionsMatch(w: Webhook, obj: KubeObject, a: AdmissionAttributes, gvk: { group: string; version: string; kind: string }): boolean {
    const [group, resource] = a.resource.split('/') as [string, string];
    const gvr = { group, version: gvk.version, resource };
    const name = a.name ?? obj.metadata.name ?? a.old?.metadata.name ?? '';
    const request = admissionRequest({
      operation: a.operation,
      resource: gvr,
      kind: gvk,
      requestResource: gvr,
      requestKind: gvk,
      subresource: a.subresource ?? '',
      name,
      namespace: a.namespace ?? '',
      dryRun: !!a.dryRun,
      user: a.user,
    });
    const deleting = a.operation === 'DELETE';
    const r = webhookMatchConditions(w.matchConditions ?? [], w.failurePolicy, deleting ? null : obj, deleting ? (a.old ?? obj) : (a.old ?? null), request);
    if (r.error !== undefined) {
      const gr = group ? `${resource}.${group}` : resource;
      throw new StatusError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: name ? `${gr} "${name}" is forbidden: ${r.error}` : `${gr} is forbidden: ${r.error}`,
        reason: 'Forbidden',
        details: { ...(name ? { name } : {}), ...(group ? { group } : {}), kind: resource },
        code: 403,
      });
    }
    return r.matches;
  }

  /** Calls one webhook; returns its response, or undefined when it failed and may be ignored. */
  protected async call(w: Webhook, obj: KubeObject, a: AdmissionAttributes): Promise<AdmissionResponse | undefined> {
    const [group, resource] = a.resource.split('/') as [string, string];
    const resourceGvk = this.ctx.gvk(a.resource) ?? { group, version: 'v1', kind: '' };
    // A CONNECT's object is the request's options (PodAttachOptions, PodExecOptions), and so is its kind.
    const gvk = a.operation === 'CONNECT' ? { ...resourceGvk, kind: obj.kind ?? resourceGvk.kind } : resourceGvk;
    const uid = randomUUID();
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: gvk,
        resource: { group, version: gvk.version, resource },
        ...(a.subresource ? { subResource: a.subresource } : {}),
        requestKind: gvk,
        requestResource: { group, version: gvk.version, resource },
        name: a.name ?? obj.metadata.name ?? a.old?.metadata.name ?? '',
        ...(a.namespace ? { namespace: a.namespace } : {}),
        operation: a.operation,
        userInfo: { username: a.user?.name ?? 'system:admin', groups: a.user?.groups ?? [] },
        // A DELETE has no new object, only the one going away.
        object: a.operation === 'DELETE' ? null : obj,
        oldObject: a.old ?? null,
        dryRun: !!a.dryRun,
        options: { apiVersion: 'meta.k8s.io/v1', kind: `${a.operation === 'CREATE' ? 'Create' : a.operation === 'UPDATE' ? 'Update' : 'Delete'}Options` },
      },
    };
    const cc = (w.clientConfig ?? {}) as ClientConfig;
    const fail = (why: string) => {
      if (w.failurePolicy === 'Ignore') return undefined;
      throw failure('InternalError', `Internal error occurred: failed calling webhook "${w.name}": ${why}`);
    };
    // A Service reference is called at https://<name>.<namespace>.svc:<port><path>, its certificate checked for that name.
    const svc = cc.service;
    const base = cc.url ?? (svc ? `https://${svc.name}.${svc.namespace}.svc:${svc.port ?? 443}${svc.path ?? ''}` : undefined);
    if (!base) return fail('the webhook has neither a url nor a service');
    // The webhook is told its time budget as a client-go request says it: ?timeout=<duration>.
    const timeoutSeconds = w.timeoutSeconds ?? 10;
    const url = `${base}${base.includes('?') ? '&' : '?'}timeout=${timeoutSeconds}s`;
    let dial: { host: string; port: number } | undefined;
    if (!cc.url && svc) {
      const at = this.ctx.resolveService
        ? await this.ctx.resolveService(svc.namespace ?? '', svc.name ?? '', svc.port ?? 443)
        : { error: 'no Service resolver is configured' };
      if ('error' in at) return fail(`failed to call webhook: Post "${url}": ${at.error}`);
      dial = at;
    }
    try {
      const res = await post(url, JSON.stringify(review), cc.caBundle, timeoutSeconds * 1000, dial);
      const r = res.response;
      if (!r || r.uid !== uid) return fail(`expected response.uid="${uid}", got "${r?.uid ?? ''}"`);
      return r;
    } catch (e) {
      if (e instanceof StatusError) throw e;
      return fail(`failed to call webhook: Post "${url}": ${(e as Error).message}`);
    }
  }

  protected denied(w: Webhook, r: AdmissionResponse): StatusError {
    const st = r.status ?? {};
    const code = st.code && st.code !== 200 ? st.code : 400;
    const why = st.message || st.reason;
    return new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: why ? `admission webhook "${w.name}" denied the request: ${why}` : `admission webhook "${w.name}" denied the request without explanation`,
      reason: st.reason && /^[A-Z]/.test(st.reason) ? st.reason : code === 403 ? 'Forbidden' : code === 422 ? 'Invalid' : 'BadRequest',
      code,
    } as never);
  }
}

export class MutatingWebhooks extends WebhookPlugin implements MutatingAdmission {
  readonly name = 'MutatingAdmissionWebhook';

  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    for (const w of await this.matching(obj, a)) {
      const r = await this.call(w, obj, a);
      if (!r) continue;
      if (!r.allowed) throw this.denied(w, r);
      if (r.patch) {
        if (r.patchType && r.patchType !== 'JSONPatch')
          throw failure('InternalError', `Internal error occurred: webhook "${w.name}" returned an unsupported patchType ${r.patchType}`);
        let ops: unknown;
        try {
          ops = JSON.parse(Buffer.from(r.patch, 'base64').toString('utf8'));
        } catch {
          throw failure('InternalError', `Internal error occurred: webhook "${w.name}" returned a patch that is not JSON`);
        }
        const patched = applyJsonPatch(obj, ops as never, { maxOperations: Infinity }) as KubeObject;
        for (const k of Object.keys(obj)) delete obj[k];
        Object.assign(obj, patched);
        a.defaults?.(obj);
      }
    }
  }
}

export class ValidatingWebhooks extends WebhookPlugin implements ValidatingAdmission {
  readonly name = 'ValidatingAdmissionWebhook';

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    const hooks = await this.matching(obj, a);
    const results = await Promise.all(hooks.map((w) => this.call(w, obj, a).then((r) => ({ w, r }))));
    for (const { w, r } of results) if (r && !r.allowed) throw this.denied(w, r);
  }
}
