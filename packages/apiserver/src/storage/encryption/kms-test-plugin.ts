/**
 * A KMS v2 plugin of kubeling's own (the `v2.KeyManagementService` of
 * k8s.io/kms/apis/v2 on a unix socket), for tests and local clusters. It
 * "encrypts" data keys with AES-256-GCM under a key of its own, named by its key
 * ID; `rotate()` (or SIGHUP) switches to a new key and ID while old ones keep
 * decrypting. It counts its calls, so tests can see the apiserver's DEK cache.
 * Not a key store: keys live in memory, or in `--keys-file` (mode 0600) when
 * given, which is only as safe as that file.
 *
 *   node --import tsx packages/apiserver/src/storage/encryption/kms-test-plugin.ts --socket=PATH [--keys-file=PATH]
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { kmsServiceDefinition } from './kms.js';

export interface KmsTestPlugin {
  /** The socket path, and the endpoint to configure (`unix://<socket>`). */
  socket: string;
  endpoint: string;
  /** The key ID Status reports and Encrypt uses. */
  readonly keyId: string;
  /** Calls received, by method. */
  readonly calls: { status: number; encrypt: number; decrypt: number };
  /** Switches to a new key (and key ID); returns the new ID. */
  rotate(): string;
  /** While false, Status answers an unhealthy `healthz` and Encrypt/Decrypt fail. */
  healthy: boolean;
  stop(): Promise<void>;
}

interface Keys {
  current: string;
  keys: Record<string, string>;
}

const ANNOTATION = 'version.kms.kubeling.dev';

function seal(key: Buffer, data: Buffer, aad: Buffer): Buffer {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(aad);
  const body = Buffer.concat([c.update(data), c.final()]);
  return Buffer.concat([nonce, body, c.getAuthTag()]);
}

function open(key: Buffer, data: Buffer, aad: Buffer): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
}

export async function startKmsTestPlugin(opts: { socket: string; keysFile?: string }): Promise<KmsTestPlugin> {
  const load = (): Keys => {
    if (opts.keysFile && existsSync(opts.keysFile)) return JSON.parse(readFileSync(opts.keysFile, 'utf8')) as Keys;
    return { current: 'key-1', keys: { 'key-1': randomBytes(32).toString('base64') } };
  };
  const keys = load();
  const save = () => {
    if (opts.keysFile) writeFileSync(opts.keysFile, JSON.stringify(keys), { mode: 0o600 });
  };
  save();
  const keyOf = (id: string) => {
    const k = keys.keys[id];
    return k ? Buffer.from(k, 'base64') : undefined;
  };
  const calls = { status: 0, encrypt: 0, decrypt: 0 };
  const unavailable = { code: grpc.status.UNAVAILABLE, details: 'plugin is unhealthy' };
  const state = { healthy: true };

  const server = new grpc.Server();
  server.addService(kmsServiceDefinition().service, {
    Status: (_call: grpc.ServerUnaryCall<object, object>, cb: grpc.sendUnaryData<object>) => {
      calls.status++;
      cb(null, { version: 'v2', healthz: state.healthy ? 'ok' : 'unhealthy', key_id: keys.current });
    },
    Encrypt: (call: grpc.ServerUnaryCall<{ plaintext: Buffer }, object>, cb: grpc.sendUnaryData<object>) => {
      calls.encrypt++;
      if (!state.healthy) return cb(unavailable);
      const id = keys.current;
      // The key ID is bound to the ciphertext, so a DEK cannot be replayed under another ID.
      cb(null, { ciphertext: seal(keyOf(id)!, call.request.plaintext, Buffer.from(id)), key_id: id, annotations: { [ANNOTATION]: Buffer.from('1') } });
    },
    Decrypt: (
      call: grpc.ServerUnaryCall<{ ciphertext: Buffer; key_id: string; annotations: Record<string, Buffer> }, object>,
      cb: grpc.sendUnaryData<object>,
    ) => {
      calls.decrypt++;
      if (!state.healthy) return cb(unavailable);
      const key = keyOf(call.request.key_id);
      if (!key) return cb({ code: grpc.status.INVALID_ARGUMENT, details: `unknown key ID "${call.request.key_id}"` });
      try {
        cb(null, { plaintext: open(key, call.request.ciphertext, Buffer.from(call.request.key_id)) });
      } catch {
        cb({ code: grpc.status.INVALID_ARGUMENT, details: 'ciphertext does not decrypt with the named key' });
      }
    },
  });
  rmSync(opts.socket, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${opts.socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())),
  );

  return {
    socket: opts.socket,
    endpoint: `unix://${opts.socket}`,
    get keyId() {
      return keys.current;
    },
    calls,
    get healthy() {
      return state.healthy;
    },
    set healthy(v: boolean) {
      state.healthy = v;
    },
    rotate() {
      const n = Object.keys(keys.keys).length + 1;
      keys.current = `key-${n}`;
      keys.keys[keys.current] = randomBytes(32).toString('base64');
      save();
      return keys.current;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        // Clients keep their connection open: after a moment in-flight calls are cut.
        const force = setTimeout(() => server.forceShutdown(), 1000);
        server.tryShutdown(() => {
          clearTimeout(force);
          rmSync(opts.socket, { force: true });
          resolve();
        });
      }),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { socket: { type: 'string' }, 'keys-file': { type: 'string' } }, strict: true });
  if (!values.socket) {
    process.stderr.write('error: --socket is required\n');
    process.exit(2);
  }
  const plugin = await startKmsTestPlugin({ socket: values.socket, ...(values['keys-file'] ? { keysFile: values['keys-file'] } : {}) });
  process.stderr.write(`kms-test-plugin: serving ${plugin.endpoint} with key ID ${plugin.keyId}\n`);
  process.on('SIGHUP', () => process.stderr.write(`kms-test-plugin: rotated to key ID ${plugin.rotate()}\n`));
  const stop = () => void plugin.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    process.stderr.write(`kms-test-plugin: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
