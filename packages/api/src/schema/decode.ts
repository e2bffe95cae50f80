/**
 * Decoding checks driven by the kind schemas: values upstream's Go decoder
 * (sigs.k8s.io/json over the typed structs) refuses, and fields the schema does
 * not know (what `fieldValidation=Strict` refuses and `Warn` reports). Pure:
 * never changes the object.
 *
 * What Go refuses, and how it says so:
 * - a JSON value of the wrong type, an integer that is not one (`1.5`, `1e3`,
 *   `1.0`) or does not fit its int32/int64, a float that overflows:
 *   `json: cannot unmarshal <what> into Go struct field <Struct>.<field path> of type <Go type>`;
 *   the field path is the struct field names from the root, without list indices
 *   or map keys. Go remembers the first such error and carries on.
 * - a `[]byte` string that is not standard base64: `illegal base64 data at input byte N`
 *   (also remembered, decoding carries on).
 * - a `resource.Quantity` that does not parse: the ParseQuantity error alone;
 *   an `intstr.IntOrString` that is neither a string nor an int32, or a
 *   `metav1.Time` that is not a string: the int32/string type error. These come
 *   from the type's own UnmarshalJSON, which stops decoding at once, so such an
 *   error wins over any remembered one.
 *
 * The walk follows the schema with an explicit stack: a body nested far beyond
 * what the schema describes is never recursed into.
 */
import type { TSchema } from '@sinclair/typebox';
import { goTrimSpace, QUANTITY_FORMAT_ERROR, quantityError } from '@kubeling/apimachinery';

export interface TypeIssue {
  /** Where the value is: `spec.replicas`, `spec.containers[0].ports[1].containerPort`, `data.key`. */
  path: string;
  /**
   * Go's field path, as its decoder prints it: struct field names from the root,
   * without list indices or map keys (`spec.containers.ports.containerPort`,
   * `stringData`). Empty at the root.
   */
  field: string;
  /** The Go type name upstream would print (`int32`, `string`, `bool`, `[]v1.Container`, `[]uint8`, ...). */
  goType: string;
  /** JSON type found: `string`, `number`, `bool`, `object`, `array`. */
  got: string;
  /** Upstream struct name of the enclosing object (`DeploymentSpec`). */
  parent: string;
  /** What Go says it could not unmarshal when that is more than the JSON type: `number 1.5`. */
  value?: string;
  /** The whole message, for errors that are not a json.UnmarshalTypeError (quantity, base64). */
  message?: string;
  /** Go's decoder stopped here (an UnmarshalJSON method failed) rather than carrying on. */
  fatal?: boolean;
}

export interface DecodeIssues {
  unknown: string[];
  /** In the order Go reports them: the first is the error upstream returns. */
  typeErrors: TypeIssue[];
}

/**
 * The literal text of a JSON number as the request body wrote it (`1.0`, `1e3`,
 * `99999999999999999999`): JSON.parse loses it. `path` locates the number from the
 * root (object keys as strings, list indices as numbers). Undefined when unknown;
 * the number is then written as Go's encoding/json writes a float64.
 */
export type NumberText = (n: number, path: readonly (string | number)[]) => string | undefined;

export interface DecodeOptions {
  /** See `NumberText`; `jsonNumberText(body)` builds one from a JSON body's text. Leave unset for YAML bodies. */
  numberText?: NumberText | undefined;
}

type Node = TSchema & {
  type?: string;
  properties?: Record<string, Node>;
  patternProperties?: Record<string, Node>;
  additionalProperties?: Node | boolean;
  items?: Node;
  anyOf?: Node[];
  format?: string;
  $id?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubeling-quantity'?: boolean;
  /** The Go type name to print when it is not derivable (`v1.Protocol`). */
  'x-kubeling-go-type'?: string;
};

const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v);

const shortName = (id: string | undefined) => (id ? id.slice(id.lastIndexOf('.') + 1) : '');

