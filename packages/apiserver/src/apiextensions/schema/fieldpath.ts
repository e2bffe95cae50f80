/**
 * Field paths into a structural schema, as apiextensions-apiserver resolves
 * them for `selectableFields` and the `fieldPath` of `x-kubernetes-validations`
 * (pkg/apiserver/schema/cel/validation.go `ValidFieldPath`), and the checks
 * on `selectableFields` (pkg/apis/apiextensions/validation/validation.go
 * `ValidateCustomResourceSelectableFields`: at most 8 distinct paths, each to
 * a string, boolean or integer field outside metadata).
 */
import { type FieldError, field } from '@kubeling/apimachinery';
import type { JSONSchemaProps } from '../types.js';

const { required, invalid, duplicate, tooMany } = field;

export const MAX_SELECTABLE_FIELDS = 8;

export interface ResolvedFieldPath {
  /** The path as field.Path prints it: `spec.foo`, `spec.labels[key]`. */
  path: string;
  /** Its first element. */
  root: string;
  schema: JSONSchemaProps | undefined;
}

/** Splits a JSON path into `.`, `[`, `]` and the text between (single-quoted strings kept whole). */
function tokens(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] === "'") {
      let j = i + 1;
      while (j < s.length && !(s[j] === "'" && s[j - 1] !== '\\')) j++;
      out.push(s.slice(i, Math.min(j + 1, s.length)));
      i = j + 1;
      continue;
    }
    if ('.[]'.includes(s[i]!)) {
      out.push(s[i]!);
      i++;
      continue;
    }
    let j = i;
    while (j < s.length && !'.[]'.includes(s[j]!)) j++;
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };

function unescapeSingleQuote(s: string): string {
  return s.replace(/\\(.)/gs, (m, c: string) => {
    const r = ESCAPES[c];
    if (r === undefined) throw new Error(`invalid string literal: invalid escape char ${m}`);
    return r;
  });
}

/**
 * ValidFieldPath: resolves `jsonPath` (`.spec.foo`, `.spec.map['key']`)
 * against `schema`; throws an Error with upstream's text (`does not refer to
 * a valid field`, `expected [ or . but got: x`, …) when it does not resolve.
 */
export function validFieldPath(jsonPath: string, schema: JSONSchemaProps | undefined, allowArrayNotation = true): ResolvedFieldPath {
  let s = schema;
  let path = '';
  let root = '';
  const append = (name: string): void => {
    if (!s) throw new Error('does not refer to a valid field');
    const named = s.properties !== undefined && Object.keys(s.properties).length > 0;
    if (!named && s.additionalProperties === undefined) throw new Error('does not refer to a valid field');
    if (!root) root = name;
    if (named) {
      const next = Object.hasOwn(s.properties!, name) ? s.properties![name] : undefined;
      if (!next) throw new Error('does not refer to a valid field');
      path = path ? `${path}.${name}` : name;
      s = next;
    } else {
      path = `${path}[${name}]`;
      s = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    }
  };
  const toks = tokens(jsonPath);
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i]!;
    if (tok === '[') {
      if (!allowArrayNotation) throw new Error('array notation is not allowed');
      const lit = toks[++i];
      if (lit === undefined) throw new Error('unexpected end of JSON path');
      if (lit.length < 2 || !lit.startsWith("'") || !lit.endsWith("'")) throw new Error(`expected single quoted string but got ${lit}`);
      append(unescapeSingleQuote(lit.slice(1, -1)));
      const close = toks[++i];
      if (close === undefined) throw new Error('unexpected end of JSON path');
      if (close !== ']') throw new Error(`expected ] but got ${close}`);
    } else if (tok === '.') {
      const name = toks[++i];
      if (name === undefined) throw new Error('unexpected end of JSON path');
      append(name);
    } else throw new Error(`expected [ or . but got: ${tok}`);
  }
  return { path, root, schema: s };
}

/** ValidateCustomResourceSelectableFields. */
export function validateSelectableFields(fields: readonly { jsonPath: string }[], schema: JSONSchemaProps | undefined, fldPath: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const p = `${fldPath}[${i}].jsonPath`;
    if (!f.jsonPath) {
      errs.push(required(p, ''));
      return;
    }
    let resolved: ResolvedFieldPath;
    try {
      resolved = validFieldPath(f.jsonPath, schema, false);
    } catch (e) {
      errs.push(invalid(p, f.jsonPath, `is an invalid path: ${(e as Error).message}`));
      return;
    }
    if (resolved.root === 'metadata') errs.push(invalid(p, f.jsonPath, 'must not point to fields in metadata'));
    const t = resolved.schema?.type;
    if (t !== 'string' && t !== 'boolean' && t !== 'integer')
      errs.push(invalid(p, f.jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    if (seen.has(resolved.path)) errs.push(duplicate(p, f.jsonPath));
    else seen.add(resolved.path);
  });
  if (seen.size > MAX_SELECTABLE_FIELDS) errs.push(tooMany(fldPath, seen.size, MAX_SELECTABLE_FIELDS));
  return errs;
}
