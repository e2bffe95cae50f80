/**
 * Pod volumes (kubernetes pkg/volume): directories under the pod's directory —
 * emptyDir, configMap and secret (a file per key, or the listed items),
 * downwardAPI, projected (configMap, secret, downwardAPI and ServiceAccount
 * token sources), hostPath (made or checked as its type says) — and each
 * container's mounts onto them (subPath included), claim volumes mounted by
 * the volume manager among them. Written volumes are refreshed in place the way upstream's
 * AtomicWriter does it: files under a timestamped directory, `..data` swapped
 * to it by a rename, and each top-level name a link through `..data`, so a
 * reader never sees a half-written set.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { KubeObject } from '@kubeling/api';
import { intValue } from '@kubeling/apimachinery';
import type { Mount } from '@kubeling/cri';
import { asPod, podVolumes, type ConfigMapSource, type Container, type DownwardAPIVolumeFile, type KeyToPath, type Pod, type SecretSource } from './kinds.js';
import { ConfigError, podFieldValue, resourceFieldValue, type EnvSources } from './podutil.js';
import { checkHostPathType } from './volumemanager/resolve.js';

/** A file of a written volume; its mode, when not given, is the volume's default mode (0644 unless set). */
interface VolumeFile {
  data: Buffer;
  mode?: number | undefined;
}

function writeFiles(dir: string, files: Record<string, VolumeFile>, defaultMode = 0o644): void {
  for (const rel of Object.keys(files)) {
    if (rel.startsWith('..') || rel.startsWith('/') || !normalize(join(dir, rel)).startsWith(dir + '/')) throw new ConfigError(`invalid path ${rel}`);
  }
  mkdirSync(dir, { recursive: true });
  const ts = `..${new Date().toISOString().replace(/[-:.TZ]/g, '_')}${randomBytes(4).toString('hex')}`;
  const tsDir = join(dir, ts);
  mkdirSync(tsDir);
  for (const [rel, f] of Object.entries(files)) {
    const p = join(tsDir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, f.data);
    // Exactly the mode asked for, whatever the umask (AtomicWriter chmods too).
    chmodSync(p, f.mode ?? defaultMode);
  }
  const tmp = join(dir, '..data_tmp');
  rmSync(tmp, { force: true });
  symlinkSync(ts, tmp);
  renameSync(tmp, join(dir, '..data'));
  const tops = new Set(Object.keys(files).map((r) => r.split('/')[0]!));
  for (const t of tops) {
    const link = join(dir, t);
    let isLink = false;
    try {
      isLink = lstatSync(link).isSymbolicLink();
    } catch {
      // absent
    }
    if (!isLink) {
      rmSync(link, { recursive: true, force: true });
      symlinkSync(join('..data', t), link);
    }
  }
  // What the new set no longer has, and older timestamped directories, go.
  for (const e of readdirSync(dir)) {
    if (e === '..data' || e === ts) continue;
    if (e.startsWith('..') || !tops.has(e)) rmSync(join(dir, e), { recursive: true, force: true });
  }
}

/**
 * How soon a pod's written volumes are refreshed: ServiceAccount tokens at 80 %
 * of their lifetime (upstream's rotation), configMaps and secrets each minute
 * (about the kubelet's sync period); undefined when nothing needs it.
 */
export function volumeRefreshMs(pod: KubeObject): number | undefined {
  let ms: number | undefined;
  const take = (x: number) => (ms = ms === undefined ? x : Math.min(ms, x));
  for (const v of podVolumes(asPod(pod))) {
    if (v.configMap || v.secret) take(60_000);
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap || s.secret) take(60_000);
      if (s.serviceAccountToken) take(Math.max(1, (s.serviceAccountToken.expirationSeconds ?? 3600) * 800));
    }
  }
  return ms;
}

function keyed(data: Record<string, Buffer>, items: KeyToPath[] | undefined, what: string): Record<string, VolumeFile> {
  if (!items?.length) return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, { data: v }]));
  const out: Record<string, VolumeFile> = {};
  for (const it of items) {
    if (!(it.key in data)) throw new ConfigError(`configmap references non-existent config key: ${it.key}`.replace('configmap', what));
    out[it.path ?? it.key] = { data: data[it.key]!, mode: it.mode };
  }
  return out;
}

