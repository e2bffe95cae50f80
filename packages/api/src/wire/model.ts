/**
 * The wire model of the API types: what the generated tables (gen/*.ts, made by
 * scripts/gen-wire-types.mjs from Kubernetes' Go types) and the overlay say of
 * each Go struct, and its compiled form, which the JSON and protobuf codecs walk.
 *
 * A table row is `[json, type, flags, protobuf number?, wire type?]`:
 * - `json`: the JSON name ('' for an inlined struct);
 * - `type`: the Go type, canonical: `string`, `int32`, `*int64`, `[]byte`,
 *   `[]core/v1.Container`, `map[string]resource.Quantity`, `meta/v1.Time`, `any`;
 * - `flags`: `o` omitempty, `i` inline (embedded), `-` not in JSON (`json:"-"`);
 * - the protobuf field number and wire type of the `protobuf:"..."` tag (absent:
 *   the field is not in the protobuf message).
 */

export type WireRow = readonly [json: string, type: string, flags: string, num?: number, wire?: string];

export interface WirePackage {
  /** `core/v1`, `meta/v1`, `runtime`, ...: the prefix of the package's struct keys. */
  key: string;
  group: string;
  version: string;
  /** Structs that embed TypeMeta: the kinds (and option types) of the group-version. */
  kinds: readonly string[];
  /** Named slice types that protobuf wraps in a message of one `repeated items = 1` (ExtraValue, Verbs). */
  wrappers?: Readonly<Record<string, string>>;
  structs: Readonly<Record<string, readonly WireRow[]>>;
}

export type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'uint32' | 'uint64' | 'float32' | 'float64' | 'byte' | 'bytes' | 'any';
export type Special = 'Time' | 'MicroTime' | 'Duration' | 'FieldsV1' | 'Quantity' | 'IntOrString' | 'RawExtension';

export const SPECIALS: Readonly<Record<string, Special>> = {
  'meta/v1.Time': 'Time',
  'meta/v1.MicroTime': 'MicroTime',
  'meta/v1.Duration': 'Duration',
  'meta/v1.FieldsV1': 'FieldsV1',
  'resource.Quantity': 'Quantity',
  'intstr.IntOrString': 'IntOrString',
  'runtime.RawExtension': 'RawExtension',
};

export type WireType =
  | { readonly k: 'scalar'; readonly s: Scalar }
  | { readonly k: 'special'; readonly s: Special }
  | { readonly k: 'struct'; readonly name: string }
  | { readonly k: 'slice'; readonly of: WireType }
  | { readonly k: 'map'; readonly of: WireType }
  /** A named slice that protobuf writes as a message `{ repeated items = 1 }`; JSON: the array. */
  | { readonly k: 'wrapper'; readonly name: string; readonly of: WireType };

export interface WireField {
  json: string;
  type: WireType;
  /** A Go pointer: absent when nil, and a zero value is a real value. */
  ptr: boolean;
  omitempty: boolean;
  inline: boolean;
  /** `json:"-"`: not in JSON. */
  noJson: boolean;
  /** The protobuf field number; 0 when the field is not in the message. */
  num: number;
}

export interface WireStruct {
  key: string;
  /** Fields in Go struct order. */
  fields: readonly WireField[];
  /** Fields with a protobuf number, by number. */
  byNum: ReadonlyMap<number, WireField>;
  /** Fields with a protobuf number, in number order (how gogo-protobuf writes them). */
  protoOrder: readonly WireField[];
}

const SCALARS = new Set<string>(['string', 'bool', 'int32', 'int64', 'uint32', 'uint64', 'float32', 'float64', 'byte', 'any']);

/** Parses a canonical type text; `wrappers` names the wrapper types. Throws on text it does not know. */
export function parseType(text: string, wrappers: ReadonlyMap<string, string>): { type: WireType; ptr: boolean } {
  const ptr = text.startsWith('*');
  const t = ptr ? text.slice(1) : text;
  return { type: parseBare(t, wrappers), ptr };
}

function parseBare(t: string, wrappers: ReadonlyMap<string, string>): WireType {
  if (t.startsWith('*')) return parseBare(t.slice(1), wrappers); // a slice of pointers is a slice on the wire
  if (t === '[]byte') return { k: 'scalar', s: 'bytes' };
  if (t.startsWith('[]')) return { k: 'slice', of: parseBare(t.slice(2), wrappers) };
  if (t.startsWith('map[string]')) return { k: 'map', of: parseBare(t.slice('map[string]'.length), wrappers) };
  if (SCALARS.has(t)) return { k: 'scalar', s: t as Scalar };
  const special = SPECIALS[t];
  if (special) return { k: 'special', s: special };
  const w = wrappers.get(t);
  if (w !== undefined) return { k: 'wrapper', name: t, of: parseBare(w.slice(2), wrappers) };
  if (/^[\w./-]+\.\w+$/.test(t)) return { k: 'struct', name: t };
  throw new Error(`unknown wire type ${t}`);
}

export function compileStruct(key: string, rows: readonly WireRow[], wrappers: ReadonlyMap<string, string>): WireStruct {
  const fields = rows.map(([json, type, flags, num]): WireField => {
    const p = parseType(type, wrappers);
    return {
      json,
      type: p.type,
      ptr: p.ptr,
      omitempty: flags.includes('o'),
      inline: flags.includes('i'),
      noJson: flags.includes('-'),
      num: num ?? 0,
    };
  });
  const numbered = fields.filter((f) => f.num > 0);
  return { key, fields, byNum: new Map(numbered.map((f) => [f.num, f])), protoOrder: [...numbered].sort((a, b) => a.num - b.num) };
}