function goType(n: Node): string {
  if (n['x-kubeling-go-type']) return n['x-kubeling-go-type'];
  if (n['x-kubernetes-int-or-string']) return 'intstr.IntOrString';
  if (n['x-kubeling-quantity']) return 'resource.Quantity';
  switch (n.type) {
    case 'integer':
      return n.format === 'int64' ? 'int64' : 'int32';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'string':
      return n.format === 'byte' ? '[]uint8' : 'string';
    case 'array':
      return `[]${n.items ? goType(n.items) : 'interface {}'}`;
    case 'object': {
      if (n.$id) return `v1.${shortName(n.$id)}`;
      const v = n.patternProperties ? Object.values(n.patternProperties)[0] : typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined;
      if (v?.['x-kubeling-quantity']) return 'v1.ResourceList';
      if (v) return `map[string]${goType(v)}`;
      return 'map[string]interface {}';
    }
    default:
      return 'interface {}';
  }
}

/** A number as Go's encoding/json writes a float64 (JavaScript's shortest form and exponent thresholds are the same). */
export function goJSONFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (Object.is(n, -0)) return '-0';
  return String(n);
}

const INT_LITERAL = /^-?[0-9]+$/;
const INT_BOUNDS = { 32: [-(2n ** 31n), 2n ** 31n - 1n], 64: [-(2n ** 63n), 2n ** 63n - 1n] } as const;

/** Whether strconv.ParseInt(lit, 10, 64) succeeds and the value fits the Go int type. */
function intFits(lit: string, bits: 32 | 64): boolean {
  if (!INT_LITERAL.test(lit)) return false;
  if (lit.length < 10) return true;
  const v = BigInt(lit);
  return v >= INT_BOUNDS[bits][0] && v <= INT_BOUNDS[bits][1];
}

const B64_VALID = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const isB64 = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
const isNewline = (c: number | undefined) => c === 10 || c === 13;

/**
 * Where Go's base64.StdEncoding.Decode reports corrupt input in `s` (its
 * CorruptInputError: a byte offset into the UTF-8 text), or undefined when `s`
 * decodes. `\r` and `\n` are skipped, as Go skips them.
 */
export function base64Error(s: string): number | undefined {
  if (B64_VALID.test(s)) return undefined;
  const src = new TextEncoder().encode(s);
  let si = 0;
  while (si < src.length) {
    // decodeQuantum
    for (let j = 0; j < 4; j++) {
      if (si === src.length) return j === 0 ? undefined : si - j;
      const c = src[si++]!;
      if (isB64(c)) continue;
      if (isNewline(c)) {
        j--;
        continue;
      }
      if (c !== 61 /* = */ || j < 2) return si - 1;
      if (j === 2) {
        // "==" is expected; the first "=" is consumed
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) return src.length;
        if (src[si] !== 61) return si - 1;
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      return si < src.length ? si : undefined; // trailing garbage after the padding
    }
  }
  return undefined;
}

interface Loc {
  up: Loc | undefined;
  key: string | number;
}

function locPath(loc: Loc | undefined): (string | number)[] {
  const out: (string | number)[] = [];
  for (let l = loc; l; l = l.up) out.push(l.key);
  return out.reverse();
}

interface Frame {
  /** undefined: an unknown field, to be recorded in document order */
  n: Node | undefined;
  v: unknown;
  path: string;
  field: string;
  parent: string;
  loc: Loc | undefined;
}

interface Walk {
  out: DecodeIssues;
  fatal: TypeIssue | undefined;
  numberText: NumberText | undefined;
}

const childPath = (base: string, key: string) => (base ? `${base}.${key}` : key);

/** Walks `value` against `schema` and collects unknown fields and the values Go's decoder refuses. */
export function checkAgainstSchema(schema: TSchema, value: unknown, opts: DecodeOptions = {}): DecodeIssues {
  const w: Walk = { out: { unknown: [], typeErrors: [] }, fatal: undefined, numberText: opts.numberText };
  run(w, { n: schema as Node, v: value, path: '', field: '', parent: '', loc: undefined });
  if (w.fatal) w.out.typeErrors.unshift(w.fatal);
  return w.out;
}

function run(w: Walk, root: Frame): void {
  const stack: Frame[] = [root];
  while (stack.length && !w.fatal) {
    const f = stack.pop()!;
    if (f.n) visit(w, f, f.n, stack);
    else w.out.unknown.push(f.path);
  }
}

