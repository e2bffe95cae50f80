#!/usr/bin/env -S node --conditions=kubeling-dist
/**
 * kubeling-csi-driver: one node's CSI plugin — the hostpath.csi.kubeling.io
 * driver and its sidecars (node-driver-registrar, external-provisioner in
 * node-deployment mode with capacity publishing, external-attacher,
 * external-resizer) in one process. Flags after the sidecars':
 *
 *   --kubeconfig=PATH                 the apiserver and this driver's identity
 *   --node-id=NODE                    the node served, and the CSI node ID
 *   --driver-name=hostpath.csi.kubeling.io the name the driver reports (GetPluginInfo)
 *   --endpoint=unix:///…/csi.sock     the driver socket (created here)
 *   --state-dir=DIR                   volumes and the driver's records
 *   --capacity=QUANTITY               what the node offers for volumes (default: the
 *                                     size of the filesystem holding --state-dir)
 *   --max-volumes-per-node=0          0: no limit
 *   --registration-dir=DIR            the kubelet's plugins_registry
 *   --capacity-namespace=kube-system  where CSIStorageCapacity objects go
 *   --capacity-poll-interval=1m
 *   --node-deployment-base-delay=20s --node-deployment-max-delay=60s
 *   --timeout=1m                      each CSI call's deadline
 *   --worker-threads=4
 *   --log-level=info
 *
 * SIGTERM or SIGINT stops the controllers and informers, closes both sockets
 * and removes their files.
 */
import { existsSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { parseDuration, parseQuantity } from '@kubeling/apimachinery';
import { loadKubeConfig, resolveClientConfig, stopOnSignals } from '@kubeling/client';
import { DRIVER_NAME, startCsiDriver } from './plugin.js';

function positiveInt(name: string, v: string, min = 0): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`invalid --${name} ${JSON.stringify(v)}`);
  return n;
}

/**
 * The size of the filesystem that will hold the volumes, in whole GiB: what a
 * hostpath node can offer at most. The state directory may not exist yet, so
 * the nearest existing parent is asked.
 */
function filesystemBytes(dir: string): number {
  let d = resolve(dir);
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  const fs = statfsSync(d);
  const GiB = 1024 ** 3;
  const bytes = fs.blocks * fs.bsize;
  return bytes >= GiB ? Math.floor(bytes / GiB) * GiB : bytes;
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      kubeconfig: { type: 'string' },
      'node-id': { type: 'string' },
      'driver-name': { type: 'string', default: DRIVER_NAME },
      endpoint: { type: 'string' },
      'state-dir': { type: 'string' },
      capacity: { type: 'string' },
      'max-volumes-per-node': { type: 'string', default: '0' },
      'registration-dir': { type: 'string' },
      'capacity-namespace': { type: 'string', default: 'kube-system' },
      'capacity-poll-interval': { type: 'string', default: '1m' },
      'node-deployment-base-delay': { type: 'string', default: '20s' },
      'node-deployment-max-delay': { type: 'string', default: '60s' },
      timeout: { type: 'string', default: '1m' },
      'worker-threads': { type: 'string', default: '4' },
      'log-level': { type: 'string', default: 'info' },
    },
  });
  for (const f of ['node-id', 'endpoint', 'state-dir'] as const) if (!v[f]) throw new Error(`--${f} is required`);
  let capacityBytes = 0;
  if (v.capacity === undefined) capacityBytes = filesystemBytes(v['state-dir']!);
  else {
    try {
      capacityBytes = parseQuantity(v.capacity);
    } catch (e) {
      throw new Error(`invalid --capacity ${JSON.stringify(v.capacity)}: ${(e as Error).message}`);
    }
  }
  if (!(capacityBytes > 0)) throw new Error(`invalid --capacity ${JSON.stringify(v.capacity)}: must be positive`);
  const maxVolumes = positiveInt('max-volumes-per-node', v['max-volumes-per-node']);
  const log = pino({ level: v['log-level'], base: { component: 'csi-driver', node: v['node-id'] } });
  const driver = await startCsiDriver({
    client: resolveClientConfig(loadKubeConfig({ explicitPath: v.kubeconfig })),
    driverName: v['driver-name'],
    nodeId: v['node-id']!,
    endpoint: v.endpoint!,
    stateDir: v['state-dir']!,
    capacityBytes,
    ...(maxVolumes > 0 ? { maxVolumesPerNode: maxVolumes } : {}),
    ...(v['registration-dir'] ? { registrationDir: v['registration-dir'] } : {}),
    capacityNamespace: v['capacity-namespace'],
    capacityPollMs: parseDuration(v['capacity-poll-interval']),
    ownerBaseDelayMs: parseDuration(v['node-deployment-base-delay']),
    ownerMaxDelayMs: parseDuration(v['node-deployment-max-delay']),
    timeoutMs: parseDuration(v.timeout),
    workers: positiveInt('worker-threads', v['worker-threads'], 1),
    log,
  });
  stopOnSignals(async () => {
    log.info('stopping');
    await driver.stop();
  });
  log.info({ driver: driver.driver.name, registration: driver.registrationSocket }, 'csi driver started');
}

main().catch((e) => {
  process.stderr.write(`kubeling-csi-driver: ${(e as Error).message}\n`);
  process.exit(1);
});
