/**
 * Probes (kubernetes pkg/kubelet/prober): a worker per container and probe kind
 * runs exec (through the runtime's ExecSync), httpGet or tcpSocket checks every
 * `periodSeconds` after `initialDelaySeconds`, and flips its result after
 * `successThreshold` / `failureThreshold` consecutive outcomes. Readiness starts
 * false, liveness and startup start true/false as upstream. Liveness and
 * readiness wait for the startup probe to succeed.
 */
import { httpGetStatus } from './http-get.js';
import { connect } from 'node:net';
import type { CriRuntime } from '@kubeling/cri';
import type { Container, Probe } from './kinds.js';

export type ProbeKind = 'liveness' | 'readiness' | 'startup';

export interface ProbeEvents {
  /** A result changed (the pod's status may change). */
  changed(podUID: string): void;
  /** A probe failed once (an Unhealthy event). */
  failed(podUID: string, container: string, kind: ProbeKind, output: string): void;
  /** Liveness or startup gave up: the container must be restarted. */
  kill(podUID: string, containerId: string, container: string, kind: ProbeKind): void;
}

interface Worker {
  timer: NodeJS.Timeout;
  result: boolean;
  successes: number;
  failures: number;
  stopped: boolean;
}

function resolvePort(port: number | string, container: Container): number {
  if (typeof port === 'number') return port;
  const named = (container.ports ?? []).find((p) => p.name === port);
  if (named) return named.containerPort;
  return Number(port);
}

export class ProbeManager {
  private readonly workers = new Map<string, Worker>();

  constructor(
    private readonly runtime: CriRuntime,
    private readonly events: ProbeEvents,
  ) {}

  private key(podUID: string, containerId: string, kind: ProbeKind) {
    return `${podUID}/${containerId}/${kind}`;
  }

  /** Starts the probes a container declares (once per container id). */
  add(podUID: string, podIP: string, container: Container, containerId: string): void {
    for (const kind of ['startup', 'liveness', 'readiness'] as ProbeKind[]) {
      const probe = container[`${kind}Probe`];
      if (!probe) continue;
      const k = this.key(podUID, containerId, kind);
      if (this.workers.has(k)) continue;
      const period = (probe.periodSeconds ?? 10) * 1000;
      const w: Worker = {
        timer: undefined as unknown as NodeJS.Timeout,
        result: kind !== 'readiness' && kind !== 'startup',
        successes: 0,
        failures: 0,
        stopped: false,
      };
      this.workers.set(k, w);
      const tick = async () => {
        if (w.stopped) return;
        if (kind !== 'startup' && container.startupProbe && !this.workers.get(this.key(podUID, containerId, 'startup'))?.result) {
          w.timer = setTimeout(tick, period);
          return;
        }
        const { ok, output } = await this.run(probe, podIP, container, containerId);
        if (w.stopped) return;
        if (ok) {
          w.failures = 0;
          w.successes++;
          if (!w.result && w.successes >= (probe.successThreshold ?? 1)) {
            w.result = true;
            this.events.changed(podUID);
          }
        } else {
          w.successes = 0;
          w.failures++;
          this.events.failed(podUID, container.name, kind, output);
          if (w.failures >= (probe.failureThreshold ?? 3)) {
            if (w.result || kind === 'startup') {
              w.result = false;
              this.events.changed(podUID);
            }
            if (kind === 'liveness' || kind === 'startup') {
              w.stopped = true;
              this.events.kill(podUID, containerId, container.name, kind);
              return;
            }
          }
        }
        // Once started, a startup probe stops probing.
        if (kind === 'startup' && w.result) return;
        w.timer = setTimeout(tick, period);
      };
      w.timer = setTimeout(tick, (probe.initialDelaySeconds ?? 0) * 1000);
    }
  }

  /** The current result; containers without the probe count as passing. */
  result(podUID: string, containerId: string, kind: ProbeKind, container: Container): boolean {
    if (!container[`${kind}Probe`]) return true;
    return this.workers.get(this.key(podUID, containerId, kind))?.result ?? false;
  }

  /** Stops the pod's workers of containers not in `keep` (all of them when omitted). */
  retain(podUID: string, keep: Set<string> = new Set()): void {
    for (const [k, w] of this.workers) {
      const [uid, id] = k.split('/');
      if (uid !== podUID || keep.has(id!)) continue;
      w.stopped = true;
      clearTimeout(w.timer);
      this.workers.delete(k);
    }
  }

  stopAll(): void {
    for (const w of this.workers.values()) {
      w.stopped = true;
      clearTimeout(w.timer);
    }
    this.workers.clear();
  }

  private async run(probe: Probe, podIP: string, container: Container, containerId: string): Promise<{ ok: boolean; output: string }> {
    const timeout = (probe.timeoutSeconds ?? 1) * 1000;
    try {
      if (probe.exec) {
        const r = await this.runtime.execSync(containerId, probe.exec.command ?? [], Math.ceil(timeout / 1000));
        const out = Buffer.concat([Buffer.from(r.stdout ?? ''), Buffer.from(r.stderr ?? '')])
          .toString()
          .trim();
        return { ok: r.exit_code === 0, output: out || `command ${JSON.stringify(probe.exec.command)} exited with ${r.exit_code}` };
      }
      if (probe.httpGet) {
        const h = probe.httpGet;
        const host = h.host || podIP;
        const url = `${(h.scheme ?? 'HTTP').toLowerCase()}://${host}:${resolvePort(h.port, container)}${h.path ?? '/'}`;
        const headers: Record<string, string> = { 'user-agent': 'kube-probe/1.32' };
        for (const x of h.httpHeaders ?? []) headers[x.name] = x.value;
        const status = await httpGetStatus(url, headers, timeout);
        return { ok: status >= 200 && status < 400, output: `HTTP probe failed with statuscode: ${status}` };
      }
      if (probe.tcpSocket) {
        const port = resolvePort(probe.tcpSocket.port, container);
        const host = probe.tcpSocket.host || podIP;
        const ok = await new Promise<boolean>((resolve) => {
          const s = connect({ host, port, timeout });
          s.once('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
          s.once('timeout', () => {
            s.destroy();
            resolve(false);
          });
        });
        return { ok, output: `dial tcp ${host}:${port}: connect: connection refused` };
      }
      return { ok: true, output: '' };
    } catch (e) {
      return { ok: false, output: (e as Error).message };
    }
  }
}
