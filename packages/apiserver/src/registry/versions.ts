/**
 * resourceVersion parameters and continue tokens as kube-apiserver's storage
 * reads them (apiserver/pkg/storage: APIObjectVersioner.ParseResourceVersion,
 * continue.go), with their error texts. Revisions are etcd's int64s; a value
 * beyond 2^53 is kept as a bigint so that no digit is lost on its way back.
 */
import { badRequest, failure, field, goJSONKind, goJSONSyntaxError, tooLargeResourceVersion } from '@kubeling/apimachinery';

const MAX_UINT64 = 2n ** 64n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A parsed resourceVersion: `n` for comparisons (exact up to 2^53), `text` in canonical digits. */
export interface ResourceVersion {
  n: number;
  text: string;
}

/**
 * strconv.ParseUint(v, 10, 64) as storage applies it: "" and "0" are 0 (unset);
 * anything else not a uint64 is 400 `invalid resource version: resourceVersion:
 * Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`.
 */
export function parseResourceVersion(v: string | undefined): ResourceVersion {
  if (v === undefined || v === '' || v === '0') return { n: 0, text: '0' };
  let why: string | undefined;
  if (!/^\d+$/.test(v)) why = 'invalid syntax';
  else if (BigInt(v) > MAX_UINT64) why = 'value out of range';
  if (why) {
    const q = field.goQuote(v);
    throw badRequest(`invalid resource version: resourceVersion: Invalid value: ${q}: strconv.ParseUint: parsing ${q}: ${why}`);
  }
  const big = BigInt(v);
  return { n: Number(big), text: big.toString() };
}

/** 504 for a revision the store has not reached (`Timeout: Too large resource version: N, current: M`). */
export const tooLarge = (rv: ResourceVersion | number, current: number) => tooLargeResourceVersion(typeof rv === 'number' ? rv : rv.text, current);

// ---- continue tokens ------------------------------------------------------------

const INVALID = 'invalid continue token: continue key is not valid';

export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

/**
 * storage.DecodeContinue: the key to continue from (relative to the collection
 * prefix, without a leading slash) and the revision (negative: the latest).
 * Every malformed token is 400 with upstream's text.
 */
export function decodeContinue(token: string): { start: string; rv: number } {
  const bad = (why?: string) => badRequest(why ? `${INVALID}: ${why}` : INVALID);
  const illegal = /[^A-Za-z0-9_-]/.exec(token);
  if (illegal) throw bad(`illegal base64 data at input byte ${illegal.index}`);
  if (token.length % 4 === 1) throw bad(`illegal base64 data at input byte ${token.length - 1}`);
  const text = Buffer.from(token, 'base64url').toString('utf8');
  let t: unknown;
  try {
    t = JSON.parse(text);
  } catch (e) {
    throw bad(goJSONSyntaxError(text, e as Error));
  }
  const target = 'Go value of type storage.continueToken';
  if (t === null) t = {};
  if (typeof t !== 'object' || Array.isArray(t)) throw bad(`json: cannot unmarshal ${goJSONKind(t)} into ${target}`);
  const o = t as Record<string, unknown>;
  const fieldErr = (name: string, type: string, got: string) => bad(`json: cannot unmarshal ${got} into Go struct field continueToken.${name} of type ${type}`);
  const v = o.v ?? '';
  if (typeof v !== 'string') throw fieldErr('v', 'string', goJSONKind(v));
  let rv = 0;
  if (o.rv !== undefined && o.rv !== null) {
    if (typeof o.rv !== 'number') throw fieldErr('rv', 'int64', goJSONKind(o.rv));
    const literal = /"rv"\s*:\s*(-?[0-9][0-9.eE+-]*)/.exec(text)?.[1] ?? String(o.rv);
    if (!/^-?\d+$/.test(literal) || BigInt(literal) < INT64_MIN || BigInt(literal) > INT64_MAX) throw fieldErr('rv', 'int64', `number ${literal}`);
    rv = Number(BigInt(literal));
  }
  const start = o.start ?? '';
  if (typeof start !== 'string') throw fieldErr('start', 'string', goJSONKind(start));
  if (v !== 'meta.k8s.io/v1') throw bad(`server does not recognize this encoded version ${v}`);
  if (rv === 0) throw bad('incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (start === '') throw bad('encoded start key empty (version meta.k8s.io/v1)');
  const key = start.startsWith('/') ? start : `/${start}`;
  if (cleanPath(key) !== key) throw bad(start);
  return { start: key.slice(1), rv };
}

/** 410 for a continue token whose revision was compacted, with a token to go on inconsistently. */
export function continueExpired(start: string): never {
  const err = failure(
    'Expired',
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
  (err.status.metadata as Record<string, unknown>).continue = encodeContinue(-1, start);
  throw err;
}

/** Go's path.Clean for a rooted path. */
export function cleanPath(p: string): string {
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}