async function configMapFiles(src: EnvSources, ns: string, v: ConfigMapSource): Promise<Record<string, VolumeFile> | undefined> {
  // The API leaves the name optional; an unset one is looked up, and reported, as "undefined".
  const cm = await src.configMap(ns, String(v.name));
  if (!cm) {
    if (v.optional) return {};
    throw new ConfigError(`configmap "${v.name}" not found`);
  }
  const data: Record<string, Buffer> = {};
  for (const [k, val] of Object.entries(cm.data ?? {})) data[k] = Buffer.from(String(val));
  for (const [k, val] of Object.entries(cm.binaryData ?? {})) data[k] = Buffer.from(String(val), 'base64');
  return keyed(data, v.items, 'configmap');
}

async function secretFiles(src: EnvSources, ns: string, v: SecretSource): Promise<Record<string, VolumeFile> | undefined> {
  const name = v.secretName ?? v.name;
  const s = await src.secret(ns, String(name));
  if (!s) {
    if (v.optional) return {};
    throw new ConfigError(`secret "${name}" not found`);
  }
  const data: Record<string, Buffer> = {};
  for (const [k, val] of Object.entries(s.data ?? {})) data[k] = Buffer.from(String(val), 'base64');
  return keyed(data, v.items, 'secret');
}

function downwardFiles(
  pod: Pod,
  items: DownwardAPIVolumeFile[] | undefined,
  hostIP: string,
  podIP: string,
  allocatable: Record<string, number>,
): Record<string, VolumeFile> {
  const out: Record<string, VolumeFile> = {};
  for (const it of items ?? []) {
    if (it.fieldRef) out[it.path] = { data: Buffer.from(podFieldValue(pod, it.fieldRef.fieldPath, hostIP, podIP)), mode: it.mode };
    else if (it.resourceFieldRef) {
      const ref = it.resourceFieldRef;
      const c = pod.spec.containers?.find((x) => x.name === ref.containerName);
      if (!c) throw new ConfigError(`container ${ref.containerName} not found`);
      out[it.path] = { data: Buffer.from(resourceFieldValue(c, ref, allocatable)), mode: it.mode };
    }
  }
  return out;
}

/**
 * upstream's SetVolumeOwnership: with the pod's fsGroup, every file of a
 * volume the kubelet made belongs to that group, readable (and writable,
 * unless the volume is read-only) by it, and directories are setgid so new
 * files join the group. Only root can; elsewhere ownership stays as it is.
 */
export function setVolumeOwnership(dir: string, fsGroup: number, readOnly: boolean): void {
  const mask = readOnly ? 0o440 : 0o660;
  const walk = (p: string) => {
    const st = lstatSync(p);
    try {
      lchownSync(p, st.uid, fsGroup);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      chmodSync(p, (st.mode & 0o7777) | mask | 0o2000 | 0o110);
      for (const e of readdirSync(p)) walk(join(p, e));
    } else chmodSync(p, (st.mode & 0o7777) | mask);
  };
  walk(dir);
}

/** Mounts a tmpfs on an emptyDir of medium Memory (as root; elsewhere it stays a directory). */
function mountMemory(dir: string, sizeLimit: string | number | undefined): void {
  if (process.getuid?.() !== 0 || mountedAt(dir)) return;
  const size = sizeLimit !== undefined ? [`-o`, `size=${intValue(sizeLimit)}`] : [];
  spawnSync('mount', ['-t', 'tmpfs', ...size, 'tmpfs', dir], { stdio: 'ignore', timeout: 10_000 });
}

/** Whether something is mounted at `dir` (from mountinfo). */
function mountedAt(dir: string): boolean {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((l) => l.split(' ')[4] === dir);
  } catch {
    return false;
  }
}

/** Unmounts what the kubelet mounted under a pod's directory (memory emptyDirs), before it is removed. */
export function unmountPodDir(podDir: string): void {
  let mounts: string[] = [];
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
      .filter((p) => p.startsWith(`${podDir}/volumes/`));
  } catch {
    return;
  }
  for (const m of mounts.sort().reverse()) spawnSync('umount', ['-l', m], { stdio: 'ignore', timeout: 10_000 });
}

/**
 * Makes every volume's directory; returns volume name → host path. The claim
 * volumes, which the volume manager has mounted already, are given.
 */
