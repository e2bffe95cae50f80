/**
 * One etcd for a whole `node --test` run:
 *
 *   node --import @kubeling/testenv/node-test --test
 *
 * Node loads this module in each test file's process (Node 20 does not load
 * it in the runner). The files of one runner share one etcd, started by the
 * first of them and stopped once the runner has exited (runner-etcd.ts).
 * Where the runner loads it too, the runner starts etcd and names it to the
 * files in the environment instead.
 */
import { ETCD_ENDPOINTS_ENV, startEtcdServer } from '../etcd.js';
import { runnerEtcd } from '../runner-etcd.js';

if (!process.env[ETCD_ENDPOINTS_ENV]) {
  process.env[ETCD_ENDPOINTS_ENV] = process.env.NODE_TEST_CONTEXT ? await runnerEtcd(process.ppid) : (await startEtcdServer()).endpoint;
}
