/**
 * ServiceAccount token controller (kubernetes pkg/controller/serviceaccount/
 * tokens_controller.go), as it is since 1.24: nothing is generated for
 * ServiceAccounts any more, but a Secret of type
 * `kubernetes.io/service-account-token` made by hand and naming a
 * ServiceAccount in its `kubernetes.io/service-account.name` annotation is
 * filled with a legacy (non-expiring) token, the cluster CA and the namespace;
 * such a Secret whose ServiceAccount is gone (or was replaced: another uid) is
 * deleted.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, importPKCS8, type CryptoKey } from 'jose';
import type { KubeObject } from '@kubeling/api';
import { isConflict, isNotFound } from '@kubeling/apimachinery';
import { keyOf, type Informer } from '@kubeling/client';
import { enqueueOn } from '../handlers.js';
import { QueueController } from '../queue-controller.js';

export const SA_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
/** The issuer of legacy tokens (serviceaccount.LegacyIssuer). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** The claims of a legacy token (pkg/serviceaccount/legacy.go). */
export function legacyClaims(sa: KubeObject, secretName: string): Record<string, string> {
  const ns = sa.metadata.namespace!;
  return {
    'kubernetes.io/serviceaccount/namespace': ns,
    'kubernetes.io/serviceaccount/secret.name': secretName,
    'kubernetes.io/serviceaccount/service-account.name': sa.metadata.name!,
    'kubernetes.io/serviceaccount/service-account.uid': sa.metadata.uid!,
  };
}

/** What a token Secret needs, given its ServiceAccount (or its absence). */
export function tokenSecretAction(secret: Secret, sa: KubeObject | undefined): 'delete' | 'fill' | 'none' {
  const ann = secret.metadata.annotations ?? {};
  const wantUid = ann[SA_UID_ANNOTATION];
  if (!sa || sa.metadata.deletionTimestamp || (wantUid && wantUid !== sa.metadata.uid)) return 'delete';
  const d = secret.data ?? {};
  return d.token && d['ca.crt'] !== undefined && d.namespace && wantUid ? 'none' : 'fill';
}

export class ServiceAccountTokenController extends QueueController {
  readonly name = 'serviceaccount-token';
  private secrets!: Informer<Secret>;
  private accounts!: Informer;
  private key: Promise<CryptoKey> | undefined;

  init(): void {
    if (this.ctx.serviceAccountKeyPem) this.key = importPKCS8(this.ctx.serviceAccountKeyPem, 'ES256') as Promise<CryptoKey>;
    this.secrets = this.ctx.informers.informer<Secret>({ path: '/api/v1/secrets', fieldSelector: `type=${SA_TOKEN_TYPE}` });
    this.accounts = this.ctx.informers.informer({ path: '/api/v1/serviceaccounts' });
    enqueueOn(this.secrets, this.queue, { on: ['add', 'update'] });
    // A ServiceAccount that goes (or comes back) concerns the Secrets naming it.
    enqueueOn(this.accounts, this.queue, {
      on: ['add', 'delete'],
      keys: (sa) =>
        this.secrets.store
          .byIndex('namespace', sa.metadata.namespace ?? '')
          .filter((s) => s.metadata.annotations?.[SA_NAME_ANNOTATION] === sa.metadata.name)
          .map(keyOf),
    });
  }

  async reconcile(key: string): Promise<void> {
    const secret = this.secrets.store.get(key);
    if (!secret || secret.type !== SA_TOKEN_TYPE || secret.metadata.deletionTimestamp) return;
    const ns = secret.metadata.namespace!;
    const saName = secret.metadata.annotations?.[SA_NAME_ANNOTATION];
    if (!saName) return;
    const sa = this.accounts.store.get(`${ns}/${saName}`);
    const action = tokenSecretAction(secret, sa);
    const path = `/api/v1/namespaces/${ns}/secrets/${secret.metadata.name}`;
    if (action === 'delete') {
      try {
        await this.ctx.client.delete(path, { preconditions: { uid: secret.metadata.uid } });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
      return;
    }
    if (action === 'none' || !sa || !this.key) return;
    const token = secret.data?.token
      ? Buffer.from(secret.data.token, 'base64').toString('utf8')
      : await new SignJWT(legacyClaims(sa, secret.metadata.name!))
          .setProtectedHeader({ alg: 'ES256' })
          .setIssuer(LEGACY_ISSUER)
          .setSubject(`system:serviceaccount:${ns}:${saName}`)
          .setJti(randomUUID())
          .sign(await this.key);
    const ca = this.ctx.rootCAPem ?? this.ctx.client.config.ca?.toString('utf8') ?? '';
    const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
    const next: Secret = {
      ...secret,
      metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [SA_UID_ANNOTATION]: sa.metadata.uid! } },
      data: { ...secret.data, token: b64(token), 'ca.crt': b64(ca), namespace: b64(ns) },
    };
    try {
      await this.ctx.client.put(path, next);
    } catch (e) {
      // A newer version is on its way through the informer, which queues the key again.
      if (!isConflict(e) && !isNotFound(e)) throw e;
    }
  }
}