export async function prepareVolumes(
  obj: KubeObject,
  podDir: string,
  src: EnvSources,
  hostIP: string,
  podIP: string,
  claims: ReadonlyMap<string, string> = new Map(),
  allocatable: Record<string, number> = {},
): Promise<Map<string, string>> {
  const pod = asPod(obj);
  const ns = pod.metadata.namespace!;
  const fsGroup = (pod.spec.securityContext as { fsGroup?: number } | undefined)?.fsGroup;
  const out = new Map<string, string>();
  for (const v of podVolumes(pod)) {
    const dir = join(podDir, 'volumes', v.name);
    const claim = claims.get(v.name);
    if (claim !== undefined) out.set(v.name, claim);
    // A claim volume no container uses is not mounted at all.
    const source = v as { persistentVolumeClaim?: unknown; ephemeral?: unknown };
    if (claim !== undefined || source.persistentVolumeClaim || source.ephemeral) continue;
    if (v.hostPath) {
      try {
        checkHostPathType(v.hostPath.path, v.hostPath.type);
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
      out.set(v.name, v.hostPath.path);
      continue;
    }
    let readOnly = true;
    if (v.emptyDir) {
      // Open to every user of the pod, as upstream makes it (0777).
      mkdirSync(dir, { recursive: true });
      if (v.emptyDir.medium === 'Memory') mountMemory(dir, v.emptyDir.sizeLimit);
      chmodSync(dir, 0o777);
      readOnly = false;
    } else if (v.configMap) writeFiles(dir, (await configMapFiles(src, ns, v.configMap))!, v.configMap.defaultMode);
    else if (v.secret) writeFiles(dir, (await secretFiles(src, ns, v.secret))!, v.secret.defaultMode);
    else if (v.downwardAPI) writeFiles(dir, downwardFiles(pod, v.downwardAPI.items, hostIP, podIP, allocatable), v.downwardAPI.defaultMode);
    else if (v.projected) {
      const files: Record<string, VolumeFile> = {};
      for (const s of v.projected.sources ?? []) {
        if (s.configMap) Object.assign(files, await configMapFiles(src, ns, s.configMap));
        else if (s.secret) Object.assign(files, await secretFiles(src, ns, s.secret));
        else if (s.downwardAPI) Object.assign(files, downwardFiles(pod, s.downwardAPI.items, hostIP, podIP, allocatable));
        else if (s.serviceAccountToken) {
          if (!src.token) throw new ConfigError('no ServiceAccount token source is available');
          const sa = pod.spec.serviceAccountName || 'default';
          files[s.serviceAccountToken.path] = {
            data: Buffer.from(await src.token(pod, sa, s.serviceAccountToken.audience, s.serviceAccountToken.expirationSeconds ?? 3600)),
          };
        }
      }
      writeFiles(dir, files, v.projected.defaultMode);
    } else {
      mkdirSync(dir, { recursive: true });
      readOnly = false;
    }
    if (fsGroup !== undefined) setVolumeOwnership(dir, fsGroup, readOnly);
    out.set(v.name, dir);
  }
  return out;
}

/** The pod's volumes by name: their host paths, and which are mounted read-only whatever the container asks. */
export interface PodVolumePaths {
  paths: ReadonlyMap<string, string>;
  readOnly: ReadonlySet<string>;
}

/**
 * upstream's ExpandContainerVolumeMounts: a subPathExpr with the container's
 * variables, every one of which must have a value.
 */
function expandSubPath(expr: string, env: Record<string, string>): string {
  const missing = new Set<string>();
  const out = expr.replace(/\$\$|\$\(([^)]*)\)/g, (_m, name: string | undefined) => {
    if (name === undefined) return '$';
    const v = env[name];
    if (!v) missing.add(name);
    return v ?? '';
  });
  if (missing.size) throw new ConfigError(`missing value for ${[...missing].sort().join(', ')}`);
  return out;
}

/** A container's mounts onto the prepared volumes; `env` expands subPathExpr. */
export function containerMounts(container: Container, volumes: PodVolumePaths, env: Record<string, string> = {}): Mount[] {
  const mounts: Mount[] = [];
  for (const vm of container.volumeMounts ?? []) {
    const host = volumes.paths.get(vm.name);
    if (!host) throw new ConfigError(`unable to find volume "${vm.name}"`);
    let hostPath = host;
    const subPath = vm.subPathExpr ? expandSubPath(vm.subPathExpr, env) : vm.subPath;
    if (subPath) {
      // makeMounts: never absolute, never a step back.
      if (subPath.startsWith('/')) throw new ConfigError(`error SubPath \`${subPath}\` must not be an absolute path`);
      if (subPath.split('/').includes('..')) throw new ConfigError(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
      hostPath = normalize(join(host, subPath));
      if (!hostPath.startsWith(host)) throw new ConfigError(`invalid subPath ${subPath}`);
      if (!existsSync(hostPath)) mkdirSync(hostPath, { recursive: true });
    }
    mounts.push({ container_path: vm.mountPath, host_path: hostPath, readonly: !!vm.readOnly || volumes.readOnly.has(vm.name) });
  }
  return mounts;
}
