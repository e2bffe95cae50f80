/**
 * The KMS v2 envelope as stored after `k8s:enc:kms:v2:<name>:`: the protobuf
 * message `EncryptedObject` of k8s.io/apiserver
 * pkg/storage/value/encrypt/envelope/kmsv2/v2/api.proto, with its validation
 * (kmsv2/envelope.go ValidateEncryptedObject) and DEK cache key (generateCacheKey).
 *
 *   message EncryptedObject {
 *     bytes encryptedData = 1;  string keyID = 2;  bytes encryptedDEKSource = 3;
 *     map<string, bytes> annotations = 4;  EncryptedDEKSourceType encryptedDEKSourceType = 5;
 *   }
 *   enum EncryptedDEKSourceType { AES_GCM_KEY = 0; HKDF_SHA256_XNONCE_AES_GCM_SEED = 1; }
 *
 * Written field by field in number order with map keys sorted, as the Go
 * marshaller does; proto3 defaults (empty, zero) are left out.
 */

export const AES_GCM_KEY = 0;
export const HKDF_SHA256_XNONCE_AES_GCM_SEED = 1;

export interface EncryptedObject {
  encryptedData: Buffer;
  keyID: string;
  encryptedDEKSource: Buffer;
  annotations: Record<string, Buffer>;
  encryptedDEKSourceType: number;
}

const KEY_ID_MAX = 1024;
const DEK_SOURCE_MAX = 1024;
const ANNOTATIONS_MAX = 32 * 1024;

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

const lenField = (tag: number, b: Buffer) => [Buffer.from([tag]), varint(b.length), b];

export function encodeEncryptedObject(o: EncryptedObject): Buffer {
  const parts: Buffer[] = [];
  if (o.encryptedData.length) parts.push(...lenField(0x0a, o.encryptedData));
  if (o.keyID) parts.push(...lenField(0x12, Buffer.from(o.keyID)));
  if (o.encryptedDEKSource.length) parts.push(...lenField(0x1a, o.encryptedDEKSource));
  for (const k of Object.keys(o.annotations).sort()) {
    const entry = Buffer.concat([...lenField(0x0a, Buffer.from(k)), ...lenField(0x12, o.annotations[k]!)]);
    parts.push(...lenField(0x22, entry));
  }
  if (o.encryptedDEKSourceType) parts.push(Buffer.from([0x28]), varint(o.encryptedDEKSourceType));
  return Buffer.concat(parts);
}

/** A protobuf reader over one message; throws the Go decoder's words on malformed input. */
class Reader {
  pos = 0;
  constructor(private readonly b: Buffer) {}
  get done(): boolean {
    return this.pos >= this.b.length;
  }
  varint(): number {
    let n = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.b.length) throw new Error('unexpected EOF');
      const byte = this.b[this.pos++]!;
      n += (byte & 0x7f) * mul;
      if (byte < 0x80) return n;
      mul *= 128;
    }
    throw new Error('proto: integer overflow');
  }
  bytes(): Buffer {
    const len = this.varint();
    if (this.pos + len > this.b.length) throw new Error('unexpected EOF');
    const out = this.b.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytes();
    else if (wire === 1 || wire === 5) {
      this.pos += wire === 1 ? 8 : 4;
      if (this.pos > this.b.length) throw new Error('unexpected EOF');
    } else throw new Error(`proto: illegal wireType ${wire}`);
  }
}

