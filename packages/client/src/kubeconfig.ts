/**
 * kubeconfig loading in kubectl's order: an explicit path (`--kubeconfig`), then
 * `$KUBECONFIG` (a path list, merged: the first file to set a value wins), then
 * `~/.kube/config`. The current context (or an override) selects cluster and
 * user; CA data or files, client certificates and bearer tokens are resolved
 * relative to the file that named them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import YAML from 'yaml';

export interface NamedCluster {
  name: string;
  cluster: {
    server: string;
    'certificate-authority'?: string;
    'certificate-authority-data'?: string;
    'insecure-skip-tls-verify'?: boolean;
    'tls-server-name'?: string;
  };
}
export interface NamedUser {
  name: string;
  user: {
    token?: string;
    tokenFile?: string;
    'client-certificate'?: string;
    'client-certificate-data'?: string;
    'client-key'?: string;
    'client-key-data'?: string;
    username?: string;
    password?: string;
    as?: string;
    'as-groups'?: string[];
  };
}
export interface NamedContext {
  name: string;
  context: { cluster: string; user: string; namespace?: string };
}

export interface KubeConfig {
  clusters: NamedCluster[];
  users: NamedUser[];
  contexts: NamedContext[];
  'current-context'?: string;
  preferences?: Record<string, unknown>;
  /** Which file each entry came from (for relative paths and `config` writes). */
  origins: { clusters: Record<string, string>; users: Record<string, string>; contexts: Record<string, string>; currentContext?: string };
  /** Files read, in precedence order. */
  files: string[];
}

export interface LoadOptions {
  /** `--kubeconfig`: one file, no merging. */
  explicitPath?: string | undefined;
  /** Environment to read `KUBECONFIG` and `HOME` from (tests pass their own). */
  env?: Record<string, string | undefined>;
}

/** The files kubectl would read, in precedence order. */
export function kubeconfigPaths(opts: LoadOptions = {}): string[] {
  const env = opts.env ?? process.env;
  if (opts.explicitPath) return [opts.explicitPath];
  const list = env.KUBECONFIG;
  if (list) return list.split(delimiter).filter((p) => p.length > 0);
  const home = env.HOME ?? homedir();
  return [join(home, '.kube', 'config')];
}

export function loadKubeConfig(opts: LoadOptions = {}): KubeConfig {
  const paths = kubeconfigPaths(opts);
  const out: KubeConfig = { clusters: [], users: [], contexts: [], origins: { clusters: {}, users: {}, contexts: {} }, files: [] };
  for (const p of paths) {
    if (!existsSync(p)) {
      if (opts.explicitPath) throw new Error(`stat ${p}: no such file or directory`);
      continue;
    }
    const doc = (YAML.parse(readFileSync(p, 'utf8')) ?? {}) as Partial<KubeConfig>;
    out.files.push(p);
    const base = dirname(p);
    for (const c of doc.clusters ?? []) {
      if (out.origins.clusters[c.name]) continue;
      const ca = c.cluster?.['certificate-authority'];
      if (ca && !isAbsolute(ca)) c.cluster['certificate-authority'] = join(base, ca);
      out.clusters.push(c);
      out.origins.clusters[c.name] = p;
    }
    for (const u of doc.users ?? []) {
      if (out.origins.users[u.name]) continue;
      u.user ??= {};
      for (const k of ['client-certificate', 'client-key', 'tokenFile'] as const) {
        const v = u.user[k];
        if (v && !isAbsolute(v)) u.user[k] = join(base, v);
      }
      out.users.push(u);
      out.origins.users[u.name] = p;
    }
    for (const c of doc.contexts ?? []) {
      if (out.origins.contexts[c.name]) continue;
      out.contexts.push(c);
      out.origins.contexts[c.name] = p;
    }
    if (!out['current-context'] && doc['current-context']) {
      out['current-context'] = doc['current-context'];
      out.origins.currentContext = p;
    }
  }
  return out;
}

export interface Overrides {
  context?: string | undefined;
  cluster?: string | undefined;
  user?: string | undefined;
  server?: string | undefined;
  token?: string | undefined;
  namespace?: string | undefined;
  insecureSkipTLSVerify?: boolean | undefined;
  as?: string | undefined;
  asGroups?: string[] | undefined;
}

/** What a client needs to talk to the cluster. */
export interface ClientConfig {
  server: string;
  namespace: string;
  ca?: Buffer;
  insecureSkipTLSVerify: boolean;
  tlsServerName?: string;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  username?: string;
  password?: string;
  impersonate?: { user: string; groups: string[] };
  contextName?: string;
}

const readData = (data: string | undefined, file: string | undefined): Buffer | undefined => {
  if (data) return Buffer.from(data, 'base64');
  if (file) return readFileSync(file);
  return undefined;
};

/** Resolves the effective configuration; throws kubectl-like errors for missing pieces. */
export function resolveClientConfig(kc: KubeConfig, o: Overrides = {}): ClientConfig {
  const contextName = o.context ?? kc['current-context'];
  const ctx = contextName ? kc.contexts.find((c) => c.name === contextName) : undefined;
  if (o.context && !ctx) throw new Error(`context was not found for specified context: ${o.context}`);
  const clusterName = o.cluster ?? ctx?.context.cluster;
  const userName = o.user ?? ctx?.context.user;
  const cluster = clusterName ? kc.clusters.find((c) => c.name === clusterName) : undefined;
  if (o.cluster && !cluster) throw new Error(`cluster "${o.cluster}" not found`);
  const user = userName ? kc.users.find((u) => u.name === userName) : undefined;
  const server = o.server ?? cluster?.cluster.server;
  if (!server) {
    throw new Error('The connection to the server localhost:8080 was refused - did you specify the right host or port?');
  }
  const cfg: ClientConfig = {
    server: server.replace(/\/+$/, ''),
    namespace: o.namespace ?? ctx?.context.namespace ?? 'default',
    insecureSkipTLSVerify: o.insecureSkipTLSVerify ?? cluster?.cluster['insecure-skip-tls-verify'] ?? false,
  };
  if (contextName) cfg.contextName = contextName;
  const ca = readData(cluster?.cluster['certificate-authority-data'], cluster?.cluster['certificate-authority']);
  if (ca) cfg.ca = ca;
  if (cluster?.cluster['tls-server-name']) cfg.tlsServerName = cluster.cluster['tls-server-name'];
  const u = user?.user ?? {};
  const token = o.token ?? u.token ?? (u.tokenFile ? readFileSync(u.tokenFile, 'utf8').trim() : undefined);
  if (token) cfg.token = token;
  if (!o.token) {
    const cert = readData(u['client-certificate-data'], u['client-certificate']);
    const key = readData(u['client-key-data'], u['client-key']);
    if (cert) cfg.cert = cert;
    if (key) cfg.key = key;
    if (u.username) cfg.username = u.username;
    if (u.password) cfg.password = u.password;
  }
  const as = o.as ?? u.as;
  if (as) cfg.impersonate = { user: as, groups: o.asGroups ?? u['as-groups'] ?? [] };
  return cfg;
}
