/**
 * `auth can-i VERB TYPE[/NAME] [--subresource] [-A] [--list]` through
 * SelfSubjectAccessReview / SelfSubjectRulesReview, and `auth whoami`
 * through SelfSubjectReview.
 */
import type { authenticationv1, authorizationv1 } from '@kubeling/api';
import { UsageError } from '../flags.js';
import type { Ctx } from '../ctx.js';
import type { JsonObject } from '../json.js';
import { columns, parseOutput, printObjects } from '../print/printers.js';

export async function auth(ctx: Ctx, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const g = ctx.g;
  if (sub === 'whoami') {
    const r = await ctx.client.post<authenticationv1.SelfSubjectReview>('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    const out = parseOutput(g.output, g.template);
    if (out.t !== 'table') {
      ctx.io.out(printObjects(out, [{ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', ...r }], true, { nameOf: () => 'selfsubjectreview' }));
      return 0;
    }
    const u: authenticationv1.UserInfo = r.status?.userInfo ?? {};
    const rows = [
      ['ATTRIBUTE', 'VALUE'],
      ['Username', u.username ?? ''],
    ];
    if (u.uid) rows.push(['UID', u.uid]);
    if (u.groups?.length) rows.push(['Groups', `[${u.groups.join(' ')}]`]);
    ctx.io.out(columns(rows));
    return 0;
  }
  if (sub !== 'can-i') throw new UsageError(`error: unknown command "${sub ?? ''}" for "kubectl auth"\nAvailable Commands: can-i, whoami`);
  const ns = g.allNamespaces ? '' : ctx.ns;
  if (g.list) {
    const r = await ctx.client.post<authorizationv1.SelfSubjectRulesReview>('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: ns || 'default' },
    });
    const rows = [['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']];
    for (const rule of r.status?.resourceRules ?? []) {
      const res = (rule.resources ?? []).flatMap((x) => (rule.apiGroups ?? ['']).map((grp) => (grp ? `${x}.${grp}` : x)));
      rows.push([res.join(', ') || '', '[]', `[${(rule.resourceNames ?? []).join(' ')}]`, `[${(rule.verbs ?? []).join(' ')}]`]);
    }
    for (const rule of r.status?.nonResourceRules ?? [])
      rows.push(['', `[${(rule.nonResourceURLs ?? []).join(' ')}]`, '[]', `[${(rule.verbs ?? []).join(' ')}]`]);
    ctx.io.out(columns(rows));
    return 0;
  }
  const [verb, what] = rest;
  if (!verb || !what)
    throw new UsageError(
      "error: you must specify two arguments: verb resource or verb resource/resourceName.\nSee 'kubectl auth can-i -h' for help and examples",
    );
  let attrs: JsonObject;
  if (what.startsWith('/')) attrs = { nonResourceAttributes: { verb, path: what } };
  else {
    const [type, name] = what.split('/');
    const m = await ctx.discovery.find(type!);
    if (!m) ctx.io.err(`Warning: the server doesn't have a resource type '${type}'\n`);
    const [res, ...grp] = type!.split('.');
    attrs = {
      resourceAttributes: {
        namespace: m && !m.namespaced ? '' : ns,
        verb,
        group: m?.group ?? grp.join('.'),
        resource: m?.resource ?? res,
        ...(g.subresource ? { subresource: g.subresource } : {}),
        ...(name ? { name } : {}),
      },
    };
  }
  const r = await ctx.client.post<authorizationv1.SelfSubjectAccessReview>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: attrs,
  });
  const allowed = !!r.status?.allowed;
  if (!g.quiet) ctx.io.out(allowed ? 'yes\n' : `no${r.status?.reason ? ` - ${r.status.reason}` : ''}\n`);
  return allowed ? 0 : 1;
}
