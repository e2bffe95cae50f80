/**
 * What the multi-process e2e suites share: a controller-manager and a
 * scheduler in this process against a test apiserver, and nodes as processes
 * (kubeling's runtime and a kubelet each), stopped in reverse order.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { ControllerManager, type ManagerOptions } from '@kubeling/controller-manager';
import { InformerFactory, RestClient } from '@kubeling/client';
import { buildConfig, Scheduler } from '@kubeling/scheduler';
import { nodeArgs, packageMain, stopChild, waitFor, type TestEnv } from '@kubeling/testenv';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ControlPlane {
  client: RestClient;
  mgr: ControllerManager;
  stop(): Promise<void>;
}

/** A controller-manager (the named controllers) and a scheduler with short backoffs, at client QPS 200. */
export async function startControlPlane(env: TestEnv, controllers: string[], extra: Partial<ManagerOptions> = {}): Promise<ControlPlane> {
  const config = { server: env.url, namespace: 'default', insecureSkipTLSVerify: false };
  const mgr = new ControllerManager({ config, controllers, leaderElect: false, log: pino({ level: 'silent' }), qps: 200, burst: 400, ...extra });
  await mgr.start();
  const client = new RestClient(config, { qps: 200, burst: 400 });
  const informers = new InformerFactory(client);
  const scheduler = new Scheduler({
    client,
    informers,
    config: buildConfig({ podInitialBackoffSeconds: 1, podMaxBackoffSeconds: 2 }),
    log: pino({ level: 'silent' }),
  });
  scheduler.init();
  informers.start();
  await scheduler.run();
  return {
    client,
    mgr,
    stop: async () => {
      await scheduler.stop();
      informers.stop();
      client.close();
      await mgr.stop();
    },
  };
}

/** Processes started for a suite, stopped newest first. */
export class Processes {
  private readonly children: ChildProcess[] = [];

  spawn(pkg: string, args: string[]): ChildProcess {
    const c = spawn(process.execPath, nodeArgs(packageMain(pkg), args), { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    this.children.push(c);
    return c;
  }

  /** kubeling's runtime on a socket under `dir`, pods in `podCidr`; resolves once it listens. */
  async runtime(dir: string, name: string, podCidr: string): Promise<string> {
    const sock = join(dir, `${name}.sock`);
    this.spawn('runtime', [`--listen=unix://${sock}`, `--root=${join(dir, `${name}-rt`)}`, `--pod-cidr=${podCidr}`]);
    await waitFor(async () => existsSync(sock), 90_000, `runtime ${name}`);
    return sock;
  }

  /** A kubelet for `node` on `sock`, health on `port`; resolves once healthy. */
  async kubelet(env: TestEnv, dir: string, node: string, sock: string, port: number, extra: string[] = []): Promise<ChildProcess> {
    const proc = this.spawn('kubelet', [
      `--node-name=${node}`,
      `--master=${env.url}`,
      `--container-runtime-endpoint=unix://${sock}`,
      `--root-dir=${join(dir, node)}`,
      `--port=${port}`,
      '--node-status-update-frequency=1',
      '--log-level=warn',
      ...extra,
    ]);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 90_000, `kubelet ${node}`);
    return proc;
  }

  async stop(): Promise<void> {
    for (const c of this.children.reverse()) await stopChild(c);
  }
}
