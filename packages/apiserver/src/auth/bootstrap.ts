/**
 * The bootstrap RBAC policy (kubernetes plugin/pkg/auth/authorizer/rbac/
 * bootstrappolicy): the user-facing roles (cluster-admin; admin, edit, view by
 * aggregation), discovery and self-review access for everyone authenticated,
 * and the roles of the control-plane components, each bound to its identity.
 * system:node is not bound, as upstream: kubelets go through the Node authorizer.
 * Reconciled at start: missing objects are created, missing rules and
 * subjects added to objects that allow auto-update.
 */
import type { KubeObject } from '@kubeling/api';
import { isAlreadyExists, isNotFound, jsonEqual } from '@kubeling/apimachinery';
import type { Store } from '../registry/store.js';
import type { PolicyRule } from './rbac.js';
import {
  CONTROLLER_MANAGER_STORAGE_RULES,
  NODE_STORAGE_RULES,
  PV_PROVISIONER_RULES,
  SCHEDULER_STORAGE_RULES,
  STORAGE_CONTROLLER_ROLES,
  VOLUME_SCHEDULER_RULES,
} from './bootstrap-storage.js';

const RO = ['get', 'list', 'watch'];
const RW = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const ALL = ['*'];

const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

const AUTOUPDATE = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

function clusterRole(name: string, rules: PolicyRule[], extra: { labels?: Record<string, string>; aggregate?: string } = {}): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...BOOTSTRAP_LABELS, ...(extra.labels ?? {}) }, annotations: AUTOUPDATE },
    ...(extra.aggregate
      ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${extra.aggregate}`]: 'true' } }] } }
      : {}),
    rules,
  } as KubeObject;
}

function clusterRoleBinding(name: string, role: string, subjects: { kind: string; name: string; namespace?: string }[]): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: BOOTSTRAP_LABELS, annotations: AUTOUPDATE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: subjects.map((s) => ({ ...(s.kind !== 'ServiceAccount' ? { apiGroup: 'rbac.authorization.k8s.io' } : {}), ...s })),
  } as KubeObject;
}

const group = (name: string) => ({ kind: 'Group', name });

/** The kubernetes.io signers the controller-manager signs for. */
const CSR_SIGNERS = ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving'];
const user = (name: string) => ({ kind: 'User', name });

const VIEW_CORE = [
  'configmaps',
  'endpoints',
  'persistentvolumeclaims',
  'persistentvolumeclaims/status',
  'pods',
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'serviceaccounts',
  'services',
  'services/status',
  'bindings',
  'events',
  'limitranges',
  'namespaces',
  'namespaces/status',
  'pods/log',
  'pods/status',
  'replicationcontrollers/status',
  'resourcequotas',
  'resourcequotas/status',
];
const APPS = [
  'controllerrevisions',
  'daemonsets',
  'daemonsets/status',
  'deployments',
  'deployments/scale',
  'deployments/status',
  'replicasets',
  'replicasets/scale',
  'replicasets/status',
  'statefulsets',
  'statefulsets/scale',
  'statefulsets/status',
];

export function bootstrapPolicy(): { clusterRoles: KubeObject[]; clusterRoleBindings: KubeObject[] } {
  const clusterRoles = [
    clusterRole('cluster-admin', [rule(ALL, ['*'], ['*']), urls(ALL, ['*'])]),
    clusterRole('admin', [], { aggregate: 'admin' }),
    clusterRole('edit', [], { aggregate: 'edit', labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } }),
    clusterRole('view', [], { aggregate: 'view', labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } }),
    clusterRole(
      'system:aggregate-to-admin',
      [
        rule(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
        rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      ],
      { labels: { 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule(
          ['create', 'delete', 'deletecollection', 'patch', 'update'],
          [''],
          [
            'pods',
            'pods/attach',
            'pods/exec',
            'pods/portforward',
            'pods/proxy',
            'configmaps',
            'endpoints',
            'persistentvolumeclaims',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'secrets',
            'serviceaccounts',
            'services',
            'services/proxy',
          ],
        ),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(['get', 'list', 'watch'], [''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
        rule(['impersonate'], [''], ['serviceaccounts']),
        rule(
          RW,
          ['apps'],
          ['daemonsets', 'deployments', 'deployments/rollback', 'deployments/scale', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale'],
        ),
        rule(RW, ['autoscaling'], ['horizontalpodautoscalers']),
        rule(RW, ['batch'], ['cronjobs', 'jobs']),
        rule(RW, ['policy'], ['poddisruptionbudgets']),
        rule(RW, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
        rule(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'], ['coordination.k8s.io'], ['leases']),
      ],
      { labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' } },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(RO, [''], VIEW_CORE),
        rule(RO, ['apps'], APPS),
        rule(RO, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(RO, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
        rule(RO, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(RO, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
        rule(RO, ['discovery.k8s.io'], ['endpointslices']),
        rule(RO, ['events.k8s.io'], ['events']),
      ],
      { labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
    ),
    // Extension servers bound to it delegate authentication and authorization to this server.
    clusterRole('system:auth-delegator', [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:basic-user', [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:discovery', [
      urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/']),
    ]),
    clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
    clusterRole('system:kube-scheduler', [
      rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
      rule(RO, [''], ['nodes', 'namespaces', 'services', 'replicationcontrollers']),
      ...SCHEDULER_STORAGE_RULES,
      rule(['delete', 'get', 'list', 'watch'], [''], ['pods']),
      rule(['create'], [''], ['bindings', 'pods/binding']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(RO, ['apps'], ['replicasets', 'statefulsets']),
      rule(RO, ['policy'], ['poddisruptionbudgets']),
      rule(RO, ['scheduling.k8s.io'], ['priorityclasses']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:kubelet-api-admin', [
      rule(['get', 'list', 'watch'], [''], ['nodes']),
      rule(['proxy'], [''], ['nodes']),
      rule(['*'], [''], ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats', 'nodes/pods', 'nodes/spec', 'nodes/configz', 'nodes/healthz']),
    ]),
    clusterRole('system:node-proxier', [
      rule(['list', 'watch'], [''], ['services', 'endpoints']),
      rule(['get', 'list', 'watch'], [''], ['nodes']),
      rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
      rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
    ]),
    // One identity runs every controller here, so it holds what the per-controller
    // roles (system:controller:*) grant between them.
    clusterRole('system:kube-controller-manager', [
      rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
      rule(['create'], ['coordination.k8s.io'], ['leases']),
      rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-controller-manager']),
      rule(RO, ['coordination.k8s.io'], ['leases']),
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['get'], ['*'], ['*']),
      // blockOwnerDeletion on an owner needs update on its finalizers (OwnerReferencesPermissionEnforcement).
      rule(['update'], [''], ['pods/finalizers', 'services/finalizers', 'endpoints/finalizers', 'replicationcontrollers/finalizers']),
      rule(
        [...RW, 'get', 'list', 'watch'],
        [''],
        [
          'pods',
          'pods/status',
          'endpoints',
          'serviceaccounts',
          'namespaces',
          'namespaces/finalize',
          'namespaces/status',
          'nodes',
          'nodes/status',
          'configmaps',
          'replicationcontrollers',
          'services',
          'services/status',
          'persistentvolumeclaims',
          'resourcequotas',
          'resourcequotas/status',
          'limitranges',
          'secrets',
          'podtemplates',
        ],
      ),
      rule(
        [...RW],
        ['apps'],
        [
          'deployments',
          'deployments/status',
          'deployments/finalizers',
          'replicasets',
          'replicasets/status',
          'replicasets/finalizers',
          'daemonsets',
          'daemonsets/status',
          'daemonsets/finalizers',
          'statefulsets',
          'statefulsets/status',
          'statefulsets/finalizers',
          'controllerrevisions',
        ],
      ),
      rule([...RW], ['batch'], ['jobs', 'jobs/status', 'jobs/finalizers', 'cronjobs', 'cronjobs/status', 'cronjobs/finalizers']),
      rule([...RW], ['discovery.k8s.io'], ['endpointslices']),
      rule([...RW], ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      ...CONTROLLER_MANAGER_STORAGE_RULES,
      rule(['delete', 'deletecollection', 'patch', 'update'], ['*'], ['*']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
      rule(['create'], [''], ['serviceaccounts/token']),
      // The certificate controllers (system:controller:certificate-controller upstream).
      rule(['approve'], ['certificates.k8s.io'], ['signers'], [CSR_SIGNERS[1]!]),
      rule(['sign'], ['certificates.k8s.io'], ['signers'], [...CSR_SIGNERS, 'kubernetes.io/legacy-unknown']),
    ]),
    // The horizontal-pod-autoscaler controller's own role (bootstrappolicy controller_policy.go), bound to its
    // ServiceAccount as upstream binds it for --use-service-account-credentials; the one identity above holds it too.
    clusterRole('system:controller:horizontal-pod-autoscaler', [
      rule(['get', 'list', 'watch'], ['autoscaling'], ['horizontalpodautoscalers']),
      rule(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']),
      rule(['get', 'update'], ['*'], ['*/scale']),
      rule(['list'], [''], ['pods']),
      rule(['list'], ['metrics.k8s.io'], ['pods']),
      rule(['get', 'list'], ['custom.metrics.k8s.io'], ['*']),
      rule(['get', 'list'], ['external.metrics.k8s.io'], ['*']),
      rule(['create', 'update', 'patch'], ['', 'events.k8s.io'], ['events']),
    ]),
    // Who may ask for kubelet client certificates, and approve them by signer (bootstrappolicy's CSR roles).
    clusterRole('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests'])]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [
      rule(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/nodeclient']),
    ]),
    clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [
      rule(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient']),
    ]),
    ...CSR_SIGNERS.map((signer) =>
      clusterRole(`system:certificates.k8s.io:${signer.slice('kubernetes.io/'.length)}-approver`, [
        rule(['approve'], ['certificates.k8s.io'], ['signers'], [signer]),
      ]),
    ),
    clusterRole('system:node', [
      rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
      rule(['patch', 'update'], [''], ['nodes', 'nodes/status']),
      rule(RO, [''], ['pods', 'services', 'endpoints', 'configmaps', 'secrets', 'namespaces']),
      ...NODE_STORAGE_RULES,
      rule(['create', 'delete'], [''], ['pods']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(['create'], [''], ['pods/eviction']),
      rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']),
      rule(['create', 'delete', 'get', 'patch', 'update'], ['coordination.k8s.io'], ['leases']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews', 'subjectaccessreviews']),
      rule(RO, ['node.k8s.io'], ['runtimeclasses']),
      rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    ]),
    clusterRole('system:volume-scheduler', [...VOLUME_SCHEDULER_RULES]),
    clusterRole('system:persistent-volume-provisioner', [...PV_PROVISIONER_RULES]),
    ...STORAGE_CONTROLLER_ROLES.map((r) => clusterRole(`system:controller:${r.name}`, [...r.rules])),
  ];
  const clusterRoleBindings = [
    clusterRoleBinding('cluster-admin', 'cluster-admin', [group('system:masters')]),
    clusterRoleBinding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
    clusterRoleBinding('system:discovery', 'system:discovery', [group('system:authenticated')]),
    clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    clusterRoleBinding('system:kube-scheduler', 'system:kube-scheduler', [user('system:kube-scheduler')]),
    clusterRoleBinding('system:kube-controller-manager', 'system:kube-controller-manager', [user('system:kube-controller-manager')]),
    clusterRoleBinding('system:controller:horizontal-pod-autoscaler', 'system:controller:horizontal-pod-autoscaler', [
      { kind: 'ServiceAccount', name: 'horizontal-pod-autoscaler', namespace: 'kube-system' },
    ]),
    clusterRoleBinding('system:volume-scheduler', 'system:volume-scheduler', [user('system:kube-scheduler')]),
    ...STORAGE_CONTROLLER_ROLES.map((r) =>
      clusterRoleBinding(`system:controller:${r.name}`, `system:controller:${r.name}`, [{ kind: 'ServiceAccount', name: r.name, namespace: 'kube-system' }]),
    ),
    clusterRoleBinding('system:node-proxier', 'system:node-proxier', [user('system:kube-proxy')]),
    clusterRoleBinding('system:kube-apiserver-kubelet-client', 'system:kubelet-api-admin', [user('kube-apiserver-kubelet-client')]),
  ];
  return { clusterRoles, clusterRoleBindings };
}

/** Creates missing bootstrap objects; adds missing rules/subjects to auto-updating ones. */
export async function reconcileBootstrapPolicy(roles: Store, bindings: Store): Promise<void> {
  const { clusterRoles, clusterRoleBindings } = bootstrapPolicy();
  const sync = async (store: Store, want: KubeObject, field: 'rules' | 'subjects') => {
    try {
      await store.create(undefined, want, { fieldManager: 'kube-apiserver' });
      return;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    await store
      .guaranteedUpdate(
        undefined,
        want.metadata.name!,
        (cur) => {
          if (cur.metadata.annotations?.['rbac.authorization.kubernetes.io/autoupdate'] === 'false') return cur;
          const have = ((cur as Record<string, unknown>)[field] ?? []) as unknown[];
          const missing = (((want as Record<string, unknown>)[field] ?? []) as unknown[]).filter((w) => !have.some((h) => jsonEqual(h, w)));
          const next = structuredClone(cur) as Record<string, unknown>;
          if (missing.length) next[field] = [...have, ...missing];
          if ((want as Record<string, unknown>).aggregationRule && !next.aggregationRule)
            next.aggregationRule = (want as Record<string, unknown>).aggregationRule;
          return next as KubeObject;
        },
        { ctx: { fieldManager: 'kube-apiserver' } },
      )
      .catch((e) => {
        if (!isNotFound(e)) throw e;
      });
  };
  // Each object is reconciled on its own: all at once, as a start-up waits on them.
  await Promise.all([...clusterRoles.map((r) => sync(roles, r, 'rules')), ...clusterRoleBindings.map((b) => sync(bindings, b, 'subjects'))]);
}
