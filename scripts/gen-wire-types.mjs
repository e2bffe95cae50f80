// Generates kubeling's wire tables (packages/api/src/wire/gen/*.ts) from the Go
// type definitions of Kubernetes: for every struct reachable from the kinds of
// the selected group-versions, its fields in Go struct order with their JSON
// name and options, their Go type (pointer, slice, map, scalar or struct), and
// the protobuf field number and wire type of the `protobuf:"..."` struct tag.
//
//   node scripts/gen-wire-types.mjs <dir holding k8s.io/api and k8s.io/apimachinery> [out dir]
//
// e.g. node scripts/gen-wire-types.mjs <kubernetes source tree>/staging/src/k8s.io
//
// The Go sources are read, never copied: only the facts above go into the
// tables. Fields Kubernetes added after the source release are added by hand
// in packages/api/src/wire/overlay.ts.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [srcArg, outArg] = process.argv.slice(2);
if (!srcArg) {
  console.error('usage: node scripts/gen-wire-types.mjs <staging/src/k8s.io> [out dir]');
  process.exit(2);
}
const SRC = srcArg.replace(/^~/, process.env.HOME ?? '~');
const OUT = outArg ?? new URL('../packages/api/src/wire/gen/', import.meta.url).pathname;

/** Import path → the short key its structs are named by in the tables. */
const PACKAGES = {
  'k8s.io/apimachinery/pkg/apis/meta/v1': ['apimachinery/pkg/apis/meta/v1', 'meta/v1'],
  'k8s.io/apimachinery/pkg/runtime': ['apimachinery/pkg/runtime', 'runtime'],
  'k8s.io/apimachinery/pkg/util/intstr': ['apimachinery/pkg/util/intstr', 'intstr'],
  'k8s.io/apimachinery/pkg/api/resource': ['apimachinery/pkg/api/resource', 'resource'],
  'k8s.io/apimachinery/pkg/types': ['apimachinery/pkg/types', 'types'],
};
/** The group-versions whose kinds get tables (their nested structs come along). */
const API_VERSIONS = [
  'core/v1',
  'apps/v1',
  'batch/v1',
  'batch/v1beta1',
  'autoscaling/v1',
  'autoscaling/v2beta2',
  'policy/v1beta1',
  'rbac/v1',
  'admissionregistration/v1',
  'scheduling/v1',
  'coordination/v1',
  'discovery/v1beta1',
  'events/v1',
  'authentication/v1',
  'authorization/v1',
  'networking/v1',
  'node/v1',
  'certificates/v1',
  'flowcontrol/v1beta1',
  'storage/v1',
];
for (const gv of API_VERSIONS) PACKAGES[`k8s.io/api/${gv}`] = [`api/${gv}`, gv];

/**
 * Types whose wire forms are not their Go structs (custom JSON and protobuf
 * marshalers): the runtime codec knows them by these names and does not look inside.
 */
const SPECIAL = new Set([
  'meta/v1.Time',
  'meta/v1.MicroTime',
  'meta/v1.Duration',
  'meta/v1.FieldsV1',
  'resource.Quantity',
  'intstr.IntOrString',
  'runtime.RawExtension',
]);
/**
 * The protobuf messages the special types' hand-written marshalers write (their
 * Go structs say nothing of it): meta/v1 time_proto.go, micro_time_proto.go and
 * generated.proto (Duration, FieldsV1), resource/generated.proto, intstr's
 * struct tags, runtime/generated.proto (RawExtension).
 */
const SPECIAL_MESSAGES = {
  'meta/v1.Time': [
    ['seconds', 'int64', '', 1, 'varint'],
    ['nanos', 'int32', '', 2, 'varint'],
  ],
  'meta/v1.MicroTime': [
    ['seconds', 'int64', '', 1, 'varint'],
    ['nanos', 'int32', '', 2, 'varint'],
  ],
  'meta/v1.Duration': [['duration', 'int64', '', 1, 'varint']],
  'meta/v1.FieldsV1': [['Raw', '[]byte', '-', 1, 'bytes']],
  'resource.Quantity': [['string', 'string', '', 1, 'bytes']],
  'intstr.IntOrString': [
    ['type', 'int64', '', 1, 'varint'],
    ['intVal', 'int32', '', 2, 'varint'],
    ['strVal', 'string', '', 3, 'bytes'],
  ],
  'runtime.RawExtension': [['raw', '[]byte', '-', 1, 'bytes']],
};
/** meta/v1 structs served besides the kinds (ListMeta, Status and so on come along as references). */
const META_ROOTS = ['ObjectMeta', 'ListMeta', 'Condition', 'LabelSelector', 'Time', 'MicroTime', 'Duration', 'WatchEvent', 'Timestamp'];
const SCALARS = new Set(['string', 'bool', 'int32', 'int64', 'int', 'uint32', 'uint64', 'float32', 'float64', 'byte']);

