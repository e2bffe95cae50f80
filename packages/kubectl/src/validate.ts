/**
 * Client-side validation: the checks that fail before any request, as the
 * seeds describe kubectl's — a malformed manifest, a kind no built-in group
 * has, bad names, bad image references, negative replicas, ports out of range.
 * Kinds of groups kubeling does not build in (CRDs) are left to discovery.
 */
import { findByKind, parseApiVersion, resources } from '@kubeling/api';
import {
  isDNS1123Label,
  isValidLabelValue,
  isQualifiedName,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  type NameValidator,
} from '@kubeling/apimachinery';
import { UsageError } from './flags.js';
import { asList, asObject, nested, type JsonObject } from './json.js';

const BUILTIN_GROUPS = new Set(resources.map((r) => (r.group ? `${r.group}/${r.version}` : r.version)));

/** Kinds whose names are DNS labels rather than subdomains (upstream's ValidateNameFunc per kind). */
const NAME_RULES: Record<string, NameValidator> = { Namespace: nameIsDNSLabel, Service: nameIsDNS1035Label };

/**
 * A Docker image reference: `[host[:port]/]path[:tag][@digest]`, path
 * components lower case (distribution/reference's grammar).
 */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?';
const REFERENCE = new RegExp(
  `^(?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`,
);

export function imageReferenceError(image: unknown): string | undefined {
  if (typeof image !== 'string' || image === '') return 'Required value';
  if (image !== image.trim()) return 'must not have leading or trailing whitespace';
  if (image.length > 255 || !REFERENCE.test(image))
    return 'invalid reference format' + (/[A-Z]/.test(image.split('/').pop()!.split(/[:@]/)[0]!) ? ': repository name must be lowercase' : '');
  return undefined;
}

/** The pod specs inside an object: a Pod's, a template's, a CronJob's job template's. */
function podSpecs(obj: JsonObject): [string, JsonObject][] {
  const out: [string, JsonObject][] = [];
  const spec = asObject(obj.spec);
  if (obj.kind === 'Pod' && spec) out.push(['spec', spec]);
  const templateSpec = asObject(nested(spec, 'template', 'spec'));
  if (templateSpec) out.push(['spec.template.spec', templateSpec]);
  const jobTemplateSpec = asObject(nested(spec, 'jobTemplate', 'spec', 'template', 'spec'));
  if (jobTemplateSpec) out.push(['spec.jobTemplate.spec.template.spec', jobTemplateSpec]);
  return out;
}

export function validateManifest(obj: JsonObject, source: string): void {
  const fail: (msg: string) => never = (msg) => {
    throw new UsageError(`error: error validating "${source}": error validating data: ${msg}`);
  };
  if (!obj || typeof obj !== 'object') fail('invalid object to validate');
  const { apiVersion, kind } = obj;
  if (!apiVersion) fail('apiVersion not set');
  if (!kind) fail('kind not set');
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') fail('apiVersion and kind must be strings');
  const meta = obj.metadata;
  // Metadata of another JSON type names nothing (a null one passes the check below too).
  const m = asObject(meta);
  if (BUILTIN_GROUPS.has(apiVersion)) {
    const { group, version } = parseApiVersion(apiVersion);
    if (!findByKind(group, version, kind))
      throw new UsageError(
        `error: resource mapping not found for name: "${m?.name ?? ''}" namespace: "${m?.namespace ?? ''}" from "${source}": no matches for kind "${kind}" in version "${apiVersion}"\nensure CRDs are installed first`,
      );
  }
  if (meta !== undefined && (typeof meta !== 'object' || Array.isArray(meta))) fail('metadata must be an object');
  const name = m?.name;
  if (!name && !m?.generateName) throw new UsageError(`error: error when creating "${source}": resource name may not be empty`);
  const invalid = (field: string, value: unknown, msg: string) => {
    throw new UsageError(
      `error: error validating "${source}": ${kind} "${name ?? m?.generateName}" is invalid: ${field}: Invalid value: ${JSON.stringify(value)}: ${msg}`,
    );
  };
  if (name !== undefined) {
    if (typeof name !== 'string') fail('metadata.name must be a string');
    const errs = (NAME_RULES[kind] ?? nameIsDNSSubdomain)(name, false);
    if (errs.length) invalid('metadata.name', name, errs.join(', '));
  }
  if (m?.namespace !== undefined) {
    const errs = isDNS1123Label(String(m.namespace));
    if (errs.length) invalid('metadata.namespace', m.namespace, errs.join(', '));
  }
  for (const [k, v] of Object.entries((m?.labels ?? {}) as Record<string, unknown>)) {
    const ek = isQualifiedName(k);
    if (ek.length) invalid('metadata.labels', k, ek.join(', '));
    const ev = isValidLabelValue(String(v));
    if (ev.length) invalid('metadata.labels', v, ev.join(', '));
  }
  const replicas = nested(obj, 'spec', 'replicas');
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas)))
    fail(`spec.replicas: expected an integer, got ${JSON.stringify(replicas)}`);
  if (typeof replicas === 'number' && replicas < 0) invalid('spec.replicas', replicas, 'must be greater than or equal to 0');
  for (const [at, spec] of podSpecs(obj)) {
    for (const list of ['initContainers', 'containers'] as const) {
      const cs = spec[list];
      if (cs === undefined) continue;
      if (!Array.isArray(cs)) fail(`${at}.${list}: expected a list`);
      asList(cs).forEach((item, i) => {
        const p = `${at}.${list}[${i}]`;
        if (!item || typeof item !== 'object') fail(`${p}: expected an object`);
        // A list in place of a container has none of a container's fields.
        const c = asObject(item) ?? {};
        if (typeof c.name === 'string' && isDNS1123Label(c.name).length) invalid(`${p}.name`, c.name, isDNS1123Label(c.name).join(', '));
        const imgErr = imageReferenceError(c.image);
        if (imgErr) invalid(`${p}.image`, c.image ?? '', imgErr);
        for (const [j, port] of asList(c.ports).entries()) {
          const n = nested(port, 'containerPort');
          if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535)
            invalid(`${p}.ports[${j}].containerPort`, n, 'must be between 1 and 65535, inclusive');
        }
      });
    }
  }
}
