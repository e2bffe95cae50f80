/**
 * Field sets (sigs.k8s.io/structured-merge-diff fieldpath): which fields of an
 * object a manager owns, as paths of elements in FieldsV1 spelling — `f:name`
 * for a field or map key, `k:{"name":"c"}` for an item of an associative list,
 * `v:"x"` for an item of a set, `i:3` for a position. A set serialises to
 * FieldsV1, the trie stored in `metadata.managedFields[].fieldsV1`, where `.`
 * marks a node that is itself a member and also has children.
 *
 * `collect` walks an object with its schema: structs recurse, granular maps and
 * list items are members and recurse, atomic lists and scalars are leaves.
 */
import { isPlainObject } from '@kubeling/apimachinery';

export type Path = readonly string[];
type Obj = Record<string, unknown>;

export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  [k: string]: unknown;
}

const SEP = '\u0000';
export const pathKey = (p: Path): string => p.join(SEP);

export class FieldSet {
  private readonly paths = new Map<string, Path>();

  static of(paths: Iterable<Path>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.add(p);
    return s;
  }

  add(p: Path): void {
    this.paths.set(pathKey(p), p);
  }

  has(p: Path): boolean {
    return this.paths.has(pathKey(p));
  }

  delete(p: Path): void {
    this.paths.delete(pathKey(p));
  }

  get size(): number {
    return this.paths.size;
  }

  [Symbol.iterator](): IterableIterator<Path> {
    return this.paths.values();
  }

  union(o: FieldSet): FieldSet {
    const s = FieldSet.of(this);
    for (const p of o) s.add(p);
    return s;
  }

  difference(o: FieldSet): FieldSet {
    const s = new FieldSet();
    for (const p of this) if (!o.has(p)) s.add(p);
    return s;
  }

  /** Whether some member of the set is `p` or lies under it. */
  hasPrefix(p: Path): boolean {
    const k = pathKey(p);
    for (const key of this.paths.keys()) if (key === k || key.startsWith(k + SEP)) return true;
    return false;
  }

  toFieldsV1(): Obj {
    interface Node {
      member: boolean;
      children: Map<string, Node>;
    }
    const root: Node = { member: false, children: new Map() };
    for (const p of this) {
      let n = root;
      for (const el of p) {
        let c = n.children.get(el);
        if (!c) n.children.set(el, (c = { member: false, children: new Map() }));
        n = c;
      }
      n.member = true;
    }
    const out = (n: Node): Obj => {
      const o: Obj = {};
      if (n.member && n.children.size) o['.'] = {};
      for (const k of [...n.children.keys()].sort()) o[k] = out(n.children.get(k)!);
      return o;
    };
    return out(root);
  }

  static fromFieldsV1(f: unknown): FieldSet {
    const s = new FieldSet();
    const walk = (node: unknown, path: string[]) => {
      if (!isPlainObject(node)) return;
      const keys = Object.keys(node);
      if (path.length && (keys.length === 0 || keys.includes('.'))) s.add([...path]);
      for (const k of keys) if (k !== '.') walk((node as Obj)[k], [...path, k]);
    };
    walk(f, []);
    return s;
  }
}

