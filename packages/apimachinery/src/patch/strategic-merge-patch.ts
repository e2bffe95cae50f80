/**
 * Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch), driven by
 * the schema's `x-kubernetes-patch-merge-key` / `x-kubernetes-patch-strategy`:
 * lists with a merge key merge element by element, primitive lists with strategy
 * merge merge as sets; directives `$patch` (replace, delete), `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured and
 * never left in the result. Fields without schema merge like a JSON merge patch.
 *
 * The algorithm follows upstream's `mergeMap` / `mergeSlice` step by step, so a
 * malformed patch fails with upstream's message. kube-apiserver answers some of
 * them 500 (plain errors); here every one is a 4xx StatusError: 400 BadRequest,
 * or 422 Invalid for the two that upstream's interpretStrategicMergePatchError
 * makes 422 (lists of lists, a patch that does not match its retainKeys).
 *
 * Merging recurses through generators run by `run`, so documents and patches
 * nested thousands of levels deep do not overflow the stack.
 */
import { badRequest, failure, type StatusError } from '../errors.js';
import { ValueIndex, cloneJson, goEqual, goTypeName, goValueString, hasOwn, isObject, own, run, setKey } from './values.js';

export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  patternProperties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  [k: string]: unknown;
}

type Obj = Record<string, unknown>;
type G<T> = Generator<unknown, T, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';

// ---- upstream's errors (mergepatch/errors.go and the fmt.Errorf texts of strategicpatch) ----

const errNoMergeKey = (m: Obj, k: string) => badRequest(`map: ${goValueString(m)} does not contain declared merge key: ${k}`);
const errBadPatchType = (t: unknown, m: Obj) => badRequest(`unknown patch type: ${goValueString(t, 's')} in map: ${goValueString(m)}`);
const errBadArgType = (expected: '[]interface {}' | 'map[string]interface {}', actual: unknown) =>
  badRequest(`expected a ${expected}, but received a ${goTypeName(actual)}`);
const errBadPatchFormatForPrimitiveList = () => badRequest('invalid patch format of primitive list');
const errBadPatchFormatForRetainKeys = () => badRequest('invalid patch format of retainKeys');
const errBadPatchFormatForSetElementOrderList = () => badRequest('invalid patch format of setElementOrder list');
/** ErrNoListOfLists: 422 through NewGenericServerResponse, which words every 422 the same. */
const errNoListOfLists = (): StatusError => failure('Invalid', 'the server rejected our request due to an error in our request', {});

// ---- schema ----

function childSchema(s: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (!s) return undefined;
  if (s.properties && hasOwn(s.properties, key)) return s.properties[key];
  if (s.patternProperties) return Object.values(s.patternProperties)[0];
  if (isObject(s.additionalProperties)) return s.additionalProperties as SchemaNode;
  return undefined;
}

/** The patch strategy without `retainKeys` (extractRetainKeysPatchStrategy). */
function strategyOf(s: SchemaNode | undefined): string {
  const parts = (s?.['x-kubernetes-patch-strategy'] ?? '').split(',').filter((x) => x && x !== 'retainKeys');
  return parts[0] ?? '';
}

const mergeKeyOf = (s: SchemaNode | undefined) => s?.['x-kubernetes-patch-merge-key'] ?? '';

/** PatchMetaFromStruct.Name() of a list's element type: its Go kind. */
function elementKindName(list: SchemaNode | undefined): string {
  const t = list?.items?.type;
  if (t === 'object') return 'struct';
  if (t === 'string' || t === 'bool') return t;
  if (t === 'boolean') return 'bool';
  if (t === 'integer') return 'int64';
  if (t === 'number') return 'float64';
  if (t === 'array') return 'slice';
  return 'interface';
}

// ---- values ----

const isDirectiveKey = (k: string) => k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(SET_ORDER) || k.startsWith(DELETE_FROM_PRIMITIVE_LIST);

/**
 * A patch value taken whole ($patch: replace, lists that do not merge, new list
 * elements): a copy without directive keys and null members (which decoding
 * would drop).
 */
const takeWhole = <T>(v: T): T => cloneJson(v, (k, x) => x === null || isDirectiveKey(k));

const hasPatchDirective = (x: unknown) => isObject(x) && hasOwn(x, DIRECTIVE);

/**
 * A patch value for a field the original lacks (discardNullValuesFromPatch,
 * removeDirectives): maps holding `$patch` go entirely, null members go, and
 * other directive keys go too. Undefined when the value itself goes.
 */
