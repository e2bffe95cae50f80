/** Jest's globalTeardown: stops the etcd the global setup started. */
import { stopEtcdServer } from '../etcd.js';

export default async function globalTeardown(): Promise<void> {
  await stopEtcdServer();
}
