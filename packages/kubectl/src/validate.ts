/**
 * Client-side validation: the checks that fail before any request, as the
 * seeds describe kubectl's — a malformed manifest, a kind no built-in group
 * has, bad names, bad image references, negative replicas, ports out of range.
 * Kinds of groups kubeling does not build in (CRDs) are left to discovery.
 */
import { findByKind, resources } from '@kubeling/api';
import { isDNS1123Label, isValidLabelValue, isQualifiedName, nameIsDNS1035Label, nameIsDNSLabel, nameIsDNSSubdomain, type NameValidator } from '@kubeling/apimachinery';
import { UsageError } from './flags.js';

type Obj = Record<string, any>;

const BUILTIN_GROUPS = new Set(resources.map((r) => (r.group ? `${r.group}/${r.version}` : r.version)));

/** Kinds whose names are DNS labels rather than subdomains (upstream's ValidateNameFunc per kind). */
const NAME_RULES: Record<string, NameValidator> = { Namespace: nameIsDNSLabel, Service: nameIsDNS1035Label };

/**
 * A Docker image reference: `[host[:port]/]path[:tag][@digest]`, path
 * components lower case (distribution/reference's grammar).
 */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN = '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?';
const REFERENCE = new RegExp(`^(?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`);

export function imageReferenceError(image: unknown): string | undefined {
  if (typeof image !== 'string' || image === '') return 'Required value';
  if (image !== image.trim()) return 'must not have leading or trailing whitespace';
  if (image.length > 255 || !REFERENCE.test(image)) return 'invalid reference format' + (/[A-Z]/.test(image.split('/').pop()!.split(/[:@]/)[0]!) ? ': repository name must be lowercase' : '');
  return undefined;
}

/** The pod specs inside an object: a Pod's, a template's, a CronJob's job template's. */
function podSpecs(obj: Obj): [string, Obj][] {
  const out: [string, Obj][] = [];
  if (obj.kind === 'Pod' && obj.spec) out.push(['spec', obj.spec]);
  if (obj.spec?.template?.spec) out.push(['spec.template.spec', obj.spec.template.spec]);
  if (obj.spec?.jobTemplate?.spec?.template?.spec) out.push(['spec.jobTemplate.spec.template.spec', obj.spec.jobTemplate.spec.template.spec]);
  return out;
}

export function validateManifest(obj: Obj, source: string): void {
  const fail = (msg: string) => {
    throw new UsageError(`error: error validating "${source}": error validating data: ${msg}`);
  };
  if (!obj || typeof obj !== 'object') fail('invalid object to validate');
  if (!obj.apiVersion) fail('apiVersion not set');
  if (!obj.kind) fail('kind not set');
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') fail('apiVersion and kind must be strings');
  if (BUILTIN_GROUPS.has(obj.apiVersion)) {
    const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
    if (!findByKind(group, version, obj.kind)) throw new UsageError(`error: resource mapping not found for name: "${obj.metadata?.name ?? ''}" namespace: "${obj.metadata?.namespace ?? ''}" from "${source}": no matches for kind "${obj.kind}" in version "${obj.apiVersion}"\nensure CRDs are installed first`);
  }
  const meta = obj.metadata;
  if (meta !== undefined && (typeof meta !== 'object' || Array.isArray(meta))) fail('metadata must be an object');
  const name = meta?.name;
  if (!name && !meta?.generateName) throw new UsageError(`error: error when creating "${source}": resource name may not be empty`);
  const invalid = (field: string, value: unknown, msg: string) => {
    throw new UsageError(`error: error validating "${source}": ${obj.kind} "${name ?? meta?.generateName}" is invalid: ${field}: Invalid value: ${JSON.stringify(value)}: ${msg}`);
  };
  if (name !== undefined) {
    if (typeof name !== 'string') fail('metadata.name must be a string');
    const errs = (NAME_RULES[obj.kind] ?? nameIsDNSSubdomain)(name, false);
    if (errs.length) invalid('metadata.name', name, errs.join(', '));
  }
  if (meta?.namespace !== undefined) {
    const errs = isDNS1123Label(String(meta.namespace));
    if (errs.length) invalid('metadata.namespace', meta.namespace, errs.join(', '));
  }
  for (const [k, v] of Object.entries((meta?.labels ?? {}) as Record<string, unknown>)) {
    const ek = isQualifiedName(k);
    if (ek.length) invalid('metadata.labels', k, ek.join(', '));
    const ev = isValidLabelValue(String(v));
    if (ev.length) invalid('metadata.labels', v, ev.join(', '));
  }
  const replicas = obj.spec?.replicas;
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas))) fail(`spec.replicas: expected an integer, got ${JSON.stringify(replicas)}`);
  if (typeof replicas === 'number' && replicas < 0) invalid('spec.replicas', replicas, 'must be greater than or equal to 0');
  for (const [at, spec] of podSpecs(obj)) {
    for (const list of ['initContainers', 'containers'] as const) {
      const cs = spec[list];
      if (cs === undefined) continue;
      if (!Array.isArray(cs)) fail(`${at}.${list}: expected a list`);
      (cs as Obj[]).forEach((c, i) => {
        const p = `${at}.${list}[${i}]`;
        if (!c || typeof c !== 'object') fail(`${p}: expected an object`);
        if (typeof c.name === 'string' && isDNS1123Label(c.name).length) invalid(`${p}.name`, c.name, isDNS1123Label(c.name).join(', '));
        const imgErr = imageReferenceError(c.image);
        if (imgErr) invalid(`${p}.image`, c.image ?? '', imgErr);
        for (const [j, port] of ((c.ports ?? []) as Obj[]).entries()) {
          const n = port?.containerPort;
          if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535) invalid(`${p}.ports[${j}].containerPort`, n, 'must be between 1 and 65535, inclusive');
        }
      });
    }
  }
}
