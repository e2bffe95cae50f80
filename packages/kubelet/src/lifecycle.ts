/**
 * Container lifecycle hooks (kubernetes pkg/kubelet/lifecycle/handlers.go):
 * postStart and preStop handlers run as an exec through the runtime, an HTTP
 * GET against the pod (a named port resolves through the container's ports),
 * or a sleep. A hook never throws: its failure comes back as text for the
 * FailedPostStartHook / FailedPreStopHook events.
 */
import { httpGetStatus } from './http-get.js';
import type { CriRuntime } from '@kubeling/cri';
import type { Container, LifecycleHandler } from './kinds.js';

/** Runs a lifecycle hook; returns the error text or undefined. */
export async function runHook(runtime: CriRuntime, hook: LifecycleHandler, containerId: string, podIP: string, c: Container): Promise<string | undefined> {
  try {
    if (hook.exec) {
      const r = await runtime.execSync(containerId, hook.exec.command ?? [], 30);
      return r.exit_code === 0
        ? undefined
        : `command '${(hook.exec.command ?? []).join(' ')}' exited with ${r.exit_code}: ${Buffer.from(r.stderr ?? '').toString()}`;
    }
    if (hook.httpGet) {
      const h = hook.httpGet;
      const port = typeof h.port === 'number' ? h.port : ((c.ports ?? []).find((p) => p.name === h.port)?.containerPort ?? Number(h.port));
      const status = await httpGetStatus(`${(h.scheme ?? 'HTTP').toLowerCase()}://${h.host || podIP}:${port}${h.path ?? '/'}`, {}, 30_000);
      return status < 400 ? undefined : `HTTP lifecycle hook (${h.path ?? '/'}) for Container "${c.name}" returned status ${status}`;
    }
    if (hook.sleep) {
      await new Promise((r) => setTimeout(r, (hook.sleep?.seconds ?? 0) * 1000));
    }
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
