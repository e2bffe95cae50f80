/**
 * @kubeling/testenv — real Kubernetes control planes for integration tests.
 *
 *   import { startControlPlane } from '@kubeling/testenv';
 *   const cp = await startControlPlane({ crds: ['config/crd'], nodes: 1 });
 *   await cp.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } });
 *   await cp.stop();
 *
 * Every control plane keeps its objects in one shared etcd under a prefix of
 * its own; see etcd.ts for which etcd, and the adapters (`@kubeling/testenv/node-test`,
 * `/vitest`, `/jest-global-setup`, `/jest-global-teardown`) for one etcd per test run.
 */
export { startControlPlane, type ControlPlane, type ControlPlaneOptions, type KubeConfigObject, type User } from './start.js';
export { StatusError, type Status, type StatusCause } from './status.js';
export {
  ObjectClient,
  type ApplyOptions,
  type RawClient,
  type ResourceInfo,
  type WatchEvent,
  type DeleteOptions,
  type KubeList,
  type KubeObject,
  type ListOptions,
  type ObjectRef,
} from './objects.js';
export { applyManifests, readManifests, waitFor, waitForCRDs, type Truthy, type WaitOptions } from './manifests.js';
export { ETCD_ENDPOINTS_ENV, etcdEndpoints, startEtcdServer, stopEtcdServer, type EtcdServer } from './etcd.js';
