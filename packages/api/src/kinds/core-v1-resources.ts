/**
 * Resource names and container resource requirements, as upstream's
 * pkg/apis/core/helper (IsStandardResourceName, IsExtendedResourceName, ...)
 * and pkg/apis/core/validation (ValidateContainerResourceRequirements and
 * what it calls), with kube-apiserver 1.33's paths, order and messages.
 */
import { field, isDNS1123Label, isQualifiedName, type FieldError } from '@kubeling/apimachinery';
import { type ExactQuantity, NANO, canonicalQuantity, compareQuantities, parseExactQuantity } from './core-v1-quantity.js';
import { listOf, objOf, strOf } from './json-fields.js';

const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);

const isHugePageResourceName = (n: string) => n.startsWith('hugepages-');
const isQuotaHugePageResourceName = (n: string) => n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');
/** helper.IsStandardResourceName */
export const isStandardResourceName = (n: string): boolean => STANDARD_RESOURCES.has(n) || isQuotaHugePageResourceName(n);
/** helper.IsStandardContainerResourceName */
export const isStandardContainerResourceName = (n: string): boolean => STANDARD_CONTAINER_RESOURCES.has(n) || isHugePageResourceName(n);
/** helper.IsNativeResource: no domain, or a `kubernetes.io/` one. */
export const isNativeResource = (n: string): boolean => !n.includes('/') || n.includes('kubernetes.io/');
/** helper.IsExtendedResourceName: a domain-prefixed, non-native name that is a qualified name behind `requests.`. */
export const isExtendedResourceName = (n: string): boolean =>
  !isNativeResource(n) && !n.startsWith('requests.') && isQualifiedName(`requests.${n}`).length === 0;
/** helper.IsOvercommitAllowed: requests may be below limits (native resources but hugepages). */
export const isOvercommitAllowed = (n: string): boolean => isNativeResource(n) && !isHugePageResourceName(n);
/** helper.IsIntegerResourceName */
export const isIntegerResourceName = (n: string): boolean => INTEGER_RESOURCES.has(n) || isExtendedResourceName(n);

/** validateResourceName: a qualified name, and a standard one when it has no domain. */
export function validateResourceName(name: string, p: string): FieldError[] {
  const errs = isQualifiedName(name).map((m) => field.invalid(p, name, m));
  if (errs.length) return errs;
  if (!name.includes('/') && !isStandardResourceName(name)) errs.push(field.invalid(p, name, 'must be a standard resource type or fully qualified'));
  return errs;
}

/** validateContainerResourceName */
export function validateContainerResourceName(name: string, p: string): FieldError[] {
  const errs = validateResourceName(name, p);
  if (!name.includes('/')) {
    if (!isStandardContainerResourceName(name)) errs.push(field.invalid(p, name, 'must be a standard resource for containers'));
  } else if (!isNativeResource(name) && !isExtendedResourceName(name)) {
    errs.push(field.invalid(p, name, "doesn't follow extended resource name standard"));
  }
  return errs;
}

/** ValidateResourceQuantityValue: not negative (`"-1"`), and whole for integer resources. */
export function validateResourceQuantityValue(resource: string, value: unknown, p: string): FieldError[] {
  const q = parseExactQuantity(value);
  if (!q) return [];
  const errs: FieldError[] = [];
  if (q.negative) errs.push(field.invalid(p, canonicalQuantity(q), 'must be greater than or equal to 0'));
  if (isIntegerResourceName(resource) && q.nanos % NANO !== 0n) {
    // The value is a Quantity, which ErrorBody prints through its String(), unquoted.
    errs.push(field.invalid(p, new field.GoValue(canonicalQuantity(q)), 'must be an integer'));
  }
  return errs;
}

/** helper.IsHugePageResourceValueDivisible */
function hugePageValueDivisible(name: string, q: ExactQuantity): boolean {
  const page = parseExactQuantity(name.slice('hugepages-'.length));
  if (!page || page.negative || page.nanos === 0n || page.nanos % NANO !== 0n) return false;
  const value = (q.negative ? -1n : 1n) * ((q.nanos + NANO - 1n) / NANO);
  return value % (page.nanos / NANO) === 0n;
}

