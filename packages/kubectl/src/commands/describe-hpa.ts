/**
 * `describe hpa`: kubectl 1.33's HorizontalPodAutoscalerDescriber
 * (staging/src/k8s.io/kubectl/pkg/describe/describe.go). The object is read
 * as autoscaling/v2 whatever version discovery prefers, as the describer
 * does, and described the v1 way only when the server has no v2 form of it.
 * Quantities print in their canonical form (Quantity.String()).
 */
import type { KubeObject } from '@kubeling/api';
import { canonicalQuantity } from '@kubeling/api';
import type { Ctx } from '../ctx.js';
import { pathSegment } from '../discovery.js';
import { asNumber, asObject, asObjects, asString, isObject, nested } from '../json.js';
import { type Lines, annotationsShown, rfc1123z } from './describe-text.js';

/** The HPA as autoscaling/v2, or undefined when only another version of it is served. */
export async function hpaV2(ctx: Ctx, o: KubeObject): Promise<KubeObject | undefined> {
  if (o.apiVersion === 'autoscaling/v2') return o;
  const ns = pathSegment(o.metadata.namespace ?? ctx.ns, 'namespace');
  const v2 = await ctx.getOrNull(`/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/${pathSegment(o.metadata.name ?? '')}`).catch(() => undefined);
  return v2 ? { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', ...v2 } : undefined;
}

/** Quantity.String() of a *Quantity: `<nil>` when unset. */
const q = (v: unknown) => (v === undefined || v === null ? '<nil>' : canonicalQuantity(v));
const int = (v: unknown) => String(asNumber(v) ?? 0);

function head(d: Lines, o: KubeObject): void {
  d.kv(0, 'Name', o.metadata.name ?? '');
  d.kv(0, 'Namespace', o.metadata.namespace ?? '');
  d.map(0, 'Labels', o.metadata.labels);
  d.map(0, 'Annotations', annotationsShown(o.metadata), ': ');
  d.kv(0, 'CreationTimestamp', rfc1123z(o.metadata.creationTimestamp));
  d.add(`Reference:\t${nested(o.spec, 'scaleTargetRef', 'kind') ?? ''}/${nested(o.spec, 'scaleTargetRef', 'name') ?? ''}`);
}

function tail(d: Lines, o: KubeObject): void {
  const min = asNumber(nested(o.spec, 'minReplicas'));
  d.add(`Min replicas:\t${min === undefined ? '<unset>' : min}`);
  d.add(`Max replicas:\t${int(nested(o.spec, 'maxReplicas'))}`);
}

/** One metric's `( current / target )` line; `cur` is the status entry at the same index. */
function metricLine(m: Record<string, unknown>, cur: Record<string, unknown> | undefined): string {
  const type = asString(m.type) ?? '';
  switch (type) {
    case 'External': {
      const ext = asObject(m.external);
      const name = JSON.stringify(nested(ext, 'metric', 'name') ?? '');
      const target = asObject(ext?.target);
      const c = asObject(cur?.external);
      if (target?.averageValue !== undefined) {
        const current = c && nested(c, 'current', 'averageValue') !== undefined ? q(nested(c, 'current', 'averageValue')) : '<unknown>';
        return `  ${name} (target average value):\t${current} / ${q(target.averageValue)}`;
      }
      const current = c ? q(nested(c, 'current', 'value')) : '<unknown>';
      return `  ${name} (target value):\t${current} / ${q(target?.value)}`;
    }
    case 'Pods': {
      const pods = asObject(m.pods);
      const current = isObject(cur?.pods) ? q(nested(cur.pods, 'current', 'averageValue')) : '<unknown>';
      return `  ${JSON.stringify(nested(pods, 'metric', 'name') ?? '')} on pods:\t${current} / ${q(nested(pods, 'target', 'averageValue'))}`;
    }
    case 'Object': {
      const obj = asObject(m.object);
      const lead = `  "${nested(obj, 'metric', 'name') ?? ''}" on ${nested(obj, 'describedObject', 'kind') ?? ''}/${nested(obj, 'describedObject', 'name') ?? ''} `;
      const c = asObject(cur?.object);
      if (nested(obj, 'target', 'type') === 'AverageValue')
        return `${lead}(target average value):\t${c ? q(nested(c, 'current', 'averageValue')) : '<unknown>'} / ${q(nested(obj, 'target', 'averageValue'))}`;
      return `${lead}(target value):\t${c ? q(nested(c, 'current', 'value')) : '<unknown>'} / ${q(nested(obj, 'target', 'value'))}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const key = type === 'Resource' ? 'resource' : 'containerResource';
      const src = asObject(m[key]);
      const lead =
        type === 'Resource' ? `  resource ${src?.name ?? ''} on pods` : `  resource ${src?.name ?? ''} of container "${src?.container ?? ''}" on pods`;
      const target = asObject(src?.target);
      const c = asObject(cur?.[key]);
      if (target?.averageValue !== undefined) return `${lead}:\t${c ? q(nested(c, 'current', 'averageValue')) : '<unknown>'} / ${q(target.averageValue)}`;
      const util = asNumber(nested(c, 'current', 'averageUtilization'));
      const current = c && util !== undefined ? `${util}% (${q(nested(c, 'current', 'averageValue'))})` : '<unknown>';
      const goal = asNumber(target?.averageUtilization);
      return `${lead}  (as a percentage of request):\t${current} / ${goal === undefined ? '<auto>' : `${goal}%`}`;
    }
    default:
      return `  <unknown metric type ${JSON.stringify(type)}>`;
  }
}

/** printDirectionBehavior */
function direction(d: Lines, title: string, rules: unknown): void {
  const r = asObject(rules);
  if (!r) return;
  d.add(`  ${title}:`);
  if (asNumber(r.stabilizationWindowSeconds) !== undefined) d.add(`    Stabilization Window: ${r.stabilizationWindowSeconds} seconds`);
  const policies = asObjects(r.policies);
  if (!policies.length) return;
  d.add(`    Select Policy: ${asString(r.selectPolicy) ?? 'Max'}`);
  d.add('    Policies:');
  for (const p of policies) d.add(`      - Type: ${p.type ?? ''}\tValue: ${int(p.value)}\tPeriod: ${int(p.periodSeconds)} seconds`);
}

/** describeHorizontalPodAutoscalerV2, without the events (the caller adds them). */
export function describeHpaV2(d: Lines, o: KubeObject): void {
  head(d, o);
  d.add('Metrics:\t( current / target )');
  const current = asObjects(nested(o.status, 'currentMetrics'));
  asObjects(nested(o.spec, 'metrics')).forEach((m, i) => {
    d.add(metricLine(m, current[i]));
  });
  tail(d, o);
  const behavior = nested(o.spec, 'behavior');
  if (isObject(behavior)) {
    d.add('Behavior:');
    direction(d, 'Scale Up', behavior.scaleUp);
    direction(d, 'Scale Down', behavior.scaleDown);
  }
  d.add(
    `${nested(o.spec, 'scaleTargetRef', 'kind') ?? ''} pods:\t${int(nested(o.status, 'currentReplicas'))} current / ${int(nested(o.status, 'desiredReplicas'))} desired`,
  );
  const conds = asObjects(nested(o.status, 'conditions'));
  if (conds.length) {
    d.add('Conditions:').add('  Type\tStatus\tReason\tMessage').add('  ----\t------\t------\t-------');
    for (const c of conds) d.add(`  ${c.type ?? ''}\t${c.status ?? ''}\t${c.reason ?? ''}\t${c.message ?? ''}`);
  }
}

/** describeHorizontalPodAutoscalerV1, for a server that serves no v2 form. */
export function describeHpaV1(d: Lines, o: KubeObject): void {
  head(d, o);
  const target = asNumber(nested(o.spec, 'targetCPUUtilizationPercentage'));
  if (target !== undefined) {
    d.add(`Target CPU utilization:\t${target}%`);
    const current = asNumber(nested(o.status, 'currentCPUUtilizationPercentage'));
    d.add(`Current CPU utilization:\t${current === undefined ? '<unknown>' : current}%`);
  }
  tail(d, o);
  d.add(
    `${nested(o.spec, 'scaleTargetRef', 'kind') ?? ''} pods:\t${int(nested(o.status, 'currentReplicas'))} current / ${int(nested(o.status, 'desiredReplicas'))} desired`,
  );
}