export function decodeEncryptedObject(b: Buffer): EncryptedObject {
  const o: EncryptedObject = { encryptedData: Buffer.alloc(0), keyID: '', encryptedDEKSource: Buffer.alloc(0), annotations: {}, encryptedDEKSourceType: 0 };
  const r = new Reader(b);
  while (!r.done) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 0) throw new Error(`proto: EncryptedObject: illegal tag 0 (wire type ${wire})`);
    const want = field === 5 ? 0 : field <= 4 ? 2 : -1;
    if (want >= 0 && wire !== want)
      throw new Error(
        `proto: wrong wireType = ${wire} for field ${['', 'EncryptedData', 'KeyID', 'EncryptedDEKSource', 'Annotations', 'EncryptedDEKSourceType'][field]}`,
      );
    if (field === 1) o.encryptedData = Buffer.from(r.bytes());
    else if (field === 2) o.keyID = r.bytes().toString('utf8');
    else if (field === 3) o.encryptedDEKSource = Buffer.from(r.bytes());
    else if (field === 4) {
      const entry = new Reader(r.bytes());
      let key = '';
      let value = Buffer.alloc(0);
      while (!entry.done) {
        const t = entry.varint();
        if (t === 0x0a) key = entry.bytes().toString('utf8');
        else if (t === 0x12) value = Buffer.from(entry.bytes());
        else entry.skip(t & 7);
      }
      o.annotations[key] = value;
    } else if (field === 5) o.encryptedDEKSourceType = r.varint();
    else r.skip(wire);
  }
  return o;
}

export function validateKeyID(keyID: string): string | undefined {
  if (!keyID.length) return 'keyID is empty';
  const n = Buffer.byteLength(keyID);
  if (n > KEY_ID_MAX) return `keyID is ${n} bytes, which exceeds the max size of ${KEY_ID_MAX}`;
  return undefined;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** validation.IsFullyQualifiedDomainName: a lowercase DNS subdomain of at least two labels. */
function fqdnError(name: string): string | undefined {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  if (!n) return 'Required value';
  if (n.split('.').length < 2) return `Invalid value: ${JSON.stringify(name)}: should be a domain with at least two segments separated by dots`;
  if (n.length > 253 || !n.split('.').every((l) => DNS_LABEL.test(l) && l.length <= 63))
    return `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`;
  return undefined;
}

/** ValidateEncryptedObject: the message, or undefined when valid. */
export function validateEncryptedObject(o: EncryptedObject): string | undefined {
  if (o.encryptedDEKSourceType !== AES_GCM_KEY && o.encryptedDEKSourceType !== HKDF_SHA256_XNONCE_AES_GCM_SEED)
    return `unknown encryptedDEKSourceType: ${o.encryptedDEKSourceType}`;
  if (!o.encryptedData.length) return 'encrypted data is empty';
  if (!o.encryptedDEKSource.length) return 'failed to validate encrypted DEK source: encrypted DEK source is empty';
  if (o.encryptedDEKSource.length > DEK_SOURCE_MAX)
    return `failed to validate encrypted DEK source: encrypted DEK source is ${o.encryptedDEKSource.length} bytes, which exceeds the max size of ${DEK_SOURCE_MAX}`;
  const keyErr = validateKeyID(o.keyID);
  if (keyErr) return `failed to validate key id: ${keyErr}`;
  const errs: string[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(o.annotations)) {
    const e = fqdnError(k);
    if (e) errs.push(`annotations: ${e}`);
    total += Buffer.byteLength(k) + v.length;
  }
  if (total > ANNOTATIONS_MAX) errs.push(`total size of annotations is ${total}, which exceeds the max size of ${ANNOTATIONS_MAX}`);
  if (errs.length) return `failed to validate annotations: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`;
  return undefined;
}

function u16(b: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
}

/** generateCacheKey: type, DEK source, key ID and sorted annotations, length-prefixed; a string for a Map key. */
export function dekCacheKey(type: number, dekSource: Buffer, keyID: string, annotations: Record<string, Buffer>): string {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(type);
  const parts = [head, u16(dekSource), u16(Buffer.from(keyID))];
  const keys = Object.keys(annotations).sort();
  if (keys.length) {
    const n = Buffer.alloc(4);
    n.writeUInt32BE(keys.length);
    parts.push(n);
    for (const k of keys) parts.push(u16(Buffer.from(k)), u16(annotations[k]!));
  }
  return Buffer.concat(parts).toString('latin1');
}
