/**
 * Node ports of NodePort and LoadBalancer Services (upstream's
 * portallocator and the service REST's node-port handling):
 *
 * - the range is 30000-32767 (`KUBELING_SERVICE_NODE_PORT_RANGE`, as
 *   `--service-node-port-range` sets it upstream);
 * - each port is a key of its own, `/registry/servicenodeports/<port>`, naming
 *   the Service that holds it: taking one is a create-if-absent, so two
 *   Services never get the same port (a Service's TCP and UDP ports of the
 *   same number share one);
 * - on create every port without a nodePort gets a random free one; on update
 *   a port keeps the nodePort the old object gave the same port and protocol,
 *   new ports get new ones, and the ports no longer used are given back after
 *   the write; a type without node ports drops them.
 */
import { randomInt } from 'node:crypto';
import type { KubeObject } from '@kubeling/api';
import { field, internalError, type FieldError } from '@kubeling/apimachinery';
import { StorageKeyExists, type EtcdStorage } from '../../storage/etcd.js';

type Port = { name?: string; port?: number; protocol?: string; nodePort?: number };
type Spec = { type?: string; ports?: Port[] };

export function nodePortRange(): { base: number; size: number } {
  const m = /^(\d+)-(\d+)$/.exec(process.env.KUBELING_SERVICE_NODE_PORT_RANGE ?? '30000-32767');
  const lo = Number(m?.[1] ?? 30000);
  const hi = Number(m?.[2] ?? 32767);
  return { base: lo, size: hi - lo + 1 };
}

const rangeText = () => {
  const r = nodePortRange();
  return `${r.base}-${r.base + r.size - 1}`;
};

export const wantsNodePorts = (spec: Spec): boolean => spec.type === 'NodePort' || spec.type === 'LoadBalancer';

const key = (port: number) => `/registry/servicenodeports/${port}`;

function holder(svc: KubeObject): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ServiceNodePort',
    metadata: { name: '' },
    spec: { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name ?? '' },
  };
}

async function take(storage: EtcdStorage, port: number, svc: KubeObject, dryRun: boolean): Promise<boolean> {
  const cur = await storage.get(key(port));
  if (cur) {
    const ref = cur.obj.spec as { namespace?: string; name?: string };
    // Already this Service's (an update keeping it).
    return ref.namespace === (svc.metadata.namespace ?? '') && ref.name === svc.metadata.name;
  }
  if (dryRun) return true;
  try {
    await storage.create(key(port), holder(svc));
    return true;
  } catch (e) {
    if (e instanceof StorageKeyExists) return false;
    throw e;
  }
}

/** Gives back ports this Service holds. */
export async function releaseNodePorts(storage: EtcdStorage, svc: KubeObject, ports: Iterable<number>): Promise<void> {
  for (const p of ports) {
    const cur = await storage.get(key(p));
    const ref = cur?.obj.spec as { namespace?: string; name?: string } | undefined;
    if (cur && ref?.namespace === (svc.metadata.namespace ?? '') && ref?.name === svc.metadata.name)
      await storage.delete(key(p), cur.rev).catch(() => undefined);
  }
}

export const nodePortsOf = (svc: KubeObject): Set<number> =>
  new Set(((svc.spec as Spec | undefined)?.ports ?? []).map((p) => p.nodePort).filter((p): p is number => !!p));

/** Field errors of nodePort values the API refuses before any allocation. */
export function validateNodePorts(spec: Spec): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (spec.ports ?? []).forEach((p, i) => {
    if (p.nodePort === undefined || p.nodePort === 0) return;
    const path = `spec.ports[${i}].nodePort`;
    if (!wantsNodePorts(spec)) {
      errs.push(field.forbidden(path, `may not be used when \`type\` is '${spec.type ?? 'ClusterIP'}'`));
      return;
    }
    if (!Number.isInteger(p.nodePort) || p.nodePort < 1 || p.nodePort > 65535) {
      errs.push(field.invalid(path, p.nodePort, 'must be between 1 and 65535, inclusive'));
      return;
    }
    const k = `${p.protocol ?? 'TCP'}/${p.nodePort}`;
    if (seen.has(k)) errs.push(field.duplicate(path, p.nodePort));
    seen.add(k);
  });
  return errs;
}

/**
 * Takes the node ports `obj` needs, keeping those of `old` for the same port
 * and protocol. Answers the field errors, and the ports taken now (to give
 * back if the write fails).
 */
export async function allocateNodePorts(
  obj: KubeObject,
  old: KubeObject | undefined,
  storage: EtcdStorage,
  dryRun: boolean,
): Promise<{ errors: FieldError[]; taken: number[] }> {
  const spec = (obj.spec ?? {}) as Spec;
  const taken: number[] = [];
  if (!wantsNodePorts(spec)) {
    for (const p of spec.ports ?? []) delete p.nodePort;
    return { errors: [], taken };
  }
  const oldPorts = wantsNodePorts((old?.spec ?? {}) as Spec) ? (((old?.spec ?? {}) as Spec).ports ?? []) : [];
  const held = old ? nodePortsOf(old) : new Set<number>();
  const { base, size } = nodePortRange();
  const errors: FieldError[] = [];
  // A service port number allocated for one protocol shares its node port with the other (upstream's initNodePorts).
  const byServicePort = new Map<number, number>();
  for (const [i, p] of (spec.ports ?? []).entries()) {
    if (!p.nodePort) {
      const prev = oldPorts.find((o) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP') && o.nodePort);
      if (prev?.nodePort) p.nodePort = prev.nodePort;
      else if (p.port !== undefined && byServicePort.has(p.port)) p.nodePort = byServicePort.get(p.port)!;
    }
    if (p.nodePort) {
      if (p.port !== undefined) byServicePort.set(p.port, p.nodePort);
      if (held.has(p.nodePort) || taken.includes(p.nodePort)) continue;
      if (p.nodePort < base || p.nodePort >= base + size) {
        errors.push(
          field.invalid(`spec.ports[${i}].nodePort`, p.nodePort, `provided port is not in the valid range. The range of valid ports is ${rangeText()}`),
        );
        continue;
      }
      if (!(await take(storage, p.nodePort, obj, dryRun))) {
        errors.push(field.invalid(`spec.ports[${i}].nodePort`, p.nodePort, 'provided port is already allocated'));
        continue;
      }
      taken.push(p.nodePort);
      continue;
    }
    let got = 0;
    for (let attempt = 0; attempt < 64 && !got; attempt++) {
      const candidate = base + randomInt(0, size);
      if (held.has(candidate) || taken.includes(candidate)) continue;
      if (await take(storage, candidate, obj, dryRun)) got = candidate;
    }
    if (!got) {
      await releaseNodePorts(storage, obj, taken);
      throw internalError('failed to allocate a nodePort: range is full');
    }
    p.nodePort = got;
    if (p.port !== undefined) byServicePort.set(p.port, got);
    taken.push(got);
  }
  if (errors.length && !dryRun) await releaseNodePorts(storage, obj, taken);
  return { errors, taken: dryRun ? [] : taken };
}
