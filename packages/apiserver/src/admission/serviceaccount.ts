/**
 * The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount):
 * a new pod runs as `default` unless it names a ServiceAccount, which must
 * exist; unless automounting is off (on the pod or its ServiceAccount) it gets
 * the `kube-api-access-<suffix>` projected volume — a bound token, the cluster
 * CA from the `kube-root-ca.crt` ConfigMap, and the namespace — mounted read-only
 * at /var/run/secrets/kubernetes.io/serviceaccount in every container.
 */
import type { KubeObject, corev1, dsl } from '@kubeling/api';
import { forbidden, isNotFound, randomSuffix } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission } from './index.js';
import type { ObjectGetter } from './lookups.js';
import { MIRROR_POD_ANNOTATION, referencedObjects } from './noderestriction.js';

type ServiceAccount = dsl.Static<typeof corev1.ServiceAccount>;
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

export class ServiceAccountAdmission implements MutatingAdmission {
  readonly name = 'ServiceAccount';
  constructor(private readonly serviceAccounts: () => ObjectGetter) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods';
  }

  async admit(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const spec = ((pod as corev1.Pod).spec ??= {});
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
    let sa: ServiceAccount;
    try {
      sa = await this.serviceAccounts().get(a.namespace, name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      throw forbidden(
        { group: '', resource: 'pods' },
        pod.metadata.name ?? '',
        `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`,
      );
    }
    const automount = spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
    if (!automount) return;
    const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
    if (containers.every((c) => (c.volumeMounts ?? []).some((m) => m.mountPath === TOKEN_MOUNT_PATH))) return;
    const volName = `kube-api-access-${randomSuffix(5)}`;
    // The api describes a Volume by its name only; the projected source is written as upstream's plugin writes it.
    const tokenVolume = {
      name: volName,
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    };
    (spec.volumes ??= []).push(tokenVolume);
    for (const c of containers) {
      const mounts = (c.volumeMounts ??= []);
      if (!mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) mounts.push({ name: volName, readOnly: true, mountPath: TOKEN_MOUNT_PATH });
    }
  }
}
