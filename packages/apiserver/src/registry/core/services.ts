/**
 * Services: defaults (ClusterIP type, TCP, targetPort = port, session affinity),
 * a cluster IP from the service range (inside 127.0.0.0/8 by default, so nothing
 * leaves the machine), port validation, and the immutable clusterIP.
 */
import { randomInt } from 'node:crypto';
import type { KubeObject } from '@kubeling/api';
import { field, isValidPortName, isDNS1123Label, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

type Port = { name?: string; port?: number; targetPort?: number | string; protocol?: string; nodePort?: number };
type Spec = {
  type?: string;
  ports?: Port[];
  clusterIP?: string;
  clusterIPs?: string[];
  sessionAffinity?: string;
  selector?: Record<string, string>;
  externalName?: string;
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  internalTrafficPolicy?: string;
};
const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

/** The service IP range: 127.1.0.0/16 unless KUBELING_SERVICE_CIDR_PREFIX names another /16 prefix. */
function allocateIP(): string {
  const prefix = process.env.KUBELING_SERVICE_CIDR_PREFIX ?? '127.1';
  return `${prefix}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
}

const specOf = (o: KubeObject) => (o.spec ??= {}) as Spec;

export const serviceStrategy: Strategy = {
  statusSubresource: true,
  returnDeletedObject: true,
  defaults(obj) {
    const s = specOf(obj);
    s.type ??= 'ClusterIP';
    s.sessionAffinity ??= 'None';
    if (s.type !== 'ExternalName') {
      s.internalTrafficPolicy ??= 'Cluster';
      for (const p of s.ports ?? []) {
        p.protocol ??= 'TCP';
        p.targetPort ??= p.port;
      }
    }
  },
  prepareForCreate(obj) {
    obj.status = { loadBalancer: {} };
    const s = specOf(obj);
    if ((s.type ?? 'ClusterIP') !== 'ExternalName') {
      if (!s.clusterIP) s.clusterIP = s.clusterIPs?.[0] ?? allocateIP();
      s.clusterIPs = [s.clusterIP];
      if (s.clusterIP !== 'None') {
        s.ipFamilies ??= ['IPv4'];
        s.ipFamilyPolicy ??= 'SingleStack';
      }
    }
  },
  validate(obj) {
    const s = specOf(obj);
    const errs: FieldError[] = [];
    if (s.type && !TYPES.includes(s.type)) errs.push(field.notSupported('spec.type', s.type, TYPES));
    if (s.type === 'ExternalName') {
      if (!s.externalName) errs.push(field.required('spec.externalName', ''));
      return errs;
    }
    const ports = s.ports ?? [];
    if (ports.length === 0 && s.clusterIP !== 'None') errs.push(field.required('spec.ports', ''));
    const names = new Set<string>();
    ports.forEach((p, i) => {
      const path = `spec.ports[${i}]`;
      if (ports.length > 1 && !p.name) errs.push(field.required(`${path}.name`, ''));
      if (p.name) {
        for (const m of isDNS1123Label(p.name)) errs.push(field.invalid(`${path}.name`, p.name, m));
        if (names.has(p.name)) errs.push(field.duplicate(`${path}.name`, p.name));
        names.add(p.name);
      }
      if (p.port === undefined || !Number.isInteger(p.port) || p.port < 1 || p.port > 65535) {
        errs.push(p.port === undefined ? field.required(`${path}.port`, '') : field.invalid(`${path}.port`, p.port, 'must be between 1 and 65535, inclusive'));
      }
      if (p.protocol && !PROTOCOLS.includes(p.protocol)) errs.push(field.notSupported(`${path}.protocol`, p.protocol, PROTOCOLS));
      if (typeof p.targetPort === 'number' && (p.targetPort < 1 || p.targetPort > 65535)) {
        errs.push(field.invalid(`${path}.targetPort`, p.targetPort, 'must be between 1 and 65535, inclusive'));
      }
      if (typeof p.targetPort === 'string') for (const m of isValidPortName(p.targetPort)) errs.push(field.invalid(`${path}.targetPort`, p.targetPort, m));
    });
    return errs;
  },
  prepareForUpdate(obj, old) {
    const s = specOf(obj);
    const o = (old.spec ?? {}) as Spec;
    if (!s.clusterIP && o.clusterIP) s.clusterIP = o.clusterIP;
    if (!s.clusterIPs && o.clusterIPs) s.clusterIPs = o.clusterIPs;
  },
  validateUpdate(obj, old) {
    const s = specOf(obj);
    const o = (old.spec ?? {}) as Spec;
    if (o.clusterIP && s.clusterIP !== o.clusterIP && s.type !== 'ExternalName') {
      return [field.invalid('spec.clusterIPs[0]', s.clusterIP ?? '', 'may not change once set')];
    }
    return [];
  },
  fields: (obj) => ({ 'spec.clusterIP': specOf(obj).clusterIP ?? '', 'spec.type': specOf(obj).type ?? '' }),
};
