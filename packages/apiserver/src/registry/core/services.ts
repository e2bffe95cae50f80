/**
 * Services: defaults (ClusterIP type, TCP, targetPort = port, session affinity),
 * a cluster IP from the service range (inside 127.0.0.0/8 by default, so nothing
 * leaves the machine), port validation, and the immutable clusterIP.
 */
import { randomInt } from 'node:crypto';
import type { KubeObject } from '@kubeling/api';
import { field, internalError, isValidPortName, isDNS1123Label, nameIsDNS1035Label, type FieldError } from '@kubeling/apimachinery';
import { StorageKeyExists, type EtcdStorage } from '../../storage/etcd.js';
import type { Strategy } from '../strategy.js';
import { allocateNodePorts, nodePortsOf, releaseNodePorts, validateNodePorts, wantsNodePorts } from './nodeports.js';

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
const prefix = () => process.env.KUBELING_SERVICE_CIDR_PREFIX ?? '127.1';
const inRange = (ip: string) =>
  ip.startsWith(`${prefix()}.`) &&
  /^\d+\.\d+\.\d+\.\d+$/.test(ip) &&
  ip.split('.').every((o) => Number(o) <= 255) &&
  !ip.endsWith('.0.0') &&
  !ip.endsWith('.255.255');

/**
 * Each allocated IP is a key of its own, `/registry/ipaddresses/<ip>`, holding an
 * IPAddress that names its Service (upstream's IPAddress allocator): taking one
 * is a create-if-absent, so two Services never get the same IP.
 */
const ipKey = (ip: string) => `/registry/ipaddresses/${ip}`;
const ipAddress = (ip: string, svc: KubeObject): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IPAddress',
  metadata: { name: ip, labels: { 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' } },
  spec: { parentRef: { group: '', resource: 'services', namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '' } },
});

const allocationError = (ip: string, detail: string): FieldError => field.invalid('spec.clusterIPs', [ip], `failed to allocate IP ${ip}: ${detail}`);

async function takeIP(storage: EtcdStorage, ip: string, svc: KubeObject, dryRun: boolean): Promise<boolean> {
  if (dryRun) return !(await storage.get(ipKey(ip)));
  try {
    await storage.create(ipKey(ip), ipAddress(ip, svc));
    return true;
  } catch (e) {
    if (e instanceof StorageKeyExists) return false;
    throw e;
  }
}

const specOf = (o: KubeObject) => (o.spec ??= {}) as Spec;

/**
 * The start-up half of upstream's IP repair: every Service's cluster IP is
 * recorded (Services stored before IPs were, or after a lost write, get their
 * IPAddress key). Returns the IPs recorded now. An IP another Service already
 * holds is left as it is.
 */
export async function repairServiceIPs(storage: EtcdStorage, services: readonly KubeObject[]): Promise<string[]> {
  const added: string[] = [];
  for (const svc of services) {
    const ip = (svc.spec as Spec | undefined)?.clusterIP;
    if (!ip || ip === 'None' || !inRange(ip)) continue;
    if (await storage.get(ipKey(ip))) continue;
    if (await takeIP(storage, ip, svc, false)) added.push(ip);
  }
  return added;
}

