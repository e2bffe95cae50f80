/**
 * `kubectl api-resources` against kubeling lists what a default kube-apiserver
 * 1.33 lists, minus what other parts of kubeling own and do not serve yet:
 * the metrics APIs (served by the metrics server through the aggregation layer).
 * Each row: name, short names, API version, namespaced, kind.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kubectl, kubectlBinaries, startTestEnv, type TestEnv } from '@kubeling/testenv';

const EXPECTED = `
bindings                                     v1                               true   Binding
componentstatuses                 cs         v1                               false  ComponentStatus
configmaps                        cm         v1                               true   ConfigMap
endpoints                         ep         v1                               true   Endpoints
events                            ev         v1                               true   Event
limitranges                       limits     v1                               true   LimitRange
namespaces                        ns         v1                               false  Namespace
nodes                             no         v1                               false  Node
persistentvolumeclaims            pvc        v1                               true   PersistentVolumeClaim
persistentvolumes                 pv         v1                               false  PersistentVolume
pods                              po         v1                               true   Pod
podtemplates                                 v1                               true   PodTemplate
replicationcontrollers            rc         v1                               true   ReplicationController
resourcequotas                    quota      v1                               true   ResourceQuota
secrets                                      v1                               true   Secret
serviceaccounts                   sa         v1                               true   ServiceAccount
services                          svc        v1                               true   Service
mutatingwebhookconfigurations                admissionregistration.k8s.io/v1  false  MutatingWebhookConfiguration
validatingadmissionpolicies                  admissionregistration.k8s.io/v1  false  ValidatingAdmissionPolicy
validatingadmissionpolicybindings            admissionregistration.k8s.io/v1  false  ValidatingAdmissionPolicyBinding
validatingwebhookconfigurations              admissionregistration.k8s.io/v1  false  ValidatingWebhookConfiguration
customresourcedefinitions         crd,crds   apiextensions.k8s.io/v1          false  CustomResourceDefinition
apiservices                                  apiregistration.k8s.io/v1        false  APIService
controllerrevisions                          apps/v1                          true   ControllerRevision
daemonsets                        ds         apps/v1                          true   DaemonSet
deployments                       deploy     apps/v1                          true   Deployment
replicasets                       rs         apps/v1                          true   ReplicaSet
statefulsets                      sts        apps/v1                          true   StatefulSet
selfsubjectreviews                           authentication.k8s.io/v1         false  SelfSubjectReview
tokenreviews                                 authentication.k8s.io/v1         false  TokenReview
localsubjectaccessreviews                    authorization.k8s.io/v1          true   LocalSubjectAccessReview
selfsubjectaccessreviews                     authorization.k8s.io/v1          false  SelfSubjectAccessReview
selfsubjectrulesreviews                      authorization.k8s.io/v1          false  SelfSubjectRulesReview
subjectaccessreviews                         authorization.k8s.io/v1          false  SubjectAccessReview
horizontalpodautoscalers          hpa        autoscaling/v2                   true   HorizontalPodAutoscaler
cronjobs                          cj         batch/v1                         true   CronJob
jobs                                         batch/v1                         true   Job
certificatesigningrequests        csr        certificates.k8s.io/v1           false  CertificateSigningRequest
leases                                       coordination.k8s.io/v1           true   Lease
endpointslices                               discovery.k8s.io/v1              true   EndpointSlice
events                            ev         events.k8s.io/v1                 true   Event
flowschemas                                  flowcontrol.apiserver.k8s.io/v1  false  FlowSchema
prioritylevelconfigurations                  flowcontrol.apiserver.k8s.io/v1  false  PriorityLevelConfiguration
ingressclasses                               networking.k8s.io/v1             false  IngressClass
ingresses                         ing        networking.k8s.io/v1             true   Ingress
ipaddresses                       ip         networking.k8s.io/v1             false  IPAddress
networkpolicies                   netpol     networking.k8s.io/v1             true   NetworkPolicy
servicecidrs                                 networking.k8s.io/v1             false  ServiceCIDR
runtimeclasses                               node.k8s.io/v1                   false  RuntimeClass
poddisruptionbudgets              pdb        policy/v1                        true   PodDisruptionBudget
clusterrolebindings                          rbac.authorization.k8s.io/v1     false  ClusterRoleBinding
clusterroles                                 rbac.authorization.k8s.io/v1     false  ClusterRole
rolebindings                                 rbac.authorization.k8s.io/v1     true   RoleBinding
roles                                        rbac.authorization.k8s.io/v1     true   Role
priorityclasses                   pc         scheduling.k8s.io/v1             false  PriorityClass
csidrivers                                   storage.k8s.io/v1                false  CSIDriver
csinodes                                     storage.k8s.io/v1                false  CSINode
csistoragecapacities                         storage.k8s.io/v1                true   CSIStorageCapacity
storageclasses                    sc         storage.k8s.io/v1                false  StorageClass
volumeattachments                            storage.k8s.io/v1                false  VolumeAttachment
`;

/** Rows as [name, shortnames, apiVersion, namespaced, kind], sorted. */
function rows(text: string): string[] {
  return text
    .split('\n')
    .slice(text.startsWith('NAME') ? 1 : 0)
    .filter((l) => l.trim())
    .map((l) => {
      const cols = l.trim().split(/\s+/);
      // The short names column may be empty.
      const [name, ...rest] = cols;
      const kind = rest.pop();
      const namespaced = rest.pop();
      const apiVersion = rest.pop();
      return [name, rest.join(','), apiVersion, namespaced, kind].join(' ');
    })
    .sort();
}

let env: TestEnv;
before(async () => {
  env = await startTestEnv();
});
after(async () => {
  await env?.stop();
});

test('kubectl api-resources lists what a default kube-apiserver 1.33 serves (less what other issues own)', async (t) => {
  const bin = kubectlBinaries().default;
  if (!bin) return t.skip('no kubectl on PATH');
  const k = new Kubectl(env.url, bin);
  try {
    const r = await k.run(['api-resources']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(rows(r.stdout), rows(EXPECTED));
  } finally {
    k.cleanup();
  }
});
