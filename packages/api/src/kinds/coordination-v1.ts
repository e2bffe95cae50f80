/**
 * coordination.k8s.io/v1: Lease, as upstream Kubernetes 1.32
 * (`k8s.io/api/coordination/v1`).
 */
import { described, int32, object, string, time, type Static } from '../schema/dsl.js';
import { kindOf } from '../schema/meta.js';

const C = 'io.k8s.api.coordination.v1.';

export const LeaseSpec = object(C + 'LeaseSpec', 'LeaseSpec is a specification of a Lease.', {
  holderIdentity: string('holderIdentity contains the identity of the holder of a current lease.'),
  leaseDurationSeconds: int32(
    'leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it, measured against the time of last observed renewTime.',
  ),
  acquireTime: time('acquireTime is a time when the current lease was acquired.'),
  renewTime: time('renewTime is a time when the current holder of a lease has last updated the lease.'),
  leaseTransitions: int32('leaseTransitions is the number of transitions of a lease between holders.'),
  strategy: string('Strategy indicates the strategy for picking the leader for coordinated leader election.'),
  preferredHolder: string('PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up.'),
});

export const Lease = kindOf(C + 'Lease', 'Lease defines a lease concept.', {
  spec: described(LeaseSpec, 'spec contains the specification of the Lease.'),
});

export type LeaseSpec = Static<typeof LeaseSpec>;
export type Lease = Static<typeof Lease>;
