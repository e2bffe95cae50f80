/**
 * The kubelet's Node (kubernetes pkg/kubelet/kubelet_node_status.go, nodelease):
 * registration with labels and taints, the status (capacity and allocatable,
 * the four conditions, addresses, the kubelet endpoint, nodeInfo, images, the
 * volumes in use) patched when it changes or once a minute, and at once when
 * asked (the volume manager waits for a volume to be reported in use), and the
 * Lease in kube-node-lease renewed every 10 s.
 */
import { readFileSync } from 'node:fs';
import { arch, cpus, hostname, release, totalmem } from 'node:os';
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isNotFound, jsonEqual, rfc3339, rfc3339Micro } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';
import type { CriRuntime } from '@kubeling/cri';
import { resourceValue } from '@kubeling/component-helpers';
import type { Logger } from 'pino';
import type { Taint } from './kinds.js';

export interface NodeOptions {
  nodeName: string;
  nodeIP: string;
  labels: Record<string, string>;
  taints: Taint[];
  /** Capacity as quantities; defaults from the machine. */
  capacity: Record<string, string>;
  kubeletPort: () => number;
  client: RestClient;
  runtime: CriRuntime;
  log: Logger;
  leaseDurationSeconds?: number;
  renewIntervalMs?: number;
  statusUpdateMs?: number;
  /** The volume manager's GetVolumesInUse, reported in `status.volumesInUse`. */
  volumesInUse?: () => string[];
}

export function defaultCapacity(maxPods: number): Record<string, string> {
  return { cpu: String(cpus().length), memory: `${Math.floor(totalmem() / 1024)}Ki`, pods: String(maxPods), 'ephemeral-storage': '100Gi' };
}

export const KUBELET_VERSION = 'v1.32.0';

/** What the kubelet reports of its node (NodeStatus is opaque in the API types); conditions are added when patching. */
interface NodeStatus {
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  addresses: { type: string; address: string }[];
  daemonEndpoints: { kubeletEndpoint: { Port: number } };
  nodeInfo: NodeSystemInfo;
  images: { names: string[]; sizeBytes: number }[];
  /** null clears the list in the merge patch. */
  volumesInUse: string[] | null;
}

interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

export class NodeManager {
  private leaseTimer: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private lastStatus: NodeStatus | undefined;
  private lastStatusAt = 0;
  private runtimeVersion = '';
  private stopped = false;
  private started = false;
  private statusRequested = false;
  private reportedInUse: ReadonlySet<string> = new Set();
  private statusChain: Promise<void> = Promise.resolve();

  constructor(private readonly o: NodeOptions) {}

  /** The volumes the last status written reported in use (MarkVolumesAsReportedInUse). */
  reportedVolumesInUse(): ReadonlySet<string> {
    return this.reportedInUse;
  }

  /** Writes the status soon (once for any number of asks), e.g. when the volumes in use changed. */
  requestStatusUpdate(): void {
    if (this.stopped || !this.started || this.statusRequested) return;
    this.statusRequested = true;
    setTimeout(() => {
      this.statusRequested = false;
      if (this.stopped) return;
      void this.updateStatus(false).catch((e) => this.o.log.warn({ err: (e as Error).message }, 'node status update failed'));
    }, 0).unref();
  }

