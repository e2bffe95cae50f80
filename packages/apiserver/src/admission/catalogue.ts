/**
 * The admission plugins kube-apiserver knows, in the order they run
 * (pkg/kubeapiserver/options/plugins.go AllOrderedPlugins), which are on by
 * default (DefaultOffAdmissionPlugins' complement), and what each does. The
 * mutating plugins of a resource run in this order, then its validating
 * ones, whatever order the flags name them in.
 *
 * Three kinds of entries are kubeling's own:
 * - plugins upstream has removed (SecurityContextDeny, DenyEscalatingExec,
 *   DenyExecOnPrivileged) keep the place they last had;
 * - plugins whose resources kubeling does not serve yet are listed with the
 *   reason (`unavailable`): naming them is no error, and they do nothing;
 * - plugins upstream does not have (`kubelingOnly`): CSIDriverRestriction,
 *   after NodeRestriction, restricts the nodes' CSI driver identities as
 *   NodeRestriction restricts kubelets.
 *
 * The flags' checks are upstream's AdmissionOptions.Validate
 * (k8s.io/apiserver pkg/server/options/admission.go).
 */

export interface AdmissionPluginInfo {
  readonly name: string;
  /** On unless --disable-admission-plugins names it. */
  readonly defaultOn: boolean;
  readonly description: string;
  /** Why the plugin does nothing here (the resources it works on are not served); undefined when it runs. */
  readonly unavailable?: string;
  /** Upstream no longer ships it; kept as its last upstream version. */
  readonly removedUpstream?: boolean;
  /** Not an upstream plugin: kubeling's own. */
  readonly kubelingOnly?: boolean;
}

const plugin = (name: string, defaultOn: boolean, description: string, more: Partial<AdmissionPluginInfo> = {}): AdmissionPluginInfo => ({
  name,
  defaultOn,
  description,
  ...more,
});

export const ADMISSION_PLUGINS: readonly AdmissionPluginInfo[] = [
  plugin('AlwaysAdmit', false, 'Admits every request (deprecated upstream: it means nothing).'),
  plugin('NamespaceAutoProvision', false, 'Creates the namespace of a namespaced create when it does not exist.'),
  plugin('NamespaceLifecycle', true, 'Refuses new objects in missing or terminating namespaces (enforced by every store).'),
  plugin('NamespaceExists', false, 'Refuses requests in a namespace that does not exist (404 NotFound).'),
  plugin('SecurityContextDeny', false, 'Refuses pods that set SELinuxOptions, RunAsUser, SupplementalGroups or FSGroup.', { removedUpstream: true }),
  plugin('LimitPodHardAntiAffinityTopology', false, 'Allows only kubernetes.io/hostname as the topologyKey of required pod anti-affinity.'),
  plugin('LimitRanger', true, "Applies a namespace's LimitRanges: defaults requests and limits, refuses pods outside min/max."),
  plugin('ServiceAccount', true, "Sets pods' service account and mounts its token (needs --service-account-signing-key-file)."),
  plugin('NodeRestriction', false, 'Limits what a kubelet may change to its own Node and the pods bound to it (on with RBAC).'),
  plugin(
    'CSIDriverRestriction',
    true,
    "kubeling's own: limits what a node's CSI driver (system:csi-driver:<node>) may write to its own node's PersistentVolumes, VolumeAttachments, CSIStorageCapacities and claims.",
    { kubelingOnly: true },
  ),
  // The node lifecycle controller lifts the taint as soon as it sees the node Ready; a cluster without
  // that controller (a test's bare apiserver) must disable the plugin, or its nodes take no pods.
  plugin('TaintNodesByCondition', true, 'Taints new nodes node.kubernetes.io/not-ready:NoSchedule until they are Ready.'),
  plugin('AlwaysPullImages', false, "Sets every container's imagePullPolicy to Always."),
  plugin('ImagePolicyWebhook', false, "Asks an ImageReview webhook whether a pod's images may run."),
  plugin('PodSecurity', true, 'Enforces the Pod Security Standards labelled on namespaces.'),
  plugin('PodNodeSelector', false, "Merges a namespace's node selector into its pods and refuses conflicting ones."),
  plugin('Priority', true, "Resolves pods' priorityClassName into spec.priority."),
  plugin('DefaultTolerationSeconds', true, 'Pods tolerate not-ready and unreachable NoExecute taints for 300 s by default.'),
  plugin('PodTolerationRestriction', false, "Merges a namespace's default tolerations into its pods and enforces its whitelist."),
  plugin('DenyEscalatingExec', false, 'Refuses exec and attach into privileged pods or pods sharing host namespaces.', { removedUpstream: true }),
  plugin('DenyExecOnPrivileged', false, 'Refuses exec and attach into pods with a privileged container.', { removedUpstream: true }),
  plugin('EventRateLimit', false, 'Rate-limits Event writes per server, namespace, user or source and object (429).'),
  plugin('ExtendedResourceToleration', false, 'Pods requesting an extended resource tolerate its NoSchedule taint.'),
  plugin('DefaultStorageClass', true, 'Sets the default StorageClass of new PersistentVolumeClaims that name none.'),
  plugin('StorageObjectInUseProtection', true, 'Adds the pv-protection and pvc-protection finalizers to new PersistentVolumes and claims.'),
  plugin('PodGroupProtection', true, 'Keeps PodGroups in use from being deleted.', { unavailable: 'PodGroups are not served' }),
  plugin('OwnerReferencesPermissionEnforcement', false, 'Owner references that block deletion need delete permission on the owner (on with RBAC).'),
  plugin('PersistentVolumeClaimResize', true, 'Allows claim expansion only for bound claims whose StorageClass allows it.'),
  plugin('RuntimeClass', true, "Applies a pod's RuntimeClass overhead and scheduling constraints."),
  plugin('CertificateApproval', true, 'Approving a CertificateSigningRequest needs the approve verb on its signer.'),
  plugin('CertificateSigning', true, 'Signing a CertificateSigningRequest needs the sign verb on its signer.'),
  plugin('ClusterTrustBundleAttest', true, 'Writing a ClusterTrustBundle needs the attest verb on its signer.', {
    unavailable: 'ClusterTrustBundles are not served',
  }),
  plugin('CertificateSubjectRestriction', true, 'Refuses kube-apiserver-client CSRs for the system:masters group.'),
  plugin('DefaultIngressClass', true, 'Sets the default IngressClass of new Ingresses.'),
  plugin('DenyServiceExternalIPs', false, 'Refuses new externalIPs on Services.'),
  plugin('PodTopologyLabels', true, "Copies the node's topology labels to pods bound to it.", { unavailable: 'its feature gate is off' }),
  plugin('PodGroupWorkloadExists', true, 'Refuses pods of a missing Workload.', { unavailable: 'Workloads are not served' }),
  plugin('NodeDeclaredFeatureValidator', true, 'Checks pods against the features their node declares.', { unavailable: 'its feature gate is off' }),
  plugin('JobValidation', true, 'Validates Jobs against their Workload.', { unavailable: 'Workloads are not served' }),
  plugin('PodResizeValidator', true, 'Checks in-place pod resizes.', { unavailable: 'its feature gate is off' }),
  plugin('MutatingAdmissionPolicy', true, 'Applies MutatingAdmissionPolicies (CEL mutations).', {
    unavailable: 'MutatingAdmissionPolicies are not served',
  }),
  plugin('MutatingAdmissionWebhook', true, 'Calls the webhooks of MutatingWebhookConfigurations.'),
  plugin('ValidatingAdmissionPolicy', true, 'Evaluates ValidatingAdmissionPolicies (CEL).'),
  plugin('ValidatingAdmissionWebhook', true, 'Calls the webhooks of ValidatingWebhookConfigurations.'),
  plugin('ResourceQuota', true, "Charges creates to the namespace's ResourceQuotas and refuses what exceeds them."),
  plugin('AlwaysDeny', false, 'Refuses every write (deprecated upstream: it means nothing).'),
];