const removeDirectives = <T>(v: T): T | undefined =>
  hasPatchDirective(v) ? undefined : cloneJson(v, (k, x) => x === null || hasPatchDirective(x) || isDirectiveKey(k), hasPatchDirective);

/** Go's kind of a decoded JSON value, as reflect.TypeOf tells them apart. */
function goKind(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'object') return 'map';
  return goTypeName(v);
}

function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/');
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST ? errBadPatchFormatForPrimitiveList() : errBadPatchFormatForSetElementOrderList();
  }
  return s.slice(slash + 1);
}

/** sliceElementType: the one kind of every element of the lists; lists of lists are refused. */
function sliceElementType(...lists: unknown[][]): string {
  let prev: string | undefined;
  for (const l of lists) {
    for (const v of l) {
      const t = goKind(v);
      if (prev === undefined) {
        prev = t;
        if (t === 'slice') throw errNoListOfLists();
      } else if (prev !== t) {
        throw badRequest(`list element types are not identical: ${goValueString(lists)}`);
      }
    }
  }
  if (prev === undefined) throw badRequest('no elements in any of the given slices');
  return prev;
}

/**
 * findMapInSliceBasedOnKeyValue over one list, indexed: the first map whose
 * merge key holds a value. As upstream's scan, it fails on a non-map element
 * met before the match.
 */
class MapFinder {
  private readonly index = new ValueIndex();
  private firstNonMap = -1;
  private size = 0;

  constructor(
    list: readonly unknown[],
    private readonly key: string,
  ) {
    for (const v of list) this.add(v);
  }

  add(v: unknown): void {
    if (!isObject(v)) {
      if (this.firstNonMap < 0) this.firstNonMap = this.size;
    } else if (hasOwn(v, this.key)) this.index.add(v[this.key], this.size);
    this.size++;
  }

  find(value: unknown): number {
    const at = this.index.get(value);
    if (this.firstNonMap >= 0 && (at < 0 || at > this.firstNonMap)) throw badRequest(`value for key ${this.firstNonMap} is not a map.`);
    return at;
  }
}

function extractToDeleteItems(list: unknown[]): { nonDelete: unknown[]; toDelete: unknown[] } {
  const nonDelete: unknown[] = [];
  const toDelete: unknown[] = [];
  for (const v of list) {
    if (!isObject(v)) throw errBadArgType('map[string]interface {}', v);
    if (hasOwn(v, DIRECTIVE) && v[DIRECTIVE] === 'delete') toDelete.push(v);
    else nonDelete.push(v);
  }
  return { nonDelete, toDelete };
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return goEqual(left, right);
  if (!isObject(left)) throw errBadArgType('map[string]interface {}', left);
  if (!isObject(right)) throw errBadArgType('map[string]interface {}', right);
  if (!hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return goEqual(left[mergeKey], right[mergeKey]);
}

/**
 * validatePatchWithSetOrderList: the patch list's items (deletions aside) appear
 * in the $setElementOrder list, in the same relative order.
 */
function validatePatchWithSetOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (!order.length || !patchList.length) return;
  const nonDelete = mergeKey ? extractToDeleteItems(patchList).nonDelete : patchList;
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < order.length) {
    const item = nonDelete[p];
    if (isObject(item) && hasOwn(item, DIRECTIVE)) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(item, order[s], mergeKey)) p++;
    s++;
  }
  if (p < nonDelete.length && s >= order.length) {
    throw badRequest(`The order in patch list:\n${goValueString(patchList)}\n doesn't match ${SET_ORDER} list:\n${goValueString(order)}\n`);
  }
}

function partitionPrimitives(list: unknown[], by: unknown[]): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  const ix = ValueIndex.of(by);
  for (const v of list) (ix.has(v) ? inPatch : serverOnly).push(v);
  return [inPatch, serverOnly];
}

