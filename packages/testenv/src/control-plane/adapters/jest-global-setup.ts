/**
 * Jest's globalSetup: one etcd for the run, named to every worker.
 *
 *   // jest.config.js
 *   export default {
 *     globalSetup: '@kubeling/testenv/jest-global-setup',
 *     globalTeardown: '@kubeling/testenv/jest-global-teardown',
 *   };
 */
import { ETCD_ENDPOINTS_ENV, startEtcdServer } from '../etcd.js';

export default async function globalSetup(): Promise<void> {
  if (process.env[ETCD_ENDPOINTS_ENV]) return;
  const etcd = await startEtcdServer();
  process.env[ETCD_ENDPOINTS_ENV] = etcd.endpoint;
}
