/**
 * Admission plugins of a few lines each (kubernetes plugin/pkg/admission):
 *
 * - TaintNodesByCondition (nodetaint): a new Node gets the
 *   `node.kubernetes.io/not-ready:NoSchedule` taint unless it has one of that
 *   key and effect, so no pod lands on it before its kubelet reports Ready and
 *   the node lifecycle controller lifts the taint.
 * - DenyServiceExternalIPs (network/denyserviceexternalips): a Service may
 *   not gain externalIPs (removing some, or keeping the same, is allowed).
 * - AlwaysAdmit (admit) and AlwaysDeny (deny): admit, or refuse, everything.
 */
import type { KubeObject } from '@kubeling/api';
import { admissionForbidden } from './attributes.js';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';

export const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

export class TaintNodesByCondition implements MutatingAdmission {
  readonly name = 'TaintNodesByCondition';

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/nodes' && !a.subresource;
  }

  async admit(node: KubeObject): Promise<void> {
    const spec = ((node as { spec?: { taints?: { key: string; effect: string }[] } }).spec ??= {});
    // MatchTaint: the same key and effect, whatever the value.
    if ((spec.taints ?? []).some((t) => t.key === NOT_READY_TAINT.key && t.effect === NOT_READY_TAINT.effect)) return;
    spec.taints = [...(spec.taints ?? []), { ...NOT_READY_TAINT }];
  }
}

export class DenyServiceExternalIPs implements ValidatingAdmission {
  readonly name = 'DenyServiceExternalIPs';

  handles(a: AdmissionAttributes): boolean {
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.resource === '/services' && !a.subresource;
  }

  async validate(svc: KubeObject, a: AdmissionAttributes): Promise<void> {
    const ips = (o: KubeObject | undefined) => ((o as { spec?: { externalIPs?: string[] } } | undefined)?.spec?.externalIPs ?? []) as string[];
    const had = new Set(ips(a.old));
    if (ips(svc).every((ip) => had.has(ip))) return;
    throw admissionForbidden(a, svc, 'Use of external IPs is denied by admission control');
  }
}

export class AlwaysAdmit implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'AlwaysAdmit';
  handles(): boolean {
    return true;
  }
  async admit(): Promise<void> {}
  async validate(): Promise<void> {}
}

export class AlwaysDeny implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'AlwaysDeny';
  handles(): boolean {
    return true;
  }
  async admit(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    throw admissionForbidden(a, obj, 'admission control is denying all modifications');
  }
  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    throw admissionForbidden(a, obj, 'admission control is denying all modifications');
  }
}