// ---- reading Go ------------------------------------------------------------------

/** The text without comments (backquoted and double-quoted strings kept). */
function stripComments(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '`') {
      const j = text.indexOf('`', i + 1);
      if (j < 0) throw new Error('unterminated raw string');
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      const j = text.indexOf('\n', i);
      i = (j < 0 ? text.length : j) - 1;
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2) + 1;
    } else out += c;
  }
  return out;
}

/** One package: its structs (fields as read), its other named types, and each file's imports. */
function readPackage(dir) {
  const pkg = { structs: new Map(), named: new Map(), group: undefined };
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.go') || name.endsWith('_test.go') || name.startsWith('zz_generated') || name.includes('generated')) continue;
    const text = stripComments(readFileSync(join(dir, name), 'utf8'));
    const imports = new Map();
    for (const m of text.matchAll(/^\s*(?:import\s+)?(\w+\s+)?"([^"]+)"\s*$/gm)) {
      const path = m[2];
      imports.set(m[1]?.trim() ?? path.split('/').pop(), path);
    }
    const g = /\bGroupName\s*=\s*"([^"]*)"/.exec(text);
    if (g) pkg.group = g[1];
    // Type declarations, one at a time or in `type ( ... )` blocks.
    const decls = [];
    for (const m of text.matchAll(/^type\s+(\w+)\s+(.*)$/gm)) decls.push({ name: m[1], rest: m[2], at: m.index + m[0].length - m[2].length });
    for (const m of text.matchAll(/^type\s*\(\s*$/gm)) {
      const end = text.indexOf('\n)', m.index);
      for (const d of text.slice(m.index + m[0].length, end).matchAll(/^\s*(\w+)\s+(.*)$/gm)) {
        decls.push({ name: d[1], rest: d[2], at: m.index + m[0].length + d.index + d[0].length - d[2].length });
      }
    }
    for (const { name: tname, rest, at } of decls) {
      if (/^struct\s*\{/.test(rest)) {
        const open = text.indexOf('{', at);
        let depth = 0;
        let end = open;
        for (let i = open; i < text.length; i++) {
          if (text[i] === '`') i = text.indexOf('`', i + 1);
          else if (text[i] === '{') depth++;
          else if (text[i] === '}' && --depth === 0) {
            end = i;
            break;
          }
        }
        pkg.structs.set(tname, { fields: parseFields(text.slice(open + 1, end)), imports });
      } else if (!/^interface\b/.test(rest) && !/^=/.test(rest)) {
        pkg.named.set(tname, { type: rest.trim().replace(/\s+/g, ''), imports });
      }
    }
  }
  return pkg;
}

function parseTag(tag, key) {
  const m = new RegExp(`(?:^|\\s)${key}:"([^"]*)"`).exec(tag ?? '');
  return m ? m[1] : undefined;
}

function parseFields(body) {
  const fields = [];
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const bt = line.indexOf('`');
    const decl = (bt < 0 ? line : line.slice(0, bt)).trim();
    const tag = bt < 0 ? '' : line.slice(bt + 1, line.lastIndexOf('`'));
    const m = /^((?:\w+\s*,\s*)*\w+)\s+(\S.*)$/.exec(decl);
    // `Name Type` (or `A, B Type`), else an embedded `pkg.Type` / `*Type`.
    if (m && !/^\*|\./.test(m[1])) {
      for (const n of m[1].split(',')) fields.push({ goName: n.trim(), type: m[2].replace(/\s+/g, ''), tag, embedded: false });
    } else {
      const t = decl.replace(/\s+/g, '');
      fields.push({ goName: t.replace(/^\*/, '').split('.').pop(), type: t, tag, embedded: true });
    }
  }
  return fields;
}

// ---- resolving types -------------------------------------------------------------