function numberText(w: Walk, f: Frame, n: number): string {
  return w.numberText?.(n, locPath(f.loc)) ?? goJSONFloat(n);
}

function visit(w: Walk, f: Frame, n: Node, stack: Frame[]): void {
  const v = f.v;
  if (v === null || v === undefined) return; // Go decodes null as the zero value
  if (n['x-kubernetes-preserve-unknown-fields']) return;
  const issue = (extra: Partial<TypeIssue> = {}): TypeIssue => ({
    path: f.path,
    field: f.field,
    goType: goType(n),
    got: jsonType(v),
    parent: f.parent,
    ...extra,
  });
  const save = (extra?: Partial<TypeIssue>): void => {
    w.out.typeErrors.push(issue(extra));
  };
  const stop = (extra?: Partial<TypeIssue>): void => {
    w.fatal = issue({ ...extra, fatal: true });
  };

  if (n['x-kubernetes-int-or-string']) {
    // IntOrString.UnmarshalJSON: a string, else json.Unmarshal into its int32
    if (typeof v === 'string') return;
    if (typeof v === 'number') {
      const lit = numberText(w, f, v);
      if (!intFits(lit, 32)) stop({ goType: 'int32', value: `number ${lit}` });
      return;
    }
    return stop({ goType: 'int32' });
  }
  if (n['x-kubeling-quantity']) {
    // Quantity.UnmarshalJSON: ParseQuantity of the trimmed string, or of the raw JSON text
    let message: string | undefined;
    if (typeof v === 'string') message = quantityError(goTrimSpace(v));
    else if (typeof v === 'number') {
      // Every JSON number literal parses unless its exponent overflows int64, which leaves 0 or ±Inf.
      const lit = v === 0 || !Number.isFinite(v) ? w.numberText?.(v, locPath(f.loc)) : undefined;
      if (lit !== undefined) message = quantityError(lit);
    } else message = QUANTITY_FORMAT_ERROR; // `true`, `{...}`, `[...]` never match
    if (message) stop({ message });
    return;
  }
  if (n.anyOf) {
    if (!n.anyOf.some((alt) => probe(w, f, alt))) save();
    return;
  }
  switch (n.type) {
    case 'string':
      if (typeof v === 'string') {
        if (n.format === 'byte') {
          const at = base64Error(v);
          if (at !== undefined) save({ message: `illegal base64 data at input byte ${at}` });
        }
        return;
      }
      // metav1.Time / MicroTime decode through their own UnmarshalJSON: its error stops decoding
      return n.format === 'date-time' ? stop() : save();
    case 'integer': {
      if (typeof v !== 'number') return save();
      const lit = numberText(w, f, v);
      if (!intFits(lit, n.format === 'int64' ? 64 : 32)) save({ value: `number ${lit}` });
      return;
    }
    case 'number':
      if (typeof v !== 'number') return save();
      if (!Number.isFinite(v)) save({ value: `number ${numberText(w, f, v)}` });
      return;
    case 'boolean':
      if (typeof v !== 'boolean') save();
      return;
    case 'array': {
      if (!Array.isArray(v)) return save();
      const items = n.items;
      if (!items) return;
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ n: items, v: v[i], path: `${f.path}[${i}]`, field: f.field, parent: f.parent, loc: { up: f.loc, key: i } });
      }
      return;
    }
    case 'object': {
      if (typeof v !== 'object' || Array.isArray(v)) return save();
      const entries = Object.entries(v as Record<string, unknown>);
      const children: Frame[] = [];
      if (n.properties) {
        const me = shortName(n.$id) || f.parent;
        const extra = typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined;
        for (const [k, child] of entries) {
          const p = n.properties[k] ?? extra;
          const path = childPath(f.path, k);
          if (p) children.push({ n: p, v: child, path, field: childPath(f.field, k), parent: me, loc: { up: f.loc, key: k } });
          else if (n.additionalProperties !== true) children.push({ n: undefined, v: undefined, path, field: '', parent: '', loc: undefined });
        }
      } else {
        // a map: Go records neither the key nor a new struct
        const valueSchema = n.patternProperties
          ? Object.values(n.patternProperties)[0]
          : typeof n.additionalProperties === 'object'
            ? n.additionalProperties
            : undefined;
        if (valueSchema) {
          for (const [k, child] of entries) {
            children.push({ n: valueSchema, v: child, path: childPath(f.path, k), field: f.field, parent: f.parent, loc: { up: f.loc, key: k } });
          }
        }
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
      return;
    }
    default:
      return;
  }
}

