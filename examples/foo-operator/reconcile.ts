/**
 * What one sync of a Foo does (sample-controller controller.go syncHandler),
 * given the listers' view and the writes it may make as functions, so that a
 * test can run it against plain objects and a recording of the writes.
 *
 *  1. The Foo is gone: nothing to do (its Deployment goes with it through the
 *     garbage collector, by its owner reference).
 *  2. No spec.deploymentName: reported, not retried (a retry cannot fix it).
 *  3. No Deployment of that name: create it, owned by the Foo.
 *  4. A Deployment of that name the Foo does not control: a Warning event
 *     ErrResourceExists, and an error so that the key is retried with backoff
 *     (the Deployment may be deleted, or its owner fixed, meanwhile).
 *  5. spec.replicas differs from the Deployment's: update the Deployment.
 *  6. status.availableReplicas from the Deployment, through the status
 *     subresource; then a Normal event Synced.
 */
import { API_VERSION, KIND, type Deployment, type Foo } from './types.js';

/** The event reasons and messages of sample-controller controller.go. */
export const SUCCESS_SYNCED = 'Synced';
export const ERR_RESOURCE_EXISTS = 'ErrResourceExists';
export const MESSAGE_RESOURCE_SYNCED = 'Foo synced successfully';
/** MessageResourceExists, "Resource %q already exists and is not managed by Foo" (%q: a Go-quoted string). */
export const messageResourceExists = (name: string): string => `Resource ${JSON.stringify(name)} already exists and is not managed by Foo`;

export interface SyncDeps {
  /** From the Foo informer's store: read-only. */
  getFoo(namespace: string, name: string): Foo | undefined;
  /** From the Deployment informer's store: read-only. */
  getDeployment(namespace: string, name: string): Deployment | undefined;
  createDeployment(d: Deployment): Promise<Deployment>;
  updateDeployment(d: Deployment): Promise<Deployment>;
  /** PUT …/foos/<name>/status. */
  updateFooStatus(foo: Foo): Promise<Foo>;
  event(foo: Foo, type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** A problem that is reported but not retried (utilruntime.HandleError). */
  report(message: string): void;
}

export type SyncResult = 'gone' | 'invalid' | 'synced';

/** Thrown for the case sample-controller retries with backoff without it being an API failure. */
export class NotManagedError extends Error {}

/** metav1.GetControllerOf: the owner reference with controller=true. */
export function controllerOf(obj: { metadata: { ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] } }) {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** metav1.IsControlledBy: the controller reference names this very object (by uid). */
export function isControlledBy(d: Deployment, foo: Foo): boolean {
  const ref = controllerOf(d);
  return !!ref && ref.uid === foo.metadata.uid;
}

/** sample-controller newDeployment: an nginx Deployment of spec.replicas, controlled by the Foo. */
export function newDeployment(foo: Foo): Deployment {
  const labels = { app: 'nginx', controller: foo.metadata.name! };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: foo.spec!.deploymentName!,
      namespace: foo.metadata.namespace!,
      // metav1.NewControllerRef: controller and blockOwnerDeletion both true.
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: foo.metadata.name!, uid: foo.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      ...(foo.spec?.replicas !== undefined ? { replicas: foo.spec.replicas } : {}),
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'nginx', image: 'nginx:latest' }] } },
    },
  };
}

/** Splits a queue key `namespace/name` (cache.SplitMetaNamespaceKey). */
export function splitKey(key: string): [string, string] | undefined {
  const parts = key.split('/');
  if (parts.length === 2 && parts[0] && parts[1]) return [parts[0], parts[1]];
  return undefined;
}

export async function syncFoo(key: string, deps: SyncDeps): Promise<SyncResult> {
  const nn = splitKey(key);
  if (!nn) {
    deps.report(`invalid resource key: ${key}`);
    return 'invalid';
  }
  const [namespace, name] = nn;
  const foo = deps.getFoo(namespace, name);
  if (!foo) {
    deps.report(`foo '${key}' in work queue no longer exists`);
    return 'gone';
  }
  const deploymentName = foo.spec?.deploymentName;
  if (!deploymentName) {
    deps.report(`${key}: deployment name must be specified`);
    return 'invalid';
  }
  let deployment = deps.getDeployment(namespace, deploymentName);
  if (!deployment) deployment = await deps.createDeployment(newDeployment(foo));
  if (!isControlledBy(deployment, foo)) {
    const msg = messageResourceExists(deployment.metadata.name!);
    deps.event(foo, 'Warning', ERR_RESOURCE_EXISTS, msg);
    throw new NotManagedError(msg);
  }
  const want = foo.spec?.replicas;
  if (want !== undefined && want !== deployment.spec?.replicas) {
    // Upstream sends newDeployment(foo) as it is; the resourceVersion makes the write conditional on what was read.
    const next = newDeployment(foo);
    next.metadata.resourceVersion = deployment.metadata.resourceVersion!;
    deployment = await deps.updateDeployment(next);
  }
  const available = deployment.status?.availableReplicas ?? 0;
  // Upstream writes the status on every sync and relies on the apiserver dropping a write that changes
  // nothing; skipping it here keeps a sync that changes nothing free of writes on any apiserver.
  if (foo.status?.availableReplicas !== available) {
    const copy = structuredClone(foo);
    copy.status = { ...copy.status, availableReplicas: available };
    await deps.updateFooStatus(copy);
  }
  deps.event(foo, 'Normal', SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED);
  return 'synced';
}
