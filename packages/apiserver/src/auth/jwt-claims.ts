/**
 * From verified JWT claims to a user (k8s.io/apiserver
 * plugin/pkg/authenticator/token/oidc/oidc.go getUsername, getGroups, getUID,
 * getExtra and the validation rules; pkg/authentication/cel compile.go).
 *
 * CEL expressions see `claims` (map(string, dyn): the JSON claims, integers as
 * int) or, in userValidationRules, `user` (kubernetes.UserInfo). Claim
 * mappings may return anything at compile time and are checked when they run;
 * validation rules must be bool. Failures throw errors worded as upstream's
 * (`oidc: email not verified`, `oidc: error evaluating claim validation
 * expression: validation expression '...' failed: ...`): the token is then
 * refused and the next authenticator asked.
 */
import type { Node } from '../apiextensions/cel/ast.js';
import { ListV } from '../apiextensions/cel/index.js';
import { type CelType, compileChecked, listOf, mapOf, type Program, run, sameType, structOf, T, toVal, type Val } from '../admission/policy/cel.js';
import type { UserInfo } from './types.js';

/** cel-go's per-call cost limit, which the authentication environment inherits. */
const PER_CALL_LIMIT = 1_000_000;

export const CLAIMS_DECLS: Record<string, CelType> = { claims: mapOf(T.string, T.dyn) };
export const USER_DECLS: Record<string, CelType> = {
  user: structOf(
    'kubernetes.UserInfo',
    new Map<string, CelType>([
      ['username', T.string],
      ['uid', T.string],
      ['groups', listOf(T.string)],
      ['extra', mapOf(T.string, listOf(T.string))],
    ]),
  ),
};

export interface Compiled {
  expression: string;
  program: Program;
}

/** compiler.compile: `compilation failed: <issues>` or `must evaluate to bool`, as the detail of a field.Invalid. */
export function compileAuthnExpression(expression: string, decls: Record<string, CelType>, bool: boolean): Compiled | { error: string } {
  const c = compileChecked(expression, decls);
  if (!c.program || !c.type) return { error: `compilation failed: ${c.issues ?? ''}` };
  if (bool && !sameType(c.type, T.bool)) return { error: 'must evaluate to bool' };
  return { expression, program: c.program };
}

/** hasSelectExp: whether the expression selects `operand.field` (plain, optional or in has()). */
export function selects(node: Node | undefined, operand: string, field: string): boolean {
  if (!node) return false;
  switch (node.kind) {
    case 'select':
      if (node.operand.kind === 'ident' && node.operand.name === operand && node.field === field) return true;
      return selects(node.operand, operand, field);
    case 'call':
      return node.args.some((a) => selects(a, operand, field)) || selects(node.target, operand, field);
    case 'list':
      return node.elems.some((e) => selects(e, operand, field));
    case 'map':
      return node.entries.some((e) => selects(e.key, operand, field) || selects(e.value, operand, field));
    case 'struct':
      return node.fields.some((f) => selects(f.value, operand, field));
    case 'comp':
      return [node.range, node.init, node.cond, node.step, node.result].some((n) => selects(n, operand, field));
    default:
      return false;
  }
}

/** A JWT authenticator's mappings and rules, compiled (authenticationcel.CELMapper plus the claim-based parts). */
export interface ClaimMapper {
  username: { claim: string; prefix: string } | Compiled;
  groups?: { claim: string; prefix: string } | Compiled;
  uid?: { claim: string } | Compiled;
  extra: (Compiled & { key: string })[];
  requiredClaims: [claim: string, value: string][];
  claimRules: (Compiled & { message: string })[];
  userRules: (Compiled & { message: string })[];
}

const isExpr = (m: object): m is Compiled => 'program' in m;

function evaluate(c: Compiled, name: string, value: Val): Val {
  const r = run(c.program, new Map([[name, value]]), PER_CALL_LIMIT);
  if ('error' in r) throw new Error(`expression '${c.expression}' resulted in error: ${r.error}`);
  return r.value;
}

/** convertCELValueToStringList: a string, a list of strings or null; empty strings dropped. */
function stringList(v: Val): string[] {
  if (v === null) return [];
  if (typeof v === 'string') return v ? [v] : [];
  if (v instanceof ListV) {
    const out: string[] = [];
    for (const x of v.items()) {
      if (typeof x !== 'string') throw new Error('expression must return a string or a list of strings');
      if (x) out.push(x);
    }
    return out;
  }
  throw new Error('expression must return a string or a list of strings');
}

/** claims.unmarshalClaim into a Go string. */
function stringClaim(claims: Record<string, unknown>, name: string): string {
  if (!Object.hasOwn(claims, name)) throw new Error('claim not present');
  const v = claims[name];
  // Go decodes null into a string as "" without complaint.
  if (v === null) return '';
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
  return v;
}

function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

function checkRules(rules: (Compiled & { message: string })[], name: string, value: Val): void {
  for (const r of rules) {
    const ok = evaluate(r, name, value);
    if (typeof ok !== 'boolean') throw new Error('validation expression must return a boolean');
    if (!ok) throw new Error(`validation expression '${r.expression}' failed: ${r.message}`);
  }
}

