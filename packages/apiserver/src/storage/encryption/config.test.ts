/**
 * The EncryptionConfiguration as kube-apiserver reads it: strict decoding,
 * defaults, and validation errors in upstream's words and order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EncryptionConfiguration, decodeEncryptionConfiguration, loadEncryptionConfiguration, readEncryptionConfigFile } from './config.js';
import { buildEncryption } from './index.js';

const KEY32 = Buffer.alloc(32, 1).toString('base64');
const doc = (resources: unknown[]) => ({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources });
const load = (resources: unknown[]) => loadEncryptionConfiguration(doc(resources));
const fails = (resources: unknown[], message: string) => assert.throws(() => load(resources), { message });

test('a valid configuration decodes with KMS defaults filled in', () => {
  const c = load([
    { resources: ['secrets', 'configmaps'], providers: [{ aescbc: { keys: [{ name: 'key1', secret: KEY32 }] } }, { identity: {} }] },
    { resources: ['*.apps'], providers: [{ kms: { apiVersion: 'v2', name: 'vault', endpoint: 'unix:///run/kms.sock' } }] },
  ]);
  assert.deepEqual(c.resources[1]!.providers[0]!.kms, { apiVersion: 'v2', name: 'vault', endpoint: 'unix:///run/kms.sock', timeout: '3s' });
  // A kms provider without apiVersion is v1 (with the v1 cache size), which needs a feature gate upstream.
  const v1 = load([{ resources: ['secrets'], providers: [{ kms: { name: 'old', endpoint: 'unix:///x.sock' } }] }]);
  assert.deepEqual(v1.resources[0]!.providers[0]!.kms, { name: 'old', endpoint: 'unix:///x.sock', apiVersion: 'v1', timeout: '3s', cachesize: 1000 });
  assert.throws(() => buildEncryption(v1), {
    message:
      'error while building transformers: KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.',
  });
});

test('key validation: base64, lengths per provider, names and secrets required; secrets never echoed', () => {
  fails(
    [{ resources: ['secrets'], providers: [{ aescbc: { keys: [{ name: 'k', secret: Buffer.alloc(8).toString('base64') }] } }] }],
    'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]',
  );
  fails(
    [{ resources: ['secrets'], providers: [{ secretbox: { keys: [{ name: 'k', secret: Buffer.alloc(16).toString('base64') }] } }] }],
    'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]',
  );
  fails(
    [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: 'k', secret: 'not base64!' }] } }] }],
    'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded',
  );
  fails(
    [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: '', secret: '' }] } }] }],
    '[resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[0].aesgcm.keys[0].secret: Required value: secret is a mandatory field for a key]',
  );
  fails(
    [{ resources: ['secrets'], providers: [{ aesgcm: { keys: [] } }] }],
    'resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required',
  );
});

test('resource and provider validation', () => {
  fails([], 'resources: Required value: at least one resources is required');
  fails(
    [{ resources: [], providers: [] }],
    '[resources[0].resources: Required value: at least one resources[0].resources is required, resources[0].providers: Required value: at least one resources[0].providers is required]',
  );
  fails(
    [{ resources: ['secrets', '*.'], providers: [{ identity: {} }] }],
    `resources[0].resources: Invalid value: []string{"secrets", "*."}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`,
  );
  fails(
    [{ resources: ['secrets', 'secrets'], providers: [{ identity: {} }] }],
    'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource cannot be specified multiple times',
  );
  fails(
    [{ resources: ['*'], providers: [{ identity: {} }] }],
    `resources[0].resources[0]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`,
  );
  fails(
    [{ resources: ['Secrets'], providers: [{ identity: {} }] }],
    'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
  );
  fails(
    [{ resources: ['secrets.*'], providers: [{ identity: {} }] }],
    'resources[0].resources[0]: Invalid value: "secrets.*": encrypting the same resource across groups is not supported',
  );
  fails(
    [{ resources: ['events.events.k8s.io'], providers: [{ identity: {} }] }],
    `resources[0].resources[0]: Invalid value: "events.events.k8s.io": '*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file`,
  );
  fails(
    [{ resources: ['secrets'], providers: [{ identity: {}, aescbc: { keys: [{ name: 'k', secret: KEY32 }] } }] }],
    'resources[0].providers[0]: Invalid value: {"identity":{},"aescbc":{"keys":[{"name":"k","secret":"' +
      KEY32 +
      '"}]}}: more than one provider specified in a single element, should split into different list elements',
  );
  // A later rule masked by an earlier wildcard fails when the transformers are built.
  assert.throws(
    () =>
      buildEncryption(
        doc([
          { resources: ['*.'], providers: [{ identity: {} }] },
          { resources: ['secrets'], providers: [{ identity: {} }] },
        ]) as EncryptionConfiguration,
      ),
    { message: 'error while building transformers: resource "secrets" is masked by earlier rule "*."' },
  );
});

test('kms validation', () => {
  const kms = (k: Record<string, unknown>) => [
    { resources: ['secrets'], providers: [{ kms: { apiVersion: 'v2', name: 'p', endpoint: 'unix:///k.sock', ...k } }] },
  ];
  fails(
    kms({ endpoint: 'tcp://127.0.0.1:80' }),
    'resources[0].providers[0].kms.endpoint: Invalid value: "tcp://127.0.0.1:80": unsupported scheme "tcp" for KMS provider, only unix is supported',
  );
  fails(kms({ endpoint: '' }), 'resources[0].providers[0].kms.endpoint: Invalid value: "": endpoint is a mandatory field for a kms');
  fails(kms({ timeout: '0s' }), 'resources[0].providers[0].kms.timeout: Invalid value: 0s: timeout should be a positive value');
  fails(kms({ name: 'a:b' }), `resources[0].providers[0].kms.name: Invalid value: "a:b": invalid KMS provider name a:b, must not contain ':'`);
  fails(kms({ cachesize: 10 }), 'resources[0].providers[0].kms.cachesize: Invalid value: 10: cachesize is not supported in v2');
  fails(
    kms({ apiVersion: 'v3' }),
    'resources[0].providers[0].kms.apiVersion: Invalid value: "v3": unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported',
  );
  fails(
    [
      { resources: ['secrets'], providers: [{ kms: { apiVersion: 'v2', name: 'p', endpoint: 'unix:///a.sock' } }] },
      { resources: ['configmaps'], providers: [{ kms: { apiVersion: 'v2', name: 'p', endpoint: 'unix:///b.sock' } }] },
    ],
    'resources[1].providers[0].kms.name: Invalid value: "p": duplicate KMS provider name p, names must be unique',
  );
});

test('strict decoding: unknown fields, wrong kinds, bad durations', () => {
  assert.throws(() => decodeEncryptionConfiguration(doc([{ resources: ['secrets'], providers: [{ aescbc: { key: [] } }] }])), {
    message: 'strict decoding error: unknown field "resources[0].providers[0].aescbc.key"',
  });
  assert.throws(() => decodeEncryptionConfiguration({ apiVersion: 'v1', kind: 'ConfigMap' }), /no kind "ConfigMap" is registered for version "v1"/);
  assert.throws(
    () => decodeEncryptionConfiguration(doc([{ resources: ['secrets'], providers: [{ kms: { name: 'p', endpoint: 'unix:///k', timeout: '3 seconds' } }] }])),
    { message: 'time: invalid duration "3 seconds"' },
  );
  // `identity:` with no value is no provider at all, as upstream's nil pointer.
  fails(
    [{ resources: ['secrets'], providers: [{ identity: null }] }],
    'resources[0].providers[0]: Invalid value: {}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity',
  );
});

test('the file: read errors and validation errors read as kube-apiserver reports them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeling-enc-'));
  try {
    const file = join(dir, 'enc.yaml');
    assert.throws(
      () => readEncryptionConfigFile(file),
      /^Error: error while parsing file: error while loading file: error reading encryption provider configuration file ".*enc\.yaml": /,
    );
    writeFileSync(file, '');
    assert.throws(() => readEncryptionConfigFile(file), {
      message: `error while parsing file: error while loading file: encryption provider configuration file "${file}" is empty`,
    });
    writeFileSync(
      file,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n      - {name: k, secret: c2hvcnQ=}\n',
    );
    assert.throws(() => readEncryptionConfigFile(file), {
      message:
        'error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of [16 24 32]',
    });
    writeFileSync(
      file,
      `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n  - bogus: {}\n`,
    );
    assert.throws(() => readEncryptionConfigFile(file), {
      message: `error while parsing file: error decoding encryption provider configuration file "${file}": strict decoding error: unknown field "resources[0].providers[1].bogus"`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
