/**
 * Ingresses and IngressClasses (kubernetes pkg/registry/networking/ingress and
 * ingressclass, validation from pkg/apis/networking/validation, defaults from
 * pkg/apis/networking/v1/defaults.go).
 *
 * Ingress: a default backend or rules; hosts DNS names (a leading `*.` allowed),
 * never IPs; each path with a pathType (Exact and Prefix absolute, without
 * `//`, `/./`, `/../`, `%2f` or a trailing `/.` or `/..`); each backend a
 * Service (name a DNS-1035 label, a port name or number, not both) or a
 * resource, not both; TLS hosts DNS names, secret names DNS subdomains; the
 * `kubernetes.io/ingress.class` annotation must agree with ingressClassName.
 * The status is written through /status; generation follows the spec.
 *
 * IngressClass: the controller a domain-prefixed path, immutable; parameters
 * a kind and name, with a scope (defaulted to Cluster) and a namespace only
 * for the Namespace scope.
 */
import type { networkingv1 } from '@kubeling/api';
import {
  field,
  isDNS1123Subdomain,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  isWildcardDNS1123Subdomain,
  nameIsDNS1035Label,
  nameIsDNSSubdomain,
  regexError,
  validateImmutableField,
  validateNamespaceName,
  type FieldError,
} from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';
import { isValidIPForLegacyField, looksLikeIP } from './ip.js';

type Ingress = networkingv1.Ingress;
type Backend = networkingv1.IngressBackend;
type Spec = networkingv1.IngressSpec;
type Rule = NonNullable<Spec['rules']>[number];

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const INVALID_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_SUFFIXES = ['/..', '/.'];
const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

const ingressOf = (o: unknown) => o as Ingress;

function validateTypedReference(ref: { apiGroup?: string; kind?: string; name?: string }, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (ref.apiGroup !== undefined && ref.apiGroup !== null)
    for (const m of isDNS1123Subdomain(ref.apiGroup)) errs.push(field.invalid(`${p}.apiGroup`, ref.apiGroup, m));
  if (!ref.kind) errs.push(field.required(`${p}.kind`, 'kind is required'));
  else for (const m of isValidPathSegmentName(ref.kind)) errs.push(field.invalid(`${p}.kind`, ref.kind, m));
  if (!ref.name) errs.push(field.required(`${p}.name`, 'name is required'));
  else for (const m of isValidPathSegmentName(ref.name)) errs.push(field.invalid(`${p}.name`, ref.name, m));
  return errs;
}

function validateBackend(b: Backend, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (b.resource && b.service) return [field.invalid(p, '', 'cannot set both resource and service backends')];
  if (b.resource) return validateTypedReference(b.resource, `${p}.resource`);
  if (!b.service) return [field.invalid(p, '', 'resource or service backend is required')];
  const svc = b.service;
  if (!svc.name) errs.push(field.required(`${p}.service.name`, ''));
  else for (const m of nameIsDNS1035Label(svc.name, false)) errs.push(field.invalid(`${p}.service.name`, svc.name, m));
  const name = svc.port?.name ?? '';
  const number = svc.port?.number ?? 0;
  if (name && number) errs.push(field.invalid(p, '', 'cannot set both port name & port number'));
  else if (name) for (const m of isValidPortName(name)) errs.push(field.invalid(`${p}.service.port.name`, name, m));
  else if (number) for (const m of isValidPortNum(number)) errs.push(field.invalid(`${p}.service.port.number`, number, m));
  else errs.push(field.required(p, 'port name or number is required'));
  return errs;
}

