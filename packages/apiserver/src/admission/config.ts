/**
 * --admission-control-config-file (k8s.io/apiserver pkg/admission/config.go):
 * an AdmissionConfiguration naming each plugin's configuration, inline
 * (`configuration`) or in a file of its own (`path`, relative to the
 * configuration file's folder). A plugin reads its part with `config(name)`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

export type PluginConfig = (name: string) => Record<string, unknown> | undefined;

const KINDS = new Set(['apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1alpha1', 'apiserver.config.k8s.io/v1alpha1']);

interface AdmissionConfigurationFile {
  apiVersion?: string;
  kind?: string;
  plugins?: { name?: string; path?: string; configuration?: Record<string, unknown> }[];
}

/**
 * Reads the file into each plugin's configuration by name; a malformed one is
 * an error at start, as upstream's ReadAdmissionConfiguration.
 */
export function readAdmissionConfigFile(path: string): Record<string, Record<string, unknown>> {
  const doc = (parse(readFileSync(path, 'utf8')) ?? {}) as AdmissionConfigurationFile;
  if (doc.kind !== 'AdmissionConfiguration' || !KINDS.has(doc.apiVersion ?? ''))
    throw new Error(`${path}: not an AdmissionConfiguration (apiVersion apiserver.config.k8s.io/v1, kind AdmissionConfiguration)`);
  const byName: Record<string, Record<string, unknown>> = {};
  for (const p of doc.plugins ?? []) {
    if (!p.name) throw new Error(`${path}: a plugin entry without a name`);
    if (p.configuration && p.path) throw new Error(`${path}: plugin ${p.name} has both configuration and path`);
    if (p.configuration) byName[p.name] = p.configuration;
    else if (p.path) {
      const file = isAbsolute(p.path) ? p.path : join(dirname(path), p.path);
      byName[p.name] = (parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
    }
  }
  return byName;
}

/** A configuration given in the options (tests, the in-process control plane) rather than a file. */
export function inlineAdmissionConfig(plugins: Record<string, Record<string, unknown>>): PluginConfig {
  return (name) => plugins[name];
}
