/**
 * `wait --for=condition=<type>[=<status>]|delete|create|jsonpath=<expr>[=<value>]`
 * on named objects or on those `-l`/`--all` select, `--timeout` (30s by
 * default). Each object prints `<kind>/<name> condition met` as it gets there.
 */
import type { KubeObject } from '@kubeling/api';
import { UsageError } from '../flags.js';
import { type Ctx, kindRef, pathOf, resourceRef, type Target } from '../ctx.js';
import { asObjects, nested } from '../json.js';
import { jsonpath } from '@kubeling/apimachinery';

const { select } = jsonpath;
import { observe } from './observe.js';

type Cond = { t: 'delete' } | { t: 'create' } | { t: 'condition'; type: string; status: string } | { t: 'jsonpath'; expr: string; value?: string };

export function parseFor(spec: string | undefined): Cond {
  if (!spec)
    throw new UsageError("error: --for must be specified: one of delete, create, condition=condition-name, jsonpath='{JSONPath expression}'=[JSONPath value]");
  const lower = spec.toLowerCase();
  if (lower === 'delete') return { t: 'delete' };
  if (lower === 'create') return { t: 'create' };
  if (lower.startsWith('condition=')) {
    const rest = spec.slice('condition='.length);
    const eq = rest.indexOf('=');
    return eq >= 0 ? { t: 'condition', type: rest.slice(0, eq), status: rest.slice(eq + 1) } : { t: 'condition', type: rest, status: 'true' };
  }
  if (lower.startsWith('jsonpath=')) {
    const rest = spec.slice('jsonpath='.length);
    // The expression ends at its closing brace; `=value` may follow.
    const m = /^(\{.*\}|[^=]+)(?:=(.*))?$/s.exec(rest);
    if (!m) throw new UsageError(`error: unrecognized jsonpath condition: ${spec}`);
    return { t: 'jsonpath', expr: m[1]!, ...(m[2] !== undefined ? { value: m[2].replace(/^['"]|['"]$/g, '') } : {}) };
  }
  throw new UsageError(`error: unrecognized condition: "${spec}"`);
}

export function conditionMet(c: Cond, o: KubeObject | undefined): boolean {
  switch (c.t) {
    case 'delete':
      return !o;
    case 'create':
      return !!o;
    case 'condition': {
      if (!o) return false;
      const conds = asObjects(nested(o.status, 'conditions'));
      const found = conds.find((x) => String(x.type).toLowerCase() === c.type.toLowerCase());
      if (!found || String(found.status).toLowerCase() !== c.status.toLowerCase()) return false;
      // A condition observed for an older generation does not count.
      const observed = found.observedGeneration;
      const generation = o.metadata?.generation;
      return observed === undefined || generation === undefined || Number(observed) >= generation;
    }
    case 'jsonpath': {
      if (!o) return false;
      const vals = select(c.expr, o);
      if (c.value === undefined) return vals.length > 0;
      if (vals.length !== 1) return false;
      const v = vals[0];
      return (v && typeof v === 'object' ? JSON.stringify(v) : String(v)) === c.value;
    }
  }
}

export async function wait(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const cond = parseFor(g.for);
  const timeout = ctx.duration(g.timeout, 30_000);
  const deadline = Date.now() + timeout;
  const targets = await ctx.targets(args, { allowList: true });
  const items: { t: Target; name: string }[] = [];
  for (const t of targets) {
    if (t.name) items.push({ t, name: t.name });
    else {
      const list = await ctx.list(t);
      if (!list.length && cond.t !== 'delete') {
        ctx.io.err('error: no matching resources found\n');
        return 1;
      }
      for (const o of list) items.push({ t: { ...t, namespace: o.metadata.namespace ?? t.namespace }, name: o.metadata.name ?? '' });
    }
  }
  for (const { t, name } of items) {
    if (cond.t !== 'delete' && cond.t !== 'create' && !(await ctx.getOrNull(pathOf(t, name)))) {
      ctx.io.err(`Error from server (NotFound): ${resourceRef(t.mapping)} "${name}" not found\n`);
      return 1;
    }
    const ok = await observe(ctx, t, name, Math.max(1, deadline - Date.now()), (o) => conditionMet(cond, o));
    if (!ok) {
      ctx.io.err(`error: timed out waiting for the condition on ${resourceRef(t.mapping)}/${name}\n`);
      return 1;
    }
    ctx.io.out(`${kindRef(t.mapping)}/${name} ${cond.t === 'delete' ? 'condition met' : 'condition met'}\n`);
  }
  return 0;
}