function partitionMaps(list: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  const finder = new MapFinder(by, mergeKey);
  for (const v of list) {
    if (!isObject(v)) throw errBadArgType('map[string]interface {}', v);
    if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    (finder.find(v[mergeKey]) >= 0 ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

/** Positions of items in a list (upstream's `index`): by merge key for maps, by value otherwise. */
function positions(list: unknown[], mergeKey: string, kind: string): (item: unknown) => number {
  const val = (x: unknown) => (kind === 'map' ? (isObject(x) && hasOwn(x, mergeKey) ? x[mergeKey] : null) : x);
  const ix = ValueIndex.of(list, val);
  return (item) => ix.get(val(item));
}

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const l of lists) {
    for (const item of l) {
      if (!isObject(item)) throw errBadArgType('map[string]interface {}', item);
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

/** normalizeSliceOrder: sorts `toSort` by `order` (deletions last). */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: string): unknown[] {
  let toDelete: unknown[] = [];
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, toSort, order);
    ({ nonDelete: toSort, toDelete } = extractToDeleteItems(toSort));
  }
  const at = positions(order, mergeKey, kind);
  const keyed = toSort.map((v, i) => ({ v, i, at: at(v) }));
  keyed.sort((a, b) => {
    if (a.at >= 0 && b.at >= 0 && a.at !== b.at) return a.at - b.at;
    if (a.at >= 0 !== b.at >= 0) return a.at >= 0 ? -1 : 1;
    return a.i - b.i;
  });
  return [...keyed.map((x) => x.v), ...toDelete];
}

/** mergeSortedSlice: interleaves server-only items into the patch items by their order on the server. */
function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string, kind: string): unknown[] {
  const out: unknown[] = [];
  const at = positions(serverOrder, mergeKey, kind);
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = at(left[i]);
      const ri = at(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: string,
): unknown[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind);
}

// ---- merging ----

/** mergeMap: the patch map merged into `original`, which it changes. */
function* mergeMap(original: Obj, patch: Obj, schema: SchemaNode | undefined): G<Obj> {
  if (hasOwn(patch, DIRECTIVE)) return handleDirectiveInMergeMap(patch[DIRECTIVE], patch);
  applyRetainKeysDirective(original, patch);
  yield mergePatchIntoOriginal(original, patch, schema);

  for (const key of Object.keys(patch)) {
    const patchV = patch[key];
    let k = key;
    let isDeleteList = false;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      k = extractKey(key, DELETE_FROM_PRIMITIVE_LIST);
      if (!Array.isArray(patchV)) throw errBadPatchFormatForPrimitiveList();
      isDeleteList = true;
    }
    if (patchV === null) {
      delete original[k];
      continue;
    }
    const cur = own(original, k);
    const kind = goKind(patchV);
    if (cur === undefined || cur === null || goKind(cur) !== kind) {
      // Not in the original (or of another type): the patch value, without directives.
      if (!isDeleteList) {
        const v = removeDirectives(patchV);
        if (v === undefined) delete original[k];
        else setKey(original, k, v);
      }
      continue;
    }
    const cs = childSchema(schema, k);
    if (kind === 'map') {
      setKey(original, k, strategyOf(cs) === 'replace' ? takeWhole(patchV) : yield mergeMap(cur as Obj, patchV as Obj, cs));
    } else if (kind === 'slice') {
      setKey(original, k, yield mergeSliceHandler(cur as unknown[], patchV as unknown[], cs, isDeleteList));
    } else {
      setKey(original, k, patchV);
    }
  }
  return original;
}

function handleDirectiveInMergeMap(directive: unknown, patch: Obj): Obj {
  if (directive === 'replace') return takeWhole(patch);
  if (directive === 'delete') return {};
  throw errBadPatchType(directive, patch);
}

/** applyRetainKeysDirective: keys of the original not listed are cleared; the patch may only set listed keys. */
function applyRetainKeysDirective(original: Obj, patch: Obj): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw errBadPatchFormatForRetainKeys();
  const keep = new Set(list as string[]);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ORDER)) continue;
    if (!keep.has(k)) throw errBadPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/** mergePatchIntoOriginal: each `$setElementOrder/<list>` with its list, merged and put in that order. */
function* mergePatchIntoOriginal(original: Obj, patch: Obj, schema: SchemaNode | undefined): G<void> {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw errBadArgType('[]interface {}', order);
    const field = extractKey(key, SET_ORDER);

    const originalValue = own(original, field);
    const foundOriginal = originalValue !== undefined && originalValue !== null;
    const foundPatch = hasOwn(patch, field);
    const patchValue = own(patch, field);
    if (foundOriginal && !Array.isArray(originalValue)) throw errBadArgType('[]interface {}', originalValue);
    if (foundPatch && !Array.isArray(patchValue)) throw errBadArgType('[]interface {}', patchValue);
    const originalList = foundOriginal ? (originalValue as unknown[]) : [];
    const patchList = foundPatch ? (patchValue as unknown[]) : [];

    const cs = childSchema(schema, field);
    const mergeKey = mergeKeyOf(cs);
    validatePatchWithSetOrderList(patchList, order, mergeKey);

    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalList;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchList)!;
    else if (foundOriginal && foundPatch) merged = (yield mergeSliceHandler(originalList, patchList, cs, false)) as unknown[];
    else continue;

    const [patchItems, serverOnly] = mergeKey ? partitionMaps(merged, order, mergeKey) : partitionPrimitives(merged, order);
    const kind = sliceElementType(originalList, patchList);
    setKey(original, field, normalizeElementOrder(patchItems, serverOnly, order, originalList, mergeKey, kind));
    delete patch[field];
  }
}

