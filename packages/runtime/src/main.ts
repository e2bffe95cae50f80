/**
 * kubeling-runtime: the CRI server (runtime.v1 over gRPC on a unix socket).
 *
 *   --listen=unix:///path/to/runtime.sock
 *   --root=DIR                  per-container directories
 *   --pod-cidr=127.2.0.0/16     pod IPs (inside 127.0.0.0/8)
 *   --backend=process|hollow
 */
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { serveCri } from '@kubeling/cri';
import { KubelingRuntime } from './runtime.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      listen: { type: 'string' },
      root: { type: 'string' },
      'pod-cidr': { type: 'string', default: '127.2.0.0/16' },
      backend: { type: 'string', default: 'process' },
    },
    strict: true,
  });
  if (!values.listen || !values.root) throw new Error('--listen and --root are required');
  if (values.backend !== 'process' && values.backend !== 'hollow') throw new Error('--backend must be process or hollow');
  const runtime = new KubelingRuntime({ backend: values.backend, root: values.root, podCIDR: values['pod-cidr']! });
  const sock = values.listen.replace(/^unix:\/\//, '');
  rmSync(sock, { force: true });
  const server = await serveCri(runtime, values.listen);
  process.stdout.write(`kubeling-runtime serving CRI v1 on ${values.listen}\n`);
  const stop = async () => {
    const t = setTimeout(() => process.exit(1), 10_000);
    t.unref();
    server.forceShutdown();
    await runtime.shutdown().catch(() => undefined);
    rmSync(sock, { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((e) => {
  process.stderr.write(`runtime: ${(e as Error).message}\n`);
  process.exit(1);
});
