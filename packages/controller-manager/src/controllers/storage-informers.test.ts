import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { InformerFactory, RestClient } from '@kubeling/client';
import type { ControllerContext } from '../context.js';
import { controllerDescriptors } from './index.js';

const STORAGE = [
  '/api/v1/persistentvolumes',
  '/api/v1/persistentvolumeclaims',
  '/apis/storage.k8s.io/v1/storageclasses',
  '/apis/storage.k8s.io/v1/csidrivers',
  '/apis/storage.k8s.io/v1/volumeattachments',
];

/** The storage informers each controller asks for as it initialises (nothing is started or listed). */
function storageInformersByController(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const client = new RestClient({ server: 'http://127.0.0.1:9', namespace: 'default', insecureSkipTLSVerify: false });
  for (const d of controllerDescriptors) {
    const factory = new InformerFactory(client);
    const paths: string[] = [];
    const informer = factory.informer.bind(factory);
    factory.informer = ((target, opts) => {
      if (STORAGE.includes(target.path)) paths.push(target.path);
      return informer(target, opts);
    }) as InformerFactory['informer'];
    const ctx = {
      client,
      informers: factory,
      log: pino({ level: 'silent' }),
      recorder: () => ({ event: async () => {} }),
      workers: 1,
    } as unknown as ControllerContext;
    d.create(ctx).init();
    if (paths.length) out.set(d.name, [...new Set(paths)].sort());
  }
  client.close();
  return out;
}

test('the storage informers exist only for the controllers that read them', () => {
  const [pv, pvc, sc, csidriver, va] = STORAGE;
  assert.deepEqual(Object.fromEntries(storageInformersByController()), {
    attachdetach: [pvc, pv, csidriver, va],
    'ephemeral-volume': [pvc],
    // The garbage collector watches every kind it may have to collect, as upstream's monitors do.
    garbagecollector: [pvc, pv, csidriver, sc, va],
    'persistentvolume-binder': [pvc, pv, sc],
    'pv-protection': [pv],
    'pvc-protection': [pvc],
    statefulset: [pvc],
  });
});
