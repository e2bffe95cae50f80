/**
 * IP and CIDR checks of k8s.io/apimachinery/pkg/api/validation/ip.go
 * (kube-apiserver 1.33, StrictIPCIDRValidation off): legacy fields accept what
 * Go's sloppy parser accepts (IPv4 octets with leading zeros, interface
 * addresses as CIDRs); new fields (IPAddress names, ServiceCIDRs) must be
 * strict and canonical. Canonical forms are Go's `net.IP.String()`.
 */
import { isIP } from 'node:net';
import { field, parseIPSloppy, type FieldError } from '@kubeling/apimachinery';

export const INVALID_IP = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
export const INVALID_CIDR = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/** The 4 or 16 bytes of a sloppily parsed address (IPv4-mapped IPv6 stays 16 bytes). */
function bytesOf(ip: string): number[] | undefined {
  if (!parseIPSloppy(ip)) return undefined;
  if (!ip.includes(':')) return ip.split('.').map((o) => Number.parseInt(o, 10));
  let head = ip;
  let v4: number[] = [];
  const dot = ip.lastIndexOf(':');
  if (ip.slice(dot + 1).includes('.')) {
    v4 = ip
      .slice(dot + 1)
      .split('.')
      .map((o) => Number.parseInt(o, 10));
    head = `${ip.slice(0, dot + 1)}0:0`;
  }
  const [l, r] = head.includes('::') ? head.split('::') : [head, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = groups(l);
  const right = groups(r);
  const all = r === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const out = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (v4.length) out.splice(12, 4, ...v4);
  return out;
}

const is4in6 = (b: number[]) => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** Go's net.IP.String(). */
function ipString(b: number[]): string {
  if (b.length === 4) return b.join('.');
  if (is4in6(b)) return `::ffff:${b.slice(12).join('.')}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return new URL(`http://[${groups.join(':')}]`).hostname.slice(1, -1);
}

function parseIP(p: string, value: string, strict: boolean): { bytes?: number[]; errs: FieldError[] } {
  const bytes = bytesOf(value);
  if (!bytes) return { errs: [field.invalid(p, value, INVALID_IP)] };
  const errs: FieldError[] = [];
  if (strict) {
    if (!isIP(value) || value.includes('%')) errs.push(field.invalid(p, value, 'must not have leading 0s'));
    else if (is4in6(bytes)) errs.push(field.invalid(p, value, 'must not be an IPv4-mapped IPv6 address'));
  }
  return { bytes, errs };
}

/** IsValidIPForLegacyField (not strict). */
export const isValidIPForLegacyField = (p: string, value: string): FieldError[] => parseIP(p, value, false).errs;

/** IsValidIP: strict and canonical. */
export function isValidIP(p: string, value: string): FieldError[] {
  const { bytes, errs } = parseIP(p, value, true);
  if (errs.length || !bytes) return errs;
  const canonical = ipString(bytes);
  return value === canonical ? [] : [field.invalid(p, value, `must be in canonical form ("${canonical}")`)];
}

export interface ParsedCIDR {
  bytes: number[];
  prefix: number;
  /** The network (`ipnet.String()`). */
  network: string;
}

function parseCIDR(p: string, value: string, strict: boolean): { cidr?: ParsedCIDR; errs: FieldError[] } {
  const m = /^([^/]+)\/(\d+)$/.exec(value);
  const bytes = m ? bytesOf(m[1]!) : undefined;
  const bits = bytes?.length === 4 ? 32 : 128;
  const prefix = m ? Number.parseInt(m[2]!, 10) : -1;
  if (!m || !bytes || m[2]!.length > 3 || prefix > bits) return { errs: [field.invalid(p, value, INVALID_CIDR)] };
  const v = bytes;
  const masked = v.map((b, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return b & (0xff << (8 - keep)) & 0xff;
  });
  const cidr = { bytes: masked, prefix, network: `${ipString(masked)}/${prefix}` };
  const errs: FieldError[] = [];
  if (strict) {
    if (!isIP(m[1]!) || (m[2]!.length > 1 && m[2]!.startsWith('0'))) errs.push(field.invalid(p, value, 'must not have leading 0s in IP or prefix length'));
    else if (is4in6(bytes)) errs.push(field.invalid(p, value, 'must not have an IPv4-mapped IPv6 address'));
    else if (masked.some((b, i) => b !== v[i])) errs.push(field.invalid(p, value, 'must not have bits set beyond the prefix length'));
  }
  return { cidr, errs };
}

/** IsValidCIDRForLegacyField (not strict); the parsed network for further checks. */
export const cidrForLegacyField = (p: string, value: string) => parseCIDR(p, value, false);

/** IsValidCIDR: strict and canonical. */
export function isValidCIDR(p: string, value: string): FieldError[] {
  const { cidr, errs } = parseCIDR(p, value, true);
  if (errs.length || !cidr) return errs;
  return value === cidr.network ? [] : [field.invalid(p, value, `must be in canonical form ("${cidr.network}")`)];
}

/** Whether network `outer` contains the address `ip` (same family). */
export function cidrContains(outer: ParsedCIDR, ip: number[]): boolean {
  if (outer.bytes.length !== ip.length) return false;
  for (let i = 0; i < ip.length; i++) {
    const keep = Math.max(0, Math.min(8, outer.prefix - i * 8));
    const mask = (0xff << (8 - keep)) & 0xff;
    if ((ip[i]! & mask) !== outer.bytes[i]) return false;
  }
  return true;
}

/** The IP family of a CIDR or IP string: 4, 6, or 0 when it does not parse. */
export function familyOf(value: string): 4 | 6 | 0 {
  const b = bytesOf(value.split('/')[0]!);
  if (!b) return 0;
  return b.length === 4 || is4in6(b) ? 4 : 6;
}

/** Go's `net.ParseIP(x) != nil`. */
export const looksLikeIP = (value: string): boolean => parseIPSloppy(value);
