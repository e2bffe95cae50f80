/**
 * Encryption at rest: an EncryptionConfiguration turned into one transformer per
 * configured resource (k8s.io/apiserver pkg/server/options/encryptionconfig
 * getTransformerOverrides / transformerFromOverrides), found from a storage key.
 *
 * A resource's transformer is its rule's, else its group's `*.<group>`, else
 * `*.*`; a resource under no rule is stored as it is. A rule masked by an
 * earlier wildcard is an error, as upstream. Keys are read the way the stores
 * write them (registry/store.ts storagePrefix): `/registry/<resource>/...` for
 * built-in resources, `/registry/<group>/<plural>/...` for custom ones.
 */
import type { Logger } from 'pino';
import { resources as builtinResources, storageOf } from '@kubeling/api';
import {
  type EncryptionConfiguration,
  type GroupResource,
  type ProviderConfiguration,
  decodeSecret,
  goDurationMs,
  grYAMLString,
  loadEncryptionConfiguration,
  parseGroupResource,
} from './config.js';
import { PrefixTransformers, type PrefixTransformer, type Random, type Transformer, aesCBC, aesGCM, identity, keyed, secretbox } from './transformers.js';
import { KmsV2Provider, grpcKmsService, type KmsService } from './kms.js';

export type { EncryptionConfiguration } from './config.js';
export { readEncryptionConfigFile } from './config.js';
export type { Transformer, FromStorage } from './transformers.js';
export { looksEncrypted, isPromise } from './transformers.js';

export interface Encryption {
  /** The transformer of the values under a `/registry/...` key; undefined for resources stored as they are. */
  forKey(key: string): Transformer | undefined;
  /** The KMS v2 providers (their Status poll runs on its own; `check()` runs it now). */
  readonly kms: readonly KmsV2Provider[];
  close(): void;
}

export interface EncryptionOptions {
  logger?: Logger;
  /** How a KMS v2 plugin is reached: gRPC on its unix socket unless given. */
  kmsService?: (endpoint: string, timeoutMs: number) => KmsService;
  random?: Random;
}

const PREFIX = {
  aescbc: 'k8s:enc:aescbc:v1:',
  aesgcm: 'k8s:enc:aesgcm:v1:',
  secretbox: 'k8s:enc:secretbox:v1:',
  kmsV2: 'k8s:enc:kms:v2:',
};

const KMS_V1_REFUSED =
  'KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.';

const grKey = (gr: GroupResource) => `${gr.group}/${gr.resource}`;

/** The storage group of each built-in resource, by the name its keys use. */
const BUILTIN_GROUP = new Map<string, string>();
for (const r of builtinResources) {
  const s = storageOf(r);
  if (!BUILTIN_GROUP.has(s.resource)) BUILTIN_GROUP.set(s.resource, s.group);
}

function providerTransformer(p: ProviderConfiguration, opts: EncryptionOptions, kms: KmsV2Provider[]): PrefixTransformer {
  const keys = (list: { name: string; secret: string }[], make: (k: Buffer) => Transformer) =>
    list.map((k) => ({ name: k.name, transformer: make(decodeSecret(k.secret)!) }));
  if (p.aesgcm) {
    const ks = keys(p.aesgcm.keys, (k) => aesGCM(k, opts.random));
    return { prefix: Buffer.from(PREFIX.aesgcm), transformer: keyed(ks, 'no matching key was found for the provided AES transformer') };
  }
  if (p.aescbc) {
    const ks = keys(p.aescbc.keys, (k) => aesCBC(k, opts.random));
    return { prefix: Buffer.from(PREFIX.aescbc), transformer: keyed(ks, 'no matching key was found for the provided AES transformer') };
  }
  if (p.secretbox) {
    const ks = keys(p.secretbox.keys, (k) => secretbox(k, opts.random));
    return { prefix: Buffer.from(PREFIX.secretbox), transformer: keyed(ks, 'no matching key was found for the provided Secretbox transformer') };
  }
  if (p.kms) {
    const c = p.kms;
    if (c.apiVersion === 'v1') throw new Error(KMS_V1_REFUSED);
    if (c.apiVersion !== 'v2') throw new Error(`could not configure KMS plugin "${c.name}", unsupported KMS API version "${c.apiVersion}"`);
    const timeoutMs = goDurationMs(c.timeout ?? '3s');
    const provider = new KmsV2Provider({
      name: c.name,
      service: (opts.kmsService ?? grpcKmsService)(c.endpoint, timeoutMs),
      onError: (err) => opts.logger?.warn({ err: err.message, provider: c.name }, 'kms plugin failed health check probe'),
    });
    kms.push(provider);
    return { prefix: Buffer.from(`${PREFIX.kmsV2}${c.name}:`), transformer: provider };
  }
  if (p.identity) return { prefix: Buffer.alloc(0), transformer: identity };
  throw new Error('provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity');
}

/**
 * Validates the configuration (throwing every problem in upstream's words) and
 * builds the transformers; KMS v2 plugins are asked for their status at once.
 */
export function buildEncryption(config: EncryptionConfiguration, opts: EncryptionOptions = {}): Encryption {
  const cfg = loadEncryptionConfiguration(config);
  const lists = new Map<string, PrefixTransformer[]>();
  const kms: KmsV2Provider[] = [];
  try {
    for (const rc of cfg.resources) {
      const providers = rc.providers.map((p) => providerTransformer(p, opts, kms));
      for (const res of rc.resources) {
        const gr = parseGroupResource(res);
        for (const mask of [
          { group: gr.group, resource: '*' },
          { group: '*', resource: '*' },
        ]) {
          if (lists.has(grKey(mask))) throw new Error(`resource "${grYAMLString(gr)}" is masked by earlier rule "${grYAMLString(mask)}"`);
        }
        lists.set(grKey(gr), [...(lists.get(grKey(gr)) ?? []), ...providers]);
      }
    }
  } catch (e) {
    for (const k of kms) k.close();
    throw new Error(`error while building transformers: ${(e as Error).message}`);
  }
  const overrides = new Map<string, Transformer>();
  for (const [k, list] of lists) overrides.set(k, new PrefixTransformers(list, 'no matching prefix found'));
  for (const k of kms) k.start();

  const byGR = (gr: GroupResource): Transformer | undefined =>
    overrides.get(grKey(gr)) ?? overrides.get(grKey({ group: gr.group, resource: '*' })) ?? overrides.get('*/*');
  // Resolved once per storage location: the lookup is a string slice and a Map hit.
  const resolved = new Map<string, Transformer | null>();
  return {
    kms,
    forKey(key) {
      const rest = key.slice('/registry/'.length);
      const i = rest.indexOf('/');
      const seg = i < 0 ? rest : rest.slice(0, i);
      let id = seg;
      // Custom resources live under their group, which always has a dot.
      if (seg.includes('.')) {
        const j = rest.indexOf('/', i + 1);
        id = i < 0 ? seg : rest.slice(0, j < 0 ? undefined : j);
      }
      let t = resolved.get(id);
      if (t === undefined) {
        const gr = seg === id ? { group: BUILTIN_GROUP.get(seg) ?? '', resource: seg } : { group: seg, resource: id.slice(seg.length + 1) };
        t = byGR(gr) ?? null;
        resolved.set(id, t);
      }
      return t ?? undefined;
    },
    close() {
      for (const k of kms) k.close();
    },
  };
}
