export * from './object.js';
export * as dsl from './schema/dsl.js';
export * from './schema/meta.js';
export * from './schema/decode.js';
export * from './resources.js';
// Protobuf and Go-ordered JSON of the API types (tables generated from the Go types).
export * as wire from './wire/index.js';
export * as corev1 from './kinds/core-v1.js';
export * as appsv1 from './kinds/apps-v1.js';
export * as batchv1 from './kinds/batch-v1.js';
export * as coordinationv1 from './kinds/coordination-v1.js';
export * as discoveryv1 from './kinds/discovery-v1.js';
export * as eventsv1 from './kinds/events-v1.js';
export * as schedulingv1 from './kinds/scheduling-v1.js';
export * as admissionregistrationv1 from './kinds/admissionregistration-v1.js';
export * as autoscalingv1 from './kinds/autoscaling-v1.js';
export * as autoscalingv2 from './kinds/autoscaling-v2.js';
export * as policyv1 from './kinds/policy-v1.js';
export * as authorizationv1 from './kinds/authorization-v1.js';
export * as authenticationv1 from './kinds/authentication-v1.js';
export * as rbacv1 from './kinds/rbac-v1.js';
export * as flowcontrolv1 from './kinds/flowcontrol-v1.js';
export * as networkingv1 from './kinds/networking-v1.js';
export * as nodev1 from './kinds/node-v1.js';
export * as certificatesv1 from './kinds/certificates-v1.js';
export * as apiextensionsv1 from './kinds/apiextensions-v1.js';
export * as apiregistrationv1 from './kinds/apiregistration-v1.js';
export * as storagev1 from './kinds/storage-v1.js';
// Defaulting and validation of the pod spec and the apps/v1 workloads (strategies call these).
export * from './kinds/core-v1-validation.js';
export * from './kinds/apps-v1-validation.js';
// Defaulting and validation of PersistentVolumes, claims and storage.k8s.io/v1.
export * from './kinds/core-v1-storage-common.js';
export * from './kinds/core-v1-storage-validation.js';
export * from './kinds/core-v1-claim-validation.js';
export * from './kinds/storage-v1-validation.js';
// resource.Quantity's exact parsing, canonical form and comparison.
export { canonicalQuantity, compareQuantities, parseExactQuantity, type ExactQuantity } from './kinds/core-v1-quantity.js';
export * from './metrics.js';