/** Every plugin name, in the order the plugins run (upstream's RecommendedPluginOrder). */
export const RECOMMENDED_PLUGIN_ORDER: readonly string[] = ADMISSION_PLUGINS.map((p) => p.name);

/** The plugins on unless disabled, in running order. */
export const DEFAULT_ON_PLUGINS: readonly string[] = ADMISSION_PLUGINS.filter((p) => p.defaultOn).map((p) => p.name);

const byName = new Map(ADMISSION_PLUGINS.map((p) => [p.name, p]));

export const admissionPlugin = (name: string): AdmissionPluginInfo | undefined => byName.get(name);

/** Go's `%v` of a []string. */
const goList = (names: readonly string[]) => `[${names.join(' ')}]`;

/**
 * Upstream's checks of --enable-admission-plugins and --disable-admission-plugins:
 * every name must be known, and no name in both. Empty when they pass.
 */
export function validateAdmissionPluginFlags(enable: readonly string[], disable: readonly string[]): string[] {
  const errs: string[] = [];
  for (const n of enable) if (!byName.has(n)) errs.push(`enable-admission-plugins plugin "${n}" is unknown`);
  for (const n of disable) if (!byName.has(n)) errs.push(`disable-admission-plugins plugin "${n}" is unknown`);
  const both = [...new Set(enable)].filter((n) => disable.includes(n)).sort();
  if (both.length) errs.push(`${goList(both)} in enable-admission-plugins and disable-admission-plugins overlapped`);
  return errs;
}

export interface AdmissionSelection {
  enable?: readonly string[];
  disable?: readonly string[];
  /** On by default in this server on top of upstream's defaults (NodeRestriction with RBAC). */
  extraDefaults?: readonly string[];
}

/**
 * The plugins to run, in running order: the defaults and `enable`, less
 * `disable`. Throws on a flag error (an aggregate of upstream's messages), as
 * kube-apiserver refuses to start.
 */
export function enabledAdmissionPlugins(sel: AdmissionSelection): string[] {
  const enable = sel.enable ?? [];
  const disable = sel.disable ?? [];
  const errs = validateAdmissionPluginFlags(enable, disable);
  if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  const on = new Set([...DEFAULT_ON_PLUGINS, ...(sel.extraDefaults ?? []), ...enable]);
  for (const n of disable) on.delete(n);
  return RECOMMENDED_PLUGIN_ORDER.filter((n) => on.has(n));
}

/** The help of the two flags, as kube-apiserver prints it (registered names sorted, defaults in running order). */
export function admissionFlagsHelp(): { enable: string; disable: string } {
  // The defaults that run here; those whose resources are not served are named apart.
  const defaults = DEFAULT_ON_PLUGINS.filter((n) => !byName.get(n)?.unavailable).join(', ');
  const all = [...RECOMMENDED_PLUGIN_ORDER].sort().join(', ');
  const idle = RECOMMENDED_PLUGIN_ORDER.filter((n) => byName.get(n)?.unavailable).join(', ');
  const tail = `Comma-delimited list of admission plugins: ${all}. The order of plugins in this flag does not matter. Accepted but idle until their resources are served: ${idle}.`;
  return {
    enable: `admission plugins that should be enabled in addition to default enabled ones (${defaults}). ${tail}`,
    disable: `admission plugins that should be disabled although they are in the default enabled plugins list (${defaults}). ${tail}`,
  };
}