function username(m: ClaimMapper, claims: Record<string, unknown>, cel: () => Val): string {
  if (isExpr(m.username)) {
    let v: Val;
    try {
      v = evaluate(m.username, 'claims', cel());
    } catch (e) {
      throw new Error(`oidc: error evaluating username claim expression: ${(e as Error).message}`);
    }
    if (typeof v !== 'string') throw new Error('oidc: error evaluating username claim expression: username claim expression must return a string');
    if (!v) throw new Error('oidc: empty username via CEL expression is not allowed');
    return v;
  }
  const { claim, prefix } = m.username;
  let name: string;
  try {
    name = stringClaim(claims, claim);
  } catch (e) {
    throw new Error(`oidc: parse username claims "${claim}": ${(e as Error).message}`);
  }
  // An email is a username only when the issuer says it checked it (OIDC standard claims).
  if (claim === 'email' && Object.hasOwn(claims, 'email_verified')) {
    const verified = claims.email_verified ?? false;
    if (typeof verified !== 'boolean')
      throw new Error(`oidc: parse 'email_verified' claim: json: cannot unmarshal ${jsonKind(verified)} into Go value of type bool`);
    if (!verified) throw new Error('oidc: email not verified');
  }
  return prefix + name;
}

function groups(m: ClaimMapper, claims: Record<string, unknown>, cel: () => Val): string[] {
  const g = m.groups;
  if (!g) return [];
  if (!isExpr(g)) {
    if (!Object.hasOwn(claims, g.claim)) return [];
    // A single string is one group (kubernetes#33290).
    const v = claims[g.claim];
    let list: string[];
    if (typeof v === 'string') list = [v];
    else if (v === null) list = [];
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) list = v as string[];
    else throw new Error(`oidc: parse groups claim "${g.claim}": json: cannot unmarshal ${jsonKind(v)} into Go value of type string`);
    return list.map((x) => g.prefix + x);
  }
  try {
    return stringList(evaluate(g, 'claims', cel()));
  } catch (e) {
    throw new Error(`oidc: error evaluating group claim expression: ${(e as Error).message}`);
  }
}

function uid(m: ClaimMapper, claims: Record<string, unknown>, cel: () => Val): string {
  const u = m.uid;
  if (!u) return '';
  if (!isExpr(u)) {
    try {
      return stringClaim(claims, u.claim);
    } catch (e) {
      throw new Error(`oidc: parse uid claim "${u.claim}": ${(e as Error).message}`);
    }
  }
  let v: Val;
  try {
    v = evaluate(u, 'claims', cel());
  } catch (e) {
    throw new Error(`oidc: error evaluating uid claim expression: ${(e as Error).message}`);
  }
  if (typeof v !== 'string') throw new Error('oidc: error evaluating uid claim expression: uid claim expression must return a string');
  return v;
}

function extra(m: ClaimMapper, claims: Record<string, unknown>, cel: () => Val): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  // The token's jti identifies the credential (user.CredentialIDKey).
  if (typeof claims.jti === 'string') out['authentication.kubernetes.io/credential-id'] = [`JTI=${claims.jti}`];
  for (const e of m.extra) {
    let values: string[];
    try {
      values = stringList(evaluate(e, 'claims', cel()));
    } catch (err) {
      throw new Error(`oidc: error evaluating extra claim expression: ${e.expression}: ${(err as Error).message}`);
    }
    if (values.length) out[e.key] = values;
  }
  return out;
}

/** AuthenticateToken after verification: the user, or an error saying why the claims are refused. */
export function claimsToUser(m: ClaimMapper, claims: Record<string, unknown>): UserInfo {
  let celClaims: Val | undefined;
  const cel = () => (celClaims ??= toVal(claims));
  const name = username(m, claims, cel);
  const user: UserInfo = { name, groups: groups(m, claims, cel) };
  const id = uid(m, claims, cel);
  if (id) user.uid = id;
  const ex = extra(m, claims, cel);
  if (Object.keys(ex).length) user.extra = ex;
  for (const [claim, want] of m.requiredClaims) {
    if (!Object.hasOwn(claims, claim)) throw new Error(`oidc: required claim ${claim} not present in ID token`);
    let got: string;
    try {
      got = stringClaim(claims, claim);
    } catch (e) {
      throw new Error(`oidc: parse claim ${claim}: ${(e as Error).message}`);
    }
    if (got !== want) throw new Error(`oidc: required claim ${claim} value does not match. Got = ${got}, want = ${want}`);
  }
  try {
    checkRules(m.claimRules, 'claims', m.claimRules.length ? cel() : null);
  } catch (e) {
    throw new Error(`oidc: error evaluating claim validation expression: ${(e as Error).message}`);
  }
  if (m.userRules.length) {
    const view = toVal({ username: user.name, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} });
    try {
      checkRules(m.userRules, 'user', view);
    } catch (e) {
      throw new Error(`oidc: error evaluating user info validation rule: ${(e as Error).message}`);
    }
  }
  return user;
}
