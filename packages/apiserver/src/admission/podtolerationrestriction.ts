/**
 * PodTolerationRestriction (kubernetes plugin/pkg/admission/
 * podtolerationrestriction), for pods (not their subresources):
 *
 * - on create, the namespace's default tolerations (its
 *   `scheduler.alpha.kubernetes.io/defaultTolerations` annotation, a JSON list;
 *   else the configuration's `default`) are merged into the pod's, and pods that
 *   are not BestEffort also tolerate `node.kubernetes.io/memory-pressure`
 *   NoSchedule (MergeTolerations: one covered by another is dropped);
 * - on create and update, every toleration must be covered by the namespace's
 *   whitelist (its `scheduler.alpha.kubernetes.io/tolerationsWhitelist`
 *   annotation; else the configuration's `whitelist`; empty allows all):
 *   `pod tolerations (possibly merged with namespace default tolerations)
 *   conflict with its namespace whitelist` (`cluster whitelist` for the
 *   configuration's).
 *
 * An annotation present but empty means an empty list, which overrides the
 * configuration. Refusals are Forbidden (upstream's plain errors would be
 * 500s; bad input is never a server error here).
 *
 * Configuration: `podtolerationrestriction.admission.k8s.io/v1alpha1`
 * `Configuration` with `default` and `whitelist` toleration lists.
 */
import type { KubeObject } from '@kubeling/api';
import { field, forbidden } from '@kubeling/apimachinery';
import { qosClass } from '@kubeling/component-helpers';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectGetter } from './lookups.js';
import { namespaceOrNotFound } from './namespaceplugins.js';
import { mergeTolerations, validateTolerations, verifyAgainstWhitelist, type Toleration } from './tolerations.js';

export const DEFAULT_TOLERATIONS_ANNOTATION = 'scheduler.alpha.kubernetes.io/defaultTolerations';
export const TOLERATIONS_WHITELIST_ANNOTATION = 'scheduler.alpha.kubernetes.io/tolerationsWhitelist';
export const POD_TOLERATION_RESTRICTION_API_VERSION = 'podtolerationrestriction.admission.k8s.io/v1alpha1';

const MEMORY_PRESSURE: Toleration = { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' };

export interface PodTolerationRestrictionConfig {
  default?: Toleration[];
  whitelist?: Toleration[];
}

/** The configuration (none: empty defaults and whitelist); throws on a malformed one (at start). */
export function parsePodTolerationRestrictionConfig(cfg: Record<string, unknown> | undefined): PodTolerationRestrictionConfig {
  if (!cfg) return {};
  if (cfg.apiVersion !== POD_TOLERATION_RESTRICTION_API_VERSION || cfg.kind !== 'Configuration')
    throw new Error(`unexpected configuration: want apiVersion ${POD_TOLERATION_RESTRICTION_API_VERSION} and kind Configuration`);
  const errs = [...validateTolerations(cfg.default, 'default'), ...validateTolerations(cfg.whitelist, 'whitelist')];
  if (errs.length) throw new Error(field.aggregateMessage(errs));
  return {
    ...(Array.isArray(cfg.default) ? { default: cfg.default as Toleration[] } : {}),
    ...(Array.isArray(cfg.whitelist) ? { whitelist: cfg.whitelist as Toleration[] } : {}),
  };
}

/** A namespace annotation's tolerations: undefined when absent, [] when empty; throws with why it is malformed. */
export function annotationTolerations(annotations: Record<string, string> | undefined, key: string): Toleration[] | undefined {
  if (!annotations || !Object.hasOwn(annotations, key)) return undefined;
  const raw = annotations[key]!;
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new Error(`${key}: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new Error(`${key}: must be a JSON list of tolerations`);
  const errs = validateTolerations(parsed, key);
  if (errs.length) throw new Error(field.aggregateMessage(errs));
  return parsed as Toleration[];
}

interface PodLike {
  spec?: { tolerations?: Toleration[]; containers?: unknown[]; initContainers?: unknown[] };
}

export class PodTolerationRestriction implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'PodTolerationRestriction';
  constructor(
    private readonly namespaces: () => ObjectGetter,
    private readonly config: PodTolerationRestrictionConfig,
  ) {}

  handles(a: AdmissionAttributes): boolean {
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.resource === '/pods' && !a.subresource;
  }

  private async annotation(a: AdmissionAttributes, pod: KubeObject, key: string): Promise<Toleration[] | undefined> {
    const ns = await namespaceOrNotFound(this.namespaces(), a.namespace!);
    try {
      return annotationTolerations(ns.metadata.annotations, key);
    } catch (e) {
      throw forbidden({ group: '', resource: 'pods' }, pod.metadata.name ?? '', (e as Error).message);
    }
  }

  async admit(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const spec = ((pod as PodLike).spec ??= {});
    const extra: Toleration[] = [];
    if (a.operation === 'CREATE') extra.push(...((await this.annotation(a, pod, DEFAULT_TOLERATIONS_ANNOTATION)) ?? this.config.default ?? []));
    if (qosClass(spec) !== 'BestEffort') extra.push(MEMORY_PRESSURE);
    if (extra.length) spec.tolerations = mergeTolerations(spec.tolerations ?? [], extra);
    await this.validate(pod, a);
  }

  async validate(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    const tolerations = (pod as PodLike).spec?.tolerations ?? [];
    if (!tolerations.length) return;
    let whitelist = await this.annotation(a, pod, TOLERATIONS_WHITELIST_ANNOTATION);
    let scope = 'namespace';
    if (whitelist === undefined) {
      whitelist = this.config.whitelist ?? [];
      scope = 'cluster';
    }
    if (!verifyAgainstWhitelist(tolerations, whitelist))
      throw forbidden(
        { group: '', resource: 'pods' },
        pod.metadata.name ?? '',
        `pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`,
      );
  }
}
