/**
 * The DefaultIngressClass admission plugin (kubernetes plugin/pkg/admission/
 * network/defaultingressclass): a new Ingress that names no class, by field
 * or by the `kubernetes.io/ingress.class` annotation, gets the default
 * IngressClass (annotation `ingressclass.kubernetes.io/is-default-class:
 * "true"`); with several defaults, the newest (then the first by name).
 */
import type { KubeObject, networkingv1 } from '@kubeling/api';
import type { AdmissionAttributes, MutatingAdmission } from '../../admission/index.js';
import type { ObjectLister } from '../../admission/lookups.js';

export const DEFAULT_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

export class DefaultIngressClass implements MutatingAdmission {
  readonly name = 'DefaultIngressClass';
  constructor(private readonly classes: () => ObjectLister) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === 'networking.k8s.io/ingresses' && !a.subresource;
  }

  async admit(obj: KubeObject): Promise<void> {
    const ing = obj as unknown as networkingv1.Ingress;
    if (ing.spec?.ingressClassName !== undefined && ing.spec.ingressClassName !== null) return;
    if (ing.metadata?.annotations && Object.hasOwn(ing.metadata.annotations, 'kubernetes.io/ingress.class')) return;
    const { items } = await this.classes().list(undefined, { resourceVersion: '0' });
    const defaults = items
      .filter((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true')
      .sort((a, b) => {
        const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
        const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
        return ta === tb ? (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '') : tb - ta;
      });
    if (!defaults.length) return;
    (ing.spec ??= {}).ingressClassName = defaults[0]!.metadata.name!;
  }
}