/** The Service's cluster IP: the one it names (in range and free), or a random free one. */
async function allocateClusterIP(obj: KubeObject, storage: EtcdStorage, dryRun: boolean): Promise<FieldError[]> {
  const s = specOf(obj);
  if (s.clusterIP === 'None') return [];
  if (s.clusterIP) {
    if (!inRange(s.clusterIP))
      return [allocationError(s.clusterIP, `the provided IP (${s.clusterIP}) is not in the valid range. The range of valid IPs is ${prefix()}.0.0/16`)];
    if (!(await takeIP(storage, s.clusterIP, obj, dryRun))) return [allocationError(s.clusterIP, 'provided IP is already allocated')];
    return [];
  }
  for (let attempt = 0; attempt < 64; attempt++) {
    const ip = `${prefix()}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    if (await takeIP(storage, ip, obj, dryRun)) {
      s.clusterIP = ip;
      s.clusterIPs = [ip];
      return [];
    }
  }
  throw internalError('failed to allocate a serviceIP: range is full');
}

/** Gives a cluster IP back, if this Service is the one that holds it. */
async function releaseIP(storage: EtcdStorage, ip: string, svc: KubeObject): Promise<void> {
  if (ip === 'None') return;
  const cur = await storage.get(ipKey(ip));
  const ref = (cur?.obj.spec as { parentRef?: { namespace?: string; name?: string } } | undefined)?.parentRef;
  if (cur && ref?.namespace === (svc.metadata.namespace ?? '') && ref?.name === svc.metadata.name) await storage.delete(ipKey(ip), cur.rev);
}

export const serviceStrategy: Strategy = {
  // Service names are DNS-1035 labels (ValidateServiceName): they become DNS names and env var prefixes.
  nameValidation: nameIsDNS1035Label,
  statusSubresource: true,
  returnDeletedObject: true,
  defaults(obj) {
    const s = specOf(obj);
    s.type ??= 'ClusterIP';
    s.sessionAffinity ??= 'None';
    if (s.type !== 'ExternalName') s.internalTrafficPolicy ??= 'Cluster';
    for (const p of s.ports ?? []) {
      p.protocol ??= 'TCP';
      // An unset targetPort is the port; so is 0 or "", as a Go client sends an unset IntOrString.
      if (p.port !== undefined && (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '')) p.targetPort = p.port;
    }
  },
  prepareForCreate(obj) {
    obj.status = { loadBalancer: {} };
    const s = specOf(obj);
    if ((s.type ?? 'ClusterIP') !== 'ExternalName') {
      // The IP itself comes from `allocate`, once the Service is valid.
      if (!s.clusterIP && s.clusterIPs?.[0]) s.clusterIP = s.clusterIPs[0];
      if (s.clusterIP) s.clusterIPs = [s.clusterIP];
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
    errs.push(...validateNodePorts(s));
    return errs;
  },
  async allocate(obj, storage, dryRun) {
    const s = specOf(obj);
    if ((s.type ?? 'ClusterIP') === 'ExternalName') return [];
    const ports = await allocateNodePorts(obj, undefined, storage, dryRun);
    if (ports.errors.length) return ports.errors;
    const errs = await allocateClusterIP(obj, storage, dryRun);
    if (errs.length) await releaseNodePorts(storage, obj, ports.taken);
    return errs;
  },
  async allocateUpdate(obj, old, storage, dryRun) {
    const s = specOf(obj);
    const o = (old.spec ?? {}) as Spec;
    const { errors, taken } = await allocateNodePorts(obj, old, storage, dryRun);
    const kept = nodePortsOf(obj);
    // A Service moving off ExternalName gets its cluster IP now; one moving onto it gives its IP back.
    const needsIP = (s.type ?? 'ClusterIP') !== 'ExternalName' && s.clusterIP !== 'None';
    const newIP = needsIP && !o.clusterIP;
    if (!errors.length && newIP) {
      const ipErrors = await allocateClusterIP(obj, storage, dryRun);
      if (ipErrors.length) {
        await releaseNodePorts(storage, obj, taken);
        return { errors: ipErrors, commit: async () => undefined, abort: async () => undefined };
      }
    }
    return {
      errors,
      commit: async () => {
        await releaseNodePorts(
          storage,
          old,
          [...nodePortsOf(old)].filter((p) => !kept.has(p)),
        );
        if (o.clusterIP && o.clusterIP !== s.clusterIP) await releaseIP(storage, o.clusterIP, old);
      },
      abort: async () => {
        await releaseNodePorts(storage, obj, taken);
        if (newIP && !errors.length && s.clusterIP && !dryRun) await releaseIP(storage, s.clusterIP, obj);
      },
    };
  },
  async release(obj, storage) {
    await releaseNodePorts(storage, obj, nodePortsOf(obj));
    const ip = specOf(obj).clusterIP;
    if (ip) await releaseIP(storage, ip, obj);
  },
  prepareForUpdate(obj, old) {
    const s = specOf(obj);
    const o = (old.spec ?? {}) as Spec;
    if (s.type === 'ExternalName') {
      // dropTypeDependentFields: an ExternalName Service has no cluster IP; the old one goes unless the user changed it.
      if (!s.clusterIP || s.clusterIP === o.clusterIP) {
        for (const k of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy'] as const) delete s[k];
      }
    } else {
      if (!s.clusterIP && o.clusterIP) s.clusterIP = o.clusterIP;
      if (!s.clusterIPs && o.clusterIPs) s.clusterIPs = o.clusterIPs;
      if (o.type === 'ExternalName' || !o.clusterIP) {
        // Off ExternalName: normalized as on create; `allocateUpdate` allocates the IP.
        if (!s.clusterIP && s.clusterIPs?.[0]) s.clusterIP = s.clusterIPs[0];
        if (s.clusterIP) s.clusterIPs = [s.clusterIP];
        if (s.clusterIP !== 'None') {
          s.ipFamilies ??= ['IPv4'];
          s.ipFamilyPolicy ??= 'SingleStack';
        }
      }
    }
    // dropTypeDependentFields: a type without node ports drops those the old type had, unless the user changed them.
    if (wantsNodePorts(o) && !wantsNodePorts(s)) {
      const before = nodePortsOf(old);
      for (const p of s.ports ?? []) if (p.nodePort && before.has(p.nodePort)) delete p.nodePort;
    }
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
