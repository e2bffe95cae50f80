/**
 * --encryption-provider-config: the EncryptionConfiguration (apiserver.config.k8s.io/v1)
 * read strictly (an unknown field is an error, as upstream's strict decoder),
 * defaulted (kms: apiVersion v1, timeout 3s) and validated with upstream's messages
 * (k8s.io/apiserver pkg/apis/apiserver/validation/validation_encryption.go,
 * pkg/server/options/encryptionconfig/config.go). Every problem is reported at
 * start: a server never runs with a configuration it only half understood.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface EncryptionKey {
  name: string;
  /** Base64 of the key bytes. */
  secret: string;
}

export interface KMSConfiguration {
  /** v2 (v1 is refused, as upstream without the KMSv1 feature gate). Default v1. */
  apiVersion?: string;
  name: string;
  /** Only for v1. */
  cachesize?: number;
  /** `unix:///path/to/plugin.sock`. */
  endpoint: string;
  /** A Go duration (`3s`, the default): the deadline of each call to the plugin. */
  timeout?: string;
}

export interface ProviderConfiguration {
  aesgcm?: { keys: EncryptionKey[] };
  aescbc?: { keys: EncryptionKey[] };
  secretbox?: { keys: EncryptionKey[] };
  identity?: Record<string, never>;
  kms?: KMSConfiguration;
}

export interface ResourceConfiguration {
  /** `secrets`, `deployments.apps`, `*.apps`, `*.` (the core group), `*.*`. */
  resources: string[];
  /** In order: the first encrypts new writes; every one is tried on reads. */
  providers: ProviderConfiguration[];
}

export interface EncryptionConfiguration {
  apiVersion?: string;
  kind?: string;
  resources: ResourceConfiguration[];
}

export const ENCRYPTION_API_VERSION = 'apiserver.config.k8s.io/v1';
export const DEFAULT_KMS_TIMEOUT = '3s';

/** A group and resource, as schema.ParseGroupResource reads `resource.group`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function parseGroupResource(s: string): GroupResource {
  const i = s.indexOf('.');
  return i < 0 ? { group: '', resource: s } : { group: s.slice(i + 1), resource: s.slice(0, i) };
}

/** How upstream prints a rule in its masking error: `*.` for the core group's wildcard. */
export const grYAMLString = (gr: GroupResource): string =>
  gr.group === '' && gr.resource === '*' ? '*.' : gr.group ? `${gr.resource}.${gr.group}` : gr.resource;

// ---- strict decoding ---------------------------------------------------------------

type Shape = 'string' | 'int' | 'duration' | { list: Shape } | { [field: string]: Shape };

const KEY: Shape = { name: 'string', secret: 'string' };
const KEYS: Shape = { keys: { list: KEY } };
const SHAPE: Shape = {
  apiVersion: 'string',
  kind: 'string',
  resources: {
    list: {
      resources: { list: 'string' },
      providers: {
        list: {
          aesgcm: KEYS,
          aescbc: KEYS,
          secretbox: KEYS,
          identity: {},
          kms: { apiVersion: 'string', name: 'string', cachesize: 'int', endpoint: 'string', timeout: 'duration' },
        },
      },
    },
  },
};

const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const DURATION_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration string in milliseconds (time.ParseDuration), negative ones included. */
export function goDurationMs(v: string): number {
  if (v === '0' || v === '+0' || v === '-0') return 0;
  if (!GO_DURATION.test(v)) throw new Error(`time: invalid duration ${JSON.stringify(v)}`);
  let ms = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) ms += Number(m[1]) * DURATION_MS[m[2]!]!;
  return v.startsWith('-') ? -ms : ms;
}

