/**
 * What every command shares: the flags, the resolved client configuration, one
 * REST client and the cached discovery; and the ways kubectl names objects on
 * its command line (`TYPE NAME...`, `TYPE/NAME...`, `TYPE1,TYPE2`, `-f`
 * files, directories with `-R`, stdin).
 */
import { readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeList, KubeObject } from '@kubeling/api';
import { isStatusError } from '@kubeling/apimachinery';
import { RestClient, loadKubeConfig, resolveClientConfig, type ClientConfig } from '@kubeling/client';
import { Discovery, resourcePath, type Mapping } from './discovery.js';
import { UsageError, type Flags } from './flags.js';
import { asString, isObject, nested, type JsonObject } from './json.js';
import { parseDuration } from '@kubeling/apimachinery';

/**
 * A document of a `-f` source taken as an object of its kind. Nothing is
 * checked here but that it is an object; `validate` checks what kubectl
 * checks before a write, and the server the rest.
 */
const asManifest = (doc: unknown) => doc as KubeObject;

export interface IO {
  out(s: string): void;
  err(s: string): void;
  env: Record<string, string | undefined>;
  /** Ends long-running commands (logs -f, get -w, rollout status, wait). */
  signal?: AbortSignal;
  /** Standard input, for `-f -` (defaults to the process's). */
  stdin?: () => string;
  /** Standard input as a stream, for `exec -i` (defaults to the process's). */
  stdinStream?: NodeJS.ReadableStream;
  /** Runs the editor on a file (edit); defaults to `$EDITOR` through a shell. */
  edit?: (file: string) => number;
}

export const USER_AGENT = 'kubectl/v1.32.0 (kubeling)';

export class Ctx {
  private clientInstance?: RestClient;
  private discoveryInstance?: Discovery;
  private configInstance?: ClientConfig;

  constructor(
    readonly g: Flags,
    readonly io: IO,
    readonly dashArgs: string[] = [],
  ) {}

  get config(): ClientConfig {
    if (!this.configInstance) {
      const g = this.g;
      const kc = loadKubeConfig({ explicitPath: g.kubeconfig, env: this.io.env });
      this.configInstance = resolveClientConfig(kc, {
        context: g.context,
        cluster: g.cluster,
        user: g.user,
        server: g.server,
        token: g.token,
        namespace: g.namespace,
        as: g.as,
        ...(g.asGroup.length ? { asGroups: g.asGroup } : {}),
      });
      if (g.insecureSkipTlsVerify) this.configInstance = { ...this.configInstance, insecureSkipTLSVerify: true };
    }
    return this.configInstance;
  }

  get client(): RestClient {
    this.clientInstance ??= new RestClient(this.config, { userAgent: USER_AGENT, qps: 50, burst: 300 });
    return this.clientInstance;
  }

  get discovery(): Discovery {
    this.discoveryInstance ??= new Discovery(this.client, this.g.cacheDir ?? join(this.io.env.HOME ?? homedir(), '.kube', 'cache'));
    return this.discoveryInstance;
  }

  /** The namespace of the command: `-n`, else the context's, else `default`. */
  get ns(): string {
    return this.g.namespace ?? this.config.namespace ?? 'default';
  }

  /** Whether client-side validation runs (`--validate=false|ignore` turns it off, as in kubectl). */
  get validating(): boolean {
    const v = this.g.validate ?? 'strict';
    if (!['true', 'false', 'strict', 'warn', 'ignore'].includes(v))
      throw new UsageError(`error: invalid - validate option "${v}"; must be one of: strict (or true), warn, ignore (or false)`);
    return v !== 'false' && v !== 'ignore';
  }

  /** A manifest's own namespace must agree with an explicit `-n`, as kubectl insists. */
  checkNamespace(obj: KubeObject): void {
    const own = obj.metadata?.namespace;
    if (this.g.namespace !== undefined && own !== undefined && own !== this.g.namespace) {
      throw new UsageError(
        `error: the namespace from the provided object "${own}" does not match the namespace "${this.g.namespace}". You must pass '--namespace=${own}' to perform this operation.`,
      );
    }
  }

