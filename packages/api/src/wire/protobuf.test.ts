/**
 * The protobuf and Go-JSON codecs against bytes Go wrote:
 * - testdata/go-reference.json: objects encoded by the real k8s.io/api 1.20
 *   types and apimachinery's protobuf serializer and encoding/json (a small Go
 *   program built against the Kubernetes 1.20.2 vendor tree, outside the repo);
 * - when the Kubernetes 1.20.2 source tree is on this machine, the round-trip
 *   fixtures of every kind in k8s.io/api/testdata/HEAD (fully populated objects).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toGoJson } from './json.js';
import { goJsonText } from './json-text.js';
import { WireError, decodeObject, encodeObject, encodeWatchEvent } from './protobuf.js';
import { kindStruct } from './registry.js';

interface Fixture {
  name: string;
  pb: string;
  json: Record<string, unknown> | null;
}
const fixtures = JSON.parse(readFileSync(new URL('./testdata/go-reference.json', import.meta.url), 'utf8')) as Fixture[];

test('objects Go encoded decode to the JSON Go wrote, key order included', () => {
  for (const f of fixtures) {
    if (!f.json) continue;
    const decoded = decodeObject(Buffer.from(f.pb, 'hex'));
    assert.equal(JSON.stringify(toGoJson(decoded)), JSON.stringify(f.json), f.name);
    assert.equal(goJsonText(decoded), JSON.stringify(f.json), f.name);
  }
});

test('objects encode to the bytes Go wrote', () => {
  for (const f of fixtures) {
    if (!f.json) continue;
    assert.equal(encodeObject(f.json)?.toString('hex'), f.pb, f.name);
  }
});

test('a watch event is framed as the Go stream serializer frames it: no envelope around the event, the object enveloped', () => {
  const f = fixtures.find((x) => x.name.startsWith('watch frame'))!;
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w', namespace: 'ns', resourceVersion: '7' } };
  assert.equal(encodeWatchEvent('ADDED', encodeObject(cm)!).toString('hex'), f.pb);
});

test('decoding keeps zero values of pointer fields and drops those of the others', () => {
  const pod = decodeObject(Buffer.from(fixtures.find((x) => x.name.startsWith('Pod'))!.pb, 'hex')) as any;
  assert.equal(pod.spec.terminationGracePeriodSeconds, 0);
  assert.equal(pod.spec.automountServiceAccountToken, false);
  assert.deepEqual(pod.spec.securityContext, {});
  assert.deepEqual(pod.spec.volumes, [{ name: 'v', emptyDir: {} }]);
  // Go wrote them all, as zero: they stay unset for defaulting.
  for (const k of ['restartPolicy', 'dnsPolicy', 'hostNetwork', 'nodeName', 'schedulerName']) assert.equal(k in pod.spec, false, k);
  assert.equal('creationTimestamp' in pod.metadata, false);
  const deploy = decodeObject(Buffer.from(fixtures[0]!.pb, 'hex')) as any;
  assert.equal(deploy.spec.replicas, 0);
  assert.equal(deploy.spec.rollingUpdate, undefined);
  assert.deepEqual(deploy.spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: '25%' });
  assert.deepEqual(deploy.metadata.labels, { a: '1', b: '2', empty: '' });
  assert.equal('status' in deploy, false);
  const del = decodeObject(Buffer.from(fixtures.find((x) => x.name.startsWith('DeleteOptions'))!.pb, 'hex'));
  assert.deepEqual(del, {
    apiVersion: 'apps/v1',
    kind: 'DeleteOptions',
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u-1' },
    propagationPolicy: 'Foreground',
    dryRun: ['All'],
  });
});

test('malformed protobuf is a WireError, never another error', () => {
  const good = Buffer.from(fixtures[0]!.pb, 'hex');
  const bad: [string, Buffer][] = [
    ['no magic', Buffer.from('0a00', 'hex')],
    ['unknown kind', encodeEnvelopeOf('v1', 'Nope', Buffer.alloc(0))],
    ['truncated', good.subarray(0, good.length - 7)],
    ['a length past the end', Buffer.concat([good.subarray(0, 40), Buffer.from('0affffffff0f', 'hex')])],
    ['a varint of eleven bytes', encodeEnvelopeOf('v1', 'ConfigMap', Buffer.from('08ffffffffffffffffffff01', 'hex'))],
    ['a string field sent as a varint', encodeEnvelopeOf('v1', 'ConfigMap', Buffer.from('0a020801', 'hex'))],
    ['field number 0', encodeEnvelopeOf('v1', 'ConfigMap', Buffer.from('0000', 'hex'))],
    ['wire type 7', encodeEnvelopeOf('v1', 'ConfigMap', Buffer.from('0f00', 'hex'))],
    ['RawExtension that is no JSON', encodeEnvelopeOf('apps/v1', 'ControllerRevision', Buffer.from('12030a017b', 'hex'))],
  ];
  // Envelopes nested inside RawExtensions without end.
  let nested = encodeEnvelopeOf('apps/v1', 'ControllerRevision', Buffer.alloc(0));
  for (let i = 0; i < 300; i++) nested = encodeEnvelopeOf('apps/v1', 'ControllerRevision', lengthField(2, lengthField(1, nested)));
  bad.push(['envelopes nested 300 deep', nested]);
  for (let i = 0; i < good.length; i += 13) bad.push([`truncated at ${i}`, good.subarray(0, i)]);
  for (const [what, body] of bad) {
    try {
      decodeObject(body);
    } catch (e) {
      assert.ok(e instanceof WireError, `${what}: ${String(e)}`);
    }
  }
  // Random damage to real bytes: decoded or refused, nothing else.
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (const f of fixtures) {
    const src = Buffer.from(f.pb, 'hex');
    for (let i = 0; i < 300; i++) {
      const b = Buffer.from(src);
      for (let k = 0; k < 1 + rand(3); k++) b[4 + rand(b.length - 4)] = rand(256);
      try {
        decodeObject(f.name.startsWith('watch') ? b.subarray(4) : b);
      } catch (e) {
        assert.ok(e instanceof WireError, `${f.name} damaged: ${String(e)}`);
      }
    }
  }
  assert.throws(() => decodeObject(nested), WireError);
  assert.throws(() => decodeObject(bad[1]![1]), /no kind "Nope" is registered for the protobuf encoding of version "v1"/);
});

function lengthField(num: number, body: Buffer): Buffer {
  const len: number[] = [];
  let l = body.length;
  while (l >= 0x80) {
    len.push((l & 0x7f) | 0x80);
    l >>>= 7;
  }
  len.push(l);
  return Buffer.concat([Buffer.from([(num << 3) | 2, ...len]), body]);
}

function encodeEnvelopeOf(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const tm = Buffer.concat([lengthField(1, Buffer.from(apiVersion)), lengthField(2, Buffer.from(kind))]);
  return Buffer.concat([Buffer.from('6b387300', 'hex'), lengthField(1, tm), lengthField(2, raw)]);
}

// ---- the fixtures of k8s.io/api/testdata/HEAD, when KUBELING_K8S_SRC names a Kubernetes 1.20 source tree ----

const HEAD = process.env.KUBELING_K8S_SRC ? join(process.env.KUBELING_K8S_SRC, 'staging/src/k8s.io/api/testdata/HEAD') : '';

test('every kind of k8s.io/api testdata/HEAD: bytes from its JSON, JSON from its bytes', {
  skip: !(HEAD && existsSync(HEAD)) && 'KUBELING_K8S_SRC names no Kubernetes 1.20 tree',
}, () => {
  // Non-pointer fields newer than 1.20 that Go writes as zero (not in the fixtures' JSON).
  const newer: Record<string, string[]> = {
    'apps.v1.StatefulSet': ['status.availableReplicas'],
    'networking.k8s.io.v1.IngressClass': ['spec.parameters.scope'],
  };
  let checked = 0;
  for (const f of readdirSync(HEAD).filter((x) => x.endsWith('.json'))) {
    const json = JSON.parse(readFileSync(join(HEAD, f), 'utf8')) as Record<string, unknown>;
    if (!kindStruct(String(json.apiVersion), String(json.kind))) continue;
    const pb = readFileSync(join(HEAD, f.replace(/\.json$/, '.pb')));
    const diff = pbDiff(pb.subarray(4), encodeObject(json)!.subarray(4));
    assert.equal(diff, undefined, `${f}: encoding: ${diff}`);
    const decoded = toGoJson(decodeObject(pb)) as Record<string, unknown>;
    for (const path of newer[f.replace(/\.json$/, '')] ?? []) dropPath(decoded, path);
    // Fuzzed int64 values beyond 2^53 round as JSON numbers do in both.
    assert.equal(JSON.stringify(decoded), JSON.stringify(json), `${f}: decoding`);
    assert.equal(JSON.stringify(dropAll(toGoJson(json), newer[f.replace(/\.json$/, '')])), JSON.stringify(json), `${f}: Go JSON`);
    assert.equal(goJsonText(json), JSON.stringify(toGoJson(json)), `${f}: Go JSON text`);
    checked++;
  }
  assert.ok(checked >= 70, `checked ${checked} kinds`);
});

function dropPath(obj: Record<string, unknown>, path: string): void {
  const parts = path.split('.');
  let o = obj as Record<string, unknown> | undefined;
  for (const p of parts.slice(0, -1)) o = o?.[p] as Record<string, unknown> | undefined;
  if (o) delete o[parts.at(-1)!];
}

function dropAll<T>(obj: T, paths: string[] | undefined): T {
  for (const p of paths ?? []) dropPath(obj as Record<string, unknown>, p);
  return obj;
}

/**
 * The first difference between two protobuf messages, read without a schema:
 * varints compared as the JSON numbers they round to (the fixtures hold int64
 * values beyond 2^53), zero-valued fields only in `b` ignored (non-pointer
 * fields newer than the fixtures).
 */
