/**
 * Table printers of networking.k8s.io (Ingress, IngressClass, NetworkPolicy,
 * ServiceCIDR, IPAddress), node.k8s.io (RuntimeClass) and certificates.k8s.io
 * (CertificateSigningRequest), with the columns of kubernetes
 * pkg/printers/internalversion/printers.go. Server-side tables are wide, so
 * addresses are not clipped.
 */
import type { certificatesv1, networkingv1, nodev1 } from '@kubeling/api';
import { humanDuration } from '@kubeling/apimachinery';
import { AGE, NAME, age, col, printer, selectorString, type Printer } from './columns.js';

/** formatHosts: the first three hosts, `*` for none. */
function hosts(rules: NonNullable<networkingv1.IngressSpec['rules']>): string {
  const list: string[] = [];
  let more = false;
  for (const r of rules) {
    if (list.length === 3) more = true;
    if (!more && r.host) list.push(r.host);
  }
  if (!list.length) return '*';
  return more ? `${list.join(',')} + ${rules.length - 3} more...` : list.join(',');
}

/** ingressLoadBalancerStatusStringer: IPs (else hostnames), sorted and unique. */
function addresses(i: networkingv1.Ingress): string {
  const set = new Set<string>();
  for (const lb of i.status?.loadBalancer?.ingress ?? []) {
    if (lb.ip) set.add(lb.ip);
    else if (lb.hostname) set.add(lb.hostname);
  }
  return [...set].sort().join(',');
}

/** extractCSRStatus: Denied or Approved or Pending, then Failed and Issued. */
export function csrCondition(csr: certificatesv1.CertificateSigningRequest): string {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (csr.status?.certificate) s += ',Issued';
  return s;
}

export const networkingPrinters: Record<string, Printer> = {
  'networking.k8s.io/ingresses': printer<networkingv1.Ingress>(
    [
      NAME,
      col('Class', 'The name of the IngressClass resource that should be used for ingress.'),
      col('Hosts', 'Hosts that incoming requests are matched against before the ingress rule'),
      col('Address', 'Address is a list of IP addresses to which packets are sent to reach the load balancer'),
      col('Ports', 'Ports of TLS configurations that open'),
      AGE,
    ],
    (i, now) => [
      i.metadata?.name,
      i.spec?.ingressClassName ?? '<none>',
      hosts(i.spec?.rules ?? []),
      addresses(i),
      i.spec?.tls?.length ? '80, 443' : '80',
      age(i, now),
    ],
  ),
  'networking.k8s.io/ingressclasses': printer<networkingv1.IngressClass>(
    [
      NAME,
      col('Controller', 'Controller that is responsible for handling this class'),
      col('Parameters', 'A reference to a resource with additional parameters'),
      AGE,
    ],
    (c, now) => {
      const p = c.spec?.parameters;
      const params = p ? `${p.kind}${p.apiGroup !== undefined && p.apiGroup !== null ? `.${p.apiGroup}` : ''}/${p.name}` : '<none>';
      return [c.metadata?.name, c.spec?.controller ?? '', params, age(c, now)];
    },
  ),
  'networking.k8s.io/networkpolicies': printer<networkingv1.NetworkPolicy>(
    [NAME, col('Pod-Selector', 'Label selector that selects pods to which this NetworkPolicy applies.'), AGE],
    (n, now) => [n.metadata?.name, selectorString(n.spec?.podSelector ?? {}), age(n, now)],
  ),
  'networking.k8s.io/servicecidrs': printer<networkingv1.ServiceCIDR>(
    [NAME, col('CIDRs', 'CIDRs defines the IP blocks in CIDR notation from which to assign service cluster IPs.'), AGE],
    (s, now) => [s.metadata?.name, (s.spec?.cidrs ?? []).join(','), age(s, now)],
  ),
  'networking.k8s.io/ipaddresses': printer<networkingv1.IPAddress>(
    [NAME, col('ParentRef', 'ParentRef references the resource that an IPAddress is attached to.'), AGE],
    (ip, now) => {
      const ref = ip.spec?.parentRef;
      let parent = '<none>';
      if (ref) {
        parent = (ref.group ? `${ref.resource ?? ''}.${ref.group}` : (ref.resource ?? '')).toLowerCase();
        if (ref.namespace) parent += `/${ref.namespace}`;
        parent += `/${ref.name ?? ''}`;
      }
      return [ip.metadata?.name, parent, age(ip, now)];
    },
  ),
  'node.k8s.io/runtimeclasses': printer<nodev1.RuntimeClass>(
    [
      NAME,
      col('Handler', 'Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.'),
      AGE,
    ],
    (r, now) => [r.metadata?.name, r.handler ?? '', age(r, now)],
  ),
  'certificates.k8s.io/certificatesigningrequests': printer<certificatesv1.CertificateSigningRequest>(
    [
      NAME,
      AGE,
      col('SignerName', 'signerName indicates the requested signer, and is a qualified name.'),
      col('Requestor', 'Name of the user which made this request.'),
      col('RequestedDuration', 'expirationSeconds is the requested duration of validity of the issued certificate.'),
      col('Condition', 'State of the request (Pending, Approved, Denied, Issued, Failed)'),
    ],
    (c, now) => [
      c.metadata?.name,
      age(c, now),
      c.spec?.signerName || '<none>',
      c.spec?.username ?? '',
      c.spec?.expirationSeconds !== undefined && c.spec.expirationSeconds !== null ? humanDuration(c.spec.expirationSeconds * 1000) : '<none>',
      csrCondition(c),
    ],
  ),
};
