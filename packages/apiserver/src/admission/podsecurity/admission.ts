/**
 * The PodSecurity admission plugin (plugin/pkg/admission/security/podsecurity,
 * k8s.io/pod-security-admission admission/admission.go): validating, on
 * creates and updates of pods, of the resources with pod templates, and of
 * namespaces.
 *
 * - Pods: the namespace's `enforce` level refuses with 403
 *   `pods "x" is forbidden: violates PodSecurity "restricted:latest": ...`;
 *   `warn` adds `would violate PodSecurity "...": ...` warnings (none on a
 *   refused request); `audit` sets the `pod-security.kubernetes.io/*` audit
 *   annotations when the request carries a place for them. Updates that change
 *   nothing the checks care about (images, containers, seccomp annotations of
 *   containers) pass; so do the status, binding, eviction, ... subresources.
 * - Pod templates (deployments, replicasets, statefulsets, daemonsets, jobs,
 *   cronjobs, replicationcontrollers, podtemplates) are never refused: only
 *   warn and audit apply.
 * - Namespaces: invalid policy labels are 422 Invalid (on update only when
 *   they changed); tightening `enforce` evaluates the namespace's pods
 *   (at most 3000, for at most a second) and returns warnings.
 * - Exempt namespaces, users and runtime classes from the configuration are
 *   not evaluated.
 *
 * A pod in a namespace whose policy is privileged everywhere costs one cached
 * namespace read.
 */
import type { KubeObject } from '@kubeling/api';
import { aggregateMessage, field, forbidden, notFound } from '@kubeling/apimachinery';
import { invalidObject } from '../../registry/rest.js';
import type { AdmissionAttributes, ValidatingAdmission } from '../index.js';
import {
  AUDIT_ANNOTATION_PREFIX,
  AUDIT_LEVEL_LABEL,
  AUDIT_VERSION_LABEL,
  ENFORCE_LEVEL_LABEL,
  ENFORCE_VERSION_LABEL,
  type LevelVersion,
  type Policy,
  WARN_LEVEL_LABEL,
  WARN_VERSION_LABEL,
  compareLevels,
  equivalentPolicy,
  fullyPrivileged,
  lvString,
  policyToEvaluate,
  sameLevelVersion,
} from './api.js';
import { type PodSecurityConfiguration, DEFAULT_CONFIGURATION } from './config.js';
import { type AggregateResult, Evaluator, aggregateCheckResults, forbiddenDetail, forbiddenReason } from './evaluator.js';
import { isSignificantPodUpdate, podTemplateOf } from './podspec.js';
import type { PodMeta, PodSpec } from './pod.js';

const goQuote = field.goQuote;
const PODS = { group: '', resource: 'pods' };

/** Pod subresources that cannot change what the checks look at. */
const IGNORED_POD_SUBRESOURCES = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

export interface PodSecurityDeps {
  /** The namespace, from the watch cache when it has it; undefined when it does not exist. */
  namespace(name: string): Promise<KubeObject | undefined>;
  /** The pods of a namespace (from the watch cache). */
  pods(namespace: string): Promise<KubeObject[]>;
  config?: PodSecurityConfiguration;
  /** Limits of the namespace check (upstream: 3000 pods, 1 s). */
  maxPodsToCheck?: number;
  podCheckTimeoutMs?: number;
  now?: () => number;
}

/** Attributes that carry audit annotations, when the request gives them room. */
type Attributes = AdmissionAttributes & { auditAnnotations?: Record<string, string> };

export class PodSecurityAdmission implements ValidatingAdmission {
  readonly name = 'PodSecurity';
  private readonly config: PodSecurityConfiguration;
  private readonly evaluator = new Evaluator();

  constructor(private readonly deps: PodSecurityDeps) {
    this.config = deps.config ?? DEFAULT_CONFIGURATION;
  }

  handles(a: AdmissionAttributes): boolean {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return false;
    return a.resource === '/pods' || a.resource === '/namespaces' || podTemplateOf(a.resource) !== undefined;
  }

  async validate(obj: KubeObject, a: AdmissionAttributes): Promise<void> {
    if (a.resource === '/namespaces') return this.validateNamespace(obj, a);
    if (a.resource === '/pods') return this.validatePod(obj, a);
    return this.validatePodController(obj, a);
  }

  private policyOf(ns: KubeObject | undefined) {
    return policyToEvaluate(ns?.metadata.labels, this.config.defaults);
  }

  private exemptNamespace = (ns: string | undefined) => !!ns && this.config.exemptions.namespaces.has(ns);
  private exemptUser = (user: string | undefined) => !!user && this.config.exemptions.usernames.has(user);
  private exemptRuntimeClass = (rc: string | null | undefined) => !!rc && this.config.exemptions.runtimeClasses.has(rc);

