/**
 * The admission plugins of kube-apiserver's default set (and those enabled
 * by flag), registered into each store's chain, mutating then validating
 * (NamespaceLifecycle is part of every store). Answers what every store,
 * custom resources' included, gets attached as it comes.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { StatusError } from '@kubeling/apimachinery';
import type { Registry } from '../http/resource-handler.js';
import type { ResourceCatalog } from '../apiextensions/catalog.js';
import type { Store } from '../registry/store.js';
import type { Authorizer } from '../auth/types.js';
import { PriorityAdmission } from './priority.js';
import { AlwaysPullImages, DefaultTolerationSeconds, LimitRanger } from './podplugins.js';
import { ResourceQuotaAdmission } from './resourcequota.js';
import { MutatingWebhooks, ValidatingWebhooks } from './webhook.js';
import { validatingAdmissionPolicy } from './policy/index.js';
import { ServiceAccountAdmission } from './serviceaccount.js';
import { NodeRestriction } from './noderestriction.js';
import { OwnerReferencesPermissionEnforcement } from './ownerreferences.js';
import type { AdmissionChain } from './index.js';
import type { PluginConfig } from './config.js';
import { RuntimeClassAdmission } from './runtimeclass.js';
import { CertificateApproval, CertificateSigning, CertificateSubjectRestriction } from '../registry/certificates/admission.js';
import { DefaultIngressClass } from '../registry/networking/defaultingressclass.js';

const notFoundAsUndefined = (e: unknown): undefined => {
  if (e instanceof StatusError && e.status.reason === 'NotFound') return undefined;
  throw e;
};

export interface AdmissionSetup {
  authzMode: 'AlwaysAllow' | 'RBAC';
  admission?: { enable?: string[]; disable?: string[] };
  /** Each plugin's part of the AdmissionConfiguration (--admission-control-config-file). */
  pluginConfig?: PluginConfig;
  /** ServiceAccount admission needs token signing. */
  serviceAccounts: boolean;
  logger?: Logger | false;
}

