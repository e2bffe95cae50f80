/**
 * The shared test environment: a real etcd process and a real kubeling apiserver
 * on loopback ports, started per suite and always stopped.
 *
 *   const env = await startTestEnv();
 *   after(() => env.stop());
 *   await fetch(`${env.url}/api/v1/namespaces`);
 *
 * The apiserver runs in the test process by default (`buildApiServer` listening
 * on 127.0.0.1:0); `{ apiserverProcess: true }` runs `packages/apiserver/src/main.ts`
 * as a child process instead, for tests that kill or restart it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APISERVER_DNS, APISERVER_IPS, createCA, issue, serviceAccountKeys } from '@kubeling/pki';
import { buildApiServer, type ApiServer, type ApiServerOptions } from '@kubeling/apiserver';
import { freePort, startEtcd, stopChild, waitFor, type EtcdProcess } from './etcd.js';

export { eventually, freePort, repeat, startEtcd, startEtcdCluster, stopChild, waitFor, type EtcdCluster, type EtcdProcess } from './etcd.js';

export interface TestPKI {
  caPem: string;
  /** The ServiceAccount signing key (ES256 PKCS#8) and its public key. */
  saPrivatePem: string;
  saPublicPem: string;
  /** A client certificate for user `cn` in groups `orgs`. */
  client(cn: string, orgs?: string[]): Promise<{ certPem: string; keyPem: string }>;
}

export interface TestEnv {
  etcd: EtcdProcess;
  /** Present with `secure`. */
  pki?: TestPKI;
  /** Base URL of the apiserver, e.g. http://127.0.0.1:40123 */
  url: string;
  /** The in-process server (undefined when it runs as a child process). */
  server: ApiServer | undefined;
  /** The apiserver child process (when `apiserverProcess`). */
  child: ChildProcess | undefined;
  stop(): Promise<void>;
}

export interface TestEnvOptions {
  apiserverProcess?: boolean;
  /** HTTPS with a fresh CA, client certificates and RBAC (in-process apiserver only). */
  secure?: boolean;
  /** The in-process apiserver's options; TaintNodesByCondition is off unless `admission.enable` names it. */
  server?: Partial<ApiServerOptions>;
  /** Extra flags for the apiserver process (with `apiserverProcess`); TaintNodesByCondition is off unless they enable it. */
  processArgs?: string[];
}

