/**
 * Wire facts newer than the generator's source (Kubernetes v1.20): fields added
 * to existing structs, whole new structs and group-versions, written by hand
 * from the newest kubernetes/api `generated.proto` and `types.go` (field numbers,
 * JSON names, omitempty, pointers), in the row format of model.ts.
 */
import type { WirePackage, WireRow } from './model.js';
import { storageFields, storagePackages } from './overlay-storage.js';

export interface WireOverlay {
  /**
   * struct key → rows added, each after the field of that JSON name ('' = first), in Go struct order;
   * after `=`: the row replaces the one of its protobuf number.
   */
  fields: Readonly<Record<string, readonly (readonly [after: string, row: WireRow])[]>>;
  /** New packages, or new structs of a package (same key: merged). */
  packages: readonly WirePackage[];
  /** package key → older package keys whose structs and kinds stand in for what it lacks. */
  aliases: Readonly<Record<string, readonly string[]>>;
  /** apiVersion → package key, for group-versions newer than the source. */
  apiVersions: Readonly<Record<string, string>>;
}

const V = 'varint';
const B = 'bytes';

export const overlay: WireOverlay = {
  fields: {
    'meta/v1.ManagedFieldsEntry': [['fieldsV1', ['subresource', 'string', 'o', 8, B]]],
    // core/v1: Handler split into ProbeHandler and LifecycleHandler (1.23), grpc probes, sleep and stopSignal.
    'core/v1.Container': [['resources', ['restartPolicy', '*string', 'o', 24, B]]],
    'core/v1.EphemeralContainerCommon': [['resources', ['restartPolicy', '*string', 'o', 24, B]]],
    'core/v1.Probe': [
      ['=', ['', 'core/v1.ProbeHandler', 'i', 1, B]],
      ['failureThreshold', ['terminationGracePeriodSeconds', '*int64', 'o', 7, V]],
    ],
    'core/v1.Lifecycle': [
      ['=', ['postStart', '*core/v1.LifecycleHandler', 'o', 1, B]],
      ['=', ['preStop', '*core/v1.LifecycleHandler', 'o', 2, B]],
      ['preStop', ['stopSignal', '*string', 'o', 3, B]],
    ],
    // Fields kubeling's registries write without its schemas declaring them (found by logging the keys JSON output kept as unknown).
    'core/v1.PodStatus': [['hostIP', ['hostIPs', '[]core/v1.HostIP', 'o', 16, B]]],
    'core/v1.ServiceSpec': [
      ['allocateLoadBalancerNodePorts', ['loadBalancerClass', '*string', 'o', 21, B]],
      ['loadBalancerClass', ['internalTrafficPolicy', '*string', 'o', 22, B]],
      ['internalTrafficPolicy', ['trafficDistribution', '*string', 'o', 23, B]],
    ],
    'core/v1.TopologySpreadConstraint': [
      ['labelSelector', ['minDomains', '*int32', 'o', 5, V]],
      ['minDomains', ['nodeAffinityPolicy', '*string', 'o', 6, B]],
      ['nodeAffinityPolicy', ['nodeTaintsPolicy', '*string', 'o', 7, B]],
      ['nodeTaintsPolicy', ['matchLabelKeys', '[]string', 'o', 8, B]],
    ],
    // apps/v1
    'apps/v1.DeploymentStatus': [['unavailableReplicas', ['terminatingReplicas', '*int32', 'o', 9, V]]],
    'apps/v1.ReplicaSetStatus': [['availableReplicas', ['terminatingReplicas', '*int32', 'o', 7, V]]],
    'apps/v1.RollingUpdateDaemonSet': [['maxUnavailable', ['maxSurge', '*intstr.IntOrString', 'o', 2, B]]],
    'apps/v1.RollingUpdateStatefulSetStrategy': [['partition', ['maxUnavailable', '*intstr.IntOrString', 'o', 2, B]]],
    'apps/v1.StatefulSetSpec': [
      ['revisionHistoryLimit', ['minReadySeconds', 'int32', 'o', 9, V]],
      ['minReadySeconds', ['persistentVolumeClaimRetentionPolicy', '*apps/v1.StatefulSetPersistentVolumeClaimRetentionPolicy', 'o', 10, B]],
      ['persistentVolumeClaimRetentionPolicy', ['ordinals', '*apps/v1.StatefulSetOrdinals', 'o', 11, B]],
    ],
    'apps/v1.StatefulSetStatus': [['conditions', ['availableReplicas', 'int32', '', 11, V]]],
    // batch/v1 (CronJob is batch/v1beta1's layout)
    'batch/v1.JobSpec': [
      ['activeDeadlineSeconds', ['podFailurePolicy', '*batch/v1.PodFailurePolicy', 'o', 11, B]],
      ['podFailurePolicy', ['successPolicy', '*batch/v1.SuccessPolicy', 'o', 16, B]],
      ['backoffLimit', ['backoffLimitPerIndex', '*int32', 'o', 12, V]],
      ['backoffLimitPerIndex', ['maxFailedIndexes', '*int32', 'o', 13, V]],
      ['ttlSecondsAfterFinished', ['completionMode', '*string', 'o', 9, B]],
      ['completionMode', ['suspend', '*bool', 'o', 10, V]],
      ['suspend', ['podReplacementPolicy', '*string', 'o', 14, B]],
      ['podReplacementPolicy', ['managedBy', '*string', 'o', 15, B]],
    ],
    'batch/v1.JobStatus': [
      ['failed', ['terminating', '*int32', 'o', 11, V]],
      ['terminating', ['completedIndexes', 'string', 'o', 7, B]],
      ['completedIndexes', ['failedIndexes', '*string', 'o', 10, B]],
      ['failedIndexes', ['uncountedTerminatedPods', '*batch/v1.UncountedTerminatedPods', 'o', 8, B]],
      ['uncountedTerminatedPods', ['ready', '*int32', 'o', 9, V]],
    ],
    'batch/v1beta1.CronJobSpec': [['schedule', ['timeZone', '*string', 'o', 8, B]]],
    'batch/v1beta1.CronJobStatus': [['lastScheduleTime', ['lastSuccessfulTime', '*meta/v1.Time', 'o', 5, B]]],
    // policy/v1 (policy/v1beta1's layout)
    'policy/v1beta1.PodDisruptionBudgetSpec': [['maxUnavailable', ['unhealthyPodEvictionPolicy', '*string', 'o', 4, B]]],
    'policy/v1beta1.PodDisruptionBudgetStatus': [['expectedPods', ['conditions', '[]meta/v1.Condition', 'o', 7, B]]],
    // discovery.k8s.io/v1 (discovery/v1beta1's layout; topology renamed)
    'discovery/v1beta1.Endpoint': [
      ['=', ['deprecatedTopology', 'map[string]string', 'o', 5, B]],
      ['nodeName', ['zone', '*string', 'o', 7, B]],
      ['zone', ['hints', '*discovery/v1.EndpointHints', 'o', 8, B]],
    ],
    // flowcontrol.apiserver.k8s.io/v1 (flowcontrol/v1beta1's layout; assuredConcurrencyShares renamed)
    'flowcontrol/v1beta1.PriorityLevelConfigurationSpec': [['limited', ['exempt', '*flowcontrol/v1.ExemptPriorityLevelConfiguration', 'o', 3, B]]],
    'flowcontrol/v1beta1.LimitedPriorityLevelConfiguration': [
      ['=', ['nominalConcurrencyShares', '*int32', '', 1, V]],
      ['limitResponse', ['lendablePercent', '*int32', 'o', 3, V]],
      ['lendablePercent', ['borrowingLimitPercent', '*int32', 'o', 4, V]],
    ],
    'networking/v1.NetworkPolicyPort': [['port', ['endPort', '*int32', 'o', 3, V]]],
    'networking/v1.IngressClassSpec': [['=', ['parameters', '*networking/v1.IngressClassParametersReference', 'o', 2, B]]],
    'coordination/v1.LeaseSpec': [
      ['leaseTransitions', ['strategy', '*string', 'o', 6, B]],
      ['strategy', ['preferredHolder', '*string', 'o', 7, B]],
    ],
    'certificates/v1.CertificateSigningRequestSpec': [['signerName', ['expirationSeconds', '*int32', 'o', 8, V]]],
    // admissionregistration.k8s.io/v1: webhook matchConditions (1.27).
    'admissionregistration/v1.MutatingWebhook': [['reinvocationPolicy', ['matchConditions', '[]admissionregistration/v1.MatchCondition', 'o', 12, B]]],
    'admissionregistration/v1.ValidatingWebhook': [['admissionReviewVersions', ['matchConditions', '[]admissionregistration/v1.MatchCondition', 'o', 11, B]]],
    'authorization/v1.ResourceAttributes': [
      ['name', ['fieldSelector', '*authorization/v1.FieldSelectorAttributes', 'o', 8, B]],
      ['fieldSelector', ['labelSelector', '*authorization/v1.LabelSelectorAttributes', 'o', 9, B]],
    ],
    // core/v1 PersistentVolume(Claim) and storage.k8s.io/v1 (overlay-storage.ts).
    ...storageFields,
  },
  packages: [
    ...storagePackages,
    {
      key: 'meta/v1',
      group: 'meta.k8s.io',
      version: 'v1',
      kinds: [],
      structs: {
        FieldSelectorRequirement: [
          ['key', 'string', '', 1, B],
          ['operator', 'string', '', 2, B],
          ['values', '[]string', 'o', 3, B],
        ],
      },
    },
    {
      key: 'core/v1',
      group: '',
      version: 'v1',
      kinds: [],
      structs: {
        ProbeHandler: [
          ['exec', '*core/v1.ExecAction', 'o', 1, B],
          ['httpGet', '*core/v1.HTTPGetAction', 'o', 2, B],
          ['tcpSocket', '*core/v1.TCPSocketAction', 'o', 3, B],
          ['grpc', '*core/v1.GRPCAction', 'o', 4, B],
        ],
        LifecycleHandler: [
          ['exec', '*core/v1.ExecAction', 'o', 1, B],
          ['httpGet', '*core/v1.HTTPGetAction', 'o', 2, B],
          ['tcpSocket', '*core/v1.TCPSocketAction', 'o', 3, B],
          ['sleep', '*core/v1.SleepAction', 'o', 4, B],
        ],
        GRPCAction: [
          ['port', 'int32', '', 1, V],
          ['service', '*string', '', 2, B],
        ],
        SleepAction: [['seconds', 'int64', '', 1, V]],
        HostIP: [['ip', 'string', '', 1, B]],
      },
    },
    {
      key: 'apps/v1',
      group: 'apps',
      version: 'v1',
      kinds: [],
      structs: {
        StatefulSetOrdinals: [['start', 'int32', '', 1, V]],
        StatefulSetPersistentVolumeClaimRetentionPolicy: [
          ['whenDeleted', 'string', 'o', 1, B],
          ['whenScaled', 'string', 'o', 2, B],
        ],
      },
    },
    {
      key: 'batch/v1',
      group: 'batch',
      version: 'v1',
      kinds: [],
      structs: {
        PodFailurePolicy: [['rules', '[]batch/v1.PodFailurePolicyRule', '', 1, B]],
        PodFailurePolicyRule: [
          ['action', 'string', '', 1, B],
          ['onExitCodes', '*batch/v1.PodFailurePolicyOnExitCodesRequirement', '', 2, B],
          ['onPodConditions', '[]batch/v1.PodFailurePolicyOnPodConditionsPattern', '', 3, B],
        ],
        PodFailurePolicyOnExitCodesRequirement: [
          ['containerName', '*string', '', 1, B],
          ['operator', 'string', '', 2, B],
          ['values', '[]int32', '', 3, V],
        ],
        PodFailurePolicyOnPodConditionsPattern: [
          ['type', 'string', '', 1, B],
          ['status', 'string', '', 2, B],
        ],
        SuccessPolicy: [['rules', '[]batch/v1.SuccessPolicyRule', '', 1, B]],
        SuccessPolicyRule: [
          ['succeededIndexes', '*string', 'o', 1, B],
          ['succeededCount', '*int32', 'o', 2, V],
        ],
        UncountedTerminatedPods: [
          ['succeeded', '[]string', 'o', 1, B],
          ['failed', '[]string', 'o', 2, B],
        ],
      },
    },
    {
      // admissionregistration.k8s.io/v1: ValidatingAdmissionPolicy and its binding (1.30).
      key: 'admissionregistration/v1',
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      kinds: ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyList', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicyBindingList'],
      structs: {
        MatchCondition: [
          ['name', 'string', '', 1, B],
          ['expression', 'string', '', 2, B],
        ],
        ParamKind: [
          ['apiVersion', 'string', 'o', 1, B],
          ['kind', 'string', 'o', 2, B],
        ],
        NamedRuleWithOperations: [
          ['resourceNames', '[]string', 'o', 1, B],
          ['', 'admissionregistration/v1.RuleWithOperations', 'i', 2, B],
        ],
        MatchResources: [
          ['namespaceSelector', '*meta/v1.LabelSelector', 'o', 1, B],
          ['objectSelector', '*meta/v1.LabelSelector', 'o', 2, B],
          ['resourceRules', '[]admissionregistration/v1.NamedRuleWithOperations', 'o', 3, B],
          ['excludeResourceRules', '[]admissionregistration/v1.NamedRuleWithOperations', 'o', 4, B],
          ['matchPolicy', '*string', 'o', 7, B],
        ],
        Validation: [
          ['expression', 'string', '', 1, B],
          ['message', 'string', 'o', 2, B],
          ['reason', '*string', 'o', 3, B],
          ['messageExpression', 'string', 'o', 4, B],
        ],
        AuditAnnotation: [
          ['key', 'string', '', 1, B],
          ['valueExpression', 'string', '', 2, B],
        ],
        Variable: [
          ['name', 'string', '', 1, B],
          ['expression', 'string', '', 2, B],
        ],
        ValidatingAdmissionPolicySpec: [
          ['paramKind', '*admissionregistration/v1.ParamKind', 'o', 1, B],
          ['matchConstraints', '*admissionregistration/v1.MatchResources', 'o', 2, B],
          ['validations', '[]admissionregistration/v1.Validation', 'o', 3, B],
          ['failurePolicy', '*string', 'o', 4, B],
          ['auditAnnotations', '[]admissionregistration/v1.AuditAnnotation', 'o', 5, B],
          ['matchConditions', '[]admissionregistration/v1.MatchCondition', 'o', 6, B],
          ['variables', '[]admissionregistration/v1.Variable', 'o', 7, B],
        ],
        ExpressionWarning: [
          ['fieldRef', 'string', '', 2, B],
          ['warning', 'string', '', 3, B],
        ],
        TypeChecking: [['expressionWarnings', '[]admissionregistration/v1.ExpressionWarning', 'o', 1, B]],
        ValidatingAdmissionPolicyStatus: [
          ['observedGeneration', 'int64', 'o', 1, V],
          ['typeChecking', '*admissionregistration/v1.TypeChecking', 'o', 2, B],
          ['conditions', '[]meta/v1.Condition', 'o', 3, B],
        ],
        ValidatingAdmissionPolicy: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
          ['spec', 'admissionregistration/v1.ValidatingAdmissionPolicySpec', 'o', 2, B],
          ['status', 'admissionregistration/v1.ValidatingAdmissionPolicyStatus', 'o', 3, B],
        ],
        ValidatingAdmissionPolicyList: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ListMeta', 'o', 1, B],
          ['items', '[]admissionregistration/v1.ValidatingAdmissionPolicy', '', 2, B],
        ],
        ParamRef: [
          ['name', 'string', 'o', 1, B],
          ['namespace', 'string', 'o', 2, B],
          ['selector', '*meta/v1.LabelSelector', 'o', 3, B],
          ['parameterNotFoundAction', '*string', 'o', 4, B],
        ],
        ValidatingAdmissionPolicyBindingSpec: [
          ['policyName', 'string', 'o', 1, B],
          ['paramRef', '*admissionregistration/v1.ParamRef', 'o', 2, B],
          ['matchResources', '*admissionregistration/v1.MatchResources', 'o', 3, B],
          ['validationActions', '[]string', 'o', 4, B],
        ],
        ValidatingAdmissionPolicyBinding: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
          ['spec', 'admissionregistration/v1.ValidatingAdmissionPolicyBindingSpec', 'o', 2, B],
        ],
        ValidatingAdmissionPolicyBindingList: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ListMeta', 'o', 1, B],
          ['items', '[]admissionregistration/v1.ValidatingAdmissionPolicyBinding', '', 2, B],
        ],
      },
    },
    {
      key: 'authentication/v1',
      group: 'authentication.k8s.io',
      version: 'v1',
      kinds: ['SelfSubjectReview'],
      structs: {
        SelfSubjectReview: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
          ['status', 'authentication/v1.SelfSubjectReviewStatus', 'o', 2, B],
        ],
        SelfSubjectReviewStatus: [['userInfo', 'authentication/v1.UserInfo', 'o', 1, B]],
      },
    },
    {
      key: 'authorization/v1',
      group: 'authorization.k8s.io',
      version: 'v1',
      kinds: [],
      structs: {
        FieldSelectorAttributes: [
          ['rawSelector', 'string', 'o', 1, B],
          ['requirements', '[]meta/v1.FieldSelectorRequirement', 'o', 2, B],
        ],
        LabelSelectorAttributes: [
          ['rawSelector', 'string', 'o', 1, B],
          ['requirements', '[]meta/v1.LabelSelectorRequirement', 'o', 2, B],
        ],
      },
    },
    {
      key: 'discovery/v1',
      group: 'discovery.k8s.io',
      version: 'v1',
      kinds: [],
      structs: {
        EndpointHints: [
          ['forZones', '[]discovery/v1.ForZone', 'o', 1, B],
          ['forNodes', '[]discovery/v1.ForNode', 'o', 2, B],
        ],
        ForZone: [['name', 'string', '', 1, B]],
        ForNode: [['name', 'string', '', 1, B]],
      },
    },
    {
      key: 'flowcontrol/v1',
      group: 'flowcontrol.apiserver.k8s.io',
      version: 'v1',
      kinds: [],
      structs: {
        ExemptPriorityLevelConfiguration: [
          ['nominalConcurrencyShares', '*int32', 'o', 1, V],
          ['lendablePercent', '*int32', 'o', 2, V],
        ],
      },
    },
    {
      // autoscaling/v2 (1.23): autoscaling/v2beta2's layout (aliased below), except what differs: currentReplicas and
      // conditions omitempty, and HPAScalingRules.tolerance (1.33); the structs naming those are restated here.
      key: 'autoscaling/v2',
      group: 'autoscaling',
      version: 'v2',
      kinds: ['HorizontalPodAutoscaler', 'HorizontalPodAutoscalerList'],
      structs: {
        HorizontalPodAutoscaler: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
          ['spec', 'autoscaling/v2.HorizontalPodAutoscalerSpec', 'o', 2, B],
          ['status', 'autoscaling/v2.HorizontalPodAutoscalerStatus', 'o', 3, B],
        ],
        HorizontalPodAutoscalerList: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ListMeta', 'o', 1, B],
          ['items', '[]autoscaling/v2.HorizontalPodAutoscaler', '', 2, B],
        ],
        HorizontalPodAutoscalerSpec: [
          ['scaleTargetRef', 'autoscaling/v2.CrossVersionObjectReference', '', 1, B],
          ['minReplicas', '*int32', 'o', 2, V],
          ['maxReplicas', 'int32', '', 3, V],
          ['metrics', '[]autoscaling/v2.MetricSpec', 'o', 4, B],
          ['behavior', '*autoscaling/v2.HorizontalPodAutoscalerBehavior', 'o', 5, B],
        ],
        HorizontalPodAutoscalerBehavior: [
          ['scaleUp', '*autoscaling/v2.HPAScalingRules', 'o', 1, B],
          ['scaleDown', '*autoscaling/v2.HPAScalingRules', 'o', 2, B],
        ],
        HPAScalingRules: [
          ['stabilizationWindowSeconds', '*int32', 'o', 3, V],
          ['selectPolicy', '*string', 'o', 1, B],
          ['policies', '[]autoscaling/v2.HPAScalingPolicy', 'o', 2, B],
          ['tolerance', '*resource.Quantity', 'o', 4, B],
        ],
        HorizontalPodAutoscalerStatus: [
          ['observedGeneration', '*int64', 'o', 1, V],
          ['lastScaleTime', '*meta/v1.Time', 'o', 2, B],
          ['currentReplicas', 'int32', 'o', 3, V],
          ['desiredReplicas', 'int32', '', 4, V],
          ['currentMetrics', '[]autoscaling/v2.MetricStatus', '', 5, B],
          ['conditions', '[]autoscaling/v2.HorizontalPodAutoscalerCondition', 'o', 6, B],
        ],
      },
    },
    {
      // networking.k8s.io/v1: IngressClassParametersReference (1.21), IPAddress and ServiceCIDR (1.33).
      key: 'networking/v1',
      group: 'networking.k8s.io',
      version: 'v1',
      kinds: ['IPAddress', 'IPAddressList', 'ServiceCIDR', 'ServiceCIDRList'],
      structs: {
        IngressClassParametersReference: [
          ['apiGroup', '*string', 'o', 1, B],
          ['kind', 'string', '', 2, B],
          ['name', 'string', '', 3, B],
          ['scope', '*string', '', 4, B],
          ['namespace', '*string', 'o', 5, B],
        ],
        IPAddress: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
          ['spec', 'networking/v1.IPAddressSpec', 'o', 2, B],
        ],
        IPAddressSpec: [['parentRef', '*networking/v1.ParentReference', 'o', 1, B]],
        ParentReference: [
          ['group', 'string', 'o', 1, B],
          ['resource', 'string', 'o', 2, B],
          ['namespace', 'string', 'o', 3, B],
          ['name', 'string', 'o', 4, B],
        ],
        IPAddressList: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ListMeta', 'o', 1, B],
          ['items', '[]networking/v1.IPAddress', '', 2, B],
        ],
        ServiceCIDR: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ObjectMeta', 'o', 1, B],
          ['spec', 'networking/v1.ServiceCIDRSpec', 'o', 2, B],
          ['status', 'networking/v1.ServiceCIDRStatus', 'o', 3, B],
        ],
        ServiceCIDRSpec: [['cidrs', '[]string', 'o', 1, B]],
        ServiceCIDRStatus: [['conditions', '[]meta/v1.Condition', 'o', 1, B]],
        ServiceCIDRList: [
          ['', 'meta/v1.TypeMeta', 'i'],
          ['metadata', 'meta/v1.ListMeta', 'o', 1, B],
          ['items', '[]networking/v1.ServiceCIDR', '', 2, B],
        ],
      },
    },
  ],
  aliases: {
    // GA versions whose layouts are the beta ones of v1.20 (same field numbers), plus the fields above.
    'batch/v1': ['batch/v1beta1'],
    'policy/v1': ['policy/v1beta1'],
    'discovery/v1': ['discovery/v1beta1'],
    'flowcontrol/v1': ['flowcontrol/v1beta1'],
    'autoscaling/v2': ['autoscaling/v2beta2'],
  },
  apiVersions: {
    'policy/v1': 'policy/v1',
    'discovery.k8s.io/v1': 'discovery/v1',
    'flowcontrol.apiserver.k8s.io/v1': 'flowcontrol/v1',
  },
};