/** time.Duration's String(): `3s`, `1m30s`, `0s`, `-1s`, `500ms`. */
export function goDurationString(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${Number(rest.toFixed(6))}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${Number((rest / 1000).toFixed(9))}s`;
  return sign + (h ? `${h}h${m}m${s}` : m ? `${m}m${s}` : s);
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v);

/** Checks `v` against the shape; collects unknown fields and type mismatches with their JSON paths. */
function check(v: unknown, shape: Shape, path: string, unknown: string[], wrong: string[]): void {
  if (v === null || v === undefined) return;
  if (shape === 'string' || shape === 'duration') {
    if (typeof v !== 'string') wrong.push(`json: cannot unmarshal ${jsonType(v)} into Go value of type string (at ${path})`);
    else if (shape === 'duration') {
      try {
        goDurationMs(v);
      } catch (e) {
        wrong.push((e as Error).message);
      }
    }
    return;
  }
  if (shape === 'int') {
    if (typeof v !== 'number' || !Number.isInteger(v)) wrong.push(`json: cannot unmarshal ${jsonType(v)} into Go value of type int32 (at ${path})`);
    return;
  }
  if ('list' in shape && typeof shape.list !== 'undefined' && Object.keys(shape).length === 1) {
    if (!Array.isArray(v)) {
      wrong.push(`json: cannot unmarshal ${jsonType(v)} into Go value of type array (at ${path})`);
      return;
    }
    v.forEach((item, i) => check(item, shape.list as Shape, `${path}[${i}]`, unknown, wrong));
    return;
  }
  if (typeof v !== 'object' || Array.isArray(v)) {
    wrong.push(`json: cannot unmarshal ${jsonType(v)} into Go value of type object (at ${path})`);
    return;
  }
  const fields = shape as Record<string, Shape>;
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const p = path ? `${path}.${k}` : k;
    if (!(k in fields)) unknown.push(p);
    else check(child, fields[k]!, p, unknown, wrong);
  }
}

/** Drops nulls (a Go nil pointer or empty list), so `identity:` with no value counts as no provider, as upstream. */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = dropNulls(x);
    return out;
  }
  return v;
}

/**
 * The document as an EncryptionConfiguration: its apiVersion and kind, known
 * fields only, the right types, KMS defaults filled in. Throws with the decoder's words.
 */
export function decodeEncryptionConfiguration(doc: unknown): EncryptionConfiguration {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error("Object 'Kind' is missing in the encryption provider configuration");
  const d = doc as Record<string, unknown>;
  if (typeof d.kind !== 'string' || !d.kind) throw new Error("Object 'Kind' is missing in the encryption provider configuration");
  if (d.apiVersion !== ENCRYPTION_API_VERSION || d.kind !== 'EncryptionConfiguration')
    throw new Error(
      `no kind "${d.kind}" is registered for version "${String(d.apiVersion ?? '')}" in scheme (expected apiVersion ${ENCRYPTION_API_VERSION}, kind EncryptionConfiguration)`,
    );
  const unknown: string[] = [];
  const wrong: string[] = [];
  check(d, SHAPE, '', unknown, wrong);
  if (wrong.length) throw new Error(wrong[0]);
  if (unknown.length) throw new Error(`strict decoding error: ${unknown.map((p) => `unknown field "${p}"`).join(', ')}`);
  const config = structuredClone(dropNulls(d)) as EncryptionConfiguration;
  config.resources ??= [];
  for (const rc of config.resources) {
    rc.resources ??= [];
    rc.providers ??= [];
    for (const provider of rc.providers) {
      for (const kind of ['aesgcm', 'aescbc', 'secretbox'] as const) if (provider[kind]) provider[kind].keys ??= [];
      const kms = provider.kms;
      if (!kms) continue;
      // SetDefaults_KMSConfiguration: v1 unless told, a 3 s timeout, a cache size for v1 only.
      kms.apiVersion ||= 'v1';
      kms.timeout ??= DEFAULT_KMS_TIMEOUT;
      if (kms.apiVersion === 'v1') kms.cachesize ??= 1000;
      kms.name ??= '';
      kms.endpoint ??= '';
    }
  }
  return config;
}

// ---- validation --------------------------------------------------------------------

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A field.Invalid value as upstream prints it: %q for strings, the list in Go syntax, Stringers bare. */
function goValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return `[]string{${v.map((x) => JSON.stringify(x)).join(', ')}}`;
  return JSON.stringify(v);
}
const required = (path: string, detail: string) => `${path}: Required value: ${detail}`;
const invalid = (path: string, value: unknown, detail: string) => `${path}: Invalid value: ${goValue(value)}: ${detail}`;
/** An already formatted value (a Stringer, such as a duration). */
const invalidRaw = (path: string, value: string, detail: string) => `${path}: Invalid value: ${value}: ${detail}`;

/** Base64 as Go's StdEncoding decodes it (strict padding; line breaks ignored), or undefined. */
export function decodeSecret(secret: string): Buffer | undefined {
  const s = secret.replace(/[\r\n]/g, '');
  return BASE64.test(s) ? Buffer.from(s, 'base64') : undefined;
}

function validateKeys(keys: EncryptionKey[], path: string, sizes: number[]): string[] {
  if (!keys.length) return [required(path, 'at least one keys is required')];
  const errs: string[] = [];
  keys.forEach((key, i) => {
    const kp = `${path}[${i}]`;
    if (!key.name) errs.push(required(`${kp}.name`, 'name is a mandatory field for a key'));
    if (!key.secret) {
      errs.push(required(`${kp}.secret`, 'secret is a mandatory field for a key'));
      return;
    }
    const secret = decodeSecret(key.secret);
    if (!secret) errs.push(invalid(`${kp}.secret`, 'REDACTED', 'secrets must be base64 encoded'));
    else if (!sizes.includes(secret.length))
      errs.push(invalid(`${kp}.secret`, 'REDACTED', `secret is not of the expected length, got ${secret.length}, expected one of [${sizes.join(' ')}]`));
  });
  return errs;
}

function validateKMS(c: KMSConfiguration, path: string, names: Set<string>): string[] {
  const errs: string[] = [];
  if (!c.name) errs.push(required(`${path}.name`, 'name is a mandatory field for a provider'));
  if (c.apiVersion !== 'v1' && c.name.includes(':')) errs.push(invalid(`${path}.name`, c.name, `invalid KMS provider name ${c.name}, must not contain ':'`));
  if (c.apiVersion !== 'v1' && names.has(c.name)) errs.push(invalid(`${path}.name`, c.name, `duplicate KMS provider name ${c.name}, names must be unique`));
  const timeout = goDurationMs(c.timeout ?? DEFAULT_KMS_TIMEOUT);
  if (timeout <= 0) errs.push(invalidRaw(`${path}.timeout`, goDurationString(timeout), 'timeout should be a positive value'));
  if (!c.endpoint) errs.push(invalid(`${path}.endpoint`, '', 'endpoint is a mandatory field for a kms'));
  else {
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(c.endpoint)?.[1] ?? '';
    if (scheme !== 'unix') errs.push(invalid(`${path}.endpoint`, c.endpoint, `unsupported scheme "${scheme}" for KMS provider, only unix is supported`));
  }
  if (c.apiVersion !== 'v1' && c.cachesize !== undefined) errs.push(invalid(`${path}.cachesize`, c.cachesize, 'cachesize is not supported in v2'));
  if (c.apiVersion === 'v1' && c.cachesize === 0) errs.push(invalid(`${path}.cachesize`, 0, 'cachesize should be a positive value, or negative to disable'));
  if (c.apiVersion !== 'v1' && c.apiVersion !== 'v2')
    errs.push(invalid(`${path}.apiVersion`, c.apiVersion ?? '', 'unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported'));
  return errs;
}

function validateOverlap(resources: string[], path: string): string[] {
  if (resources.length < 2) return [];
  const grs = resources.map(parseGroupResource);
  let overlap = false;
  let duplicate = false;
  for (const [i, a] of grs.entries()) {
    for (const [j, b] of grs.entries()) {
      if (i === j) continue;
      if (a.group === b.group && a.resource === b.resource && !duplicate) {
        duplicate = true;
        continue;
      }
      if (overlap) continue;
      if (a.group === '*' && a.resource === '*') overlap = true;
      else if (a.group === b.group && (a.resource === '*' || b.resource === '*')) overlap = true;
    }
  }
  const errs: string[] = [];
  if (duplicate) errs.push(invalid(path, resources, 'the same resource cannot be specified multiple times'));
  if (overlap)
    errs.push(
      invalid(path, resources, "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"),
    );
  return errs;
}

function validateNames(resources: string[], path: string): string[] {
  const errs: string[] = [];
  resources.forEach((res, j) => {
    const p = `${path}[${j}]`;
    const gr = parseGroupResource(res);
    if (res.toLowerCase() !== res) errs.push(invalid(p, res, 'resource name should not contain capital letters'));
    else if (res === '*') errs.push(invalid(p, res, "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
    else if (res === 'apiserveripinfo' || res === 'serviceipallocations' || res === 'servicenodeportallocations')
      errs.push(invalid(p, res, 'resources which do not have REST API/s cannot be encrypted'));
    else if (gr.group === 'events.k8s.io')
      errs.push(invalid(p, res, "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"));
    else if (gr.group === 'extensions') errs.push(invalid(p, res, "'extensions' group has been removed and cannot be used for encryption"));
    else if (gr.group === '*' && gr.resource !== '*') errs.push(invalid(p, res, 'encrypting the same resource across groups is not supported'));
  });
  return errs;
}

const PROVIDER_KINDS = ['kms', 'aesgcm', 'aescbc', 'secretbox', 'identity'] as const;

/** ValidateEncryptionConfiguration: the field errors, in upstream's order. */
export function validateEncryptionConfiguration(c: EncryptionConfiguration): string[] {
  if (!c.resources.length) return [required('resources', 'at least one resources is required')];
  const errs: string[] = [];
  const kmsNames = new Set<string>();
  c.resources.forEach((rc, i) => {
    const r = `resources[${i}].resources`;
    const pp = `resources[${i}].providers`;
    if (!rc.resources.length) errs.push(required(r, `at least one ${r} is required`));
    errs.push(...validateOverlap(rc.resources, r), ...validateNames(rc.resources, r));
    if (!rc.providers.length) errs.push(required(pp, `at least one ${pp} is required`));
    rc.providers.forEach((provider, j) => {
      const path = `${pp}[${j}]`;
      const found = PROVIDER_KINDS.filter((k) => provider[k] !== undefined).length;
      if (found === 0) errs.push(invalid(path, provider, 'provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity'));
      else if (found > 1) errs.push(invalid(path, provider, 'more than one provider specified in a single element, should split into different list elements'));
      if (provider.kms) {
        errs.push(...validateKMS(provider.kms, `${path}.kms`, kmsNames));
        kmsNames.add(provider.kms.name);
      } else if (provider.aesgcm) errs.push(...validateKeys(provider.aesgcm.keys, `${path}.aesgcm.keys`, AES_KEY_SIZES));
      else if (provider.aescbc) errs.push(...validateKeys(provider.aescbc.keys, `${path}.aescbc.keys`, AES_KEY_SIZES));
      else if (provider.secretbox) errs.push(...validateKeys(provider.secretbox.keys, `${path}.secretbox.keys`, SECRETBOX_KEY_SIZES));
    });
  });
  return errs;
}

/** utilerrors.NewAggregate(...).Error(): one message as it is, several as `[a, b]` (duplicates once). */
export function aggregate(msgs: string[]): string {
  const seen = [...new Set(msgs)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

/** Decodes and validates a configuration; throws one error naming every problem. */
export function loadEncryptionConfiguration(doc: unknown): EncryptionConfiguration {
  const config = decodeEncryptionConfiguration(doc);
  const errs = validateEncryptionConfiguration(config);
  if (errs.length) throw new Error(aggregate(errs));
  return config;
}

/**
 * Reads --encryption-provider-config (YAML or JSON). Errors read as
 * kube-apiserver's: `error while parsing file: ...`.
 */
export function readEncryptionConfigFile(path: string): EncryptionConfiguration {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(
      `error while parsing file: error while loading file: error reading encryption provider configuration file "${path}": ${(e as Error).message}`,
    );
  }
  if (!text.length) throw new Error(`error while parsing file: error while loading file: encryption provider configuration file "${path}" is empty`);
  let config: EncryptionConfiguration;
  try {
    config = decodeEncryptionConfiguration(parse(text));
  } catch (e) {
    throw new Error(`error while parsing file: error decoding encryption provider configuration file "${path}": ${(e as Error).message}`);
  }
  const errs = validateEncryptionConfiguration(config);
  if (errs.length) throw new Error(`error while parsing file: ${aggregate(errs)}`);
  return config;
}
