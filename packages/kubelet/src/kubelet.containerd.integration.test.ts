/**
 * The kubelet lifecycle suite on real containerd (two hermetic instances, one
 * per node, images pulled from a registry on 127.0.0.1, pod IPs on a bridge the
 * test creates). Skipped with the reason where containerd cannot run.
 */
import { test } from 'node:test';
import { containerdUnavailable, startContainerd, type Containerd } from '@kubeling/testenv';
import { lifecycleSuite } from '../test/lifecycle-suite.js';

const why = containerdUnavailable();
if (why) {
  test('kubelet lifecycle on containerd', { skip: why }, () => undefined);
} else {
  lifecycleSuite(async () => {
    const instances: Containerd[] = [await startContainerd(), await startContainerd()];
    const first = instances[0]!;
    return {
      endpoints: instances.map((c) => c.endpoint),
      images: { busybox: first.images.busybox, nginx: first.images.nginx, missing: first.images.missing },
      runtimeName: 'containerd',
      podIP: /^10\.244\.\d+\.\d+$/,
      accessLog: /response:200/,
      stop: async () => {
        for (const c of instances) await c.stop();
      },
    };
  });
}