function validateRuleValue(rule: Rule, p: string): FieldError[] {
  if (!rule.http) return [];
  const errs: FieldError[] = [];
  const paths = rule.http.paths ?? [];
  if (!paths.length) errs.push(field.required(`${p}.http.paths`, ''));
  paths.forEach((hp, i) => {
    const pp = `${p}.http.paths[${i}]`;
    if (!hp.pathType) {
      errs.push(field.required(`${pp}.pathType`, 'pathType must be specified'));
      return;
    }
    const path = hp.path ?? '';
    if (hp.pathType === 'Exact' || hp.pathType === 'Prefix') {
      if (!path.startsWith('/')) errs.push(field.invalid(`${pp}.path`, path, 'must be an absolute path'));
      for (const s of INVALID_SEQUENCES) if (path.includes(s)) errs.push(field.invalid(`${pp}.path`, path, `must not contain '${s}'`));
      for (const s of INVALID_SUFFIXES) if (path.endsWith(s)) errs.push(field.invalid(`${pp}.path`, path, `cannot end with '${s}'`));
    } else if (hp.pathType === 'ImplementationSpecific') {
      if (path && !path.startsWith('/')) errs.push(field.invalid(`${pp}.path`, path, 'must be an absolute path'));
    } else errs.push(field.notSupported(`${pp}.pathType`, hp.pathType, PATH_TYPES));
    errs.push(...validateBackend(hp.backend ?? {}, `${pp}.backend`));
  });
  return errs;
}

const secretNameErrors = (name: string | undefined) => (name ? nameIsDNSSubdomain(name, false) : []);

/** Leniency upstream grants updates of objects that were stored before a rule existed. */
interface IngressOptions {
  allowInvalidSecretName: boolean;
  allowInvalidWildcardHostRule: boolean;
}

