/**
 * One node for a test: a kubeling runtime serving CRI on a unix socket of its
 * own and a kubelet speaking to it over gRPC, registered with the test's
 * apiserver, with the short heartbeat and relist periods tests want.
 * `stop()` stops the kubelet, removes what the runtime still runs, and the
 * node's directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { serveCri, type CriServer } from '@kubeling/cri';
import { Kubelet, type KubeletOptions } from '@kubeling/kubelet';
import { KubelingRuntime } from '@kubeling/runtime';

export interface TestNode {
  name: string;
  dir: string;
  kubelet: Kubelet;
  runtime: KubelingRuntime;
  stop(): Promise<void>;
}

export interface TestNodeOptions {
  /** The apiserver (an insecure test environment's URL). */
  server: string;
  name: string;
  /** Pod addresses, inside 127.0.0.0/8. */
  podCIDR: string;
  /** Anything else the kubelet is given. */
  kubelet?: Partial<KubeletOptions>;
}

export async function startTestNode(o: TestNodeOptions): Promise<TestNode> {
  const dir = mkdtempSync(join(tmpdir(), `kubeling-node-${o.name}-`));
  const runtime = new KubelingRuntime({ backend: 'process', root: join(dir, 'rt'), podCIDR: o.podCIDR });
  const endpoint = `unix://${join(dir, 'rt.sock')}`;
  let cri: CriServer | undefined;
  let kubelet: Kubelet | undefined;
  const stop = async () => {
    await kubelet?.stop();
    for (const sb of await runtime.listPodSandbox().catch(() => [])) await runtime.removePodSandbox(sb.id).catch(() => undefined);
    await runtime.shutdown();
    cri?.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    cri = await serveCri(runtime, endpoint);
    kubelet = new Kubelet({
      config: { server: o.server, namespace: 'default', insecureSkipTLSVerify: false },
      nodeName: o.name,
      runtime: endpoint,
      rootDir: join(dir, o.name),
      port: 0,
      log: pino({ level: 'silent' }),
      statusUpdateMs: 1000,
      leaseRenewMs: 1000,
      plegPeriodMs: 300,
      ...o.kubelet,
    });
    await kubelet.start();
  } catch (e) {
    await stop();
    throw e;
  }
  return { name: o.name, dir, kubelet, runtime, stop };
}
