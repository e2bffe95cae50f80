/**
 * Decoding checks driven by the kind schemas: values of the wrong JSON type (what
 * Go's json decoder refuses) and fields the schema does not know (what
 * `fieldValidation=Strict` refuses and `Warn` reports). Pure: never changes the
 * object.
 */
import type { TSchema } from '@sinclair/typebox';

export interface TypeIssue {
  /** `spec.replicas`, `spec.containers[0].ports[1].containerPort` */
  path: string;
  /** The Go type name upstream would print (`int32`, `string`, `bool`, `[]v1.Container`, ...). */
  goType: string;
  /** JSON type found: `string`, `number`, `bool`, `object`, `array`. */
  got: string;
  /** Upstream struct name of the enclosing object (`DeploymentSpec`). */
  parent: string;
}

export interface DecodeIssues {
  unknown: string[];
  typeErrors: TypeIssue[];
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
};

const jsonType = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;

const shortName = (id: string | undefined) => (id ? id.slice(id.lastIndexOf('.') + 1) : '');

function goType(n: Node): string {
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
      return 'string';
    case 'array':
      return `[]${n.items ? goType(n.items) : 'interface {}'}`;
    case 'object':
      if (n.$id) return `v1.${shortName(n.$id)}`;
      if (n.patternProperties) {
        const v = Object.values(n.patternProperties)[0];
        return `map[string]${v ? goType(v) : 'interface {}'}`;
      }
      return 'map[string]interface {}';
    default:
      return 'interface {}';
  }
}

const childPath = (base: string, key: string) => (base ? `${base}.${key}` : key);

/** Walks `value` against `schema` and collects unknown fields and type mismatches. */
export function checkAgainstSchema(schema: TSchema, value: unknown): DecodeIssues {
  const out: DecodeIssues = { unknown: [], typeErrors: [] };
  walk(schema as Node, value, '', '', out);
  return out;
}

function walk(n: Node, v: unknown, path: string, parent: string, out: DecodeIssues): void {
  if (v === null || v === undefined) return; // Go decodes null as the zero value
  if (n['x-kubernetes-preserve-unknown-fields']) return;
  const bad = (): void => {
    out.typeErrors.push({ path, goType: goType(n), got: jsonType(v), parent });
  };
  if (n.anyOf) {
    if (n['x-kubernetes-int-or-string']) {
      if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)))) bad();
    } else if (n['x-kubeling-quantity']) {
      if (!(typeof v === 'string' || typeof v === 'number')) bad();
    } else if (!n.anyOf.some((alt) => probe(alt, v))) bad();
    return;
  }
  switch (n.type) {
    case 'string':
      if (typeof v !== 'string') bad();
      return;
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) bad();
      return;
    case 'number':
      if (typeof v !== 'number') bad();
      return;
    case 'boolean':
      if (typeof v !== 'boolean') bad();
      return;
    case 'array':
      if (!Array.isArray(v)) return bad();
      if (n.items) v.forEach((item, i) => walk(n.items!, item, `${path}[${i}]`, parent, out));
      return;
    case 'object': {
      if (typeof v !== 'object' || Array.isArray(v)) return bad();
      const o = v as Record<string, unknown>;
      if (n.properties) {
        const me = shortName(n.$id) || parent;
        for (const [k, child] of Object.entries(o)) {
          const p = n.properties[k];
          if (p) walk(p, child, childPath(path, k), me, out);
          else if (n.additionalProperties && typeof n.additionalProperties === 'object') walk(n.additionalProperties, child, childPath(path, k), me, out);
          else if (n.additionalProperties !== true) out.unknown.push(childPath(path, k));
        }
        return;
      }
      const valueSchema = n.patternProperties ? Object.values(n.patternProperties)[0] : typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined;
      if (valueSchema) for (const [k, child] of Object.entries(o)) walk(valueSchema, child, childPath(path, k), parent, out);
      return;
    }
    default:
      return;
  }
}

function probe(n: Node, v: unknown): boolean {
  const out: DecodeIssues = { unknown: [], typeErrors: [] };
  walk(n, v, '', '', out);
  return out.typeErrors.length === 0;
}

/** Go's json error text for the first type mismatch, as upstream's decoder reports it. */
export function typeErrorMessage(t: TypeIssue): string {
  const got = t.got === 'bool' ? 'bool' : t.got;
  if (!t.path) return `json: cannot unmarshal ${got} into Go value of type ${t.goType}`;
  return `json: cannot unmarshal ${got} into Go struct field ${t.parent}.${t.path} of type ${t.goType}`;
}