  private audit(a: Attributes, key: string, value: string): void {
    if (a.auditAnnotations) a.auditAnnotations[AUDIT_ANNOTATION_PREFIX + key] = value;
  }

  private warn(a: AdmissionAttributes, text: string): void {
    // Retried updates run admission again; a warning is sent once (as upstream's recorder dedupes).
    if (a.warnings && !a.warnings.includes(text)) a.warnings.push(text);
  }

  private async validateNamespace(ns: KubeObject, a: AdmissionAttributes): Promise<void> {
    if (a.subresource) return;
    const name = ns.metadata.name ?? a.name ?? '';
    const { policy, errors } = this.policyOf(ns);
    const invalid = () => invalidObject({ group: '', kind: 'Namespace' }, name, errors);
    if (a.operation === 'CREATE') {
      if (errors.length) throw invalid();
      if (this.exemptNamespace(name)) this.warnExempt(a, name, policy, ns.metadata.labels ?? {});
      return;
    }
    const old = this.policyOf(a.old);
    // Invalid labels are refused only when they changed, so that unrelated updates of a namespace still pass.
    if (errors.length && (!old.errors.length || JSON.stringify(errors) !== JSON.stringify(old.errors))) throw invalid();
    const next = policy.enforce;
    const prev = old.policy.enforce;
    if (sameLevelVersion(next, prev) || next.level === 'privileged') return;
    if (next.version === prev.version && compareLevels(next.level, prev.level) < 1) return;
    if (this.exemptNamespace(name)) return this.warnExempt(a, name, policy, ns.metadata.labels ?? {});
    for (const w of await this.evaluatePodsInNamespace(name, next)) this.warn(a, w);
  }

  /** exemptNamespaceWarning: labels that set a non-privileged policy on an exempt namespace have no effect. */
  private warnExempt(a: AdmissionAttributes, ns: string, policy: Policy, labels: Record<string, string>): void {
    if (fullyPrivileged(policy) || equivalentPolicy(policy, this.config.defaults)) return;
    const parts: string[] = [];
    const modes = [
      ['enforce', ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL],
      ['audit', AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL],
      ['warn', WARN_LEVEL_LABEL, WARN_VERSION_LABEL],
    ] as const;
    for (const [mode, levelLabel, versionLabel] of modes) {
      const lv = policy[mode];
      if (lv.level !== 'privileged' && (levelLabel in labels || versionLabel in labels)) parts.push(`${mode}=${lvString(lv)}`);
    }
    this.warn(a, `namespace ${goQuote(ns)} is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`);
  }

  /** The policy of a pod's namespace; one that does not exist (deleted meanwhile) is NotFound rather than upstream's internal error. */
  private async namespacePolicy(namespace: string) {
    const ns = await this.deps.namespace(namespace);
    if (!ns) throw notFound({ group: '', resource: 'namespaces' }, namespace);
    return this.policyOf(ns);
  }

