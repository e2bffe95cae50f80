/** Which strategy each resource uses. Resources not named here get the plain strategy. */
import type { ResourceDef } from '@kubeling/api';
import type { Strategy } from '../strategy.js';
import { podStrategy } from '../core/pods.js';
import { namespaceStrategy } from '../core/namespaces.js';
import { configMapStrategy, secretStrategy } from '../core/config.js';
import { serviceStrategy } from '../core/services.js';
import { replicationControllerStrategy } from '../core/replicationcontrollers.js';
import { nodeStrategy } from '../core/nodes.js';
import { eventStrategy, eventsV1Strategy } from '../core/events.js';
import { daemonSetStrategy, deploymentStrategy, replicaSetStrategy, statefulSetStrategy } from '../apps/workloads.js';
import { cronJobStrategy, jobStrategy } from '../batch/jobs.js';
import { endpointSliceStrategy } from '../discovery/endpointslices.js';
import { csrStrategy } from '../certificates/strategy.js';
import { ingressClassStrategy, ingressStrategy } from '../networking/ingresses.js';
import { ipAddressStrategy, networkPolicyStrategy, serviceCIDRStrategy } from '../networking/networkpolicies.js';
import { runtimeClassStrategy } from '../node/runtimeclasses.js';
import { persistentVolumeClaimStrategy, persistentVolumeStrategy } from '../core/persistentvolumes.js';
import { csiDriverStrategy, csiNodeStrategy, csiStorageCapacityStrategy, storageClassStrategy, volumeAttachmentStrategy } from '../storage/strategies.js';
import { crdStrategy } from '../../apiextensions/crd-strategy.js';
import { apiServiceStrategy } from '../../aggregator/strategy.js';
import {
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStrategy,
  webhookConfigurationStrategy,
} from '../admissionregistration/strategy.js';
import { flowSchemaStrategy, priorityLevelConfigurationStrategy } from '../flowcontrol/strategy.js';
import { hpaStrategy, hpaV1Strategy } from '../autoscaling/strategy.js';
import {
  generationStatusStrategy,
  plainStrategy,
  podTemplateStrategy,
  priorityClassStrategy,
  roleBindingStrategy,
  roleStrategy,
  statusStrategy,
} from '../other/misc.js';

const byResource: Record<string, Strategy> = {
  '/pods': podStrategy,
  '/namespaces': namespaceStrategy,
  '/configmaps': configMapStrategy,
  '/secrets': secretStrategy,
  '/services': serviceStrategy,
  '/nodes': nodeStrategy,
  '/events': eventStrategy,
  '/podtemplates': podTemplateStrategy,
  '/replicationcontrollers': replicationControllerStrategy,
  '/resourcequotas': statusStrategy,
  '/persistentvolumeclaims': persistentVolumeClaimStrategy,
  '/persistentvolumes': persistentVolumeStrategy,
  'events.k8s.io/events': eventsV1Strategy,
  'apps/deployments': deploymentStrategy,
  'apps/replicasets': replicaSetStrategy,
  'apps/daemonsets': daemonSetStrategy,
  'apps/statefulsets': statefulSetStrategy,
  'batch/jobs': jobStrategy,
  'batch/cronjobs': cronJobStrategy,
  // autoscaling/v2 is the stored form; v1 converts (a `group/version/resource` key picks a version's own strategy).
  'autoscaling/horizontalpodautoscalers': hpaStrategy,
  'autoscaling/v1/horizontalpodautoscalers': hpaV1Strategy,
  'apiregistration.k8s.io/apiservices': apiServiceStrategy,
  'policy/poddisruptionbudgets': generationStatusStrategy,
  'scheduling.k8s.io/priorityclasses': priorityClassStrategy,
  'discovery.k8s.io/endpointslices': endpointSliceStrategy,
  'certificates.k8s.io/certificatesigningrequests': csrStrategy,
  'networking.k8s.io/ingresses': ingressStrategy,
  'networking.k8s.io/ingressclasses': ingressClassStrategy,
  'networking.k8s.io/networkpolicies': networkPolicyStrategy,
  'networking.k8s.io/servicecidrs': serviceCIDRStrategy,
  'networking.k8s.io/ipaddresses': ipAddressStrategy,
  'node.k8s.io/runtimeclasses': runtimeClassStrategy,
  'storage.k8s.io/storageclasses': storageClassStrategy,
  'storage.k8s.io/csidrivers': csiDriverStrategy,
  'storage.k8s.io/csinodes': csiNodeStrategy,
  'storage.k8s.io/volumeattachments': volumeAttachmentStrategy,
  'storage.k8s.io/csistoragecapacities': csiStorageCapacityStrategy,
  'apiextensions.k8s.io/customresourcedefinitions': crdStrategy,
  'admissionregistration.k8s.io/validatingadmissionpolicies': validatingAdmissionPolicyStrategy,
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': validatingAdmissionPolicyBindingStrategy,
  'admissionregistration.k8s.io/validatingwebhookconfigurations': webhookConfigurationStrategy,
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': webhookConfigurationStrategy,
  'flowcontrol.apiserver.k8s.io/flowschemas': flowSchemaStrategy,
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': priorityLevelConfigurationStrategy,
  'rbac.authorization.k8s.io/roles': roleStrategy,
  'rbac.authorization.k8s.io/clusterroles': roleStrategy,
  'rbac.authorization.k8s.io/rolebindings': roleBindingStrategy,
  'rbac.authorization.k8s.io/clusterrolebindings': roleBindingStrategy,
};

export function strategyFor(def: ResourceDef): Strategy {
  return byResource[`${def.group}/${def.version}/${def.resource}`] ?? byResource[`${def.group}/${def.resource}`] ?? plainStrategy;
}
