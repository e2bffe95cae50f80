/**
 * A node's container runtime for `npm run up -- --runtime containerd`: a
 * containerd of its own (root, state, socket and CNI bridge under
 * `--dir`), with a local registry that serves the built-in images as a
 * docker.io mirror. Writes the CRI endpoint to `<dir>/endpoint` once it
 * listens; on SIGTERM removes the pods, then stops containerd, its bridge and
 * the registry.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GrpcRuntime } from '@kubeling/cri';
import { containerdUnavailable, startContainerd } from '@kubeling/testenv';

const { values } = parseArgs({ options: { dir: { type: 'string' }, subnet: { type: 'string' } }, strict: true });

async function main(): Promise<void> {
  const why = containerdUnavailable();
  if (why) throw new Error(why);
  const dir = values.dir!;
  const c = await startContainerd({ dir, mirrorDockerHub: true, ...(values.subnet ? { subnet: values.subnet } : {}) });
  writeFileSync(join(dir, 'endpoint'), c.endpoint);
  console.log(`containerd listening at ${c.endpoint}, pods on ${c.subnet}, images from ${c.registry.host}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    rmSync(join(dir, 'endpoint'), { force: true });
    // Pods go first: containerd's shims (and so the containers) would outlive containerd itself.
    const rt = new GrpcRuntime(c.endpoint, 15_000);
    try {
      for (const sb of await rt.listPodSandbox()) {
        await rt.stopPodSandbox(sb.id).catch(() => undefined);
        await rt.removePodSandbox(sb.id).catch(() => undefined);
      }
    } catch (e) {
      console.error(`containerd-node: removing pods: ${(e as Error).message}`);
    } finally {
      rt.close();
    }
    await c.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((e: Error) => {
  console.error(`containerd-node: ${e.message}`);
  process.exit(1);
});
