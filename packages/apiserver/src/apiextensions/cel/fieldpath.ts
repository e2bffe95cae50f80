/**
 * A rule's `fieldPath` (k8s.io/apiextensions-apiserver/pkg/apiserver/schema/
 * cel/validation.go `ValidFieldPath`): a JSON path of field and map-key
 * accessors (`.spec.replicas`, `.spec['x.y']`, `.labels.app`) that must
 * resolve in the schema. The result is normalized as a field.Path prints it
 * (`spec.replicas`, `labels[app]`).
 */
import type { JSONSchemaProps } from '../types.js';

export type FieldPathResult = { path: string; schema: JSONSchemaProps } | { error: string };

/** Splits on `.`, `[` and `]`, keeping single-quoted strings whole. */
function tokens(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '.' || c === '[' || c === ']') {
      out.push(c);
      i++;
      continue;
    }
    let j = i;
    if (c === "'") {
      j = i + 1;
      while (j < s.length && !(s[j] === "'" && s[j - 1] !== '\\')) j++;
      j = Math.min(j + 1, s.length);
    } else {
      while (j < s.length && s[j] !== '.' && s[j] !== '[' && s[j] !== ']') j++;
    }
    out.push(s.slice(i, j));
    i = j;
  }
  return out;
}

const ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '\\': '\\' };

function unescapeSingleQuote(s: string): string | undefined {
  let bad = false;
  const out = s.replace(/\\./g, (m) => {
    const r = ESCAPES[m[1]!];
    if (r === undefined) bad = true;
    return r ?? '';
  });
  return bad ? undefined : out;
}

/** Validates a rule's fieldPath against the schema of the rule's node. */
export function validFieldPath(jsonPath: string, root: JSONSchemaProps): FieldPathResult {
  let path = '';
  let schema: JSONSchemaProps | undefined = root;
  const append = (name: string): string | undefined => {
    if (schema?.properties) {
      const next: JSONSchemaProps | undefined = schema.properties[name];
      if (!next) return 'does not refer to a valid field';
      path = path ? `${path}.${name}` : name;
      schema = next;
      return undefined;
    }
    if (schema?.additionalProperties !== undefined && schema.additionalProperties !== false) {
      path = `${path}[${name}]`;
      schema = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
      return undefined;
    }
    return 'does not refer to a valid field';
  };
  const toks = tokens(jsonPath);
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i]!;
    if (tok === '[') {
      const q = toks[++i];
      if (q === undefined) return { error: 'unexpected end of JSON path' };
      if (q.length < 2 || q[0] !== "'" || q[q.length - 1] !== "'") return { error: `expected single quoted string but got ${q}` };
      const name = unescapeSingleQuote(q.slice(1, -1));
      if (name === undefined) return { error: 'invalid string literal: invalid escape char' };
      const err = append(name);
      if (err) return { error: err };
      const close = toks[++i];
      if (close === undefined) return { error: 'unexpected end of JSON path' };
      if (close !== ']') return { error: `expected ] but got ${close}` };
    } else if (tok === '.') {
      const name = toks[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const err = append(name);
      if (err) return { error: err };
    } else {
      return { error: `expected [ or . but got: ${tok}` };
    }
  }
  return { path, schema: schema ?? {} };
}
