/**
 * Vitest's global setup: one etcd for the run, named to every worker.
 *
 *   // vitest.config.ts
 *   export default defineConfig({ test: { globalSetup: ['@kubeling/testenv/vitest'] } });
 *
 * Each test file then calls startControlPlane() (in beforeAll) for a control
 * plane of its own.
 */
import { ETCD_ENDPOINTS_ENV, startEtcdServer, stopEtcdServer } from '../etcd.js';

export async function setup(): Promise<void> {
  if (process.env[ETCD_ENDPOINTS_ENV]) return;
  const etcd = await startEtcdServer();
  process.env[ETCD_ENDPOINTS_ENV] = etcd.endpoint;
}

export async function teardown(): Promise<void> {
  await stopEtcdServer();
}
