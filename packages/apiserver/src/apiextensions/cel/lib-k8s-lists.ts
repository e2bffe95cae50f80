/**
 * Kubernetes' list library (k8s.io/apiserver/pkg/cel/library/lists.go:
 * isSorted, sum, min, max, indexOf, lastIndexOf), its regex library
 * (library/regex.go: find, findAll) and cel-go's sets extension
 * (ext/sets.go: sets.contains, sets.equivalent, sets.intersects).
 */
import { compareValues } from './lib-std.js';
import { regexFind, regexFindAll } from './regex.js';
import { type Overload, global, member } from './registry.js';
import { type CelType, listOf, param, T } from './types.js';
import { ArrayList, CelError, celEquals, checkInt, checkUint, DurationV, type ListV, UintV, type Val } from './values.js';

const A = param('A');

const COMPARABLE: [string, CelType][] = [
  ['int', T.int],
  ['uint', T.uint],
  ['double', T.double],
  ['bool', T.bool],
  ['duration', T.duration],
  ['timestamp', T.timestamp],
  ['string', T.string],
  ['bytes', T.bytes],
];

const items = (v: Val) => (v as ListV).items();

function add(a: Val, b: Val): Val {
  if (typeof a === 'bigint' && typeof b === 'bigint') return checkInt(a + b);
  if (a instanceof UintV && b instanceof UintV) return checkUint(a.v + b.v);
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  if (a instanceof DurationV && b instanceof DurationV) return new DurationV(checkInt(a.nanos + b.nanos));
  throw new CelError('no such overload');
}

const ZERO: Record<string, Val> = { int: 0n, uint: new UintV(0n), double: 0, duration: new DurationV(0n) };

function extreme(name: string, list: Val[], prefer: number): Val {
  if (!list.length) throw new CelError(`${name} called on empty list`);
  let r = list[0] as Val;
  for (const x of list.slice(1)) if (compareValues(r, x) === prefer) r = x;
  return r;
}

function isSorted(list: Val[]): boolean {
  for (let i = 1; i < list.length; i++) if (compareValues(list[i - 1]!, list[i]!) === 1) return false;
  return true;
}

const contains = (a: Val[], b: Val[]) => b.every((x) => a.some((y) => celEquals(y, x)));

export const lists: Overload[] = [
  ...COMPARABLE.map(([n, t]) => member('isSorted', `list_${n}_is_sorted_bool`, [listOf(t)], T.bool, (a) => isSorted(items(a[0]!)))),
  ...(['int', 'uint', 'double', 'duration'] as const).map((n) => {
    const t = COMPARABLE.find(([x]) => x === n)![1];
    return member('sum', `list_${n}_sum_${n}`, [listOf(t)], t, (a) => items(a[0]!).reduce(add, ZERO[n]!));
  }),
  ...COMPARABLE.map(([n, t]) => member('max', `list_${n}_max_${n}`, [listOf(t)], t, (a) => extreme('max', items(a[0]!), -1))),
  ...COMPARABLE.map(([n, t]) => member('min', `list_${n}_min_${n}`, [listOf(t)], t, (a) => extreme('min', items(a[0]!), 1))),
  member('indexOf', 'list_a_index_of_int', [listOf(A), A], T.int, (a) => BigInt(items(a[0]!).findIndex((x) => celEquals(x, a[1]!))), ['A']),
  member('lastIndexOf', 'list_a_last_index_of_int', [listOf(A), A], T.int, (a) => BigInt(items(a[0]!).findLastIndex((x) => celEquals(x, a[1]!))), ['A']),
];

export const regex: Overload[] = [
  member('find', 'string_find_string', [T.string, T.string], T.string, (a) => regexFind(a[1] as string, a[0] as string)),
  member('findAll', 'string_find_all_string', [T.string, T.string], listOf(T.string), (a) => new ArrayList(regexFindAll(a[1] as string, a[0] as string, -1))),
  member(
    'findAll',
    'string_find_all_string_int',
    [T.string, T.string, T.int],
    listOf(T.string),
    (a) => new ArrayList(regexFindAll(a[1] as string, a[0] as string, Number(a[2] as bigint))),
  ),
];

export const sets: Overload[] = [
  global('sets.contains', 'list_sets_contains_list', [listOf(A), listOf(A)], T.bool, (a) => contains(items(a[0]!), items(a[1]!)), ['A']),
  global(
    'sets.equivalent',
    'list_sets_equivalent_list',
    [listOf(A), listOf(A)],
    T.bool,
    (a) => contains(items(a[0]!), items(a[1]!)) && contains(items(a[1]!), items(a[0]!)),
    ['A'],
  ),
  global(
    'sets.intersects',
    'list_sets_intersects_list',
    [listOf(A), listOf(A)],
    T.bool,
    (a) => items(a[0]!).some((x) => items(a[1]!).some((y) => celEquals(x, y))),
    ['A'],
  ),
];
