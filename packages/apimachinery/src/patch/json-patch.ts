/**
 * RFC 6902 JSON patch: add, remove, replace, move, copy, test, with JSON pointer
 * escapes (~0, ~1) and `-` for appending. Returns a new document; the input is
 * never changed. Failures throw PatchError worded like evanphx/json-patch (the
 * HTTP layer answers them 422 Invalid); a patch of more than 10,000 operations is
 * a 413 StatusError, as kube-apiserver limits it. Values are copied and compared
 * without recursion, so deeply nested documents do not overflow the stack.
 */
import { requestEntityTooLarge } from '../errors.js';
import { cloneJson, hasOwn, jsonEqualDeep, jsonSize, setKey } from './values.js';

export class PatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatchError';
  }
}

export interface JsonPatchOp {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new PatchError(`invalid JSON pointer: ${JSON.stringify(p)}`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function parentOf(doc: unknown, tokens: string[], op: string, path: string): { parent: Container; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!/^\d+$/.test(t) || i >= cur.length) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
      cur = cur[i];
    } else if (cur && typeof cur === 'object' && hasOwn(cur, t)) {
      cur = (cur as Record<string, unknown>)[t];
    } else throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
  }
  if (!cur || typeof cur !== 'object') throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
  return { parent: cur as Container, key: tokens[tokens.length - 1]! };
}

function getAt(doc: unknown, path: string, op: string): unknown {
  const tokens = parsePointer(path);
  if (!tokens.length) return doc;
  const { parent, key } = parentOf(doc, tokens, op, path);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
    return parent[i];
  }
  if (!hasOwn(parent, key)) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
  return parent[key];
}

function add(doc: unknown, path: string, value: unknown, op = 'add'): unknown {
  const tokens = parsePointer(path);
  if (!tokens.length) return value;
  const { parent, key } = parentOf(doc, tokens, op, path);
  if (Array.isArray(parent)) {
    if (key === '-') parent.push(value);
    else {
      const i = Number(key);
      if (!/^\d+$/.test(key) || i > parent.length) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
      parent.splice(i, 0, value);
    }
  } else setKey(parent, key, value);
  return doc;
}

function remove(doc: unknown, path: string, op = 'remove'): unknown {
  const tokens = parsePointer(path);
  if (!tokens.length) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
  const { parent, key } = parentOf(doc, tokens, op, path);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!/^\d+$/.test(key) || i >= parent.length) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
    parent.splice(i, 1);
  } else {
    if (!hasOwn(parent, key)) throw new PatchError(`${op} operation does not apply: doc is missing key: ${path}`);
    delete parent[key];
  }
  return doc;
}

/** kube-apiserver's limit on the operations of one JSON patch (maxJSONPatchOperations). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** kube-apiserver's limit on the bytes `copy` operations may add (JSONPatchMaxCopyBytes, 3 MiB). */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

export interface JsonPatchOptions {
  /** Operations allowed (default 10,000; more is a 413). `Infinity` for no limit. */
  maxOperations?: number;
}

export function applyJsonPatch(input: unknown, ops: unknown, opts: JsonPatchOptions = {}): unknown {
  if (!Array.isArray(ops)) throw new PatchError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const max = opts.maxOperations ?? MAX_JSON_PATCH_OPERATIONS;
  if (ops.length > max) throw requestEntityTooLarge(`The allowed maximum operations in a JSON patch is ${max}, got ${ops.length}`);
  let doc: unknown = cloneJson(input);
  let copied = 0;
  for (const raw of ops as JsonPatchOp[]) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw) || typeof raw.op !== 'string') throw new PatchError('invalid operation: missing op');
    if (typeof raw.path !== 'string') throw new PatchError(`${raw.op} operation does not apply: missing path`);
    switch (raw.op) {
      case 'add':
        if (!hasOwn(raw, 'value')) throw new PatchError('add operation does not apply: missing value');
        doc = add(doc, raw.path, cloneJson(raw.value));
        break;
      case 'remove':
        doc = remove(doc, raw.path);
        break;
      case 'replace':
        if (!hasOwn(raw, 'value')) throw new PatchError('replace operation does not apply: missing value');
        getAt(doc, raw.path, 'replace');
        if (raw.path === '') doc = cloneJson(raw.value);
        else {
          doc = remove(doc, raw.path, 'replace');
          doc = add(doc, raw.path, cloneJson(raw.value), 'replace');
        }
        break;
      case 'move': {
        if (typeof raw.from !== 'string') throw new PatchError('move operation does not apply: missing from');
        const v = getAt(doc, raw.from, 'move');
        doc = remove(doc, raw.from, 'move');
        doc = add(doc, raw.path, v, 'move');
        break;
      }
      case 'copy': {
        if (typeof raw.from !== 'string') throw new PatchError('copy operation does not apply: missing from');
        const v = getAt(doc, raw.from, 'copy');
        // As evanphx/json-patch's AccumulatedCopySizeLimit: copies cannot blow the document up.
        copied += jsonSize(v);
        if (copied > MAX_JSON_PATCH_COPY_BYTES) {
          throw new PatchError(
            `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MAX_JSON_PATCH_COPY_BYTES}`,
          );
        }
        doc = add(doc, raw.path, cloneJson(v), 'copy');
        break;
      }
      case 'test': {
        const v = getAt(doc, raw.path, 'test');
        if (!jsonEqualDeep(v, raw.value)) throw new PatchError(`testing value ${raw.path} failed: test failed`);
        break;
      }
      default:
        throw new PatchError(`Unexpected kind: ${raw.op}`);
    }
  }
  return doc;
}
