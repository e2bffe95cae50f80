/**
 * The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount):
 * a new pod runs as `default` unless it names a ServiceAccount, which must
 * exist; unless automounting is off (on the pod or its ServiceAccount) it gets
 * the `kube-api-access-<suffix>` projected volume — a bound token, the cluster
 * CA from the `kube-root-ca.crt` ConfigMap, and the namespace — mounted read-only
 * at /var/run/secrets/kubernetes.io/serviceaccount in every container.
 */
import type { KubeObject } from '@kubeling/api';
import { forbidden, isNotFound, randomSuffix } from '@kubeling/apimachinery';
import type { Store } from '../registry/store.js';
import type { AdmissionAttributes, MutatingAdmission } from './index.js';
import { MIRROR_POD_ANNOTATION, referencedObjects } from './noderestriction.js';

type Obj = Record<string, any>;
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

export class ServiceAccountAdmission implements MutatingAdmission {
  readonly name = 'ServiceAccount';
  constructor(private readonly serviceAccounts: () => Store) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }

  async admit(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const spec = (pod.spec ??= {}) as Obj;
    // Mirror pods (static pods) are not changed, and may reference no ServiceAccount, Secret or ConfigMap (as upstream).
    if (Object.hasOwn(pod.metadata.annotations ?? {}, MIRROR_POD_ANNOTATION)) {
      const deny = (why: string) => forbidden({ group: '', resource: 'pods' }, pod.metadata.name ?? pod.metadata.generateName ?? 'Unknown', why);
      if (spec.serviceAccountName) throw deny('a mirror pod may not reference service accounts');
      const refs = referencedObjects(pod);
      if (refs.secrets) throw deny('a mirror pod may not reference secrets');
      if (refs.configmaps) throw deny('a mirror pod may not reference configmaps');
      return;
    }
    const name = spec.serviceAccountName || spec.serviceAccount || 'default';
    spec.serviceAccountName = name;
    spec.serviceAccount = name;
    let sa: KubeObject;
    try {
      sa = await this.serviceAccounts().get(a.namespace, name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      throw forbidden({ group: '', resource: 'pods' }, pod.metadata.name ?? '', `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
    }
    const automount = spec.automountServiceAccountToken ?? (sa as Obj).automountServiceAccountToken ?? true;
    if (!automount) return;
    const containers = [...((spec.initContainers ?? []) as Obj[]), ...((spec.containers ?? []) as Obj[])];
    if (containers.every((c) => ((c.volumeMounts ?? []) as Obj[]).some((m) => m.mountPath === TOKEN_MOUNT_PATH))) return;
    const volName = `kube-api-access-${randomSuffix(5)}`;
    (spec.volumes ??= []).push({
      name: volName,
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    });
    for (const c of containers) {
      const mounts = (c.volumeMounts ??= []) as Obj[];
      if (!mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) mounts.push({ name: volName, readOnly: true, mountPath: TOKEN_MOUNT_PATH });
    }
  }
}