  /** Allocatable in scheduling units (cpu millicores), for admission. */
  allocatable(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(this.o.capacity)) out[k] = resourceValue(k, v);
    return out;
  }

  labels(): Record<string, string> {
    return { ...this.baseLabels(), ...this.o.labels };
  }

  private baseLabels(): Record<string, string> {
    return {
      'kubernetes.io/hostname': this.o.nodeName,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
    };
  }

  async register(): Promise<void> {
    const v = await this.o.runtime.version();
    this.runtimeVersion = `${v.runtime_name}://${v.runtime_version}`;
    try {
      await this.o.client.post('/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: this.o.nodeName, labels: this.labels(), annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
        spec: this.o.taints.length ? { taints: this.o.taints } : {},
      });
      this.o.log.info({ node: this.o.nodeName }, 'node registered');
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      // Re-registering: make sure our labels are there.
      await this.o.client.patch(`/api/v1/nodes/${this.o.nodeName}`, { metadata: { labels: this.labels() } }, 'application/merge-patch+json');
    }
    await this.updateStatus(true);
  }

  start(): void {
    this.started = true;
    const renew = this.o.renewIntervalMs ?? 10_000;
    const leaseTick = () => {
      void this.renewLease()
        .catch((e) => this.o.log.warn({ err: (e as Error).message }, 'lease renewal failed'))
        .finally(() => {
          if (!this.stopped) this.leaseTimer = setTimeout(leaseTick, renew);
        });
    };
    leaseTick();
    const statusTick = () => {
      void this.updateStatus(false)
        .catch((e) => this.o.log.warn({ err: (e as Error).message }, 'node status update failed'))
        .finally(() => {
          if (!this.stopped) this.statusTimer = setTimeout(statusTick, this.o.statusUpdateMs ?? 10_000);
        });
    };
    this.statusTimer = setTimeout(statusTick, this.o.statusUpdateMs ?? 10_000);
  }

  stop(): void {
    this.stopped = true;
    if (this.leaseTimer) clearTimeout(this.leaseTimer);
    if (this.statusTimer) clearTimeout(this.statusTimer);
  }

  private async renewLease(): Promise<void> {
    const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${this.o.nodeName}`;
    const spec = { holderIdentity: this.o.nodeName, leaseDurationSeconds: this.o.leaseDurationSeconds ?? 40, renewTime: rfc3339Micro() };
    try {
      await this.o.client.patch(path, { spec }, 'application/merge-patch+json');
    } catch (e) {
      if (!isNotFound(e)) throw e;
      const node = await this.o.client.get<KubeObject>(`/api/v1/nodes/${this.o.nodeName}`);
      await this.o.client.post('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.o.nodeName, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid: node.metadata.uid }] },
        spec,
      });
    }
  }

  private nodeInfo(): NodeSystemInfo {
    let machineID = '';
    let bootID = '';
    try {
      machineID = readFileSync('/etc/machine-id', 'utf8').trim();
    } catch {
      machineID = this.o.nodeName;
    }
    try {
      bootID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootID = '';
    }
    let osImage = 'Linux';
    try {
      osImage = /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? osImage;
    } catch {
      // not Linux-like
    }
    return {
      machineID,
      systemUUID: machineID,
      bootID,
      kernelVersion: release(),
      osImage,
      containerRuntimeVersion: this.runtimeVersion,
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: arch() === 'x64' ? 'amd64' : arch(),
    };
  }

  /** One status write at a time, so what was last reported in use is what the node has. */
  private updateStatus(force: boolean): Promise<void> {
    const run = this.statusChain.then(() => this.writeStatus(force));
    this.statusChain = run.catch(() => undefined);
    return run;
  }

  private async writeStatus(force: boolean): Promise<void> {
    const images = (await this.o.runtime.listImages()).map((i) => ({ names: [...i.repo_digests, ...i.repo_tags], sizeBytes: Number(i.size) }));
    const status: NodeStatus = {
      capacity: this.o.capacity,
      allocatable: this.o.capacity,
      addresses: [
        { type: 'InternalIP', address: this.o.nodeIP },
        { type: 'Hostname', address: this.o.nodeName },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: this.o.kubeletPort() } },
      nodeInfo: this.nodeInfo(),
      images,
      volumesInUse: null,
    };
    const inUse = this.o.volumesInUse?.() ?? [];
    if (inUse.length) status.volumesInUse = inUse;
    const conditionsKey = { ...status };
    const due = Date.now() - this.lastStatusAt > 60_000;
    if (!force && !due && jsonEqual(conditionsKey, this.lastStatus)) return;
    const now = rfc3339();
    const cond = (type: string, st: string, reason: string, message: string) => ({
      type,
      status: st,
      lastHeartbeatTime: now,
      lastTransitionTime: this.transitions.get(`${type}=${st}`) ?? this.mark(`${type}=${st}`, now),
      reason,
      message,
    });
    const conditions = [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ];
    await this.o.client.patch(`/api/v1/nodes/${this.o.nodeName}/status`, { status: { ...status, conditions } }, 'application/merge-patch+json');
    this.reportedInUse = new Set(inUse);
    this.lastStatus = conditionsKey;
    this.lastStatusAt = Date.now();
  }

  private readonly transitions = new Map<string, string>();
  private mark(key: string, when: string): string {
    this.transitions.set(key, when);
    return when;
  }

  /** The hostname of the machine, for a default node name. */
  static defaultName(): string {
    return hostname().toLowerCase();
  }
}
