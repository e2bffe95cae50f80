/**
 * The volume manager's reads and writes of the apiserver, as the kubelet's
 * node identity may make them (the Node authorizer lets it get the claims,
 * volumes, attachments and secrets of its pods, and patch a claim's status):
 * claims and PVs, CSIDriver and VolumeAttachment (absent, or not yet known
 * to the Node authorizer, is not an error),
 * secrets decoded, the claim status patch, and events.
 */
import type { KubeObject } from '@kubeling/api';
import { isNotFound, isStatusError } from '@kubeling/apimachinery';
import type { EventRecorder, RestClient } from '@kubeling/client';
import type { VolumeApi } from './volume-manager.js';

/**
 * A name or namespace from an object's field as one path segment: refused as
 * client-go's Request.Name/Namespace refuse it (empty, `.`, `..`, a `/` or
 * `%` inside), otherwise escaped so it cannot leave its place in the URL.
 */
function seg(name: string): string {
  if (!name) throw new Error('resource name may not be empty');
  const msgs = name === '.' || name === '..' ? [`may not be '${name}'`] : ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
  if (msgs.length) throw new Error(`invalid resource name ${JSON.stringify(name)}: [${msgs.join(' ')}]`);
  return encodeURIComponent(name);
}

export function volumeApi(client: RestClient, recorder: EventRecorder): VolumeApi {
  const optional = async <T>(path: string, forbiddenIsAbsent = false): Promise<T | undefined> => {
    try {
      return await client.get<T>(path);
    } catch (e) {
      if (isNotFound(e) || (forbiddenIsAbsent && isStatusError(e) && e.status.reason === 'Forbidden')) return undefined;
      throw e;
    }
  };
  return {
    claim: async (ns, name) => client.get(`/api/v1/namespaces/${seg(ns)}/persistentvolumeclaims/${seg(name)}`),
    volume: async (name) => client.get(`/api/v1/persistentvolumes/${seg(name)}`),
    csiDriver: async (name) => optional(`/apis/storage.k8s.io/v1/csidrivers/${seg(name)}`),
    // The Node authorizer lets a node see an attachment only once it names the node: until then, none.
    volumeAttachment: async (name) => optional(`/apis/storage.k8s.io/v1/volumeattachments/${seg(name)}`, true),
    secret: async (ns, name) => {
      const s = await client.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${seg(ns)}/secrets/${seg(name)}`);
      return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    },
    patchClaimStatus: async (ns, name, patch) =>
      client.patch(`/api/v1/namespaces/${seg(ns)}/persistentvolumeclaims/${seg(name)}/status`, patch, 'application/merge-patch+json'),
    event: (obj, type, reason, message) => void recorder.event(obj as unknown as KubeObject, type, reason, message),
  };
}
