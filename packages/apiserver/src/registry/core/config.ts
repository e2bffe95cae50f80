/**
 * ConfigMaps and Secrets: key syntax, the 1 MiB size limit, `immutable`, and the
 * Secret's `stringData` folded into base64 `data` (kubernetes pkg/registry/core/
 * configmap and secret).
 */
import type { KubeObject } from '@kubeling/api';
import { field, isConfigMapKey, jsonEqual, type FieldError } from '@kubeling/apimachinery';
import type { Strategy } from '../strategy.js';

const MAX_SIZE = 1024 * 1024;

function validateKeys(maps: Record<string, unknown>[], path: string[], sizeOf: (v: unknown) => number): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  let total = 0;
  maps.forEach((m, idx) => {
    for (const [k, v] of Object.entries(m)) {
      for (const msg of isConfigMapKey(k)) errs.push(field.invalid(`${path[idx]}[${k}]`, k, msg));
      if (seen.has(k)) errs.push(field.invalid(`${path[idx]}[${k}]`, k, 'duplicate of key present in ' + path[0]));
      seen.add(k);
      total += sizeOf(v);
    }
  });
  if (total > MAX_SIZE) errs.push(field.tooLong(path[0]!, '', MAX_SIZE));
  return errs;
}

function immutableErrors(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  const errs: FieldError[] = [];
  if (old.immutable === true) {
    if (obj.immutable !== true) errs.push(field.forbidden('immutable', 'field is immutable when `immutable` is set'));
    for (const f of fields) if (!jsonEqual(obj[f] ?? {}, old[f] ?? {})) errs.push(field.forbidden(f, 'field is immutable when `immutable` is set'));
  }
  return errs;
}

export const configMapStrategy: Strategy = {
  validate(obj) {
    const data = (obj.data ?? {}) as Record<string, string>;
    const binary = (obj.binaryData ?? {}) as Record<string, string>;
    return validateKeys([data, binary], ['data', 'binaryData'], (v) => String(v).length);
  },
  validateUpdate: (obj, old) => immutableErrors(obj, old, ['data', 'binaryData']),
};

function foldStringData(obj: KubeObject): void {
  const sd = obj.stringData as Record<string, string> | undefined;
  if (sd && typeof sd === 'object') {
    const data = { ...((obj.data ?? {}) as Record<string, string>) };
    for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
}

export const secretStrategy: Strategy = {
  defaults(obj) {
    obj.type ??= 'Opaque';
    foldStringData(obj);
  },
  validate(obj) {
    const data = (obj.data ?? {}) as Record<string, string>;
    const errs = validateKeys([data], ['data'], (v) => Math.floor((String(v).length * 3) / 4));
    for (const [k, v] of Object.entries(data)) {
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v))
        errs.push(field.invalid(`data[${k}]`, '<value omitted>', 'a valid base64 string is required'));
    }
    if (obj.type === 'kubernetes.io/service-account-token') {
      const ann = obj.metadata.annotations ?? {};
      if (!ann['kubernetes.io/service-account.name']) errs.push(field.required('metadata.annotations[kubernetes.io/service-account.name]', ''));
    }
    return errs;
  },
  validateUpdate(obj, old) {
    const errs = immutableErrors(obj, old, ['data']);
    if (obj.type !== old.type) errs.push(field.invalid('type', obj.type, 'field is immutable'));
    return errs;
  },
  fields: (obj) => ({ type: String(obj.type ?? '') }),
};
