/**
 * Runs N hollow kubelets (in-process runtime without processes) in one
 * process, for scale benchmarks. Prints "ready" once every node registered.
 *
 *   node --conditions=kubeling-dist bench/dist/hollow-host.js --master URL --count 100 --dir DIR
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import pino from 'pino';
import { Kubelet } from '@kubeling/kubelet';
import { KubelingRuntime } from '@kubeling/runtime';

const { values } = parseArgs({
  options: { master: { type: 'string' }, count: { type: 'string', default: '100' }, dir: { type: 'string' }, qps: { type: 'string', default: '20' } },
});
const count = Number(values.count);
const kubelets: Kubelet[] = [];

async function main(): Promise<void> {
  const config = { server: values.master!, namespace: 'default', insecureSkipTLSVerify: false };
  for (let i = 0; i < count; i += 10) {
    const batch = Array.from({ length: Math.min(10, count - i) }, (_, j) => {
      const n = i + j;
      const k = new Kubelet({
        config,
        nodeName: `hollow-${n}`,
        runtime: new KubelingRuntime({ backend: 'hollow', root: join(values.dir!, `hollow-${n}`, 'runtime'), podCIDR: `127.4.${n % 256}.0/24` }),
        rootDir: join(values.dir!, `hollow-${n}`),
        port: 0,
        capacity: { cpu: '32', memory: '128Gi', pods: '110' },
        qps: Number(values.qps),
        burst: Number(values.qps) * 2,
        log: pino({ level: 'warn' }),
      });
      kubelets.push(k);
      return k.start();
    });
    await Promise.all(batch);
  }
  process.stdout.write('ready\n');
}

process.on('SIGTERM', () => {
  void Promise.all(kubelets.map((k) => k.stop().catch(() => undefined))).finally(() => process.exit(0));
});
main().catch((e) => {
  process.stderr.write(`hollow-host: ${(e as Error).stack}\n`);
  process.exit(1);
});
