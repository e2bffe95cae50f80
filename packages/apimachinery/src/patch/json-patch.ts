/**
 * RFC 6902 JSON patch: add, remove, replace, move, copy, test, with JSON pointer
 * escapes (~0, ~1) and `-` for appending. Returns a new document; the input is
 * never changed. Failures throw PatchError worded like evanphx/json-patch.
 */
import { jsonEqual } from '../util.js';

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
  return p.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function parentOf(doc: unknown, tokens: string[], op: string, path: string): { parent: Container; key: string } {
  let cur: unknown = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!/^\d+$/.test(t) || i >= cur.length) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
      cur = cur[i];
    } else if (cur && typeof cur === 'object' && t in (cur as object)) {
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
  if (!(key in parent)) throw new PatchError(`${op} operation does not apply: doc is missing path: "${path}"`);
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
  } else parent[key] = value;
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
    if (!(key in parent)) throw new PatchError(`${op} operation does not apply: doc is missing key: ${path}`);
    delete parent[key];
  }
  return doc;
}

export function applyJsonPatch(input: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new PatchError('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc: unknown = structuredClone(input);
  for (const raw of ops as JsonPatchOp[]) {
    if (!raw || typeof raw !== 'object' || typeof raw.op !== 'string') throw new PatchError('invalid operation: missing op');
    if (typeof raw.path !== 'string') throw new PatchError(`${raw.op} operation does not apply: missing path`);
    switch (raw.op) {
      case 'add':
        if (!('value' in raw)) throw new PatchError('add operation does not apply: missing value');
        doc = add(doc, raw.path, structuredClone(raw.value));
        break;
      case 'remove':
        doc = remove(doc, raw.path);
        break;
      case 'replace':
        if (!('value' in raw)) throw new PatchError('replace operation does not apply: missing value');
        getAt(doc, raw.path, 'replace');
        if (raw.path === '') doc = structuredClone(raw.value);
        else {
          doc = remove(doc, raw.path, 'replace');
          doc = add(doc, raw.path, structuredClone(raw.value), 'replace');
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
        doc = add(doc, raw.path, structuredClone(getAt(doc, raw.from, 'copy')), 'copy');
        break;
      }
      case 'test': {
        const v = getAt(doc, raw.path, 'test');
        if (!jsonEqual(v, raw.value)) throw new PatchError(`testing value ${raw.path} failed: test failed`);
        break;
      }
      default:
        throw new PatchError(`Unexpected kind: ${raw.op}`);
    }
  }
  return doc;
}
