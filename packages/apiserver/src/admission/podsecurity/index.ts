/**
 * Wiring of the PodSecurity plugin: its configuration from the
 * AdmissionConfiguration, its lookups (namespaces and pods through the
 * stores' watch cache), and the stores it validates (pods, namespaces and the
 * pod-template resources, every served version).
 */
import type { KubeObject } from '@kubeling/api';
import { isNotFound } from '@kubeling/apimachinery';
import type { Registry } from '../../http/resource-handler.js';
import type { AdmissionChain } from '../index.js';
import { PodSecurityAdmission } from './admission.js';
import { loadPodSecurityConfiguration } from './config.js';
import { POD_TEMPLATE_RESOURCES } from './podspec.js';

export { PodSecurityAdmission } from './admission.js';
export { loadPodSecurityConfiguration } from './config.js';

const VALIDATED = new Set(['/pods', '/namespaces', ...POD_TEMPLATE_RESOURCES]);

/**
 * Builds the plugin and appends it to the validating chain of the stores it
 * covers. Throws when the configuration does not validate.
 */
export function attachPodSecurity(registry: Registry, config: Record<string, unknown> | undefined): PodSecurityAdmission {
  const plugin = new PodSecurityAdmission({
    config: loadPodSecurityConfiguration(config),
    // resourceVersion "0": the watch cache, else etcd (a namespace the cache has not seen yet).
    namespace: (name) =>
      registry
        .get('/v1/namespaces')!
        .get(undefined, name, '0')
        .catch((e): KubeObject | undefined => {
          if (isNotFound(e)) return undefined;
          throw e;
        }),
    pods: async (namespace) => (await registry.get('/v1/pods')!.list(namespace, { resourceVersion: '0' })).items,
  });
  for (const st of registry.values()) {
    if (VALIDATED.has(`${st.def.group}/${st.def.resource}`)) (st.admission as AdmissionChain).validating.push(plugin);
  }
  return plugin;
}