/** ValidateIngressSpec. */
export function validateIngressSpec(spec: Spec, o: IngressOptions): FieldError[] {
  const errs: FieldError[] = [];
  const rules = spec.rules ?? [];
  // Upstream prints the (empty) rules slice with %#v.
  const goRules = new field.GoValue(spec.rules ? '[]networking.IngressRule{}' : '[]networking.IngressRule(nil)');
  if (!rules.length && !spec.defaultBackend) errs.push(field.invalid('spec', goRules, 'either `defaultBackend` or `rules` must be specified'));
  if (spec.defaultBackend) errs.push(...validateBackend(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((r, i) => {
    const p = `spec.rules[${i}]`;
    let wildcard = false;
    if (r.host) {
      if (looksLikeIP(r.host)) errs.push(field.invalid(`${p}.host`, r.host, 'must be a DNS name, not an IP address'));
      if (r.host.includes('*')) {
        for (const m of isWildcardDNS1123Subdomain(r.host)) errs.push(field.invalid(`${p}.host`, r.host, m));
        wildcard = true;
      } else for (const m of isDNS1123Subdomain(r.host)) errs.push(field.invalid(`${p}.host`, r.host, m));
    }
    if (!wildcard || !o.allowInvalidWildcardHostRule) errs.push(...validateRuleValue(r, p));
  });
  (spec.tls ?? []).forEach((t, ti) => {
    (t.hosts ?? []).forEach((h, i) => {
      const msgs = h.includes('*') ? isWildcardDNS1123Subdomain(h) : isDNS1123Subdomain(h);
      for (const m of msgs) errs.push(field.invalid(`spec.tls[${ti}].hosts[${i}]`, h, m));
    });
    if (!o.allowInvalidSecretName) for (const m of secretNameErrors(t.secretName)) errs.push(field.invalid(`spec.tls[${ti}].secretName`, t.secretName, m));
  });
  if (spec.ingressClassName !== undefined && spec.ingressClassName !== null)
    for (const m of nameIsDNSSubdomain(spec.ingressClassName, false)) errs.push(field.invalid('spec.ingressClassName', spec.ingressClassName, m));
  return errs;
}

/** ValidateIngressLoadBalancerStatus. */
function validateIngressStatus(ing: Ingress): FieldError[] {
  const errs: FieldError[] = [];
  (ing.status?.loadBalancer?.ingress ?? []).forEach((lb, i) => {
    const p = `status.loadBalancer.ingress[${i}]`;
    if (lb.ip) errs.push(...isValidIPForLegacyField(`${p}.ip`, lb.ip));
    if (lb.hostname) {
      for (const m of isDNS1123Subdomain(lb.hostname)) errs.push(field.invalid(`${p}.hostname`, lb.hostname, m));
      if (looksLikeIP(lb.hostname)) errs.push(field.invalid(`${p}.hostname`, lb.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

/**
 * ValidateIngressCreate: the spec, and the class annotation against ingressClassName. The
 * store runs it on updates too (where upstream tolerates invalid secret names and wildcard
 * rules an old object already had, and skips the annotation check): kubeling never stored
 * such objects.
 */
function validateIngress(ing: Ingress): FieldError[] {
  const errs = validateIngressSpec(ing.spec ?? {}, { allowInvalidSecretName: false, allowInvalidWildcardHostRule: false });
  const annotation = ing.metadata?.annotations?.[CLASS_ANNOTATION];
  const cls = ing.spec?.ingressClassName;
  if (annotation !== undefined && cls !== undefined && cls !== null && annotation !== cls)
    errs.push(field.invalid(`annotations.${CLASS_ANNOTATION}`, annotation, 'must match `ingressClassName` when both are specified'));
  return errs;
}

export const ingressStrategy: Strategy = {
  generation: true,
  statusSubresource: true,
  prepareForCreate(obj) {
    obj.status = { loadBalancer: {} };
  },
  validate: (obj) => validateIngress(ingressOf(obj)),
  validateStatusUpdate: (obj) => validateIngressStatus(ingressOf(obj)),
};

const DOMAIN_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

/** validation.IsDomainPrefixedPath. */
function isDomainPrefixedPath(p: string, value: string | undefined): FieldError[] {
  if (!value) return [field.required(p, '')];
  const i = value.indexOf('/');
  const host = i < 0 ? '' : value.slice(0, i);
  const path = i < 0 ? '' : value.slice(i + 1);
  if (!host || !path) return [field.invalid(p, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => field.invalid(p, host, m));
  if (!new RegExp(`^${DOMAIN_PATH_FMT}$`).test(path)) errs.push(field.invalid(p, path, regexError('Invalid path', DOMAIN_PATH_FMT)));
  return errs;
}

type IngressClass = networkingv1.IngressClass;

export const ingressClassStrategy: Strategy = {
  generation: true,
  defaults(obj) {
    const params = (obj as IngressClass).spec?.parameters;
    if (params) params.scope ??= 'Cluster';
  },
  validate(obj) {
    const spec = (obj as IngressClass).spec ?? {};
    const errs: FieldError[] = [];
    if ((spec.controller ?? '').length > 250) errs.push(field.tooLong('spec.controller', '', 250));
    errs.push(...isDomainPrefixedPath('spec.controller', spec.controller));
    const params = spec.parameters;
    if (params) {
      errs.push(...validateTypedReference(params, 'spec.parameters'));
      if (params.scope === undefined || params.scope === null) errs.push(field.required('spec.parameters.scope', ''));
      else if (params.scope !== 'Cluster' && params.scope !== 'Namespace')
        errs.push(field.notSupported('spec.parameters.scope', params.scope, ['Cluster', 'Namespace']));
      else if (params.scope === 'Namespace') {
        if (params.namespace === undefined || params.namespace === null)
          errs.push(field.required('spec.parameters.namespace', "`parameters.scope` is set to 'Namespace'"));
        else for (const m of validateNamespaceName(params.namespace, false)) errs.push(field.invalid('spec.parameters.namespace', params.namespace, m));
      } else if (params.namespace !== undefined && params.namespace !== null)
        errs.push(field.forbidden('spec.parameters.namespace', "`parameters.scope` is set to 'Cluster'"));
    }
    return errs;
  },
  validateUpdate: (obj, old) => validateImmutableField((obj as IngressClass).spec?.controller, (old as IngressClass).spec?.controller, 'spec.controller'),
};