  private async validatePod(pod: KubeObject, a: Attributes): Promise<void> {
    if (a.subresource && IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (this.exemptNamespace(a.namespace)) return this.audit(a, 'exempt', 'namespace');
    if (this.exemptUser(a.user?.name)) return this.audit(a, 'exempt', 'user');
    const { policy, errors } = await this.namespacePolicy(a.namespace ?? '');
    if (!errors.length && fullyPrivileged(policy)) return;
    if (a.operation === 'UPDATE' && a.old && !isSignificantPodUpdate(pod, a.old)) return;
    this.evaluate(
      policy,
      errors.length ? `Failed to parse policy: ${aggregateMessage(errors)}` : undefined,
      pod.metadata,
      (pod.spec ?? {}) as PodSpec,
      a,
      true,
    );
  }

  private async validatePodController(obj: KubeObject, a: Attributes): Promise<void> {
    if (a.subresource) return;
    if (this.exemptNamespace(a.namespace)) return this.audit(a, 'exempt', 'namespace');
    if (this.exemptUser(a.user?.name)) return this.audit(a, 'exempt', 'user');
    let ns: KubeObject | undefined;
    try {
      ns = await this.deps.namespace(a.namespace ?? '');
    } catch (e) {
      // Controllers are never refused: a failed lookup is only recorded.
      return this.audit(a, 'error', `failed to lookup namespace ${goQuote(a.namespace ?? '')}: ${(e as Error).message}`);
    }
    const { policy, errors } = this.policyOf(ns);
    if (!errors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const template = podTemplateOf(a.resource)?.(obj);
    if (!template) return;
    this.evaluate(policy, errors.length ? `Failed to parse policy: ${aggregateMessage(errors)}` : undefined, template.metadata, template.spec, a, false);
  }

  /** EvaluatePod: enforce (pods only), then audit, then warn, reusing results of equal level-versions. */
  private evaluate(policy: Policy, parseError: string | undefined, meta: PodMeta, spec: PodSpec, a: Attributes, enforce: boolean): void {
    if (this.exemptRuntimeClass(spec.runtimeClassName)) return this.audit(a, 'exempt', 'runtimeClass');
    if (parseError) this.audit(a, 'error', parseError);
    const cache = new Map<string, AggregateResult>();
    const run = (lv: LevelVersion) => {
      const key = lvString(lv);
      let r = cache.get(key);
      if (!r) cache.set(key, (r = aggregateCheckResults(this.evaluator.evaluatePod(lv, meta, spec))));
      return r;
    };
    let refusal: Error | undefined;
    if (enforce) {
      this.audit(a, 'enforce-policy', lvString(policy.enforce));
      const r = run(policy.enforce);
      if (!r.allowed) refusal = forbidden(PODS, a.name ?? meta.name ?? '', `violates PodSecurity ${goQuote(lvString(policy.enforce))}: ${forbiddenDetail(r)}`);
    }
    const audit = run(policy.audit);
    if (!audit.allowed) this.audit(a, 'audit-violations', `would violate PodSecurity ${goQuote(lvString(policy.audit))}: ${forbiddenDetail(audit)}`);
    if (refusal) throw refusal;
    const warn = run(policy.warn);
    if (!warn.allowed) this.warn(a, `would violate PodSecurity ${goQuote(lvString(policy.warn))}: ${forbiddenDetail(warn)}`);
  }

  /**
   * EvaluatePodsInNamespace: the warnings for existing pods under a new
   * enforce level. Pods of one controller are checked after one pod of each
   * controller; pods of exempt runtime classes are skipped; identical reasons
   * are grouped under the lexically first pod name.
   */
  async evaluatePodsInNamespace(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const now = this.deps.now ?? Date.now;
    const deadline = now() + (this.deps.podCheckTimeoutMs ?? 1000);
    const max = this.deps.maxPodsToCheck ?? 3000;
    let pods: KubeObject[];
    try {
      pods = await this.deps.pods(namespace);
    } catch {
      return ['failed to list pods while checking new PodSecurity enforce level'];
    }
    const prioritized = this.prioritizePods(pods);
    const total = prioritized.length;
    const toCheck = prioritized.slice(0, max);
    let checked = toCheck.length;
    const order: string[] = [];
    const counts = new Map<string, { podName: string; count: number }>();
    for (let i = 0; i < toCheck.length; i++) {
      const pod = toCheck[i]!;
      const r = aggregateCheckResults(this.evaluator.evaluatePod(enforce, pod.metadata, (pod.spec ?? {}) as PodSpec));
      if (!r.allowed) {
        const reason = forbiddenReason(r);
        const podName = pod.metadata.name ?? '';
        const c = counts.get(reason);
        if (!c) {
          order.push(reason);
          counts.set(reason, { podName, count: 1 });
        } else {
          if (byteOrder(podName, c.podName) < 0) c.podName = podName;
          c.count++;
        }
      }
      if (now() > deadline) {
        checked = i + 1;
        break;
      }
    }
    const warnings: string[] = [];
    if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
    if (order.length) warnings.push(`existing pods in namespace ${goQuote(namespace)} violate the new PodSecurity enforce level ${goQuote(lvString(enforce))}`);
    const decorated = order.map((reason) => {
      const { podName, count } = counts.get(reason)!;
      if (count === 1) return `${podName}: ${reason}`;
      return `${podName} (and ${count - 1} other ${count === 2 ? 'pod' : 'pods'}): ${reason}`;
    });
    return [...warnings, ...decorated.sort(byteOrder)];
  }

  /** prioritizePods: without exempt runtime classes; one pod per controller first, the rest of each controller's pods after. */
  private prioritizePods(pods: KubeObject[]): KubeObject[] {
    const first: KubeObject[] = [];
    const rest: KubeObject[] = [];
    const seen = new Set<string>();
    for (const pod of pods) {
      if (this.exemptRuntimeClass((pod.spec as PodSpec | undefined)?.runtimeClassName)) continue;
      const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
      if (!owner) first.push(pod);
      else if (seen.has(owner.uid)) rest.push(pod);
      else {
        seen.add(owner.uid);
        first.push(pod);
      }
    }
    return [...first, ...rest];
  }
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
