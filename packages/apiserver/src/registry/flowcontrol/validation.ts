/**
 * Validation of FlowSchemas and PriorityLevelConfigurations, as upstream's
 * kubernetes pkg/apis/flowcontrol/validation/validation.go (v1, zero
 * nominalConcurrencyShares allowed): the same fields, messages and checks,
 * including the fixed specs of the mandatory objects and the entropy bound of
 * shuffle sharding. Objects are read as decoded JSON (defaults already applied).
 */
import { field, type FieldError, type Path, nameIsDNSSubdomain, validateNamespaceName } from '@kubeling/apimachinery';
import { MAX_HASH_BITS, requiredEntropyBits } from '../../flowcontrol/shufflesharding.js';
import { mandatoryFlowSchema, mandatoryPriorityLevel } from './bootstrap.js';
import { semanticEqual } from './defaults.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => String(x)) : []);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export const MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 10 * 1000 * 1000;
const SUPPORTED_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const NS_ERR_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

const hasWildcard = (xs: string[]) => xs.includes('*');
const p = (s: string) => field.path(s);

// ---------------------------------------------------------------- FlowSchema

export function validateFlowSchema(fs: Obj): FieldError[] {
  const name = String(obj(fs.metadata)?.name ?? '');
  const spec = obj(fs.spec) ?? {};
  const errs = validateFlowSchemaSpec(name, spec, p('spec'));
  const mandatory = mandatoryFlowSchema(name);
  // Both sides come from the same definitions, so the test may be strict.
  if (mandatory && !semanticEqual(spec, mandatory.spec)) errs.push(field.invalid('spec', spec, `spec of '${name}' must equal the fixed value`));
  return [...errs, ...validateConditions(obj(fs.status), p('status'))];
}