const loaded = new Map(); // short key → package
for (const [, [rel, key]] of Object.entries(PACKAGES)) {
  const dir = join(SRC, rel);
  if (!existsSync(dir)) throw new Error(`no such package directory: ${dir}`);
  loaded.set(key, readPackage(dir));
}
const keyOfImport = (path) => {
  const p = PACKAGES[path];
  if (!p) throw new Error(`package ${path} is not loaded (add it to PACKAGES)`);
  return p[1];
};

const wanted = []; // struct keys to emit, in discovery order
const seen = new Set();
const wrappers = new Map(); // named slice types that are protobuf messages of `items`
function want(key) {
  if (SPECIAL.has(key) || seen.has(key)) return;
  seen.add(key);
  wanted.push(key);
}

/** The canonical type text of a Go type written in package `pkgKey` (file imports `imports`). */
function resolve(type, pkgKey, imports) {
  if (type.startsWith('*')) return '*' + resolve(type.slice(1), pkgKey, imports);
  if (type === '[]byte') return '[]byte';
  if (type.startsWith('[]')) return '[]' + resolve(type.slice(2), pkgKey, imports);
  if (type.startsWith('map[')) {
    let depth = 0;
    let i = 3;
    for (; i < type.length; i++) {
      if (type[i] === '[') depth++;
      else if (type[i] === ']' && --depth === 0) break;
    }
    const k = resolve(type.slice(4, i), pkgKey, imports);
    if (k !== 'string') throw new Error(`map key ${type} is not a string`);
    return `map[string]${resolve(type.slice(i + 1), pkgKey, imports)}`;
  }
  if (type === 'interface{}') return 'any';
  if (SCALARS.has(type)) return type === 'int' ? 'int64' : type;
  let key = pkgKey;
  let name = type;
  const dot = type.indexOf('.');
  if (dot > 0) {
    const alias = type.slice(0, dot);
    name = type.slice(dot + 1);
    const path = imports.get(alias);
    if (path === 'time' && name === 'Duration') return 'int64';
    if (!path) throw new Error(`unknown package ${alias} in ${type}`);
    key = keyOfImport(path);
  }
  const full = `${key}.${name}`;
  if (SPECIAL.has(full)) return full;
  const pkg = loaded.get(key);
  if (pkg.structs.has(name)) {
    want(full);
    return full;
  }
  const named = pkg.named.get(name);
  if (!named) throw new Error(`unknown type ${full}`);
  const under = resolve(named.type, key, named.imports);
  // A named slice is a message of one repeated field `items` (ExtraValue, Verbs).
  if (under.startsWith('[]') && under !== '[]byte') {
    wrappers.set(full, under);
    return full;
  }
  return under;
}

const mismatches = [];
/** The protobuf wire type of a canonical Go type (a repeated field: of its elements). */
function wireOf(type) {
  const t = type.replace(/^\*/, '');
  if (t === '[]byte' || t.startsWith('map[')) return 'bytes';
  if (t.startsWith('[]')) return wireOf(t.slice(2));
  if (t === 'bool' || /^u?int\d*$/.test(t)) return 'varint';
  if (t === 'float64') return 'fixed64';
  if (t === 'float32') return 'fixed32';
  return 'bytes';
}

/** One field as the table writes it: [json, type, flags, protobuf number, wire type]. */
function fieldTuple(structKey, f, pkgKey, imports) {
  const json = parseTag(f.tag, 'json');
  const pb = parseTag(f.tag, 'protobuf');
  let [jname, ...opts] = (json ?? '').split(',');
  const type = f.type.startsWith('time.Time') ? 'any' : resolve(f.type, pkgKey, imports);
  let flags = '';
  if (opts.includes('omitempty')) flags += 'o';
  if (f.embedded && !jname) flags += 'i';
  else if (json === undefined) jname = f.goName;
  else if (!jname) jname = opts.includes('inline') ? '' : f.goName;
  if (jname === '' && !flags.includes('i')) flags += 'i';
  if (jname === '-') flags += '-';
  const out = [jname === '-' ? f.goName : jname, type, flags];
  if (pb && pb !== '-') {
    // The label (`opt`/`rep`) and the wire type follow from the Go type, as go-to-protobuf derives them: a few
    // tags say otherwise (EndpointSlice.addressType `rep` of a string, DeleteOptions.propagationPolicy `varint`).
    const [tagWire, num] = pb.split(',');
    const wire = wireOf(type);
    if (wire !== tagWire) mismatches.push(`${structKey}.${jname}: tag says ${tagWire}, the Go type ${type} is ${wire}`);
    out.push(Number(num), wire);
  }
  return out;
}

