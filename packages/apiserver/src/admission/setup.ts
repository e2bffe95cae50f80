/**
 * The admission plugins of kube-apiserver's default set (and those enabled
 * by flag), registered into each store's chain, mutating then validating
 * (NamespaceLifecycle is part of every store). Which plugins run, and in what
 * order, is catalogue.ts's: each enabled plugin's registration below runs in
 * that order, so every chain's mutating plugins, and its validating ones, run
 * in upstream's order. Answers what every store, custom resources' included,
 * gets attached as it comes.
 */
import { randomInt } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { resolveBackends, type APIService } from '../aggregator/availability.js';
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
import { CSIDriverRestriction } from './csidriverrestriction.js';
import { OwnerReferencesPermissionEnforcement } from './ownerreferences.js';
import type { AdmissionChain, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { PluginConfig } from './config.js';
import { RuntimeClassAdmission } from './runtimeclass.js';
import { attachPodSecurity } from './podsecurity/index.js';
import { CertificateApproval, CertificateSigning, CertificateSubjectRestriction } from '../registry/certificates/admission.js';
import { DefaultIngressClass } from '../registry/networking/defaultingressclass.js';
import { enabledAdmissionPlugins } from './catalogue.js';
import { OperationFilter } from './attributes.js';
import { NamespaceAutoProvision, NamespaceExists } from './namespaceplugins.js';
import { EventRateLimit, parseEventRateLimitConfig } from './eventratelimit.js';
import { PodNodeSelector, parsePodNodeSelectorConfig } from './podnodeselector.js';
import { PodTolerationRestriction, parsePodTolerationRestrictionConfig } from './podtolerationrestriction.js';
import { DenyExec, ExtendedResourceToleration, LimitPodHardAntiAffinityTopology, SecurityContextDeny } from './podrestrictions.js';
import { AlwaysDeny, DenyServiceExternalIPs, TaintNodesByCondition } from './simpleplugins.js';
import { ImagePolicyWebhook, parseImagePolicyConfig } from './imagepolicy.js';
import { DefaultStorageClass, PersistentVolumeClaimResize, StorageObjectInUseProtection } from './storage.js';

const notFoundAsUndefined = (e: unknown): undefined => {
  if (e instanceof StatusError && e.status.reason === 'NotFound') return undefined;
  throw e;
};

export interface AdmissionSetup {
  /** The authorizers in order (--authorization-mode): Node or RBAC turn on the restricting plugins. */
  authzModes: readonly string[];
  admission?: { enable?: string[]; disable?: string[] };
  /** Each plugin's part of the AdmissionConfiguration (--admission-control-config-file). */
  pluginConfig?: PluginConfig;
  /** ServiceAccount admission needs token signing. */
  serviceAccounts: boolean;
  logger?: Logger | false;
}

/** What a plugin's registration builds from. */
interface Wiring {
  app: FastifyInstance;
  registry: Registry;
  catalog: ResourceCatalog;
  authorizer: Authorizer | undefined;
  opts: AdmissionSetup;
  /** A store by registry key (`/v1/pods`); every key named below is served. */
  store(key: string): Store;
  config(name: string): Record<string, unknown> | undefined;
}

/** Where a plugin goes: named stores, or every store (custom resources' too, as they come) that `only` keeps. */
interface Registration {
  stores: readonly string[] | 'every';
  only?: (st: Store) => boolean;
  mutating?: MutatingAdmission;
  validating?: ValidatingAdmission;
}

/** Nothing, when the plugin attaches itself or has nothing to attach. */
type Register = (w: Wiring) => Registration | Registration[] | undefined;

const POD = ['/v1/pods'];
const both = <P extends MutatingAdmission & ValidatingAdmission>(stores: readonly string[] | 'every', p: P): Registration => ({
  stores,
  mutating: p,
  validating: p,
});
const authorizeWith = (w: Wiring) => (a: Parameters<Authorizer['authorize']>[0]) => (w.authorizer ? w.authorizer.authorize(a) : { allowed: true, reason: '' });
const webhookCtx = (w: Wiring, resource: string) => ({
  configurations: () => w.store(`admissionregistration.k8s.io/v1/${resource}`),
  namespaces: () => w.store('/v1/namespaces'),
  gvk: (r: string) => {
    const [g, res] = r.split('/');
    const st = [...w.registry.values()].find((x) => x.def.group === g && x.def.resource === res);
    return st ? { group: st.def.group, version: st.def.version, kind: st.def.kind } : undefined;
  },
  resolveService: async (namespace: string, name: string, port: number) => {
    const backends = await resolveBackends(
      { spec: { service: { namespace, name, port } } } as APIService,
      w.store('/v1/services'),
      w.store('discovery.k8s.io/v1/endpointslices'),
    );
    if (!Array.isArray(backends)) return { error: backends.message };
    return backends[randomInt(backends.length)]!;
  },
});

/**
 * Each plugin kubeling runs, by name. A catalogue name missing here does
 * nothing (catalogue.ts says why: resources not served yet, or enforced by the
 * store as NamespaceLifecycle). Registrations run in catalogue order.
 */
const REGISTRATIONS: Record<string, Register> = {
  // AlwaysAdmit admits: nothing to attach.
  AlwaysAdmit: () => undefined,
  NamespaceAutoProvision: (w) => ({ stores: 'every', mutating: new NamespaceAutoProvision(() => w.store('/v1/namespaces')) }),
  NamespaceExists: (w) => ({ stores: 'every', validating: new NamespaceExists(() => w.store('/v1/namespaces')) }),
  SecurityContextDeny: () => ({ stores: POD, validating: new SecurityContextDeny() }),
  LimitPodHardAntiAffinityTopology: () => ({ stores: POD, validating: new LimitPodHardAntiAffinityTopology() }),
  LimitRanger: (w) => both(POD, new LimitRanger(() => w.store('/v1/limitranges'))),
  // ServiceAccount needs token signing; clusters without it (the plain-HTTP
  // development mode) leave pods' service accounts alone unless it is asked for.
  ServiceAccount: (w) =>
    w.opts.serviceAccounts || w.opts.admission?.enable?.includes('ServiceAccount')
      ? { stores: POD, mutating: new ServiceAccountAdmission(() => w.store('/v1/serviceaccounts')) }
      : undefined,
  NodeRestriction: (w) => {
    const nr = new NodeRestriction({
      pod: (ns, name) => w.store('/v1/pods').get(ns, name, '0').catch(notFoundAsUndefined),
      node: (name) => w.store('/v1/nodes').get(undefined, name, '0').catch(notFoundAsUndefined),
      authorize: authorizeWith(w),
    });
    const stores = [
      '/v1/pods',
      '/v1/nodes',
      '/v1/persistentvolumeclaims',
      '/v1/serviceaccounts',
      'coordination.k8s.io/v1/leases',
      'storage.k8s.io/v1/csinodes',
    ];
    // Upstream's handler takes creates, updates and deletes: exec and attach pass it by.
    return both(stores, new OperationFilter(['CREATE', 'UPDATE', 'DELETE'], nr));
  },
  // Reads are fresh from etcd: a driver writes selected-node, then at once the PV for that claim.
  CSIDriverRestriction: (w) => ({
    stores: ['/v1/persistentvolumes', '/v1/persistentvolumeclaims', 'storage.k8s.io/v1/volumeattachments', 'storage.k8s.io/v1/csistoragecapacities'],
    validating: new CSIDriverRestriction({
      claim: (ns, name) => w.store('/v1/persistentvolumeclaims').get(ns, name).catch(notFoundAsUndefined),
      volume: (name) => w.store('/v1/persistentvolumes').get(undefined, name).catch(notFoundAsUndefined),
    }),
  }),
  TaintNodesByCondition: () => ({ stores: ['/v1/nodes'], mutating: new TaintNodesByCondition() }),
  AlwaysPullImages: () => ({ stores: POD, mutating: new AlwaysPullImages() }),
  ImagePolicyWebhook: (w) => ({ stores: POD, validating: new ImagePolicyWebhook(parseImagePolicyConfig(w.config('ImagePolicyWebhook'))) }),
  // PodSecurity validates pods, pod templates and namespaces, after LimitRanger and before RuntimeClass (upstream's order).
  PodSecurity: (w) => {
    attachPodSecurity(w.registry, w.config('PodSecurity'));
    return undefined;
  },
  PodNodeSelector: (w) => both(POD, new PodNodeSelector(() => w.store('/v1/namespaces'), parsePodNodeSelectorConfig(w.config('PodNodeSelector')))),
  Priority: (w) => ({ stores: POD, mutating: new PriorityAdmission(() => w.store('scheduling.k8s.io/v1/priorityclasses')) }),
  DefaultTolerationSeconds: () => ({ stores: POD, mutating: new DefaultTolerationSeconds() }),
  PodTolerationRestriction: (w) =>
    both(POD, new PodTolerationRestriction(() => w.store('/v1/namespaces'), parsePodTolerationRestrictionConfig(w.config('PodTolerationRestriction')))),
  DenyEscalatingExec: (w) => ({ stores: POD, validating: new DenyExec('DenyEscalatingExec', () => w.store('/v1/pods')) }),
  DenyExecOnPrivileged: (w) => ({ stores: POD, validating: new DenyExec('DenyExecOnPrivileged', () => w.store('/v1/pods')) }),
  EventRateLimit: (w) => ({ stores: ['/v1/events'], validating: new EventRateLimit(parseEventRateLimitConfig(w.config('EventRateLimit'))) }),
  ExtendedResourceToleration: () => ({ stores: POD, mutating: new ExtendedResourceToleration() }),
  DefaultStorageClass: (w) => ({
    stores: ['/v1/persistentvolumeclaims'],
    mutating: new DefaultStorageClass(() => w.store('storage.k8s.io/v1/storageclasses')),
  }),
  StorageObjectInUseProtection: () => ({ stores: ['/v1/persistentvolumeclaims', '/v1/persistentvolumes'], mutating: new StorageObjectInUseProtection() }),
  OwnerReferencesPermissionEnforcement: (w) => {
    const mapper = (group: string, version: string, kind: string) =>
      w.catalog
        .resources()
        .filter((d) => !d.virtual && d.group === group && d.version === version && d.kind === kind)
        .map((d) => ({ group: d.group, resource: d.resource, namespaced: d.namespaced }));
    const gc = new OwnerReferencesPermissionEnforcement(() => w.authorizer ?? { authorize: () => ({ allowed: true, reason: '' }) }, mapper);
    return { stores: 'every', validating: gc };
  },
  PersistentVolumeClaimResize: (w) => ({
    stores: ['/v1/persistentvolumeclaims'],
    validating: new PersistentVolumeClaimResize(() => w.store('storage.k8s.io/v1/storageclasses')),
  }),
  RuntimeClass: (w) => both(POD, new RuntimeClassAdmission(() => w.store('node.k8s.io/v1/runtimeclasses'))),
  CertificateApproval: (w) => ({ stores: ['certificates.k8s.io/v1/certificatesigningrequests'], validating: new CertificateApproval(authorizeWith(w)) }),
  CertificateSigning: (w) => ({ stores: ['certificates.k8s.io/v1/certificatesigningrequests'], validating: new CertificateSigning(authorizeWith(w)) }),
  CertificateSubjectRestriction: () => ({ stores: ['certificates.k8s.io/v1/certificatesigningrequests'], validating: new CertificateSubjectRestriction() }),
  DefaultIngressClass: (w) => ({
    stores: ['networking.k8s.io/v1/ingresses'],
    mutating: new DefaultIngressClass(() => w.store('networking.k8s.io/v1/ingressclasses')),
  }),
  DenyServiceExternalIPs: () => ({ stores: ['/v1/services'], validating: new DenyServiceExternalIPs() }),
  MutatingAdmissionWebhook: (w) => ({ stores: 'every', mutating: new MutatingWebhooks(webhookCtx(w, 'mutatingwebhookconfigurations')) }),
  ValidatingAdmissionPolicy: (w) => {
    const vap = validatingAdmissionPolicy(w.registry, w.opts.logger || undefined);
    w.app.addHook('onReady', async () => vap.controller.start());
    w.app.addHook('preClose', async () => vap.controller.stop());
    return { stores: 'every', validating: vap.plugin };
  },
  ValidatingAdmissionWebhook: (w) => ({ stores: 'every', validating: new ValidatingWebhooks(webhookCtx(w, 'validatingwebhookconfigurations')) }),
  ResourceQuota: (w) => {
    const rq = new ResourceQuotaAdmission(
      () => w.store('/v1/resourcequotas'),
      (r) => {
        const [g, res] = r.split('/');
        return [...w.registry.entries()].find(([k, st]) => st.def.group === g && st.def.resource === res && k.endsWith(`/${res}`))?.[1];
      },
    );
    return { stores: 'every', only: (st) => st.def.namespaced, validating: rq };
  },
  AlwaysDeny: () => both('every', new AlwaysDeny()),
};

/** The plugins with a registration (the others in the catalogue do nothing here). */
export const registeredAdmissionPlugins = (): string[] => Object.keys(REGISTRATIONS);

/**
 * Registers the enabled plugins into the stores' chains, in catalogue order.
 * Throws at start, as kube-apiserver refuses to, on an unknown or doubly named
 * plugin in the flags, or a plugin configuration that does not load
 * (`couldn't init admission plugin "<name>": <why>`).
 */
export function setupAdmission(
  app: FastifyInstance,
  registry: Registry,
  catalog: ResourceCatalog,
  authorizer: Authorizer | undefined,
  opts: AdmissionSetup,
): ((st: Store) => void)[] {
  // With users to tell apart, what kubelets and owner references may do is restricted too.
  const restricting = opts.authzModes.includes('RBAC') || opts.authzModes.includes('Node') ? ['NodeRestriction', 'OwnerReferencesPermissionEnforcement'] : [];
  const names = enabledAdmissionPlugins({ ...opts.admission, extraDefaults: restricting });
  const w: Wiring = {
    app,
    registry,
    catalog,
    authorizer,
    opts,
    store: (key) => registry.get(key)!,
    config: (name) => opts.pluginConfig?.(name),
  };
  // Each store's admission is a chain the plugins are registered into.
  const chain = (st: Store) => st.admission as AdmissionChain;
  const everyResource: ((st: Store) => void)[] = [];
  for (const name of names) {
    const register = REGISTRATIONS[name];
    if (!register) continue;
    let regs: Registration | Registration[] | undefined;
    try {
      regs = register(w);
    } catch (e) {
      throw new Error(`couldn't init admission plugin "${name}": ${(e as Error).message}`);
    }
    for (const r of [regs ?? []].flat()) {
      const attach = (st: Store) => {
        if (r.only && !r.only(st)) return;
        if (r.mutating) chain(st).mutating.push(r.mutating);
        if (r.validating) chain(st).validating.push(r.validating);
      };
      if (r.stores === 'every') {
        for (const st of registry.values()) attach(st);
        everyResource.push(attach);
      } else
        for (const key of r.stores) {
          const st = registry.get(key);
          if (st) attach(st);
        }
    }
  }
  return everyResource;
}