function validateFlowSchemaSpec(name: string, spec: Obj, path: Path): FieldError[] {
  const errs: FieldError[] = [];
  const precedence = num(spec.matchingPrecedence);
  if (precedence <= 0) errs.push(field.invalid(path.child('matchingPrecedence'), precedence, 'must be a positive value'));
  if (precedence > MAX_MATCHING_PRECEDENCE)
    errs.push(field.invalid(path.child('matchingPrecedence'), precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  if (precedence === 1 && name !== 'exempt')
    errs.push(field.invalid(path.child('matchingPrecedence'), precedence, "only the schema named 'exempt' may have matchingPrecedence 1"));
  const dm = obj(spec.distinguisherMethod);
  if (dm && dm.type !== 'ByNamespace' && dm.type !== 'ByUser') {
    errs.push(field.notSupported(path.child('distinguisherMethod', 'type'), dm.type ?? '', ['ByNamespace', 'ByUser']));
  }
  const plName = String(obj(spec.priorityLevelConfiguration)?.name ?? '');
  if (plName) {
    for (const msg of nameIsDNSSubdomain(plName, false)) errs.push(field.invalid(path.child('priorityLevelConfiguration', 'name'), plName, msg));
  } else errs.push(field.required(path.child('priorityLevelConfiguration', 'name'), 'must reference a priority level'));
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  rules.forEach((r, i) => errs.push(...validatePolicyRulesWithSubjects(obj(r) ?? {}, path.child('rules').index(i))));
  return errs;
}

function validatePolicyRulesWithSubjects(rule: Obj, path: Path): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = Array.isArray(rule.subjects) ? rule.subjects : [];
  if (subjects.length) subjects.forEach((s, i) => errs.push(...validateSubject(obj(s) ?? {}, path.child('subjects').index(i))));
  else errs.push(field.required(path.child('subjects'), 'subjects must contain at least one value'));
  const resourceRules = Array.isArray(rule.resourceRules) ? rule.resourceRules : [];
  const nonResourceRules = Array.isArray(rule.nonResourceRules) ? rule.nonResourceRules : [];
  if (!resourceRules.length && !nonResourceRules.length)
    errs.push(field.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  resourceRules.forEach((r, i) => errs.push(...validateResourceRule(obj(r) ?? {}, path.child('resourceRules').index(i))));
  nonResourceRules.forEach((r, i) => errs.push(...validateNonResourceRule(obj(r) ?? {}, path.child('nonResourceRules').index(i))));
  return errs;
}

const FORBIDDEN_MEMBER: Record<string, string> = {
  user: "user is forbidden when subject kind is not 'User'",
  group: "group is forbidden when subject kind is not 'Group'",
  serviceAccount: "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
};

function validateSubject(s: Obj, path: Path): FieldError[] {
  const errs: FieldError[] = [];
  const member = s.kind === 'User' ? 'user' : s.kind === 'Group' ? 'group' : s.kind === 'ServiceAccount' ? 'serviceAccount' : undefined;
  if (!member) return [field.notSupported(path.child('kind'), s.kind ?? '', ['Group', 'ServiceAccount', 'User'])];
  const m = obj(s[member]);
  const mp = path.child(member);
  if (!m) errs.push(field.required(mp, `${member} is required when subject kind is '${s.kind}'`));
  else {
    const name = String(m.name ?? '');
    if (!name) errs.push(field.required(mp.child('name'), ''));
    else if (member === 'serviceAccount' && name !== '*')
      for (const msg of nameIsDNSSubdomain(name, false)) errs.push(field.invalid(mp.child('name'), name, msg));
    if (member === 'serviceAccount') {
      const ns = String(m.namespace ?? '');
      if (ns) for (const msg of validateNamespaceName(ns, false)) errs.push(field.invalid(mp.child('namespace'), ns, msg));
      else errs.push(field.required(mp.child('namespace'), 'must specify namespace for service account'));
    }
  }
  for (const other of ['serviceAccount', 'user', 'group']) {
    if (other !== member && s[other] !== undefined && s[other] !== null) errs.push(field.forbidden(path.child(other), FORBIDDEN_MEMBER[other]!));
  }
  return errs;
}

function validateVerbs(verbs: string[], path: Path): FieldError[] {
  if (!verbs.length) return [field.required(path, 'verbs must contain at least one value')];
  if (hasWildcard(verbs)) return verbs.length > 1 ? [field.invalid(path, field.goStringSlice(verbs), "if '*' is present, must not specify other verbs")] : [];
  if (!verbs.every((v) => SUPPORTED_VERBS.includes(v))) return [field.notSupported(path, field.goStringSlice(verbs), SUPPORTED_VERBS)];
  return [];
}

/** One list member may be '*' only alone. */
function wildcardAlone(xs: string[], path: Path, what: string): FieldError[] {
  return xs.length > 1 && hasWildcard(xs) ? [field.invalid(path, field.goStringSlice(xs), `if '*' is present, must not specify other ${what}`)] : [];
}

function validateResourceRule(r: Obj, path: Path): FieldError[] {
  const errs = validateVerbs(strs(r.verbs), path.child('verbs'));
  const groups = strs(r.apiGroups);
  if (!groups.length) errs.push(field.required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  else errs.push(...wildcardAlone(groups, path.child('apiGroups'), 'api groups'));
  const resources = strs(r.resources);
  if (!resources.length) errs.push(field.required(path.child('resources'), 'resource rules must supply at least one resource'));
  else errs.push(...wildcardAlone(resources, path.child('resources'), 'resources'));
  const namespaces = strs(r.namespaces);
  if (!namespaces.length && r.clusterScope !== true) {
    errs.push(field.required(path.child('namespaces'), 'resource rules that are not cluster scoped must supply at least one namespace'));
  } else if (hasWildcard(namespaces)) errs.push(...wildcardAlone(namespaces, path.child('namespaces'), 'namespaces'));
  else {
    namespaces.forEach((ns, i) => {
      for (const msg of validateNamespaceName(ns, false)) errs.push(field.invalid(path.child('namespaces').index(i), ns, NS_ERR_INTRO + msg));
    });
  }
  return errs;
}

function validateNonResourceRule(r: Obj, path: Path): FieldError[] {
  const errs = validateVerbs(strs(r.verbs), path.child('verbs'));
  const urls = strs(r.nonResourceURLs);
  if (!urls.length) errs.push(field.required(path.child('nonResourceURLs'), 'nonResourceURLs must contain at least one value'));
  else if (hasWildcard(urls)) errs.push(...wildcardAlone(urls, path.child('nonResourceURLs'), 'non-resource URLs'));
  else {
    urls.forEach((u, i) => {
      const msg = nonResourceURLProblem(u);
      if (msg) errs.push(field.invalid(path.child('nonResourceURLs').index(i), u, msg));
    });
  }
  return errs;
}

/** ValidateNonResourceURLPath: a slash first, no spaces or double slashes, '*' only as a "/*" suffix. */
export function nonResourceURLProblem(u: string): string | undefined {
  if (!u) return 'must not be empty';
  if (u === '/') return undefined;
  if (!u.startsWith('/')) return 'must start with slash';
  if (u.includes(' ')) return 'must not contain white-space';
  if (u.includes('//')) return 'must not contain double slash';
  const stars = u.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !u.endsWith('/*'))) return 'wildcard can only do suffix matching';
  return undefined;
}

function validateConditions(status: Obj | undefined, path: Path): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  const conds = Array.isArray(status?.conditions) ? status.conditions : [];
  conds.forEach((c, i) => {
    const type = String(obj(c)?.type ?? '');
    if (seen.has(type)) errs.push(field.duplicate(path.child('conditions').index(i).child('type'), type));
    seen.add(type);
    if (!type) errs.push(field.required(path.child('conditions').index(i).child('type'), 'must not be empty'));
  });
  return errs;
}

export const validateFlowSchemaStatus = (fs: Obj): FieldError[] => validateConditions(obj(fs.status), p('status'));

// ---------------------------------------------------------------- PriorityLevelConfiguration