function pbDiff(a: Buffer, b: Buffer, path = ''): string | undefined {
  if (a.equals(b)) return undefined;
  const fa = fieldsOf(a);
  let fb = fieldsOf(b);
  if (!fa || !fb) return `${path}: bytes differ`;
  const seen = new Set(fa.map((x) => x[0]));
  fb = fb.filter(([n, v]) => seen.has(n) || !(v === 0n || (Buffer.isBuffer(v) && v.length === 0)));
  if (fa.length !== fb.length) return `${path}: fields ${fa.map((x) => x[0]).join(',')} vs ${fb.map((x) => x[0]).join(',')}`;
  for (let i = 0; i < fa.length; i++) {
    const [na, va] = fa[i]!;
    const [nb, vb] = fb[i]!;
    if (na !== nb) return `${path}: field ${na} vs ${nb}`;
    if (typeof va === 'bigint' || typeof vb === 'bigint') {
      const x = Number(BigInt.asIntN(64, va as bigint));
      const y = Number(BigInt.asIntN(64, vb as bigint));
      if (typeof va !== typeof vb || Math.abs(x - y) > Math.abs(x) * 1e-15) return `${path}.${na}: ${va} vs ${vb}`;
    } else {
      const d = pbDiff(va, vb as Buffer, `${path}.${na}`);
      if (d) return d;
    }
  }
  return undefined;
}

function fieldsOf(buf: Buffer): [number, bigint | Buffer][] | undefined {
  const out: [number, bigint | Buffer][] = [];
  let p = 0;
  const varint = (): bigint => {
    let r = 0n;
    for (let s = 0n; s < 70n; s += 7n) {
      if (p >= buf.length) throw new Error('eof');
      const x = buf[p++]!;
      r |= BigInt(x & 0x7f) << s;
      if (x < 0x80) return r;
    }
    throw new Error('long');
  };
  try {
    while (p < buf.length) {
      const t = Number(varint());
      const n = t >>> 3;
      const w = t & 7;
      if (n === 0) return undefined;
      if (w === 0) out.push([n, varint()]);
      else if (w === 2) {
        const l = Number(varint());
        if (p + l > buf.length) return undefined;
        out.push([n, buf.subarray(p, p + l)]);
        p += l;
      } else if (w === 1 || w === 5) {
        out.push([n, buf.subarray(p, p + (w === 1 ? 8 : 4))]);
        p += w === 1 ? 8 : 4;
      } else return undefined;
    }
  } catch {
    return undefined;
  }
  return p === buf.length ? out : undefined;
}