/** `.spec.containers[name="c"].image`, as upstream prints paths in conflicts. */
export function pathString(p: Path): string {
  return p
    .map((el) => {
      if (el.startsWith('f:')) return `.${el.slice(2)}`;
      if (el.startsWith('i:')) return `[${el.slice(2)}]`;
      if (el.startsWith('v:')) return `[=${el.slice(2)}]`;
      if (el.startsWith('k:')) {
        const keys = JSON.parse(el.slice(2)) as Obj;
        return `[${Object.entries(keys)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      return el;
    })
    .join('');
}

// ---- walking objects with their schema -------------------------------------------

export interface Collected {
  /** Every member: leaves, list items, granular maps. */
  set: FieldSet;
  /** Values at leaf paths (scalars, atomic lists, empty objects). */
  leaves: Map<string, unknown>;
}

function resolve(s: SchemaNode | undefined): SchemaNode | undefined {
  return s;
}

function childSchema(s: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (!s) return undefined;
  if (s.properties?.[key]) return s.properties[key];
  if (isPlainObject(s.additionalProperties)) return s.additionalProperties as SchemaNode;
  return undefined;
}

export interface ListShape {
  type: 'atomic' | 'map' | 'set';
  keys: string[];
}

/** How a list merges: its x-kubernetes-list-type, else its strategic-merge key, else atomic. */
export function listShape(s: SchemaNode | undefined): ListShape {
  const lt = s?.['x-kubernetes-list-type'] as string | undefined;
  const mapKeys = s?.['x-kubernetes-list-map-keys'] as string[] | undefined;
  const mergeKey = s?.['x-kubernetes-patch-merge-key'] as string | undefined;
  const strategy = ((s?.['x-kubernetes-patch-strategy'] as string | undefined) ?? '').split(',');
  if (lt === 'map' || (!lt && mergeKey && strategy.includes('merge'))) return { type: 'map', keys: mapKeys ?? (mergeKey ? [mergeKey] : []) };
  if (lt === 'set' || (!lt && !mergeKey && strategy.includes('merge'))) return { type: 'set', keys: [] };
  return { type: 'atomic', keys: [] };
}

/** Defaults of list-map key fields, as the schema declares them (ports' protocol is TCP). */
function keyDefault(itemSchema: SchemaNode | undefined, key: string): unknown {
  const d = itemSchema?.properties?.[key]?.default;
  if (d !== undefined) return d;
  return key === 'protocol' ? 'TCP' : undefined;
}

/** The `k:{...}` element naming a list item by its keys (keys sorted, missing ones defaulted, as upstream). */
export function itemElement(item: unknown, keys: string[], itemSchema?: SchemaNode): string | undefined {
  if (!isPlainObject(item) || !keys.length) return undefined;
  const k: Obj = {};
  for (const key of [...keys].sort()) {
    const v = (item as Obj)[key] ?? keyDefault(itemSchema, key);
    if (v === undefined) continue;
    k[key] = v;
  }
  if (!Object.keys(k).length) return undefined;
  return `k:${JSON.stringify(k)}`;
}

const isAtomicMap = (s: SchemaNode | undefined) => s?.['x-kubernetes-map-type'] === 'atomic';

export function collect(value: unknown, schema: SchemaNode | undefined, base: Path = []): Collected {
  const set = new FieldSet();
  const leaves = new Map<string, unknown>();
  const leaf = (p: Path, v: unknown) => {
    set.add(p);
    leaves.set(pathKey(p), v);
  };
  const walk = (v: unknown, s0: SchemaNode | undefined, p: Path) => {
    const s = resolve(s0);
    if (s && (s.anyOf || s.oneOf)) return leaf(p, v);
    if (Array.isArray(v)) {
      const shape = listShape(s);
      if (shape.type === 'atomic') return leaf(p, v);
      v.forEach((item, i) => {
        if (shape.type === 'set') return leaf([...p, `v:${JSON.stringify(item)}`], item);
        const el = itemElement(item, shape.keys, s?.items) ?? `i:${i}`;
        const ip = [...p, el];
        set.add(ip);
        if (isPlainObject(item)) for (const [k, c] of Object.entries(item as Obj)) walk(c, s?.items ? childSchema(s.items, k) : undefined, [...ip, `f:${k}`]);
      });
      return;
    }
    if (isPlainObject(v)) {
      const entries = Object.entries(v as Obj);
      if (!entries.length || isAtomicMap(s)) return leaf(p, v);
      // Granular maps (no declared fields) are members themselves; structs are not.
      const isMap = !s?.properties;
      if (isMap && p.length) set.add(p);
      for (const [k, c] of entries) walk(c, childSchema(s, k), [...p, `f:${k}`]);
      return;
    }
    leaf(p, v);
  };
  walk(value, schema, base);
  return { set, leaves };
}

// ---- editing objects by path ------------------------------------------------------

function findItem(list: unknown[], el: string): number {
  if (el.startsWith('i:')) return Number(el.slice(2));
  if (el.startsWith('v:')) {
    const want = el.slice(2);
    return list.findIndex((x) => JSON.stringify(x) === want);
  }
  if (el.startsWith('k:')) {
    const keys = JSON.parse(el.slice(2)) as Obj;
    return list.findIndex(
      (x) => isPlainObject(x) && Object.entries(keys).every(([k, v]) => JSON.stringify((x as Obj)[k] ?? keyDefault(undefined, k)) === JSON.stringify(v)),
    );
  }
  return -1;
}

/** Removes the field or list item at `p`; absent paths are ignored. A list left empty goes too. */
export function removePath(obj: Obj, p: Path): void {
  let cur: unknown = obj;
  let parent: Obj | undefined;
  let parentKey = '';
  for (let i = 0; i < p.length; i++) {
    const el = p[i]!;
    const last = i === p.length - 1;
    if (el.startsWith('f:')) {
      if (!isPlainObject(cur)) return;
      const k = el.slice(2);
      if (last) {
        delete (cur as Obj)[k];
        return;
      }
      parent = cur as Obj;
      parentKey = k;
      cur = (cur as Obj)[k];
    } else {
      if (!Array.isArray(cur)) return;
      const idx = findItem(cur, el);
      if (idx < 0) return;
      if (last) {
        cur.splice(idx, 1);
        if (!cur.length && parent) delete parent[parentKey];
        return;
      }
      parent = undefined;
      cur = cur[idx];
    }
  }
}
