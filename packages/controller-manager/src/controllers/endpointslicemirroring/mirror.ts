/**
 * What the EndpointSlice mirroring controller keeps for one Endpoints object
 * (pkg/controller/endpointslicemirroring/reconciler.go), decided without I/O:
 * the Endpoints of a Service without a selector (kept by hand or by another
 * tool) become EndpointSlices that kube-proxy and other slice readers follow.
 * Each subset gives one slice per address family (ready addresses ready, not
 * ready ones not), at most 1000 addresses a slice, with the Endpoints' labels
 * and annotations (except the last-change-trigger-time and the skip-mirror
 * label) and the mirroring labels.
 */
import type { discoveryv1 } from '@kubeling/api';
import { isIPv4 } from 'node:net';
import type { EndpointAddress, EndpointPort, Endpoints, Service } from '../kinds.js';

export const MIRROR_MANAGED_BY = 'endpointslicemirroring-controller.k8s.io';
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
export const MAX_ENDPOINTS_PER_SUBSET = 1000;
const LAST_CHANGE = 'endpoints.kubernetes.io/last-change-trigger-time';

export interface DesiredSlice {
  addressType: 'IPv4' | 'IPv6';
  ports: EndpointPort[];
  endpoints: discoveryv1.Endpoint[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Whether an Endpoints object is mirrored: its Service exists, has no selector, and the skip label is not set. */
export function shouldMirror(ep: Endpoints | undefined, svc: Service | undefined): boolean {
  if (!ep || !svc || ep.metadata.deletionTimestamp) return false;
  if (ep.metadata.labels?.[SKIP_MIRROR_LABEL] === 'true') return false;
  return !svc.spec?.selector || Object.keys(svc.spec.selector).length === 0;
}

function endpointOf(a: EndpointAddress, ready: boolean): discoveryv1.Endpoint {
  const e: discoveryv1.Endpoint = { addresses: [a.ip!], conditions: { ready } };
  if (a.hostname) e.hostname = a.hostname;
  if (a.nodeName) e.nodeName = a.nodeName;
  if (a.targetRef) e.targetRef = a.targetRef as NonNullable<discoveryv1.Endpoint['targetRef']>;
  return e;
}

/** The slices an Endpoints object should have (empty when it is not mirrored). */
export function desiredSlices(ep: Endpoints): DesiredSlice[] {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(ep.metadata.labels ?? {})) if (k !== SKIP_MIRROR_LABEL) labels[k] = v;
  labels['kubernetes.io/service-name'] = ep.metadata.name!;
  labels['endpointslice.kubernetes.io/managed-by'] = MIRROR_MANAGED_BY;
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(ep.metadata.annotations ?? {})) if (k !== LAST_CHANGE) annotations[k] = v;
  const out: DesiredSlice[] = [];
  for (const subset of ep.subsets ?? []) {
    const ports = ((subset.ports ?? []) as { name?: string; port?: number; protocol?: string; appProtocol?: string }[]).map((p) => {
      const port: EndpointPort = { name: p.name ?? '', port: p.port!, protocol: p.protocol ?? 'TCP' };
      if (p.appProtocol) port.appProtocol = p.appProtocol;
      return port;
    });
    // Upstream mirrors the first 1000 addresses of a subset, ready ones first.
    const all = [...(subset.addresses ?? []).map((a) => endpointOf(a, true)), ...(subset.notReadyAddresses ?? []).map((a) => endpointOf(a, false))].slice(
      0,
      MAX_ENDPOINTS_PER_SUBSET,
    );
    for (const family of ['IPv4', 'IPv6'] as const) {
      const endpoints = all.filter((e) => (isIPv4(e.addresses[0]!) ? 'IPv4' : 'IPv6') === family);
      if (endpoints.length) out.push({ addressType: family, ports, endpoints, labels, annotations });
    }
  }
  return out;
}