export function validatePriorityLevel(pl: Obj): FieldError[] {
  const name = String(obj(pl.metadata)?.name ?? '');
  const spec = obj(pl.spec) ?? {};
  const errs = validatePriorityLevelSpec(name, spec, p('spec'));
  const mandatory = mandatoryPriorityLevel(name);
  if (mandatory) {
    // Of the exempt level, spec.exempt is the operator's; the rest is fixed.
    const have = name === 'exempt' ? { ...spec, exempt: mandatory.spec?.exempt } : spec;
    if (!semanticEqual(have, mandatory.spec)) {
      const what = name === 'exempt' ? "except the 'spec.exempt' field must equal the fixed value" : 'must equal the fixed value';
      errs.push(field.invalid('spec', spec, `spec of '${name}' ${what}`));
    }
  }
  return [...errs, ...validateConditions(obj(pl.status), p('status'))];
}

function validatePriorityLevelSpec(name: string, spec: Obj, path: Path): FieldError[] {
  const errs: FieldError[] = [];
  if ((name === 'exempt') !== (spec.type === 'Exempt'))
    errs.push(field.invalid(path.child('type'), spec.type ?? '', "type must be 'Exempt' if and only if name is 'exempt'"));
  const exempt = obj(spec.exempt);
  const limited = obj(spec.limited);
  if (spec.type === 'Exempt') {
    if (limited) errs.push(field.forbidden(path.child('limited'), 'must be nil if the type is not Limited'));
    if (exempt) {
      const ncs = exempt.nominalConcurrencyShares;
      if (typeof ncs === 'number' && ncs < 0) errs.push(field.invalid(path.child('exempt', 'nominalConcurrencyShares'), ncs, 'must be a non-negative integer'));
      errs.push(...percent(exempt.lendablePercent, path.child('exempt', 'lendablePercent')));
    }
  } else if (spec.type === 'Limited') {
    if (exempt) errs.push(field.forbidden(path.child('exempt'), 'must be nil if the type is Limited'));
    if (!limited) errs.push(field.required(path.child('limited'), 'must not be empty when type is Limited'));
    else errs.push(...validateLimited(limited, path.child('limited')));
  } else errs.push(field.notSupported(path.child('type'), spec.type ?? '', ['Exempt', 'Limited']));
  return errs;
}

const percent = (v: unknown, path: Path): FieldError[] =>
  typeof v === 'number' && !(v >= 0 && v <= 100) ? [field.invalid(path, v, 'must be between 0 and 100, inclusive')] : [];

function validateLimited(l: Obj, path: Path): FieldError[] {
  const errs: FieldError[] = [];
  const ncs = num(l.nominalConcurrencyShares);
  if (ncs < 0) errs.push(field.invalid(path.child('nominalConcurrencyShares'), ncs, 'must be a non-negative integer'));
  errs.push(...validateLimitResponse(obj(l.limitResponse) ?? {}, path.child('limitResponse')));
  errs.push(...percent(l.lendablePercent, path.child('lendablePercent')));
  if (typeof l.borrowingLimitPercent === 'number' && l.borrowingLimitPercent < 0) {
    errs.push(field.invalid(path.child('borrowingLimitPercent'), l.borrowingLimitPercent, 'if specified, must be a non-negative integer'));
  }
  return errs;
}

function validateLimitResponse(lr: Obj, path: Path): FieldError[] {
  const queuing = obj(lr.queuing);
  if (lr.type === 'Reject') return queuing ? [field.forbidden(path.child('queuing'), 'must be nil if limited.limitResponse.type is not Limited')] : [];
  if (lr.type !== 'Queue') return [field.notSupported(path.child('type'), lr.type ?? '', ['Queue', 'Reject'])];
  if (!queuing) return [field.required(path.child('queuing'), 'must not be empty if limited.limitResponse.type is Limited')];
  const errs: FieldError[] = [];
  const qp = path.child('queuing');
  const [qll, queues, hand] = [num(queuing.queueLengthLimit), num(queuing.queues), num(queuing.handSize)];
  if (qll <= 0) errs.push(field.invalid(qp.child('queueLengthLimit'), qll, 'must be positive'));
  if (queues <= 0) errs.push(field.invalid(qp.child('queues'), queues, 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(field.invalid(qp.child('queues'), queues, `must not be greater than ${MAX_QUEUES}`));
  if (hand <= 0) errs.push(field.invalid(qp.child('handSize'), hand, 'must be positive'));
  else if (hand > queues) errs.push(field.invalid(qp.child('handSize'), hand, `should not be greater than queues (${queues})`));
  else if (requiredEntropyBits(queues, hand) > MAX_HASH_BITS) {
    errs.push(
      field.invalid(qp.child('handSize'), hand, `required entropy bits of deckSize ${queues} and handSize ${hand} should not be greater than ${MAX_HASH_BITS}`),
    );
  }
  return errs;
}

export const validatePriorityLevelStatus = (pl: Obj): FieldError[] => validateConditions(obj(pl.status), p('status'));
