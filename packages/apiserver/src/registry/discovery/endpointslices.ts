/**
 * EndpointSlice validation, as upstream's pkg/apis/discovery/validation: an
 * address type from the three known, immutable; at most 1000 endpoints of 1 to
 * 100 addresses each, IPs of the slice's family; at most 100 ports with unique
 * DNS-label names and protocols TCP, UDP or SCTP.
 */
import type { discoveryv1 } from '@kubeling/api';
import { field, isDNS1123Label, isValidIP, isDNS1123Subdomain, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 100;

function validateAddress(addr: unknown, type: string, p: string): FieldError[] {
  if (typeof addr !== 'string') return [field.invalid(p, addr, 'must be a string')];
  if (type === 'FQDN') return isDNS1123Subdomain(addr).map((m) => field.invalid(p, addr, m));
  const bad = isValidIP(addr);
  if (bad.length) return bad.map((m) => field.invalid(p, addr, m));
  if (type === 'IPv4' && addr.includes(':')) return [field.invalid(p, addr, 'must be an IPv4 address')];
  if (type === 'IPv6' && !addr.includes(':')) return [field.invalid(p, addr, 'must be an IPv6 address')];
  return [];
}

export const endpointSliceStrategy: Strategy = {
  defaults(obj) {
    for (const port of (obj as discoveryv1.EndpointSlice).ports ?? []) port.protocol ??= 'TCP';
  },
  validate(obj) {
    const slice = obj as discoveryv1.EndpointSlice;
    const errs: FieldError[] = [];
    const type = slice.addressType;
    if (!type) errs.push(field.required('addressType', ''));
    else if (!ADDRESS_TYPES.includes(type)) errs.push(field.notSupported('addressType', type, ADDRESS_TYPES));
    const endpoints = slice.endpoints;
    if (!Array.isArray(endpoints)) errs.push(field.required('endpoints', ''));
    else {
      if (endpoints.length > MAX_ENDPOINTS) errs.push(field.tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
      endpoints.forEach((e, i) => {
        const p = `endpoints[${i}]`;
        const addrs = e.addresses ?? [];
        if (!addrs.length) errs.push(field.required(`${p}.addresses`, 'must contain at least 1 address'));
        else if (addrs.length > MAX_ADDRESSES) errs.push(field.tooMany(`${p}.addresses`, addrs.length, MAX_ADDRESSES));
        if (type && ADDRESS_TYPES.includes(type)) addrs.forEach((a, j) => errs.push(...validateAddress(a, type, `${p}.addresses[${j}]`)));
        if (e.hostname !== undefined) for (const m of isDNS1123Label(String(e.hostname))) errs.push(field.invalid(`${p}.hostname`, e.hostname, m));
      });
    }
    const ports = slice.ports ?? [];
    if (ports.length > MAX_PORTS) errs.push(field.tooMany('ports', ports.length, MAX_PORTS));
    const names = new Set<string>();
    ports.forEach((port, i) => {
      const p = `ports[${i}]`;
      const name = port.name ?? '';
      if (name) for (const m of isDNS1123Label(name)) errs.push(field.invalid(`${p}.name`, name, m));
      if (names.has(name)) errs.push(field.duplicate(`${p}.name`, name));
      names.add(name);
      if (port.protocol === undefined || !['TCP', 'UDP', 'SCTP'].includes(port.protocol))
        errs.push(field.notSupported(`${p}.protocol`, port.protocol, ['SCTP', 'TCP', 'UDP']));
      if (port.port !== undefined && port.port !== null && !(Number.isInteger(port.port) && port.port >= 1 && port.port <= 65535))
        errs.push(field.invalid(`${p}.port`, port.port, 'must be between 1 and 65535, inclusive'));
    });
    return errs;
  },
  validateUpdate(obj, old) {
    return obj.addressType === old.addressType ? [] : [field.invalid('addressType', obj.addressType, 'field is immutable')];
  },
};
