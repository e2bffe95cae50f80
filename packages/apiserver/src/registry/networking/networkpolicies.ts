/**
 * NetworkPolicies, ServiceCIDRs and IPAddresses (kubernetes
 * pkg/registry/networking/{networkpolicy,servicecidr,ipaddress}, validation
 * from pkg/apis/networking/validation, defaults from
 * pkg/apis/networking/v1/defaults.go).
 *
 * NetworkPolicy: ports TCP by default, policyTypes defaulted from the rules
 * (Ingress, plus Egress when there are egress rules); ports valid numbers or
 * names, endPort only after a numeric port; every peer names a selector or an
 * ipBlock (not both); ipBlock excepts strict subsets of its CIDR.
 *
 * ServiceCIDR: one CIDR, or two of different families, in canonical form;
 * immutable; status through /status.
 *
 * IPAddress: named after the address in canonical form, with a parent
 * reference (resource and name required) that never changes. The Service IP
 * allocator stores these objects under the same keys (core/services.ts).
 */
import type { networkingv1 } from '@kubeling/api';
import {
  field,
  isDNS1123Subdomain,
  isValidPathSegmentName,
  isValidPortName,
  isValidPortNum,
  FIELD_IMMUTABLE_ERROR_MSG,
  jsonEqual,
  validateLabelSelector,
  type FieldError,
  type NameValidator,
} from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';
import { cidrContains, cidrForLegacyField, familyOf, isValidCIDR, isValidIP } from './ip.js';

type NetworkPolicy = networkingv1.NetworkPolicy;
type Port = networkingv1.NetworkPolicyPort;
type Peer = networkingv1.NetworkPolicyPeer;

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const goStrings = (type: string, items: readonly string[]) => new field.GoValue(`${type}{${items.map((i) => field.goQuote(i)).join(', ')}}`);

function validatePort(port: Port, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (port.protocol !== undefined && port.protocol !== null && !PROTOCOLS.includes(port.protocol))
    errs.push(field.notSupported(`${p}.protocol`, port.protocol, PROTOCOLS));
  const endPort = port.endPort ?? undefined;
  if (port.port === undefined || port.port === null) {
    if (endPort !== undefined) errs.push(field.invalid(`${p}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  } else if (typeof port.port === 'number') {
    for (const m of isValidPortNum(port.port)) errs.push(field.invalid(`${p}.port`, port.port, m));
    if (endPort !== undefined) {
      if (endPort < port.port) errs.push(field.invalid(`${p}.endPort`, port.port, 'must be greater than or equal to `port`'));
      for (const m of isValidPortNum(endPort)) errs.push(field.invalid(`${p}.endPort`, endPort, m));
    }
  } else {
    if (endPort !== undefined) errs.push(field.invalid(`${p}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
    for (const m of isValidPortName(port.port)) errs.push(field.invalid(`${p}.port`, port.port, m));
  }
  return errs;
}

function validateIPBlock(b: NonNullable<Peer['ipBlock']>, p: string): FieldError[] {
  if (!b.cidr) return [field.required(`${p}.cidr`, '')];
  const { cidr, errs } = cidrForLegacyField(`${p}.cidr`, b.cidr);
  if (!cidr) return errs;
  (b.except ?? []).forEach((e, i) => {
    const ep = `${p}.except[${i}]`;
    const ex = cidrForLegacyField(ep, e);
    errs.push(...ex.errs);
    if (!ex.cidr) return;
    if (!cidrContains(cidr, ex.cidr.bytes) || cidr.prefix >= ex.cidr.prefix) errs.push(field.invalid(ep, e, 'must be a strict subset of `cidr`'));
  });
  return errs;
}

function validatePeer(peer: Peer, p: string): FieldError[] {
  const errs: FieldError[] = [];
  let n = 0;
  if (peer.podSelector) {
    n++;
    errs.push(...validateLabelSelector(peer.podSelector, `${p}.podSelector`));
  }
  if (peer.namespaceSelector) {
    n++;
    errs.push(...validateLabelSelector(peer.namespaceSelector, `${p}.namespaceSelector`));
  }
  if (peer.ipBlock) {
    n++;
    errs.push(...validateIPBlock(peer.ipBlock, `${p}.ipBlock`));
  }
  if (n === 0) errs.push(field.required(p, 'must specify a peer'));
  else if (n > 1 && peer.ipBlock) errs.push(field.forbidden(p, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** ValidateNetworkPolicySpec. */
export function validateNetworkPolicySpec(spec: NetworkPolicy['spec'] = {}): FieldError[] {
  const errs = validateLabelSelector(spec.podSelector ?? {}, 'spec.podSelector');
  (spec.ingress ?? []).forEach((r, i) => {
    (r.ports ?? []).forEach((port, j) => errs.push(...validatePort(port, `spec.ingress[${i}].ports[${j}]`)));
    (r.from ?? []).forEach((peer, j) => errs.push(...validatePeer(peer, `spec.ingress[${i}].from[${j}]`)));
  });
  (spec.egress ?? []).forEach((r, i) => {
    (r.ports ?? []).forEach((port, j) => errs.push(...validatePort(port, `spec.egress[${i}].ports[${j}]`)));
    (r.to ?? []).forEach((peer, j) => errs.push(...validatePeer(peer, `spec.egress[${i}].to[${j}]`)));
  });
  const types = spec.policyTypes ?? [];
  if (types.length > 2)
    return [...errs, field.invalid('spec.policyTypes', goStrings('[]networking.PolicyType', types), 'may not specify more than two policyTypes')];
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress') errs.push(field.notSupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress']));
  });
  return errs;
}