  /**
   * Client-side validation of one object, unless `--validate=false`; the
   * checks (and the API schemas they bring) load only for commands that write.
   */
  async validate(obj: JsonObject, source: string): Promise<void> {
    if (!this.validating) return;
    const { validateManifest } = await import('./validate.js');
    validateManifest(obj, source);
  }

  /** `-f` manifests for a write: read, namespaces agreeing with `-n`, validated — all before any request. */
  async manifestsToWrite(): Promise<{ obj: KubeObject; source: string }[]> {
    const manifests = this.readManifests();
    for (const { obj, source } of manifests) {
      this.checkNamespace(obj);
      await this.validate(obj, source);
    }
    return manifests;
  }

  /** Query parameters for writes: dry run and field manager. */
  writeQuery(manager: string): Record<string, string> {
    return { fieldManager: this.g.fieldManager ?? manager, ...(this.dryRun === 'server' ? { dryRun: 'All' } : {}) };
  }

  get dryRun(): 'none' | 'client' | 'server' {
    const d = this.g.dryRun ?? 'none';
    if (d === 'true') return 'client';
    if (d === 'false') return 'none';
    if (d !== 'none' && d !== 'client' && d !== 'server') throw new UsageError(`error: Invalid dry-run value (${d}). Must be "none", "server", or "client".`);
    return d;
  }

  /** `--timeout` / `--request-timeout` style durations in milliseconds; `0` means forever. */
  duration(v: string | undefined, dflt: number): number {
    if (v === undefined) return dflt;
    if (/^\d+$/.test(v)) return Number(v) * 1000;
    let ms = 0;
    for (const part of v.match(/\d+(ms|s|m|h)/g) ?? []) ms += parseDuration(part);
    if (v.replace(/\d+(ms|s|m|h)/g, '') !== '') throw new UsageError(`error: invalid argument "${v}": time: invalid duration "${v}"`);
    return ms;
  }

  close(): void {
    this.clientInstance?.close();
  }

  async mapping(type: string): Promise<Mapping> {
    const m = await this.discovery.find(type);
    if (!m) throw new UsageError(`error: the server doesn't have a resource type "${type}"`);
    return m;
  }

  /** The mapping of a manifest's (or a generated object's) apiVersion and kind; strings that are not there match nothing. */
  async mappingFor(obj: JsonObject, source: string): Promise<Mapping> {
    const m = await this.discovery.forKind(asString(obj.apiVersion) ?? '', asString(obj.kind) ?? '');
    if (!m)
      throw new UsageError(
        `error: resource mapping not found for name: "${nested(obj, 'metadata', 'name')}" namespace: "${nested(obj, 'metadata', 'namespace') ?? ''}" from "${source}": no matches for kind "${obj.kind}" in version "${obj.apiVersion}"\nensure CRDs are installed first`,
      );
    return m;
  }

