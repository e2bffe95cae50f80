/**
 * KMS v2 envelope encryption (k8s.io/apiserver pkg/storage/value/encrypt/envelope/kmsv2
 * and the kmsv2PluginProbe of pkg/server/options/encryptionconfig/config.go).
 *
 * The plugin (`v2.KeyManagementService` over a unix socket) holds the key
 * encryption key; the apiserver never sees it. Writes use a local AES-256-GCM
 * data encryption key (DEK), generated once per plugin key ID and encrypted once
 * by the plugin (Encrypt); each stored value carries that encrypted DEK, the key
 * ID and the plugin's annotations in an EncryptedObject. Reads look the DEK up by
 * its encrypted form in a cache and ask the plugin (Decrypt) only on a miss, so a
 * read needs no call to the plugin in the common case.
 *
 * Status is polled (each minute when healthy, every 10 s when not): a new key ID
 * means a new DEK for new writes. The write DEK may be used for 3 minutes after
 * the last successful check, so writes fail rather than use a key the plugin has
 * moved away from for long. Reads accept both upstream DEK source types (a plain
 * DEK, or an HKDF seed with a 32-byte info prefix per value).
 */
import { createHmac, randomBytes, randomUUID, createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { FromStorage, Transformer } from './transformers.js';
import { gcmOpen, gcmSeal } from './transformers.js';
import {
  AES_GCM_KEY,
  type EncryptedObject,
  HKDF_SHA256_XNONCE_AES_GCM_SEED,
  decodeEncryptedObject,
  dekCacheKey,
  encodeEncryptedObject,
  validateEncryptedObject,
  validateKeyID,
} from './encrypted-object.js';

/** What the apiserver asks of a KMS v2 plugin (kmsservice.Service). */
export interface KmsService {
  status(): Promise<{ version: string; healthz: string; keyId: string }>;
  encrypt(uid: string, plaintext: Buffer): Promise<{ ciphertext: Buffer; keyId: string; annotations: Record<string, Buffer> }>;
  decrypt(uid: string, req: { ciphertext: Buffer; keyId: string; annotations: Record<string, Buffer> }): Promise<Buffer>;
  close(): void;
}

const PROTO = fileURLToPath(new URL('../../../proto/kms/v2/api.proto', import.meta.url));

let loaded: grpc.ServiceClientConstructor | undefined;
/** The KeyManagementService definition (loaded once; keepCase, bytes as Buffers). */
export function kmsServiceDefinition(): grpc.ServiceClientConstructor {
  if (!loaded) {
    const def = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true });
    loaded = (grpc.loadPackageDefinition(def).v2 as grpc.GrpcObject).KeyManagementService as grpc.ServiceClientConstructor;
  }
  return loaded;
}

/** `unix:///run/kms.sock` → grpc-js's `unix:/run/kms.sock`. */
export const unixTarget = (endpoint: string) => `unix:${endpoint.replace(/^unix:\/\//, '')}`;

const CODE_NAMES = Object.fromEntries(
  Object.entries(grpc.status).map(([k, v]) => [
    v,
    k
      .split('_')
      .map((w) => w[0] + w.slice(1).toLowerCase())
      .join(''),
  ]),
);

/** A gRPC failure in grpc-go's words (`rpc error: code = Unavailable desc = ...`). */
function rpcError(e: grpc.ServiceError): Error {
  return new Error(`rpc error: code = ${CODE_NAMES[e.code] ?? e.code} desc = ${e.details || e.message}`);
}