export function setupAdmission(
  app: FastifyInstance,
  registry: Registry,
  catalog: ResourceCatalog,
  authorizer: Authorizer | undefined,
  opts: AdmissionSetup,
): ((st: Store) => void)[] {
  const authzMode = opts.authzMode;
  // Each store's admission is a chain the plugins below are registered into.
  const chain = (st: Store) => st.admission as AdmissionChain;
  // Admission plugins, mutating then validating (NamespaceLifecycle is part of every store).
  // With users to tell apart, what kubelets and owner references may do is restricted too.
  const restricting = authzMode === 'RBAC' ? ['NodeRestriction', 'OwnerReferencesPermissionEnforcement'] : [];
  const enabled = new Set([
    'Priority',
    'DefaultTolerationSeconds',
    'LimitRanger',
    'RuntimeClass',
    'CertificateApproval',
    'CertificateSigning',
    'CertificateSubjectRestriction',
    'DefaultIngressClass',
    'MutatingAdmissionWebhook',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionWebhook',
    'ResourceQuota',
    ...restricting,
    ...(opts.admission?.enable ?? []),
  ]);
  for (const d of opts.admission?.disable ?? []) enabled.delete(d);
  const pods = registry.get('/v1/pods')!;
  // ServiceAccount needs token signing; clusters without it (the plain-HTTP
  // development mode) leave pods' service accounts alone.
  if (opts.serviceAccounts && !(opts.admission?.disable ?? []).includes('ServiceAccount')) enabled.add('ServiceAccount');
  if (enabled.has('ServiceAccount')) chain(pods).mutating.push(new ServiceAccountAdmission(() => registry.get('/v1/serviceaccounts')!));
  if (enabled.has('NodeRestriction')) {
    const nr = new NodeRestriction({
      pod: (ns, name) => registry.get('/v1/pods')!.get(ns, name, '0').catch(notFoundAsUndefined),
      node: (name) => registry.get('/v1/nodes')!.get(undefined, name, '0').catch(notFoundAsUndefined),
      authorize: (a) => (authorizer ? authorizer.authorize(a) : { allowed: true, reason: '' }),
    });
    for (const r of [
      '/v1/pods',
      '/v1/nodes',
      '/v1/persistentvolumeclaims',
      '/v1/serviceaccounts',
      'coordination.k8s.io/v1/leases',
      'storage.k8s.io/v1/csinodes',
    ]) {
      const st = registry.get(r);
      if (!st) continue;
      chain(st).mutating.push(nr);
      chain(st).validating.push(nr);
    }
  }
  if (enabled.has('Priority')) chain(pods).mutating.push(new PriorityAdmission(() => registry.get('scheduling.k8s.io/v1/priorityclasses')!));
  if (enabled.has('DefaultTolerationSeconds')) chain(pods).mutating.push(new DefaultTolerationSeconds());
  if (enabled.has('AlwaysPullImages')) chain(pods).mutating.push(new AlwaysPullImages());
  if (enabled.has('LimitRanger')) {
    const lr = new LimitRanger(() => registry.get('/v1/limitranges')!);
    chain(pods).mutating.push(lr);
    chain(pods).validating.push(lr);
  }
  if (enabled.has('RuntimeClass')) {
    const rc = new RuntimeClassAdmission(() => registry.get('node.k8s.io/v1/runtimeclasses')!);
    chain(pods).mutating.push(rc);
    chain(pods).validating.push(rc);
  }
  const csrs = chain(registry.get('certificates.k8s.io/v1/certificatesigningrequests')!);
  const authorize: ConstructorParameters<typeof CertificateApproval>[0] = (a) => (authorizer ? authorizer.authorize(a) : { allowed: true, reason: '' });
  if (enabled.has('CertificateApproval')) csrs.validating.push(new CertificateApproval(authorize));
  if (enabled.has('CertificateSigning')) csrs.validating.push(new CertificateSigning(authorize));
  if (enabled.has('CertificateSubjectRestriction')) csrs.validating.push(new CertificateSubjectRestriction());
  if (enabled.has('DefaultIngressClass'))
    chain(registry.get('networking.k8s.io/v1/ingresses')!).mutating.push(new DefaultIngressClass(() => registry.get('networking.k8s.io/v1/ingressclasses')!));
  const webhookCtx = (resource: string) => ({
    configurations: () => registry.get(`admissionregistration.k8s.io/v1/${resource}`)!,
    namespaces: () => registry.get('/v1/namespaces')!,
    gvk: (r: string) => {
      const [g, res] = r.split('/');
      const st = [...registry.values()].find((x) => x.def.group === g && x.def.resource === res);
      return st ? { group: st.def.group, version: st.def.version, kind: st.def.kind } : undefined;
    },
  });
  // The plugins every resource has, custom resources included (attached to their stores as CRDs come).
  const everyResource: ((st: Store) => void)[] = [];
  if (enabled.has('MutatingAdmissionWebhook')) {
    const m = new MutatingWebhooks(webhookCtx('mutatingwebhookconfigurations'));
    everyResource.push((st) => chain(st).mutating.push(m));
  }
  if (enabled.has('OwnerReferencesPermissionEnforcement')) {
    const mapper = (group: string, version: string, kind: string) =>
      catalog
        .resources()
        .filter((d) => !d.virtual && d.group === group && d.version === version && d.kind === kind)
        .map((d) => ({ group: d.group, resource: d.resource, namespaced: d.namespaced }));
    const gc = new OwnerReferencesPermissionEnforcement(() => authorizer ?? { authorize: () => ({ allowed: true, reason: '' }) }, mapper);
    everyResource.push((st) => chain(st).validating.push(gc));
  }
  // ValidatingAdmissionPolicy runs before ValidatingAdmissionWebhook (kube-apiserver's AllOrderedPlugins).
  if (enabled.has('ValidatingAdmissionPolicy')) {
    const vap = validatingAdmissionPolicy(registry, opts.logger || undefined);
    everyResource.push((st) => chain(st).validating.push(vap.plugin));
    app.addHook('onReady', async () => vap.controller.start());
    app.addHook('preClose', async () => vap.controller.stop());
  }
  if (enabled.has('ValidatingAdmissionWebhook')) {
    const v = new ValidatingWebhooks(webhookCtx('validatingwebhookconfigurations'));
    everyResource.push((st) => chain(st).validating.push(v));
  }
  if (enabled.has('ResourceQuota')) {
    const rq = new ResourceQuotaAdmission(
      () => registry.get('/v1/resourcequotas')!,
      (r) => {
        const [g, res] = r.split('/');
        return [...registry.entries()].find(([k, st]) => st.def.group === g && st.def.resource === res && k.endsWith(`/${res}`))?.[1];
      },
    );
    everyResource.push((st) => {
      if (st.def.namespaced) chain(st).validating.push(rq);
    });
  }
  for (const st of registry.values()) for (const attach of everyResource) attach(st);
  return everyResource;
}