/** /readyz over HTTPS, trusting `caPem` (it answers anonymous requests). */
function readyOverTLS(url: string, caPem: string): Promise<boolean> {
  const u = new URL(`${url}/readyz`);
  return new Promise((resolve) => {
    const req = httpsRequest({ host: u.hostname, port: u.port, path: u.pathname, ca: caPem }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * Whether this module runs compiled (packages/testenv/dist, as the benchmarks
 * run it) or from source through tsx (as the tests do): components it spawns run the same way.
 */
const COMPILED = import.meta.url.endsWith('.js');

/** The entry point of a workspace package's main module, for spawning components. */
export function packageMain(pkg: string): string {
  return fileURLToPath(new URL(COMPILED ? `../../${pkg}/dist/main.js` : `../../${pkg}/src/main.ts`, import.meta.url));
}

/** Node's arguments for a component: its compiled main, or `--import tsx` and its source. */
export function nodeArgs(file: string, args: string[]): string[] {
  // KUBELING_PROFILE_DIR: write a CPU profile of each spawned component there.
  const prof = process.env.KUBELING_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.KUBELING_PROFILE_DIR}`] : [];
  return [...prof, ...(file.endsWith('.js') ? ['--conditions=kubeling-dist'] : ['--import', 'tsx']), file, ...args];
}

/**
 * TaintNodesByCondition taints every new node not-ready until the node
 * lifecycle controller sees it Ready; a test environment runs no such
 * controller, so, as upstream's integration framework does, it is off unless
 * the test enables it (merged into the test's own disable list).
 */
const NODE_TAINT_PLUGIN = 'TaintNodesByCondition';

function testAdmission(a: ApiServerOptions['admission']): NonNullable<ApiServerOptions['admission']> {
  if (a?.enable?.includes(NODE_TAINT_PLUGIN)) return a;
  return { ...a, disable: [...new Set([...(a?.disable ?? []), NODE_TAINT_PLUGIN])] };
}

/** The apiserver process's flags with TaintNodesByCondition disabled unless they enable it. */
function testAdmissionArgs(args: readonly string[]): string[] {
  const out = [...args];
  const flag = (name: string) => {
    const i = out.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    if (i < 0) return undefined;
    const inline = out[i]!.includes('=');
    const at = inline ? i : i + 1;
    const value = inline ? out[i]!.slice(out[i]!.indexOf('=') + 1) : (out[i + 1] ?? '');
    return { values: value.split(',').filter(Boolean), set: (v: string) => (out[at] = inline ? `--${name}=${v}` : v) };
  };
  if (flag('enable-admission-plugins')?.values.includes(NODE_TAINT_PLUGIN)) return out;
  const disable = flag('disable-admission-plugins');
  if (!disable) out.push(`--disable-admission-plugins=${NODE_TAINT_PLUGIN}`);
  else if (!disable.values.includes(NODE_TAINT_PLUGIN)) disable.set([...disable.values, NODE_TAINT_PLUGIN].join(','));
  return out;
}

export async function startTestEnv(opts: TestEnvOptions = {}): Promise<TestEnv> {
  const etcd = await startEtcd();
  try {
    let pki: TestPKI | undefined;
    let tls: { cert: string; key: string; clientCA: string } | undefined;
    if (opts.secure) {
      const ca = await createCA('kubeling-test-ca');
      const serving = await issue(ca, { commonName: 'kube-apiserver', dnsNames: APISERVER_DNS, ips: APISERVER_IPS, usage: 'server' });
      tls = { cert: serving.certPem, key: serving.keyPem, clientCA: ca.certPem };
      const sa = await serviceAccountKeys();
      pki = {
        caPem: ca.certPem,
        saPrivatePem: sa.privatePem,
        saPublicPem: sa.publicPem,
        client: (cn, orgs = []) => issue(ca, { commonName: cn, organizations: orgs, usage: 'client' }),
      };
    }
    if (opts.apiserverProcess) {
      const port = await freePort();
      // With `secure`, the same PKI as the in-process server, in files the flags name.
      const dir = mkdtempSync(join(tmpdir(), 'kubeling-apiserver-'));
      const file = (name: string, pem: string) => {
        const f = join(dir, name);
        writeFileSync(f, pem, { mode: 0o600 });
        return f;
      };
      const secureFlags =
        tls && pki
          ? [
              `--tls-cert-file=${file('serving.crt', tls.cert)}`,
              `--tls-private-key-file=${file('serving.key', tls.key)}`,
              `--client-ca-file=${file('ca.crt', tls.clientCA)}`,
              `--service-account-signing-key-file=${file('sa.key', pki.saPrivatePem)}`,
              `--service-account-key-file=${file('sa.pub', pki.saPublicPem)}`,
            ]
          : [];
      const child = spawn(
        process.execPath,
        nodeArgs(packageMain('apiserver'), [
          `--etcd-servers=${etcd.endpoint}`,
          `--secure-port=${port}`,
          '--log-level=warn',
          ...secureFlags,
          ...testAdmissionArgs(opts.processArgs ?? []),
        ]),
        {
          stdio: ['ignore', 'ignore', 'inherit'],
          cwd: fileURLToPath(new URL('../../..', import.meta.url)),
        },
      );
      const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
      const ready = tls ? () => readyOverTLS(url, tls!.clientCA) : async () => (await fetch(`${url}/readyz`)).ok;
      try {
        await waitFor(
          async () => {
            if (child.exitCode !== null) throw new Error(`apiserver exited with ${child.exitCode}`);
            return ready();
          },
          90_000,
          'apiserver to become ready',
        );
      } catch (e) {
        await stopChild(child);
        rmSync(dir, { recursive: true, force: true });
        throw e;
      }
      return {
        etcd,
        ...(pki ? { pki } : {}),
        url,
        server: undefined,
        child,
        stop: async () => {
          await stopChild(child);
          rmSync(dir, { recursive: true, force: true });
          await etcd.stop();
        },
      };
    }
    const server = await buildApiServer({
      etcdServers: [etcd.endpoint],
      logger: false,
      ...(tls ? { tls } : {}),
      ...(pki ? { serviceAccount: { signingKeyPem: pki.saPrivatePem, publicKeyPems: [pki.saPublicPem] } } : {}),
      ...opts.server,
      admission: testAdmission(opts.server?.admission),
    });
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = server.app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    return {
      etcd,
      ...(pki ? { pki } : {}),
      url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
      server,
      child: undefined,
      stop: async () => {
        await server.close().catch(() => undefined);
        await etcd.stop();
      },
    };
  } catch (e) {
    await etcd.stop();
    throw e;
  }
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * One HTTP request to the apiserver. Objects are sent as JSON unless
 * `contentType` says otherwise; the reply body is parsed when it is JSON.
 */
export async function request<T = any>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  opts: { contentType?: string; accept?: string } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = {};
  if (opts.accept) headers.accept = opts.accept;
  let payload: string | Buffer | undefined;
  if (body !== undefined) {
    headers['content-type'] = opts.contentType ?? 'application/json';
    payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  }
  const res = await fetch(base + path, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/**
 * Reads a watch stream, handing each event to `onEvent` until it returns true,
 * the stream ends, or `timeoutMs` passes. Returns the events seen.
 */
export async function readWatch(
  url: string,
  onEvent: (ev: { type: string; object: any }, all: { type: string; object: any }[]) => boolean | void,
  timeoutMs = 10_000,
): Promise<{ type: string; object: any }[]> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), timeoutMs);
  const events: { type: string; object: any }[] = [];
  try {
    const res = await fetch(url, { signal: ctrl.signal });
    if (!res.body) return events;
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        const ev = JSON.parse(line) as { type: string; object: any };
        events.push(ev);
        if (onEvent(ev, events)) {
          ctrl.abort();
          return events;
        }
      }
    }
  } catch (e) {
    if ((e as Error).name !== 'AbortError') throw e;
  } finally {
    clearTimeout(timer);
  }
  return events;
}

export { Kubectl, kubectlBinaries, type KubectlResult } from './kubectl.js';
export { startTestNode, type TestNode, type TestNodeOptions } from './node.js';
export { CSI_DRIVER, CSI_DRIVER_GROUP, CSI_DRIVER_RULES, csiDriverUser, storageObjects, type StorageAddonOptions } from './storage.js';
export { containerdUnavailable, startContainerd, type Containerd } from './containerd.js';
export { startRegistry, ociImage, busyboxRootfs, tar, type OciImage, type Registry } from './oci.js';

export interface Credentials {
  certPem?: string;
  keyPem?: string;
  token?: string;
  headers?: Record<string, string>;
}

/**
 * A caller of an HTTPS apiserver as one identity (a client certificate or a
 * bearer token), answering like `request`: objects are sent as JSON unless
 * `contentType` says otherwise, JSON replies are parsed.
 */
export function clientFor(env: { url: string; pki?: TestPKI }, creds: Credentials) {
  return (
    method: string,
    path: string,
    body?: unknown,
    opts: { contentType?: string; accept?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply> => {
    const u = new URL(env.url + path);
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method,
          ...(env.pki ? { ca: env.pki.caPem } : {}),
          ...(creds.certPem ? { cert: creds.certPem, key: creds.keyPem } : {}),
          headers: {
            accept: opts.accept ?? 'application/json',
            ...(payload !== undefined ? { 'content-type': opts.contentType ?? 'application/json' } : {}),
            ...(creds.token ? { authorization: `Bearer ${creds.token}` } : {}),
            ...(creds.headers ?? {}),
            ...(opts.headers ?? {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            if ((res.headers['content-type'] ?? '').includes('json')) {
              try {
                parsed = JSON.parse(text);
              } catch {
                parsed = text;
              }
            }
            const headers = new Headers();
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
            resolve({ status: res.statusCode!, headers, body: parsed, text });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
}

/**
 * GET over HTTPS without verifying the server's certificate: for the secure
 * ports of the controller-manager and the scheduler, which serve self-signed
 * certificates as upstream's do.
 */
export function getSelfSigned(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'GET', rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