/** The plugin client: one connection, each call bounded by the configured timeout, waiting for the socket until then. */
export function grpcKmsService(endpoint: string, timeoutMs: number): KmsService {
  const Ctor = kmsServiceDefinition();
  const client = new Ctor(unixTarget(endpoint), grpc.credentials.createInsecure(), { 'grpc.default_authority': 'localhost' });
  const call = <T>(method: string, req: object): Promise<T> =>
    new Promise((resolve, reject) => {
      const fn = (client as unknown as Record<string, (r: object, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res: T) => void) => void>)[method]!;
      fn.call(client, req, { deadline: Date.now() + timeoutMs, waitForReady: true }, (err, res) => (err ? reject(rpcError(err)) : resolve(res)));
    });
  return {
    async status() {
      const r = await call<{ version: string; healthz: string; key_id: string }>('Status', {});
      return { version: r.version, healthz: r.healthz, keyId: r.key_id };
    },
    async encrypt(uid, plaintext) {
      const r = await call<{ ciphertext: Buffer; key_id: string; annotations: Record<string, Buffer> }>('Encrypt', { plaintext, uid });
      return { ciphertext: r.ciphertext, keyId: r.key_id, annotations: r.annotations ?? {} };
    },
    async decrypt(uid, req) {
      const r = await call<{ plaintext: Buffer }>('Decrypt', { ciphertext: req.ciphertext, uid, key_id: req.keyId, annotations: req.annotations });
      return r.plaintext;
    },
    close: () => client.close(),
  };
}

// ---- DEKs ----------------------------------------------------------------------

interface ReadKey {
  open(data: Buffer, aad: Buffer): Buffer;
}

/** A DEK (AES_GCM_KEY): nonce(12) ‖ ciphertext ‖ tag. */
const plainDEK = (key: Buffer): ReadKey => {
  if (![16, 24, 32].includes(key.length)) throw new Error(`crypto/aes: invalid key size ${key.length}`);
  return { open: (data, aad) => gcmOpen(key, data, aad) };
};

/** An HKDF seed: each value starts with a 32-byte info; its DEK is HKDF-Expand(SHA-256, seed, info)[:32]. */
const seedDEK = (seed: Buffer): ReadKey => {
  if (seed.length < 32) throw new Error(`invalid seed length ${seed.length} used for key generation`);
  return {
    open(data, aad) {
      if (data.length < 32) throw new Error('the stored data was shorter than the required size');
      // One HKDF-Expand block is 32 bytes: T(1) = HMAC(seed, info ‖ 0x01).
      const key = createHmac('sha256', seed)
        .update(Buffer.concat([data.subarray(0, 32), Buffer.from([1])]))
        .digest();
      return gcmOpen(key, data, aad, 32);
    },
  };
};

/**
 * The write DEK: random, used only by this process, so its nonces can be a
 * counter (4 random bytes ‖ 64-bit little-endian counter) that never repeats
 * instead of random ones that may (NewGCMTransformerWithUniqueKeyUnsafe).
 */
class WriteDEK {
  readonly key = randomBytes(32);
  private counter = 1_000_000_000n;
  seal(data: Buffer, aad: Buffer): Buffer {
    const nonce = Buffer.alloc(12);
    randomBytes(4).copy(nonce);
    nonce.writeBigUInt64LE(++this.counter, 4);
    return gcmSeal(this.key, nonce, data, aad);
  }
}

interface State {
  dek: WriteDEK;
  /** keyID, encrypted DEK, annotations: the part every written EncryptedObject shares. */
  object: Omit<EncryptedObject, 'encryptedData'>;
  cacheKey: string;
  expiresAt: number;
}

const POSITIVE_INTERVAL_MS = 60_000;
const NEGATIVE_INTERVAL_MS = 10_000;
const WRITE_DEK_MAX_TTL_MS = 3 * 60_000;
const DEK_CACHE_MAX = 10_000;

const keyIDHash = (id: string) => (id ? `sha256:${createHash('sha256').update(id).digest('hex')}` : '');
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export interface KmsV2Options {
  name: string;
  service: KmsService;
  /** Problems of the plugin, for the log (never key material). */
  onError?: (err: Error) => void;
  now?: () => number;
}

