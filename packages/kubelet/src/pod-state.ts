/**
 * What the parts of the pod lifecycle share (upstream keeps it on the Kubelet
 * and its pod workers): the options they run with, the pods the informer
 * gave, the per-pod bookkeeping that sync, status and termination read and
 * write, the crash and pull back-offs, and the runtime's view of a pod — its
 * sandboxes newest first, its containers by name newest attempt first. The
 * runtime views only read; nothing here talks to the apiserver.
 */
import type { EventRecorder, RestClient } from '@kubeling/client';
import type { ContainerStatus, CriRuntime, PodSandbox } from '@kubeling/cri';
import type { Logger } from 'pino';
import type { Pod } from './kinds.js';
import type { ProbeManager } from './probes.js';
import type { Waiting } from './status.js';
import type { VolumeManager } from './volumemanager/volume-manager.js';

export const LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const LABEL_POD_NAME = 'io.kubernetes.pod.name';
export const LABEL_POD_NAMESPACE = 'io.kubernetes.pod.namespace';
export const LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';

const BACKOFF_INITIAL_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;

export interface PodManagerOptions {
  nodeName: string;
  nodeIP: string;
  rootDir: string;
  client: RestClient;
  runtime: CriRuntime;
  recorder: EventRecorder;
  log: Logger;
  /** The node's allocatable (cpu in millicores) for admission and resourceFieldRef. */
  allocatable: () => Record<string, number>;
  nodeLabels: () => Record<string, string>;
  /** Attaches, mounts and tears down the pods' claim volumes. */
  volumes: VolumeManager;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Pods' DNS: the cluster DNS servers, the cluster domain, the host's resolv.conf. */
  clusterDNS?: string[];
  clusterDomain?: string;
  resolvConf?: string;
}

export interface Backoff {
  delay: number;
  until: number;
}

export const terminalPhase = (p: string | undefined): boolean => p === 'Succeeded' || p === 'Failed';

export class PodState {
  /** The pods the informer has, by uid. */
  readonly pods = new Map<string, Pod>();
  /** `<uid>/<container>/<crash|pull>` back-offs; `…/pulled` marks the "already present" event as sent. */
  readonly backoffs = new Map<string, Backoff>();
  /** Why a container (`<uid>/<container>`) is waiting, until it runs. */
  readonly waiting = new Map<string, Waiting>();
  readonly admitted = new Set<string>();
  /** Pods that reached a terminal phase (or were rejected): nothing of theirs runs again. */
  readonly finished = new Set<string>();
  /** The sandbox each pod's volumes were last written for. */
  readonly volumesReady = new Map<string, string>();
  /** When each pod's volumes are due to be written again (tokens, configMaps, secrets). */
  readonly volumesDue = new Map<string, number>();

  constructor(
    private readonly backoffInitialMs = BACKOFF_INITIAL_MS,
    private readonly backoffMaxMs = BACKOFF_MAX_MS,
  ) {}

  /** Starts or doubles a back-off: `backoffInitialMs` first, then twice the last, up to `backoffMaxMs`. */
  bumpBackoff(uid: string, container: string, kind: 'crash' | 'pull'): Backoff {
    const key = `${uid}/${container}/${kind}`;
    const prev = this.backoffs.get(key);
    const delay = prev ? Math.min(prev.delay * 2, this.backoffMaxMs) : this.backoffInitialMs;
    const b = { delay, until: Date.now() + delay };
    this.backoffs.set(key, b);
    return b;
  }

  /** Drops everything kept for a pod that is gone. */
  forget(uid: string): void {
    for (const k of [...this.backoffs.keys()]) if (k.startsWith(`${uid}/`)) this.backoffs.delete(k);
    for (const k of [...this.waiting.keys()]) if (k.startsWith(`${uid}/`)) this.waiting.delete(k);
    this.admitted.delete(uid);
    this.finished.delete(uid);
    this.volumesReady.delete(uid);
    this.volumesDue.delete(uid);
  }
}

/** What the sync, status and termination parts are given. */
export interface PodDeps {
  readonly o: PodManagerOptions;
  readonly state: PodState;
  readonly probes: ProbeManager;
  /** Runs the pod's worker again, after `delayMs` when given. */
  trigger(uid: string, delayMs?: number): void;
}

/** The pod's sandboxes, newest first. */
export async function sandboxesOf(runtime: CriRuntime, uid: string): Promise<PodSandbox[]> {
  const list = await runtime.listPodSandbox({ label_selector: { [LABEL_POD_UID]: uid } });
  return list.sort((a, b) => Number(BigInt(b.created_at) - BigInt(a.created_at)));
}

/** The containers of the sandboxes by container name, newest attempt first; one that vanished meanwhile is left out. */
export async function containersOf(runtime: CriRuntime, sandboxIds: string[]): Promise<Map<string, ContainerStatus[]>> {
  const byName = new Map<string, ContainerStatus[]>();
  for (const sb of sandboxIds) {
    for (const c of await runtime.listContainers({ pod_sandbox_id: sb })) {
      const st = await runtime.containerStatus(c.id).catch(() => undefined);
      if (!st) continue;
      const list = byName.get(st.metadata.name) ?? [];
      list.push(st);
      byName.set(st.metadata.name, list);
    }
  }
  for (const list of byName.values()) list.sort((a, b) => b.metadata.attempt - a.metadata.attempt);
  return byName;
}
