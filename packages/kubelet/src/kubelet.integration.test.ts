/** The kubelet lifecycle suite on kubeling's runtime (CRI over gRPC on unix sockets). */
import { join } from 'node:path';
import { serveCri, type CriServer } from '@kubeling/cri';
import { KubelingRuntime } from '@kubeling/runtime';
import { lifecycleSuite } from '../test/lifecycle-suite.js';

lifecycleSuite(async (dir) => {
  const servers: CriServer[] = [];
  const runtimes: KubelingRuntime[] = [];
  const endpoints: string[] = [];
  for (const [i, cidr] of ['127.5.1.0/24', '127.5.2.0/24'].entries()) {
    const rt = new KubelingRuntime({ backend: 'process', root: join(dir, `rt-${i}`), podCIDR: cidr });
    const endpoint = `unix://${join(dir, `rt-${i}.sock`)}`;
    servers.push(await serveCri(rt, endpoint));
    runtimes.push(rt);
    endpoints.push(endpoint);
  }
  return {
    endpoints,
    images: { busybox: 'busybox', nginx: 'nginx:1.27', missing: 'example.invalid/no-such-image:1.0' },
    runtimeName: 'kubeling',
    podIP: /^127\.5\.[12]\.\d+$/,
    accessLog: /GET \/ HTTP\/1\.1" 200/,
    stop: async () => {
      for (const r of runtimes) await r.shutdown();
      for (const s of servers) s.forceShutdown();
    },
  };
});