/** One `kms` provider of apiVersion v2: the transformer behind `k8s:enc:kms:v2:<name>:`, and its Status poll. */
export class KmsV2Provider implements Transformer {
  readonly name: string;
  private state: State | undefined;
  private readonly cache = new Map<string, ReadKey>();
  private readonly inflight = new Map<string, Promise<ReadKey>>();
  private timer: NodeJS.Timeout | undefined;
  private priming: Promise<void> | undefined;
  private checking: Promise<void> | undefined;
  private closed = false;
  private version = '';
  private readonly now: () => number;

  constructor(private readonly opts: KmsV2Options) {
    this.name = opts.name;
    this.now = opts.now ?? Date.now;
  }

  /** Primes the key ID and DEK once, then keeps polling Status. */
  start(): void {
    this.priming = this.check().then(
      () => this.schedule(POSITIVE_INTERVAL_MS),
      (e: Error) => {
        this.opts.onError?.(e);
        this.schedule(NEGATIVE_INTERVAL_MS);
      },
    );
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.check().then(
        () => this.schedule(POSITIVE_INTERVAL_MS),
        (e: Error) => {
          this.opts.onError?.(e);
          this.schedule(NEGATIVE_INTERVAL_MS);
        },
      );
    }, ms);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.opts.service.close();
  }

  /**
   * Status once: checks the plugin is healthy and, when its key ID changed (or
   * there is no DEK yet), makes a new write DEK. Throws why the plugin is unhealthy.
   */
  check(): Promise<void> {
    // One check at a time: the first prime and a poll must not make two DEKs.
    this.checking ??= this.checkOnce().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    let st: Awaited<ReturnType<KmsService['status']>>;
    try {
      st = await this.opts.service.status();
    } catch (e) {
      throw new Error(`failed to perform status section of the healthz check for KMS Provider ${this.name}, error: ${(e as Error).message}`);
    }
    const errs: string[] = [];
    if (st.healthz !== 'ok') errs.push(`got unexpected healthz status: ${st.healthz}`);
    if (st.version !== 'v2' && st.version !== 'v2beta1') errs.push(`expected KMSv2 API version v2, got ${st.version}`);
    else {
      this.version ||= st.version;
      if (this.version !== st.version)
        errs.push(`KMSv2 API version should not change after the initial status response version ${this.version}, got ${st.version}`);
    }
    const keyErr = validateKeyID(st.keyId);
    if (keyErr) errs.push(`got invalid KMSv2 KeyID hash "${keyIDHash(st.keyId)}": ${keyErr}`);
    else {
      const rotateErr = await this.rotateOnKeyIDChange(st.keyId);
      if (rotateErr) errs.push(rotateErr);
    }
    if (errs.length) throw new Error(`kmsv2 Provider ${this.name} is not healthy, error: ${errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`}`);
  }

  /** Keeps the DEK while the key ID is unchanged (extending its life), else asks the plugin to encrypt a new one. */
  private async rotateOnKeyIDChange(statusKeyID: string): Promise<string | undefined> {
    const expiresAt = this.now() + WRITE_DEK_MAX_TTL_MS;
    const cur = this.state;
    if (cur && cur.object.keyID === statusKeyID) {
      cur.expiresAt = expiresAt;
      return undefined;
    }
    const uid = randomUUID();
    const dek = new WriteDEK();
    let genErr: string | undefined;
    let encKeyID = '';
    try {
      const resp = await this.opts.service.encrypt(uid, dek.key);
      encKeyID = resp.keyId;
      const object = { keyID: resp.keyId, encryptedDEKSource: resp.ciphertext, annotations: resp.annotations, encryptedDEKSourceType: AES_GCM_KEY };
      const invalid = validateEncryptedObject({ ...object, encryptedData: Buffer.from([0]) });
      if (invalid) genErr = invalid;
      else if (resp.keyId === statusKeyID) {
        const cacheKey = dekCacheKey(AES_GCM_KEY, resp.ciphertext, resp.keyId, resp.annotations);
        this.state = { dek, object, cacheKey, expiresAt };
        this.remember(cacheKey, plainDEK(dek.key));
        return undefined;
      }
    } catch (e) {
      genErr = `failed to encrypt DEK, error: ${(e as Error).message}`;
    }
    // On any failure the current DEK stays in use until it expires.
    return (
      `failed to rotate DEK uid="${uid}", useSeed=false, errState=${cur ? '<nil>' : 'got unexpected nil transformer'}, errGen=${genErr ?? '<nil>'}, ` +
      `statusKeyIDHash="${keyIDHash(statusKeyID)}", encryptKeyIDHash="${keyIDHash(encKeyID)}", stateKeyIDHash="${keyIDHash(cur?.object.keyID ?? '')}", ` +
      `expirationTimestamp=${rfc3339(cur?.expiresAt ?? 0)}`
    );
  }

  private remember(cacheKey: string, k: ReadKey): void {
    if (this.cache.size >= DEK_CACHE_MAX && !this.cache.has(cacheKey)) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, k);
  }

  /** Writes need a DEK: the first one may still be on its way (the plugin answering its first Status). */
  toStorage(data: Buffer, aad: Buffer): Buffer | Promise<Buffer> {
    if (!this.state && this.priming) return this.priming.then(() => this.seal(data, aad));
    return this.seal(data, aad);
  }

  private seal(data: Buffer, aad: Buffer): Buffer {
    const st = this.state;
    if (!st) throw new Error('got unexpected nil transformer');
    const now = this.now();
    if (now > st.expiresAt)
      throw new Error(
        `encryptedDEKSource with keyID hash "${keyIDHash(st.object.keyID)}" expired at ${rfc3339(st.expiresAt)} (current time is ${rfc3339(now)})`,
      );
    return encodeEncryptedObject({ ...st.object, encryptedData: st.dek.seal(data, aad) });
  }

  fromStorage(data: Buffer, aad: Buffer): FromStorage | Promise<FromStorage> {
    let o: EncryptedObject;
    try {
      o = decodeEncryptedObject(data);
    } catch (e) {
      throw new Error(`proto: ${(e as Error).message.replace(/^proto: /, '')}`);
    }
    const invalid = validateEncryptedObject(o);
    if (invalid) throw new Error(invalid);
    const cacheKey = dekCacheKey(o.encryptedDEKSourceType, o.encryptedDEKSource, o.keyID, o.annotations);
    // Stale when not written with the current key ID: a rewrite moves it to the current KEK.
    const stale = !this.state || o.keyID !== this.state.object.keyID || o.encryptedDEKSourceType !== AES_GCM_KEY;
    const known = this.cache.get(cacheKey);
    if (known) return { data: known.open(o.encryptedData, aad), stale };
    return this.readKey(cacheKey, o).then((k) => ({ data: k.open(o.encryptedData, aad), stale }));
  }

  /** The DEK of a value, from the plugin; concurrent reads of one DEK share one Decrypt call. */
  private readKey(cacheKey: string, o: EncryptedObject): Promise<ReadKey> {
    let p = this.inflight.get(cacheKey);
    if (!p) {
      p = this.opts.service
        .decrypt(randomUUID(), { ciphertext: o.encryptedDEKSource, keyId: o.keyID, annotations: o.annotations })
        .then(
          (plain) => {
            const k = o.encryptedDEKSourceType === HKDF_SHA256_XNONCE_AES_GCM_SEED ? seedDEK(plain) : plainDEK(plain);
            this.remember(cacheKey, k);
            return k;
          },
          (e: Error) => {
            throw new Error(`failed to decrypt DEK, error: ${e.message}`);
          },
        )
        .finally(() => this.inflight.delete(cacheKey));
      this.inflight.set(cacheKey, p);
    }
    return p;
  }
}
