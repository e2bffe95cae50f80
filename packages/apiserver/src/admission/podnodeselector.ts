/**
 * PodNodeSelector (kubernetes plugin/pkg/admission/podnodeselector): a new
 * pod's namespace node selector — the namespace's
 * `scheduler.alpha.kubernetes.io/node-selector` annotation, else the
 * configuration's `clusterDefaultNodeSelector` — is merged into the pod's
 * `nodeSelector` (a pod value for the same key is Forbidden: `pod node label
 * selector conflicts with its namespace node label selector`), and the result
 * must lie within the configuration's whitelist for the namespace (`pod node
 * label selector labels conflict with its namespace whitelist`).
 *
 * The configuration (AdmissionConfiguration, as upstream's readConfig):
 *
 *   podNodeSelectorPluginConfig:
 *     clusterDefaultNodeSelector: "env=prod"
 *     <namespace>: "<key=value,...>"      # that namespace's whitelist
 *
 * A selector that does not parse is refused as Forbidden with the parse error
 * (upstream answers 500 for it: here bad input is never a server error).
 */
import type { KubeObject } from '@kubeling/api';
import { forbidden, isQualifiedName, isValidLabelValue } from '@kubeling/apimachinery';
import type { AdmissionAttributes, MutatingAdmission, ValidatingAdmission } from './index.js';
import type { ObjectGetter } from './lookups.js';
import { namespaceOrNotFound } from './namespaceplugins.js';

export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

type Labels = Record<string, string>;

/** A selector string that does not parse. */
export class SelectorError extends Error {}

/** labels.ConvertSelectorToLabelsMap: `k=v,k2=v2` (spaces around keys and values allowed); throws on a bad one. */
export function parseSelectorMap(selector: string): Labels {
  const out: Labels = {};
  if (!selector) return out;
  for (const term of selector.split(',')) {
    const kv = term.split('=');
    if (kv.length !== 2) throw new SelectorError(`invalid selector: [${kv.join(' ')}]`);
    const key = kv[0]!.trim();
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) throw new SelectorError(`invalid label key "${key}": ${keyErrs.join('; ')}`);
    const value = kv[1]!.trim();
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length) throw new SelectorError(`invalid label value: "${value}": at key: "${key}": ${valueErrs.join('; ')}`);
    out[key] = value;
  }
  return out;
}

/** labels.Conflicts: a key both have with different values. */
export const labelsConflict = (a: Labels, b: Labels): boolean => Object.entries(a).some(([k, v]) => Object.hasOwn(b, k) && b[k] !== v);

/** Every label of `sub` is in `sup` with the same value; anything is within an empty `sup`. */
export const isLabelSubset = (sub: Labels, sup: Labels): boolean =>
  Object.keys(sup).length === 0 || Object.entries(sub).every(([k, v]) => Object.hasOwn(sup, k) && sup[k] === v);

export interface PodNodeSelectorConfig {
  /** `clusterDefaultNodeSelector` and the whitelist of each namespace named. */
  readonly selectors: Readonly<Record<string, string>>;
}

export function parsePodNodeSelectorConfig(cfg: Record<string, unknown> | undefined): PodNodeSelectorConfig {
  const raw = cfg?.podNodeSelectorPluginConfig;
  if (raw === undefined || raw === null) return { selectors: {} };
  if (typeof raw !== 'object' || Array.isArray(raw) || Object.values(raw).some((v) => typeof v !== 'string'))
    throw new Error('podNodeSelectorPluginConfig must map names to selector strings');
  return { selectors: raw as Record<string, string> };
}

interface PodSpecLike {
  nodeSelector?: Labels;
}

export class PodNodeSelector implements MutatingAdmission, ValidatingAdmission {
  readonly name = 'PodNodeSelector';
  constructor(
    private readonly namespaces: () => ObjectGetter,
    private readonly config: PodNodeSelectorConfig,
  ) {}

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.resource === '/pods' && !a.subresource;
  }

  /** The namespace's node selector: its annotation, else the cluster default. */
  private async namespaceSelector(ns: string): Promise<Labels> {
    const annotations = (await namespaceOrNotFound(this.namespaces(), ns)).metadata.annotations ?? {};
    if (Object.hasOwn(annotations, NODE_SELECTOR_ANNOTATION)) return parseSelectorMap(annotations[NODE_SELECTOR_ANNOTATION]!);
    return parseSelectorMap(this.config.selectors.clusterDefaultNodeSelector ?? '');
  }

  private async check(pod: KubeObject, a: AdmissionAttributes, merge: boolean): Promise<void> {
    const deny = (why: string) => forbidden({ group: '', resource: 'pods' }, pod.metadata.name ?? '', why);
    const spec = ((pod as { spec?: PodSpecLike }).spec ??= {});
    let nsSelector: Labels;
    let whitelist: Labels;
    try {
      nsSelector = await this.namespaceSelector(a.namespace!);
      whitelist = parseSelectorMap(this.config.selectors[a.namespace!] ?? '');
    } catch (e) {
      if (e instanceof SelectorError) throw deny(e.message);
      throw e;
    }
    if (labelsConflict(nsSelector, spec.nodeSelector ?? {})) throw deny('pod node label selector conflicts with its namespace node label selector');
    if (merge) {
      const merged = { ...nsSelector, ...(spec.nodeSelector ?? {}) };
      if (Object.keys(merged).length) spec.nodeSelector = merged;
    }
    if (!isLabelSubset(spec.nodeSelector ?? {}, whitelist)) throw deny('pod node label selector labels conflict with its namespace whitelist');
  }

  async admit(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    await this.check(pod, a, true);
  }

  async validate(pod: KubeObject, a: AdmissionAttributes): Promise<void> {
    await this.check(pod, a, false);
  }
}
