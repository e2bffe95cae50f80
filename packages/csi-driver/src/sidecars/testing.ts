/**
 * Fakes for the sidecars' unit tests: listers over arrays, an API that records
 * every write (and can be told to fail), a CSI that answers from a table of
 * handlers and records every call, an event recorder, a silent logger, and
 * the driver as the hostpath driver describes itself.
 */
import pino from 'pino';
import type { KubeObject } from '@kubeling/api';
import type { CsiCall, DriverInfo, KubeApi, Lister, Recorder } from './deps.js';

export const silentLog = pino({ level: 'silent' });

/** A lister over objects keyed `ns/name` (or `name`), replaceable between steps. */
export class FakeLister<T extends KubeObject> implements Lister<T> {
  readonly items = new Map<string, T>();

  constructor(objs: T[] = []) {
    for (const o of objs) this.set(o);
  }

  set(o: T): void {
    const m = o.metadata;
    this.items.set(m.namespace ? `${m.namespace}/${m.name}` : m.name!, o);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }
}

export interface ApiCall {
  op: keyof KubeApi;
  args: unknown[];
}

/** Every KubeApi method records its call, then runs `fail[op]` (which may throw) or echoes a plausible answer. */
export function recordingApi(fail: Partial<Record<keyof KubeApi, (...args: any[]) => unknown>> = {}): { api: KubeApi; calls: ApiCall[] } {
  const calls: ApiCall[] = [];
  let rv = 100;
  const answer = (op: keyof KubeApi, args: unknown[], make: () => unknown): Promise<any> => {
    calls.push({ op, args });
    try {
      const f = fail[op];
      return Promise.resolve(f ? f(...args) : make());
    } catch (e) {
      return Promise.reject(e);
    }
  };
  /** The patched object as the server would answer: the patch merged over a named object with a new resourceVersion. */
  const patched = (name: string, patch: object, base: object = {}) => {
    const p = patch as { metadata?: object };
    return { ...base, ...p, metadata: { ...(p.metadata ?? {}), name, resourceVersion: String(++rv) } };
  };
  const api: KubeApi = {
    createPV: (pv) => answer('createPV', [pv], () => ({ ...pv, metadata: { ...pv.metadata, resourceVersion: String(++rv) } })),
    deletePV: (name) => answer('deletePV', [name], () => undefined),
    patchPV: (name, patch) => answer('patchPV', [name, patch], () => patched(name, patch)),
    updateClaim: (claim) => answer('updateClaim', [claim], () => claim),
    patchClaimStatus: (ns, name, patch) =>
      answer('patchClaimStatus', [ns, name, patch], () => {
        const p = patched(name, patch);
        return { ...p, metadata: { ...p.metadata, namespace: ns } };
      }),
    patchVA: (name, patch) => answer('patchVA', [name, patch], () => patched(name, patch, { spec: {} })),
    patchVAStatus: (name, patch) => answer('patchVAStatus', [name, patch], () => patched(name, {}, { spec: {} })),
    createCapacity: (ns, obj) => answer('createCapacity', [ns, obj], () => ({ ...obj, metadata: { ...obj.metadata, namespace: ns, name: `csisc-${++rv}` } })),
    updateCapacity: (obj) => answer('updateCapacity', [obj], () => obj),
    deleteCapacity: (ns, name) => answer('deleteCapacity', [ns, name], () => undefined),
  };
  return { api, calls };
}

export interface CsiRecord {
  method: string;
  req: any;
}

/** A CSI answering `handlers[method](req)`; a method without a handler answers `{}`. */
export function fakeCsi(handlers: Record<string, (req: any) => unknown> = {}): { csi: CsiCall; calls: CsiRecord[] } {
  const calls: CsiRecord[] = [];
  const csi: CsiCall = async (_service, method, req) => {
    calls.push({ method, req });
    const h = handlers[method];
    return (h ? await h(req) : {}) as any;
  };
  return { csi, calls };
}

/** A gRPC error as the CSI client rejects with. */
export function grpcError(code: number, details: string): Error & { code: number; details: string } {
  return Object.assign(new Error(details), { code, details });
}

export interface RecordedEvent {
  name: string | undefined;
  type: string;
  reason: string;
  message: string;
}

export function recorder(): { event: Recorder; events: RecordedEvent[] } {
  const events: RecordedEvent[] = [];
  return { event: (obj, type, reason, message) => events.push({ name: obj.metadata.name, type, reason, message }), events };
}

export const TOPOLOGY_KEY = 'topology.hostpath.kubeling.io/node';

/** The hostpath driver on node `n1`. */
export function driverInfo(over: Partial<DriverInfo> = {}): DriverInfo {
  return {
    name: 'hostpath.csi.kubeling.io',
    nodeName: 'n1',
    nodeId: 'n1',
    topology: { [TOPOLOGY_KEY]: 'n1' },
    plugin: new Set(['CONTROLLER_SERVICE', 'VOLUME_ACCESSIBILITY_CONSTRAINTS']),
    controller: new Set(['CREATE_DELETE_VOLUME', 'PUBLISH_UNPUBLISH_VOLUME', 'EXPAND_VOLUME', 'GET_CAPACITY']),
    ...over,
  };
}