/**
 * ValidateContainerResourceRequirements: resource names, quantities (path with
 * the key: `...resources.requests[cpu]`), requests not above limits (path
 * without it: `...resources.requests: Invalid value: "2": must be less than or
 * equal to cpu limit of 1`), requests equal to limits for resources that may
 * not be overcommitted, hugepages, and claims that name the pod's resourceClaims.
 */
export function validateResourceRequirements(resources: unknown, p: string, podClaimNames: ReadonlySet<string> = new Set()): FieldError[] {
  const r = objOf(resources) ?? {};
  const limits = objOf(r.limits) ?? {};
  const requests = objOf(r.requests) ?? {};
  const limPath = `${p}.limits`;
  const reqPath = `${p}.requests`;
  const errs: FieldError[] = [];
  let limCpuOrMemory = false;
  let reqCpuOrMemory = false;
  let limHugePages = false;
  let reqHugePages = false;
  for (const [name, value] of Object.entries(limits)) {
    const fp = `${limPath}[${name}]`;
    errs.push(...validateContainerResourceName(name, fp));
    errs.push(...validateResourceQuantityValue(name, value, fp));
    const q = parseExactQuantity(value);
    if (isHugePageResourceName(name)) {
      limHugePages = true;
      if (q && !hugePageValueDivisible(name, q))
        errs.push(field.invalid(fp, canonicalQuantity(q), `${canonicalQuantity(q)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') limCpuOrMemory = true;
  }
  for (const [name, value] of Object.entries(requests)) {
    const fp = `${reqPath}[${name}]`;
    errs.push(...validateContainerResourceName(name, fp));
    errs.push(...validateResourceQuantityValue(name, value, fp));
    const q = parseExactQuantity(value);
    if (Object.hasOwn(limits, name)) {
      const cmp = compareQuantities(value, limits[name]);
      const limit = canonicalQuantity(limits[name]);
      if (cmp !== undefined && cmp !== 0 && !isOvercommitAllowed(name)) {
        errs.push(field.invalid(reqPath, canonicalQuantity(value), `must be equal to ${name} limit of ${limit}`));
      } else if (cmp !== undefined && cmp > 0) {
        errs.push(field.invalid(reqPath, canonicalQuantity(value), `must be less than or equal to ${name} limit of ${limit}`));
      }
    } else if (!isOvercommitAllowed(name)) {
      errs.push(field.required(limPath, 'Limit must be set for non overcommitable resources'));
    }
    if (isHugePageResourceName(name)) {
      reqHugePages = true;
      if (q && !hugePageValueDivisible(name, q))
        errs.push(field.invalid(fp, canonicalQuantity(q), `${canonicalQuantity(q)} is not positive integer multiple of ${name}`));
    }
    if (name === 'cpu' || name === 'memory') reqCpuOrMemory = true;
  }
  if (!limCpuOrMemory && !reqCpuOrMemory && (reqHugePages || limHugePages)) errs.push(field.forbidden(p, 'HugePages require cpu or memory'));
  errs.push(...validateResourceClaimNames(r.claims, podClaimNames, `${p}.claims`));
  return errs;
}

function validateResourceClaimNames(claims: unknown, podClaimNames: ReadonlySet<string>, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  listOf(claims).forEach((claim, i) => {
    const ip = `${p}[${i}]`;
    const name = strOf(claim.name);
    const request = strOf(claim.request);
    if (!name) {
      errs.push(field.required(ip, ''));
      return;
    }
    if (names.has(name)) errs.push(field.duplicate(ip, name));
    else {
      let key = name;
      if (request) {
        errs.push(...isDNS1123Label(request).map((m) => field.invalid(`${ip}.request`, request, m)));
        key += `/${request}`;
      }
      if (names.has(key)) errs.push(field.duplicate(ip, key));
      else if (!request) for (const k of names) if (k.includes('/') && k.slice(0, k.indexOf('/')) === name) errs.push(field.duplicate(ip, name));
      names.add(key);
    }
    if (!podClaimNames.has(name)) {
      const detail = podClaimNames.size ? `: ${[...podClaimNames].sort().join(', ')}` : ' which is empty';
      errs.push({ ...field.notFound(ip, name), detail: `must be one of the names in pod.spec.resourceClaims${detail}` });
    }
  });
  return errs;
}