export const networkPolicyStrategy: Strategy = {
  generation: true,
  defaults(obj) {
    const spec = ((obj as NetworkPolicy).spec ??= {});
    spec.podSelector ??= {};
    for (const r of spec.ingress ?? []) for (const port of r.ports ?? []) port.protocol ??= 'TCP';
    for (const r of spec.egress ?? []) for (const port of r.ports ?? []) port.protocol ??= 'TCP';
    if (!spec.policyTypes?.length) spec.policyTypes = spec.egress?.length ? ['Ingress', 'Egress'] : ['Ingress'];
  },
  validate: (obj) => validateNetworkPolicySpec((obj as NetworkPolicy).spec),
};

type ServiceCIDR = networkingv1.ServiceCIDR;

const goCIDRSpec = (cidrs: readonly string[]) => new field.GoValue(`networking.ServiceCIDRSpec{CIDRs:${goStrings('[]string', cidrs).text}}`);

export const serviceCIDRStrategy: Strategy = {
  statusSubresource: true,
  prepareForCreate(obj) {
    delete obj.status;
  },
  validate(obj) {
    const cidrs = (obj as ServiceCIDR).spec?.cidrs ?? [];
    if (!cidrs.length) return [field.required('spec.cidrs', 'at least one CIDR required')];
    if (cidrs.length > 2) return [field.invalid('spec.cidrs', goCIDRSpec(cidrs), 'may only hold up to 2 values')];
    if (cidrs.length === 2) {
      const [a, b] = cidrs.map(familyOf);
      if (!a || !b || a === b)
        return [field.invalid('spec.cidrs', goCIDRSpec(cidrs), 'may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64')];
    }
    return cidrs.flatMap((c, i) => isValidCIDR(`spec.cidrs[${i}]`, c));
  },
  validateUpdate(obj, old) {
    const cidrs = (obj as ServiceCIDR).spec?.cidrs ?? [];
    return jsonEqual(cidrs, (old as ServiceCIDR).spec?.cidrs ?? [])
      ? []
      : [field.invalid('spec.cidrs', goStrings('[]string', cidrs), FIELD_IMMUTABLE_ERROR_MSG)];
  },
};

type IPAddress = networkingv1.IPAddress;

/** ValidateIPAddressName: the address itself, strict and canonical. */
const ipAddressName: NameValidator = (name) => isValidIP('', name).map((e) => e.detail ?? '');

export const ipAddressStrategy: Strategy = {
  nameValidation: ipAddressName,
  validate(obj) {
    const ref = (obj as IPAddress).spec?.parentRef;
    if (!ref) return [field.required('spec.parentRef', '')];
    const p = 'spec.parentRef';
    const errs: FieldError[] = [];
    if (ref.group) for (const m of isDNS1123Subdomain(ref.group)) errs.push(field.invalid(`${p}.group`, ref.group, m));
    if (!ref.resource) errs.push(field.required(`${p}.resource`, ''));
    else for (const m of isValidPathSegmentName(ref.resource)) errs.push(field.invalid(`${p}.resource`, ref.resource, m));
    if (!ref.name) errs.push(field.required(`${p}.name`, ''));
    else for (const m of isValidPathSegmentName(ref.name)) errs.push(field.invalid(`${p}.name`, ref.name, m));
    if (ref.namespace) for (const m of isValidPathSegmentName(ref.namespace)) errs.push(field.invalid(`${p}.namespace`, ref.namespace, m));
    return errs;
  },
  validateUpdate(obj, old) {
    const ref = (obj as IPAddress).spec?.parentRef;
    if (jsonEqual(ref ?? null, (old as IPAddress).spec?.parentRef ?? null)) return [];
    const q = (v: string | undefined) => field.goQuote(v ?? '');
    const shown = ref
      ? new field.GoValue(`networking.ParentReference{Group:${q(ref.group)}, Resource:${q(ref.resource)}, Namespace:${q(ref.namespace)}, Name:${q(ref.name)}}`)
      : null;
    return [field.invalid('spec.parentRef', shown, FIELD_IMMUTABLE_ERROR_MSG)];
  },
};