  /** Reads `-f` sources: files, directories (`-R` to descend), `-` for stdin; multi-document YAML and Lists. */
  readManifests(): { obj: KubeObject; source: string }[] {
    const out: { obj: KubeObject; source: string }[] = [];
    const files: string[] = [];
    const visit = (p: string, top: boolean) => {
      if (p === '-') return files.push(p);
      let st: Stats;
      try {
        st = statSync(p);
      } catch {
        throw new UsageError(`error: the path "${p}" does not exist`);
      }
      if (st.isDirectory()) {
        if (!top && !this.g.recursive) return;
        for (const e of readdirSync(p).sort()) {
          const child = join(p, e);
          if (statSync(child).isDirectory()) visit(child, false);
          else if (['.json', '.yaml', '.yml'].includes(extname(e))) files.push(child);
        }
      } else files.push(p);
      return;
    };
    for (const f of this.g.filenames) visit(f, true);
    for (const f of files) {
      const text = f === '-' ? (this.io.stdin ?? (() => readFileSync(0, 'utf8')))() : readFileSync(f, 'utf8');
      const source = f === '-' ? 'STDIN' : f;
      for (const doc of parseAllDocuments(text)) {
        if (doc.errors.length) throw new UsageError(`error: error parsing ${source}: error converting YAML to JSON: ${doc.errors[0]!.message.split('\n')[0]}`);
        const obj: unknown = doc.toJS();
        if (obj === null || obj === undefined) continue;
        if (!isObject(obj)) throw new UsageError(`error: error validating "${source}": error validating data: invalid object to validate`);
        if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items))
          for (const item of obj.items as unknown[]) out.push({ obj: asManifest(item), source });
        else out.push({ obj: asManifest(obj), source });
      }
    }
    return out;
  }

  /**
   * The objects a command names: `-f` manifests, `TYPE/NAME...`, `TYPE NAME...`,
   * or `TYPE[,TYPE]` with `-l`/`--all`/nothing (every object of the types).
   */
  async targets(args: string[], opts: { allowList?: boolean } = {}): Promise<Target[]> {
    const out: Target[] = [];
    if (this.g.filenames.length) {
      for (const { obj, source } of this.readManifests()) {
        const mapping = await this.mappingFor(obj, source);
        out.push({ mapping, namespace: mapping.namespaced ? (obj.metadata?.namespace ?? this.ns) : undefined, name: obj.metadata?.name });
      }
      return out;
    }
    if (!args.length)
      throw new UsageError(
        "error: You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'",
      );
    const ns = this.g.allNamespaces ? undefined : this.ns;
    if (args.every((a) => a.includes('/'))) {
      for (const a of args) {
        const [t, n] = a.split('/') as [string, string];
        const mapping = await this.mapping(t);
        out.push({ mapping, namespace: mapping.namespaced ? this.ns : undefined, name: n });
      }
      return out;
    }
    const [types, ...names] = args;
    const mappings: Mapping[] = [];
    for (const t of types!.split(',').filter(Boolean)) {
      if (t === 'all') mappings.push(...(await this.discovery.all()).filter((m) => m.categories.includes('all') && !m.resource.includes('/')));
      else mappings.push(await this.mapping(t));
    }
    if (names.length) {
      if (mappings.length > 1) throw new UsageError('error: you must specify only one resource type when naming objects');
      for (const n of names) out.push({ mapping: mappings[0]!, namespace: mappings[0]!.namespaced ? this.ns : undefined, name: n });
      return out;
    }
    if (!opts.allowList) throw new UsageError(`error: resource(s) were provided, but no name was specified`);
    for (const m of mappings) out.push({ mapping: m, namespace: m.namespaced ? ns : undefined });
    return out;
  }

  /** Lists the objects of a collection target (`-l`, `--field-selector`). */
  async list(t: Target): Promise<KubeObject[]> {
    const query = { ...(this.g.selector ? { labelSelector: this.g.selector } : {}), ...(this.g.fieldSelector ? { fieldSelector: this.g.fieldSelector } : {}) };
    const list = await this.client.get<KubeList>(resourcePath(t.mapping, t.namespace), query);
    return (list.items ?? []).map((i) => ({ apiVersion: apiVersionOf(t.mapping), kind: t.mapping.kind, ...i }));
  }

  async getOrNull(path: string): Promise<KubeObject | undefined> {
    try {
      return await this.client.get<KubeObject>(path);
    } catch (e) {
      if (isStatusError(e) && e.status.reason === 'NotFound') return undefined;
      throw e;
    }
  }
}

export interface Target {
  mapping: Mapping;
  namespace: string | undefined;
  name?: string | undefined;
}

export function apiVersionOf(m: Mapping): string {
  return m.group ? `${m.group}/${m.version}` : m.version;
}

/** `deployment.apps` / `pod`: how kubectl names a kind in its messages. */
export function kindRef(m: Mapping): string {
  return m.group ? `${m.kind.toLowerCase()}.${m.group}` : m.kind.toLowerCase();
}

/** `deployments.apps` / `pods`: how the server names a resource in its messages. */
export function resourceRef(m: Mapping): string {
  return m.group ? `${m.resource}.${m.group}` : m.resource;
}

export function pathOf(t: Target, name = t.name): string {
  return resourcePath(t.mapping, t.namespace, name);
}

/** `--dry-run` suffix of kubectl's messages. */
export function dryRunSuffix(mode: 'none' | 'client' | 'server'): string {
  return mode === 'none' ? '' : ` (${mode} dry run)`;
}

/** `k=v,k2=v2` into a map (labels, selectors of generators). */
export function parseLabels(spec: string, what = 'label'): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of spec.split(',').filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new UsageError(`error: invalid ${what} spec: ${kv}`);
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}
