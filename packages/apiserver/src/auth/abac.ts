/**
 * ABAC (kubernetes pkg/auth/authorizer/abac and pkg/apis/abac): a policy file
 * of one JSON object a line, `#` comments and blank lines skipped. A line is
 * an `abac.authorization.kubernetes.io/v1beta1` Policy (`spec.user`, `group`,
 * `readonly`, `apiGroup`, `resource`, `namespace`, `nonResourcePath`) or the
 * legacy unversioned form (flat `user`, `group`, `readonly`, `resource`,
 * `namespace`), converted as upstream's v0 conversion does.
 *
 * A request is allowed when some policy matches its subject (user or group,
 * `*` meaning every authenticated user), its verb (a readonly policy matches
 * get, list and watch only) and either its resource (namespace, resource and
 * apiGroup, each exact or `*`) or its path (exact, `*`, or a `/prefix/*`).
 * Otherwise the answer is no opinion: ABAC never denies.
 */
import { readFileSync } from 'node:fs';
import type { Attributes, Authorizer, Decision, RuleSet, UserInfo } from './types.js';

export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const GROUP_VERSION = 'abac.authorization.kubernetes.io';
const ALL_AUTHENTICATED = 'system:authenticated';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's json decoding of a string or bool field: a value of another type is an error. */
function fieldOf(o: Record<string, unknown>, key: string, where: string): string {
  const v = o[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${jsonType(v)} into Go struct field ${where}.${key} of type string`);
  return v;
}
function boolOf(o: Record<string, unknown>, key: string, where: string): boolean {
  const v = o[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new Error(`json: cannot unmarshal ${jsonType(v)} into Go struct field ${where}.${key} of type bool`);
  return v;
}
const jsonType = (v: unknown) => (Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);

/** The v1beta1 conversion: a `*` user or group means every authenticated user. */
function fromV1beta1(spec: Record<string, unknown>): AbacPolicy {
  const where = 'Policy.spec';
  const p: AbacPolicy = {
    user: fieldOf(spec, 'user', where),
    group: fieldOf(spec, 'group', where),
    readonly: boolOf(spec, 'readonly', where),
    apiGroup: fieldOf(spec, 'apiGroup', where),
    resource: fieldOf(spec, 'resource', where),
    namespace: fieldOf(spec, 'namespace', where),
    nonResourcePath: fieldOf(spec, 'nonResourcePath', where),
  };
  if (p.user === '*' || p.group === '*') return { ...p, group: ALL_AUTHENTICATED, user: '' };
  return p;
}

/**
 * The v0 conversion: no subject or a `*` one is every authenticated user; an
 * empty namespace or resource is every one; every API group matches; and a
 * rule without namespace and resource also matches every non-resource path.
 */
function fromV0(o: Record<string, unknown>): AbacPolicy {
  const where = 'Policy';
  const user = fieldOf(o, 'user', where);
  const group = fieldOf(o, 'group', where);
  const namespace = fieldOf(o, 'namespace', where);
  const resource = fieldOf(o, 'resource', where);
  const p: AbacPolicy = { user, group, readonly: boolOf(o, 'readonly', where), apiGroup: '*', resource, namespace, nonResourcePath: '' };
  if (!user && !group) p.group = ALL_AUTHENTICATED;
  if (user === '*' || group === '*') {
    p.group = ALL_AUTHENTICATED;
    p.user = '';
  }
  if (!namespace) p.namespace = '*';
  if (!resource) p.resource = '*';
  if (!namespace && !resource) p.nonResourcePath = '*';
  return p;
}

function decodeLine(line: string): AbacPolicy {
  const o: unknown = JSON.parse(line);
  if (!isObject(o)) throw new Error(`json: cannot unmarshal ${jsonType(o)} into Go value of type struct`);
  const apiVersion = o.apiVersion;
  const kind = o.kind;
  // Lines without apiVersion or kind are the unversioned format (upstream: IsMissingVersion/IsMissingKind).
  if (!apiVersion || !kind) return fromV0(o);
  if (kind === 'Policy' && apiVersion === `${GROUP_VERSION}/v1beta1`) {
    if (o.spec !== undefined && o.spec !== null && !isObject(o.spec))
      throw new Error(`json: cannot unmarshal ${jsonType(o.spec)} into Go struct field Policy.spec of type v1beta1.PolicySpec`);
    return fromV1beta1((o.spec as Record<string, unknown> | undefined) ?? {});
  }
  if (kind === 'Policy' && apiVersion === `${GROUP_VERSION}/v0`) return fromV0(o);
  throw new Error(`no kind ${JSON.stringify(String(kind))} is registered for version ${JSON.stringify(String(apiVersion))}`);
}

/** NewFromFile's parsing: each failing line is `error reading policy file <path>, line <n>: <line>: <why>`. */
export function parsePolicies(text: string, path: string): AbacPolicy[] {
  const out: AbacPolicy[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    const trimmed = raw.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    try {
      out.push(decodeLine(raw));
    } catch (e) {
      throw new Error(`error reading policy file ${path}, line ${i + 1}: ${raw}: ${(e as Error).message}`);
    }
  }
  return out;
}

/** subjectMatches: a named user must be the user; a named group one of the user's; at least one of them must be given. */
export function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user !== user.name) return false;
    else matched = true;
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else if (!user.groups.includes(p.group)) return false;
    else matched = true;
  }
  return matched;
}

const isReadOnly = (verb: string) => verb === 'get' || verb === 'list' || verb === 'watch';

function resourceMatches(p: AbacPolicy, a: Attributes): boolean {
  if (!a.isResourceRequest) return false;
  return (
    (p.namespace === '*' || p.namespace === (a.namespace ?? '')) &&
    (p.resource === '*' || p.resource === (a.resource ?? '')) &&
    (p.apiGroup === '*' || p.apiGroup === (a.apiGroup ?? ''))
  );
}

function nonResourceMatches(p: AbacPolicy, a: Attributes): boolean {
  if (a.isResourceRequest) return false;
  const path = a.path ?? '';
  if (p.nonResourcePath === '*' || p.nonResourcePath === path) return true;
  // A trailing `*` matches the subpaths (strings.TrimRight of every trailing `*`).
  return p.nonResourcePath.endsWith('*') && path.startsWith(p.nonResourcePath.replace(/\*+$/, ''));
}

export function policyMatches(p: AbacPolicy, a: Attributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (!isReadOnly(a.verb) && p.readonly) return false;
  return resourceMatches(p, a) || nonResourceMatches(p, a);
}

export class AbacAuthorizer implements Authorizer {
  constructor(private readonly policies: readonly AbacPolicy[]) {}

  static fromFile(path: string): AbacAuthorizer {
    return new AbacAuthorizer(parsePolicies(readFileSync(path, 'utf8'), path));
  }

  authorize(a: Attributes): Decision {
    if (this.policies.some((p) => policyMatches(p, a))) return { allowed: true, reason: '' };
    return { allowed: false, reason: 'No policy matched.' };
  }

  resolveRules(user: UserInfo, namespace: string): RuleSet {
    const out: RuleSet = { resourceRules: [], nonResourceRules: [], incomplete: false };
    for (const p of this.policies) {
      if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource) out.resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
      if (p.nonResourcePath) out.nonResourceRules.push({ verbs: [...verbs], nonResourceURLs: [p.nonResourcePath] });
    }
    return out;
  }
}