for (const gv of API_VERSIONS) {
  for (const [name, s] of loaded.get(gv).structs) {
    if (s.fields.some((f) => f.embedded && /(^|\.)TypeMeta$/.test(f.type))) want(`${gv}.${name}`);
  }
}
for (const [name, s] of loaded.get('meta/v1').structs) {
  if (META_ROOTS.includes(name) || s.fields.some((f) => f.embedded && f.type === 'TypeMeta')) want(`meta/v1.${name}`);
}
want('runtime.Unknown');
for (const sp of SPECIAL) {
  // The specials' own fields are written too (their protobuf messages), not walked into.
  seen.add(sp);
  wanted.push(sp);
}

const tables = new Map(); // package key → Map(struct name → tuples)
for (let i = 0; i < wanted.length; i++) {
  const key = wanted[i];
  const dot = key.lastIndexOf('.');
  const pkgKey = key.slice(0, dot);
  const name = key.slice(dot + 1);
  const s = loaded.get(pkgKey).structs.get(name);
  if (!s) throw new Error(`no struct ${key}`);
  const tuples = SPECIAL_MESSAGES[key] ?? s.fields.map((f) => fieldTuple(key, f, pkgKey, s.imports));
  if (!tables.has(pkgKey)) tables.set(pkgKey, new Map());
  tables.get(pkgKey).set(name, tuples);
}

// ---- writing ---------------------------------------------------------------------

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const fileOf = (pkgKey) => pkgKey.replace(/\//g, '-');
const header = (what) =>
  `// Generated by scripts/gen-wire-types.mjs from the Go types of ${what}. Do not edit: regenerate, or add newer fields in ../overlay.ts.\n`;
const version = /kubernetes-([\d.]+)/.exec(SRC)?.[1];
const source = version ? `Kubernetes v${version}` : 'Kubernetes';
const names = [];
for (const [pkgKey, structs] of [...tables].sort(([a], [b]) => a.localeCompare(b))) {
  const pkg = loaded.get(pkgKey);
  const [group, ver] = pkgKey.startsWith('meta/') ? ['meta.k8s.io', 'v1'] : pkgKey.includes('/') ? [pkg.group ?? '', pkgKey.split('/')[1]] : ['', ''];
  const kinds = [...structs.keys()].filter((n) => pkg.structs.get(n).fields.some((f) => f.embedded && /(^|\.)TypeMeta$/.test(f.type)));
  const lines = [header(source), "import type { WirePackage } from '../model.js';", '', 'export default {'];
  lines.push(`  key: ${JSON.stringify(pkgKey)},`, `  group: ${JSON.stringify(group)},`, `  version: ${JSON.stringify(ver)},`);
  lines.push(`  kinds: ${JSON.stringify(kinds)},`);
  const wr = [...wrappers].filter(([k]) => k.startsWith(pkgKey + '.'));
  if (wr.length) lines.push(`  wrappers: { ${wr.map(([k, v]) => `${JSON.stringify(k.slice(pkgKey.length + 1))}: ${JSON.stringify(v)}`).join(', ')} },`);
  lines.push('  structs: {');
  for (const [name, tuples] of [...structs].sort(([a], [b]) => a.localeCompare(b))) lines.push(`    ${name}: ${JSON.stringify(tuples)},`);
  lines.push('  },', '} satisfies WirePackage;', '');
  const file = fileOf(pkgKey);
  names.push(file);
  writeFileSync(join(OUT, `${file}.ts`), lines.join('\n'));
  if (lines.length > 500) throw new Error(`${file}.ts has ${lines.length} lines: split it`);
}
const ident = (f) => f.replace(/[^a-zA-Z0-9]/g, '_');
writeFileSync(
  join(OUT, 'index.ts'),
  [
    header(source),
    "import type { WirePackage } from '../model.js';",
    ...names.map((n) => `import ${ident(n)} from './${n}.js';`),
    '',
    `export const generated: readonly WirePackage[] = [${names.map(ident).join(', ')}];`,
    '',
  ].join('\n'),
);
for (const m of mismatches) console.error(`gen-wire-types: ${m}`);
console.error(`gen-wire-types: ${wanted.length} structs in ${names.length} packages → ${OUT}`);
