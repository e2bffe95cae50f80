/**
 * Table printers of the smaller API groups: discovery.k8s.io EndpointSlices,
 * coordination.k8s.io Leases, scheduling.k8s.io PriorityClasses, policy
 * PodDisruptionBudgets and rbac bindings, with the columns of kubernetes
 * pkg/printers/internalversion/printers.go.
 */
import type { coordinationv1, discoveryv1, policyv1, rbacv1, schedulingv1 } from '@kubeling/api';
import { AGE, NAME, age, col, firstThree, printer, wide, type Column, type Printer } from './columns.js';
import { admissionPolicyPrinters } from '../../registry/admissionregistration/printers.js';
import { autoscalingPrinters } from '../../registry/autoscaling/printers.js';

const BINDING_COLUMNS: Column[] = [
  NAME,
  col('Role', 'Role referenced by this binding.'),
  AGE,
  wide('Users', 'Users in the binding.'),
  wide('Groups', 'Groups in the binding.'),
  wide('ServiceAccounts', 'ServiceAccounts in the binding.'),
];

function bindingCells(b: rbacv1.RoleBinding | rbacv1.ClusterRoleBinding, now: number): unknown[] {
  const subjects = b.subjects ?? [];
  const of = (k: string) =>
    subjects
      .filter((s) => s.kind === k)
      .map((s) => (k === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
      .join(', ');
  return [b.metadata?.name, `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`, age(b, now), of('User'), of('Group'), of('ServiceAccount')];
}

export const groupPrinters: Record<string, Printer> = {
  ...admissionPolicyPrinters,
  ...autoscalingPrinters,
  'discovery.k8s.io/endpointslices': printer<discoveryv1.EndpointSlice>(
    [
      NAME,
      col('AddressType', 'The type of address carried by this EndpointSlice.'),
      col('Ports', 'Ports allowed by this EndpointSlice.'),
      col('Endpoints', 'Endpoints that are part of this EndpointSlice.'),
      AGE,
    ],
    (e, now) => {
      const ports = (e.ports ?? []).map((p) => (p.port === undefined || p.port === null ? '<unset>' : String(p.port)));
      const addrs = (e.endpoints ?? []).flatMap((x) => x.addresses ?? []);
      return [e.metadata?.name, e.addressType ?? '', firstThree(ports, '<unset>'), firstThree(addrs, '<unset>'), age(e, now)];
    },
  ),
  'coordination.k8s.io/leases': printer<coordinationv1.Lease>([NAME, col('Holder', 'The holder of the lease'), AGE], (l, now) => [
    l.metadata?.name,
    l.spec?.holderIdentity ?? '',
    age(l, now),
  ]),
  'scheduling.k8s.io/priorityclasses': printer<schedulingv1.PriorityClass>(
    [
      NAME,
      col('Value', 'The value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.', {
        type: 'integer',
      }),
      col(
        'Global-Default',
        'globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.',
        { type: 'boolean' },
      ),
      AGE,
      col('Preemption Policy', 'PreemptionPolicy is the Policy for preempting pods with lower priority.'),
    ],
    (p, now) => [p.metadata?.name, p.value ?? 0, p.globalDefault ?? false, age(p, now), p.preemptionPolicy ?? 'PreemptLowerPriority'],
  ),
  'policy/poddisruptionbudgets': printer<policyv1.PodDisruptionBudget>(
    [
      NAME,
      col('Min Available', 'The minimum number of pods that must be available simultaneously.'),
      col('Max Unavailable', 'The maximum number of pods that may be unavailable simultaneously.'),
      col('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', { type: 'integer' }),
      AGE,
    ],
    (p, now) => [
      p.metadata?.name,
      p.spec?.minAvailable !== undefined ? String(p.spec.minAvailable) : 'N/A',
      p.spec?.maxUnavailable !== undefined ? String(p.spec.maxUnavailable) : 'N/A',
      p.status?.disruptionsAllowed ?? 0,
      age(p, now),
    ],
  ),
  'rbac.authorization.k8s.io/rolebindings': printer<rbacv1.RoleBinding>(BINDING_COLUMNS, bindingCells),
  'rbac.authorization.k8s.io/clusterrolebindings': printer<rbacv1.ClusterRoleBinding>(BINDING_COLUMNS, bindingCells),
};
