/**
 * RuntimeClass to CRI handler (pkg/kubelet/runtimeclass): a pod naming a
 * RuntimeClass gets its sandbox from that class's handler. The class is read
 * when a sandbox is made (rare), not watched. A class that does not exist
 * fails sandbox creation, which is retried with a FailedCreatePodSandBox
 * event, as upstream.
 */
import { isNotFound } from '@kubeling/apimachinery';
import type { RestClient } from '@kubeling/client';

export class RuntimeClassNotFound extends Error {}

export async function runtimeHandlerOf(client: RestClient, runtimeClassName: string | undefined): Promise<string> {
  if (!runtimeClassName) return '';
  try {
    const rc = await client.get<{ handler?: string }>(`/apis/node.k8s.io/v1/runtimeclasses/${encodeURIComponent(runtimeClassName)}`);
    return rc.handler ?? '';
  } catch (e) {
    if (isNotFound(e)) throw new RuntimeClassNotFound(`RuntimeClass "${runtimeClassName}" not found`);
    throw e;
  }
}
