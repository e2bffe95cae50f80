/**
 * Profiles from a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):
 * each names a scheduler and the plugins it runs at each extension point.
 * `multiPoint` enables a plugin everywhere it has an implementation; `filter`,
 * `score`, `reserve` and `preBind` enable or disable per point (`disabled: [{name: '*'}]` clears the
 * defaults); `pluginConfig` passes args; score weights come from the entries.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_PLUGINS, REGISTRY, type PluginArgs } from '../plugins/registry.js';
import {
  isFilter,
  isPreBind,
  isPreFilter,
  isPreScore,
  isReserve,
  isScore,
  type FilterPlugin,
  type Plugin,
  type PreBindPlugin,
  type PreFilterPlugin,
  type PreScorePlugin,
  type ReservePlugin,
  type ScorePlugin,
} from './types.js';

export interface Profile {
  schedulerName: string;
  preFilter: PreFilterPlugin[];
  filter: FilterPlugin[];
  preScore: PreScorePlugin[];
  score: { plugin: ScorePlugin; weight: number }[];
  reserve: ReservePlugin[];
  preBind: PreBindPlugin[];
  /** Every plugin instance of the profile (the framework hands them its listers). */
  plugins: Plugin[];
  /** Whether DefaultPreemption runs after a pod fits nowhere. */
  preemption: boolean;
}

export interface SchedulerConfig {
  percentageOfNodesToScore: number;
  profiles: Profile[];
  podInitialBackoffSeconds: number;
  podMaxBackoffSeconds: number;
}

interface PluginSet {
  enabled?: { name: string; weight?: number }[];
  disabled?: { name: string }[];
}

/** One entry of `profiles` in a KubeSchedulerConfiguration. */
export interface KubeSchedulerProfile {
  schedulerName?: string;
  /** Plugin sets by extension point: multiPoint, filter, score, reserve, preBind, postFilter. */
  plugins?: Record<string, PluginSet>;
  pluginConfig?: { name: string; args?: PluginArgs }[];
}

/** A KubeSchedulerConfiguration document (kubescheduler.config.k8s.io/v1), as read from YAML and not yet checked. */
export interface KubeSchedulerConfiguration {
  apiVersion?: string;
  kind?: string;
  percentageOfNodesToScore?: number;
  podInitialBackoffSeconds?: number;
  podMaxBackoffSeconds?: number;
  profiles?: KubeSchedulerProfile[];
}

export class ConfigError extends Error {}

function apply(defaults: { name: string; weight: number }[], set: PluginSet | undefined): { name: string; weight: number }[] {
  const disabled = new Set((set?.disabled ?? []).map((d) => d.name));
  let out = disabled.has('*') ? [] : defaults.filter((p) => !disabled.has(p.name));
  for (const e of set?.enabled ?? []) {
    if (!e?.name) throw new ConfigError('plugin entries need a name');
    out = out.filter((p) => p.name !== e.name);
    const def = DEFAULT_PLUGINS.find((d) => d.name === e.name);
    out.push({ name: e.name, weight: e.weight ?? def?.weight ?? 1 });
  }
  return out;
}

function buildProfile(p: KubeSchedulerProfile): Profile {
  const plugins = p.plugins ?? {};
  const args = new Map<string, PluginArgs>();
  for (const pc of p.pluginConfig ?? []) args.set(pc.name, pc.args ?? {});
  const multi = apply(DEFAULT_PLUGINS, plugins.multiPoint);
  const filterNames = apply(multi, plugins.filter).map((x) => x.name);
  const scoreEntries = apply(
    multi.filter((x) => x.weight > 0 || plugins.score?.enabled?.some((e) => e.name === x.name)),
    plugins.score,
  );
  const instances = new Map<string, Plugin>();
  const instance = (name: string): Plugin => {
    const f = REGISTRY[name];
    if (!f) throw new ConfigError(`plugin "${name}" does not exist`);
    const have = instances.get(name);
    if (have) return have;
    try {
      instances.set(name, f(args.get(name) ?? {}));
    } catch (e) {
      throw new ConfigError(`plugin "${name}": ${(e as Error).message}`);
    }
    return instances.get(name)!;
  };
  const filter: FilterPlugin[] = [];
  const preFilter: PreFilterPlugin[] = [];
  for (const n of filterNames) {
    const pl = instance(n);
    if (isPreFilter(pl)) preFilter.push(pl);
    if (isFilter(pl)) filter.push(pl);
  }
  const score: Profile['score'] = [];
  const preScore: PreScorePlugin[] = [];
  for (const { name, weight } of scoreEntries) {
    const pl = instance(name);
    if (!isScore(pl)) continue;
    if (weight < 0 || weight > 100) throw new ConfigError(`plugin "${name}": weight must be between 0 and 100`);
    if (isPreScore(pl)) preScore.push(pl);
    score.push({ plugin: pl, weight });
  }
  const reserve: ReservePlugin[] = [];
  for (const { name } of apply(multi, plugins.reserve)) {
    const pl = instance(name);
    if (isReserve(pl)) reserve.push(pl);
  }
  const preBind: PreBindPlugin[] = [];
  for (const { name } of apply(multi, plugins.preBind)) {
    const pl = instance(name);
    if (isPreBind(pl)) preBind.push(pl);
  }
  const postFilter = apply([{ name: 'DefaultPreemption', weight: 0 }], plugins.postFilter);
  return {
    schedulerName: p.schedulerName ?? 'default-scheduler',
    preFilter,
    filter,
    preScore,
    score,
    reserve,
    preBind,
    plugins: [...instances.values()],
    preemption: postFilter.some((x) => x.name === 'DefaultPreemption'),
  };
}

/** Builds the configuration from a parsed KubeSchedulerConfiguration (or the defaults). */
export function buildConfig(doc: KubeSchedulerConfiguration = {}): SchedulerConfig {
  if (doc.kind && doc.kind !== 'KubeSchedulerConfiguration') throw new ConfigError(`kind must be KubeSchedulerConfiguration, got ${doc.kind}`);
  const pct = doc.percentageOfNodesToScore ?? 0;
  if (typeof pct !== 'number' || pct < 0 || pct > 100) throw new ConfigError('percentageOfNodesToScore: must be between 0 and 100');
  const profiles = (doc.profiles?.length ? doc.profiles : [{}]).map(buildProfile);
  const names = new Set<string>();
  for (const p of profiles) {
    if (names.has(p.schedulerName)) throw new ConfigError(`profiles: duplicate schedulerName "${p.schedulerName}"`);
    names.add(p.schedulerName);
  }
  return {
    percentageOfNodesToScore: pct,
    profiles,
    podInitialBackoffSeconds: doc.podInitialBackoffSeconds ?? 1,
    podMaxBackoffSeconds: doc.podMaxBackoffSeconds ?? 10,
  };
}

export function loadConfig(path: string): SchedulerConfig {
  return buildConfig(parseYaml(readFileSync(path, 'utf8')) as KubeSchedulerConfiguration);
}
