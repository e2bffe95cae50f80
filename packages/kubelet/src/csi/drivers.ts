/**
 * The CSI drivers registered on this node (kubernetes pkg/volume/csi
 * csi_drivers_store.go, csi_plugin.go highestSupportedVersion, csi_client.go):
 * driver name → endpoint and highest supported CSI version, a client per
 * driver opened on first use and closed when the driver goes, and its node
 * capabilities asked once per registration. A driver that is not registered
 * answers upstream's "driver name … not found in the list of registered CSI
 * drivers". Listeners hear of every registration and deregistration, so work
 * waiting on a driver can go on at once.
 */
import { CsiClient, CsiError, codeName } from '@kubeling/csi';

/** What the kubelet needs of a connection to a driver (`@kubeling/csi` CsiClient). */
export interface CsiConn {
  call<T = any>(service: 'Identity' | 'Controller' | 'Node', method: string, req: object, o?: { timeoutMs?: number }): Promise<T>;
  close(): void;
}

export type ConnFactory = (endpoint: string) => CsiConn;

export const defaultConnFactory: ConnFactory = (endpoint) => new CsiClient(endpoint);

/** upstream csiTimeout. */
export const CSI_TIMEOUT_MS = 120_000;

interface Driver {
  endpoint: string;
  version: number[];
  conn?: CsiConn;
  nodeCaps?: Promise<Set<string>> | undefined;
}

/** An error from a driver as grpc-go prints it: `rpc error: code = NotFound desc = …`. */
export function rpcErrorText(e: unknown): string {
  if (e instanceof CsiError) return `rpc error: code = ${codeName(e.code)} desc = ${e.details}`;
  return e instanceof Error ? e.message : String(e);
}

/** utilversion.ParseGeneric: an optional `v`, then dot-separated numbers (at least two). */
function parseVersion(s: string): number[] | undefined {
  const m = /^v?(\d+(?:\.\d+)+)(.*)$/.exec(s.trim());
  if (!m) return undefined;
  return m[1]!.split('.').map(Number);
}

function lessThan(a: number[], b: number[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

const versionText = (v: number[]): string => v.join('.');

/**
 * highestSupportedVersion: the highest 1.x version a driver offers (0.x is no
 * longer supported, 2.x and later are not known to be compatible).
 */
export function highestSupportedVersion(versions: string[]): number[] {
  if (!versions.length) throw new Error('kubernetes.io/csi: CSI driver reporting empty array for supported versions');
  let highest: number[] | undefined;
  let parseErr = '';
  for (const s of [...versions].reverse()) {
    const v = parseVersion(s);
    if (!v) {
      parseErr = `could not parse "${s}" as version`;
      continue;
    }
    if (v[0]! > 1) continue;
    if (!highest || lessThan(highest, v)) highest = v;
  }
  if (!highest)
    throw new Error(`could not find a highest supported version from versions (${JSON.stringify(versions)}) reported by this driver: ${parseErr || '<nil>'}`);
  if (highest[0] !== 1) throw new Error(`highest supported version reported by driver is ${versionText(highest)}, must be v1.x`);
  return highest;
}

export class DriverRegistry {
  private readonly drivers = new Map<string, Driver>();
  private readonly listeners = new Set<(name: string, registered: boolean) => void>();

  constructor(private readonly connect: ConnFactory = defaultConnFactory) {}

  /** validateVersions: the version to register with, or why the driver cannot be registered. */
  validate(caller: string, name: string, versions: string[]): number[] {
    if (!versions.length) throw new Error(`kubernetes.io/csi: ${caller} for CSI driver "${name}" failed. Plugin returned an empty list for supported versions`);
    let v: number[];
    try {
      v = highestSupportedVersion(versions);
    } catch (e) {
      throw new Error(
        `kubernetes.io/csi: ${caller} for CSI driver "${name}" failed. None of the versions specified ${JSON.stringify(versions)} are supported. err=${(e as Error).message}`,
      );
    }
    const existing = this.drivers.get(name);
    if (existing && !lessThan(existing.version, v)) {
      throw new Error(
        `kubernetes.io/csi: ${caller} for CSI driver "${name}" failed. Another driver with the same name is already registered with a higher supported version: "${versionText(existing.version)}"`,
      );
    }
    return v;
  }

  set(name: string, endpoint: string, version: number[]): void {
    this.drivers.get(name)?.conn?.close();
    this.drivers.set(name, { endpoint, version });
  }

  delete(name: string): void {
    const d = this.drivers.get(name);
    if (!d) return;
    d.conn?.close();
    this.drivers.delete(name);
    this.emit(name, false);
  }

  has(name: string): boolean {
    return this.drivers.has(name);
  }

  names(): string[] {
    return [...this.drivers.keys()].sort();
  }

  endpoint(name: string): string | undefined {
    return this.drivers.get(name)?.endpoint;
  }

  /** A registered driver's connection (newCsiDriverClient); throws upstream's error when it is not registered. */
  client(name: string): CsiConn {
    const d = this.drivers.get(name);
    if (!d) throw new Error(`driver name ${name} not found in the list of registered CSI drivers`);
    d.conn ??= this.connect(d.endpoint);
    return d.conn;
  }

  /** The driver's node service capabilities (NodeGetCapabilities), asked once per registration. */
  nodeCapabilities(name: string): Promise<Set<string>> {
    const d = this.drivers.get(name);
    if (!d) return Promise.reject(new Error(`driver name ${name} not found in the list of registered CSI drivers`));
    d.nodeCaps ??= this.client(name)
      .call<{ capabilities?: { rpc?: { type?: string } }[] }>('Node', 'NodeGetCapabilities', {}, { timeoutMs: CSI_TIMEOUT_MS })
      .then((r) => new Set((r.capabilities ?? []).map((c) => c.rpc?.type ?? '').filter(Boolean)));
    // A failed ask is asked again next time.
    d.nodeCaps.catch(() => {
      if (this.drivers.get(name) === d) d.nodeCaps = undefined;
    });
    return d.nodeCaps;
  }

  /** Announces that a driver finished registering. */
  registered(name: string): void {
    this.emit(name, true);
  }

  onChange(fn: (name: string, registered: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  close(): void {
    for (const d of this.drivers.values()) d.conn?.close();
    this.drivers.clear();
  }

  private emit(name: string, registered: boolean): void {
    for (const fn of this.listeners) fn(name, registered);
  }
}