/** mergeSliceHandler: lists with strategy merge merge (and deletion lists apply to any list); others are replaced. */
function* mergeSliceHandler(original: unknown[], patch: unknown[], schema: SchemaNode | undefined, isDeleteList: boolean): G<unknown[]> {
  if (strategyOf(schema) === 'merge' || isDeleteList) return (yield mergeSlice(original, patch, schema, isDeleteList)) as unknown[];
  return takeWhole(patch);
}

function* mergeSlice(original: unknown[], patch: unknown[], schema: SchemaNode | undefined, isDeleteList: boolean): G<unknown[]> {
  if (!original.length && !patch.length) return original;
  const mergeKey = mergeKeyOf(schema);
  const kind = sliceElementType(original, patch);
  let merged: unknown[];
  if (kind !== 'map') {
    if (isDeleteList) return deleteFromSlice(original, patch);
    merged = [];
    const seen = new ValueIndex();
    for (const v of [...original, ...patch]) {
      if (seen.has(v)) continue;
      seen.add(v, merged.length);
      merged.push(v);
    }
  } else {
    if (!mergeKey) throw badRequest(`cannot merge lists without merge key for ${elementKindName(schema)}`);
    [original, patch] = mergeSliceWithSpecialElements(original, patch, mergeKey);
    merged = (yield mergeSliceWithoutSpecialElements(original, patch, mergeKey, schema?.items)) as unknown[];
  }
  const [patchItems, serverOnly] = mergeKey ? partitionMaps(merged, patch, mergeKey) : partitionPrimitives(merged, patch);
  return normalizeElementOrder(patchItems, serverOnly, patch, original, mergeKey, kind);
}

/** mergeSliceWithSpecialElements: `$patch: delete` / `replace` elements applied, the rest returned to merge. */
function deleteFromSlice(current: unknown[], toDelete: unknown[]): unknown[] {
  const del = ValueIndex.of(toDelete);
  return current.filter((x) => !del.has(x));
}

function mergeSliceWithSpecialElements(original: unknown[], patch: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const rest: unknown[] = [];
  const deleted = new ValueIndex();
  let replace = false;
  for (const v of patch) {
    const m = v as Obj;
    if (!hasOwn(m, DIRECTIVE)) {
      rest.push(v);
      continue;
    }
    const t = m[DIRECTIVE];
    if (t === 'delete') {
      if (!hasOwn(m, mergeKey)) throw errNoMergeKey(m, mergeKey);
      deleted.add(m[mergeKey], 0);
    } else if (t === 'replace') {
      replace = true;
    } else if (t === 'merge') {
      throw badRequest('merging lists cannot yet be specified in the patch');
    } else {
      throw errBadPatchType(t, m);
    }
  }
  if (replace) return [takeWhole(rest), []];
  // deleteMatchingEntries: every element with a deleted merge key goes (the elements are maps).
  return [original.filter((x) => !(isObject(x) && hasOwn(x, mergeKey) && deleted.has(x[mergeKey]))), rest];
}

function* mergeSliceWithoutSpecialElements(original: unknown[], patch: unknown[], mergeKey: string, itemSchema: SchemaNode | undefined): G<unknown[]> {
  const out = [...original];
  const finder = new MapFinder(out, mergeKey);
  for (const v of patch) {
    const m = v as Obj;
    if (!hasOwn(m, mergeKey)) throw errNoMergeKey(m, mergeKey);
    const i = finder.find(m[mergeKey]);
    if (i >= 0) out[i] = yield mergeMap(out[i] as Obj, m, itemSchema);
    else {
      const added = takeWhole(m);
      out.push(added);
      finder.add(added);
    }
  }
  return out;
}

/**
 * Applies a strategic merge patch to a copy of `doc`. Malformed patches throw a
 * StatusError (400 BadRequest, or 422 Invalid) worded as kube-apiserver words it.
 */
export function applyStrategicMergePatch(doc: unknown, patch: unknown, schema: SchemaNode | undefined): unknown {
  if (!isObject(patch)) {
    const what = Array.isArray(patch) ? 'array' : patch === null ? 'null' : typeof patch === 'boolean' ? 'bool' : typeof patch;
    throw badRequest(`json: cannot unmarshal ${what} into Go value of type map[string]interface {}`);
  }
  const original: Obj = isObject(doc) ? cloneJson(doc) : {};
  return run(mergeMap(original, cloneJson(patch), schema));
}