function probe(w: Walk, f: Frame, alt: Node): boolean {
  const sub: Walk = { out: { unknown: [], typeErrors: [] }, fatal: undefined, numberText: w.numberText };
  run(sub, { ...f, n: alt });
  return !sub.fatal && sub.out.typeErrors.length === 0;
}

/** Go's json error text for a type issue, as upstream's decoder reports it. */
export function typeErrorMessage(t: TypeIssue): string {
  if (t.message !== undefined) return t.message;
  const value = t.value ?? t.got;
  if (!t.field) return `json: cannot unmarshal ${value} into Go value of type ${t.goType}`;
  return `json: cannot unmarshal ${value} into Go struct field ${t.parent}.${t.field} of type ${t.goType}`;
}

type Trie = Map<string | number, Trie | string>;

interface ScanFrame {
  arr: boolean;
  /** array: index of the current element */
  idx: number;
  /** object: key of the current member; whether a key comes next */
  key: string;
  expectKey: boolean;
  /** this container's key or index in its parent */
  seg: string | number;
  parent: ScanFrame | undefined;
  node: Trie | undefined;
}

/**
 * Number texts of a JSON document (one JSON.parse accepted), for
 * `DecodeOptions.numberText`. Only literals JSON.parse does not give back as
 * written (`1.0`, `1e3`, `99999999999999999999`) are kept; undefined when there
 * are none. One linear pass, no recursion.
 */
export function jsonNumberText(text: string): NumberText | undefined {
  let rootNode: Trie | undefined;
  let rootLit: string | undefined;
  let any = false;
  let top: ScanFrame | undefined;
  const materialize = (fr: ScanFrame): Trie => {
    const pending: ScanFrame[] = [];
    let p: ScanFrame | undefined = fr;
    while (p && !p.node) {
      pending.push(p);
      p = p.parent;
    }
    for (let i = pending.length - 1; i >= 0; i--) {
      const q = pending[i]!;
      q.node = new Map();
      if (q.parent) q.parent.node!.set(q.seg, q.node);
      else rootNode = q.node;
    }
    return fr.node!;
  };
  const len = text.length;
  let i = 0;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */ || c === 91 /* [ */) {
      const seg = top ? (top.arr ? top.idx : top.key) : '';
      top = { arr: c === 91, idx: 0, key: '', expectKey: c === 123, seg, parent: top, node: undefined };
      i++;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      top = top?.parent;
      i++;
    } else if (c === 44 /* , */) {
      if (top) {
        if (top.arr) top.idx++;
        else top.expectKey = true;
      }
      i++;
    } else if (c === 34 /* " */) {
      let end = i + 1;
      for (;;) {
        const q = text.indexOf('"', end);
        if (q < 0) return undefined; // not JSON
        let k = q - 1;
        while (text.charCodeAt(k) === 92) k--;
        end = q + 1;
        if ((q - 1 - k) % 2 === 0) break;
      }
      if (top && !top.arr && top.expectKey) {
        const raw = text.slice(i, end);
        top.key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        top.expectKey = false;
        top.node?.delete(top.key); // a repeated key: JSON.parse keeps the last value
      }
      i = end;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let end = i + 1;
      for (; end < len; end++) {
        const d = text.charCodeAt(end);
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) break;
      }
      const lit = text.slice(i, end);
      if (goJSONFloat(Number(lit)) !== lit) {
        any = true;
        if (!top) rootLit = lit;
        else materialize(top).set(top.arr ? top.idx : top.key, lit);
      }
      i = end;
    } else i++;
  }
  if (!any) return undefined;
  return (n, path) => {
    let cur: Trie | string | undefined = path.length ? rootNode : rootLit;
    for (const seg of path) {
      if (!(cur instanceof Map)) return undefined;
      cur = cur.get(seg);
    }
    return typeof cur === 'string' && Object.is(Number(cur), n) ? cur : undefined;
  };
}
