/**
 * Kubernetes' IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library/ip.go,
 * cidr.go), with addresses parsed as Go's net/netip parses them
 * (`netip.ParseAddr`, `netip.ParsePrefix`: no leading zeros in IPv4 octets,
 * RFC 5952 canonical IPv6 text) and Kubernetes' extra refusals (zones,
 * IPv4-mapped IPv6 addresses). Error texts follow upstream:
 * `IP Address "x" parse error during conversion from string: ParseAddr("x"): unable to parse IP`.
 */
import { type Overload, global, member } from './registry.js';
import { K8sTypes, T } from './types.js';
import { CelError, OpaqueV, type Val } from './values.js';

const addrErr = (s: string, msg: string) => new Error(`ParseAddr(${JSON.stringify(s)}): ${msg}`);

function parseIPv4(s: string, whole = s): Uint8Array {
  const fields = s.split('.');
  if (fields.length < 4) throw addrErr(whole, 'IPv4 address too short');
  if (fields.length > 4) throw addrErr(whole, 'IPv4 address too long');
  const out = new Uint8Array(4);
  fields.forEach((f, i) => {
    if (f === '') throw addrErr(whole, 'IPv4 field must have at least one digit');
    if (!/^\d+$/.test(f)) throw addrErr(whole, 'unexpected character');
    if (f.length > 1 && f[0] === '0') throw addrErr(whole, 'IPv4 field has octet with leading zero');
    const n = Number(f);
    if (n > 255) throw addrErr(whole, 'IPv4 field has value >255');
    out[i] = n;
  });
  return out;
}

function parseIPv6(s: string): { bytes: Uint8Array; zone: string } {
  let str = s;
  let zone = '';
  const pct = str.indexOf('%');
  if (pct >= 0) {
    zone = str.slice(pct + 1);
    str = str.slice(0, pct);
    if (zone === '') throw addrErr(s, 'zone must be a non-empty string');
  }
  const halves = str.split('::');
  if (halves.length > 2) throw addrErr(s, 'multiple :: in address');
  const groups = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    const fields = part.split(':');
    fields.forEach((f, i) => {
      if (i === fields.length - 1 && f.includes('.')) {
        const v4 = parseIPv4(f, s);
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
        return;
      }
      if (f === '') throw addrErr(s, 'each colon-separated field must have at least one digit');
      if (!/^[0-9a-fA-F]+$/.test(f)) throw addrErr(s, 'unexpected character');
      if (f.length > 4) throw addrErr(s, 'IPv6 field has value >=2^16');
      out.push(Number.parseInt(f, 16));
    });
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (halves.length === 1 && head.length < 8) throw addrErr(s, 'IPv6 address too short');
  if (head.length + tail.length > (halves.length === 2 ? 7 : 8)) throw addrErr(s, 'IPv6 address too long');
  const all = [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return { bytes, zone };
}

/** Go's netip.ParseAddr. */
export function parseAddr(s: string): { bytes: Uint8Array; zone: string } {
  for (const c of s) {
    if (c === '.') return { bytes: parseIPv4(s), zone: '' };
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw addrErr(s, 'missing IPv6 address');
  }
  throw addrErr(s, 'unable to parse IP');
}

const is4In6 = (b: Uint8Array) => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** netip.Addr.String. */
export function formatAddr(b: Uint8Array): string {
  if (b.length === 4) return [...b].join('.');
  if (is4In6(b)) return `::ffff:${[...b.slice(12)].join('.')}`;
  const g = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!);
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i >= 2 && j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (best < 0) return hex(g);
  return `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

/** library/ip.go parseIPAddr: netip.ParseAddr without zones or IPv4-mapped IPv6 addresses. */
function parseIPAddr(raw: string): Uint8Array {
  let a: { bytes: Uint8Array; zone: string };
  try {
    a = parseAddr(raw);
  } catch (e) {
    throw new CelError(`IP Address ${JSON.stringify(raw)} parse error during conversion from string: ${(e as Error).message}`);
  }
  if (a.zone) throw new CelError(`IP address ${JSON.stringify(raw)} with zone value is not allowed`);
  if (is4In6(a.bytes)) throw new CelError(`IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  return a.bytes;
}

export class IPV extends OpaqueV {
  readonly typeName = 'net.IP';
  constructor(readonly bytes: Uint8Array) {
    super();
  }
  equals(o: OpaqueV): boolean {
    return o instanceof IPV && o.bytes.length === this.bytes.length && o.bytes.every((x, i) => x === this.bytes[i]);
  }
  override toString(): string {
    return formatAddr(this.bytes);
  }
}

export class CIDRV extends OpaqueV {
  readonly typeName = 'net.CIDR';
  constructor(
    readonly addr: Uint8Array,
    readonly bits: number,
  ) {
    super();
  }
  equals(o: OpaqueV): boolean {
    return o instanceof CIDRV && o.bits === this.bits && new IPV(o.addr).equals(new IPV(this.addr));
  }
  masked(): CIDRV {
    return new CIDRV(mask(this.addr, this.bits), this.bits);
  }
  override toString(): string {
    return `${formatAddr(this.addr)}/${this.bits}`;
  }
}

function mask(b: Uint8Array, bits: number): Uint8Array {
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[i] = b[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/** netip.ParsePrefix, then library/cidr.go's refusal of IPv4-mapped addresses. */
function parseCIDR(raw: string): CIDRV {
  const fail = (msg: string) =>
    new CelError(
      `network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(raw)}): ${msg}`,
    );
  const slash = raw.lastIndexOf('/');
  if (slash < 0) throw fail("no '/'");
  const addrPart = raw.slice(0, slash);
  const bitsPart = raw.slice(slash + 1);
  let a: { bytes: Uint8Array; zone: string };
  try {
    a = parseAddr(addrPart);
  } catch (e) {
    throw fail((e as Error).message);
  }
  if (a.zone) throw fail('IPv6 zones cannot be present in a prefix');
  if (!/^(0|[1-9]\d*)$/.test(bitsPart)) throw fail(`bad bits after slash: ${JSON.stringify(bitsPart)}`);
  const bits = Number(bitsPart);
  if (bits > a.bytes.length * 8) throw fail('prefix length out of range');
  if (is4In6(a.bytes)) {
    throw new CelError(`network address parse error during conversion from string: IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`);
  }
  return new CIDRV(a.bytes, bits);
}

const canParse = (f: () => unknown) => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};

const inRange = (c: CIDRV, b: Uint8Array) => b.length === c.addr.length && new IPV(mask(b, c.bits)).equals(new IPV(mask(c.addr, c.bits)));
const containsCIDR = (c: CIDRV, o: CIDRV) => o.addr.length === c.addr.length && c.bits <= o.bits && inRange(c, o.addr);

const ipOf = (v: Val) => (v as IPV).bytes;
const cidrOf = (v: Val) => v as CIDRV;
const isIn = (b: Uint8Array, prefix: number[], bits: number) => new IPV(mask(b, bits)).equals(new IPV(Uint8Array.from(prefix)));

const isLoopback = (b: Uint8Array) => (b.length === 4 ? b[0] === 127 : b.every((x, i) => x === (i === 15 ? 1 : 0)));
const isMulticast = (b: Uint8Array) => (b.length === 4 ? (b[0]! & 0xf0) === 0xe0 : b[0] === 0xff);
const isLinkLocalUnicast = (b: Uint8Array) => (b.length === 4 ? b[0] === 169 && b[1] === 254 : b[0] === 0xfe && (b[1]! & 0xc0) === 0x80);
const isUnspecified = (b: Uint8Array) => b.every((x) => x === 0);

export const net: Overload[] = [
  global('ip', 'string_to_ip', [T.string], K8sTypes.ip, (a) => new IPV(parseIPAddr(a[0] as string))),
  member('family', 'ip_family', [K8sTypes.ip], T.int, (a) => (ipOf(a[0]!).length === 4 ? 4n : 6n)),
  global('ip.isCanonical', 'ip_is_canonical', [T.string], T.bool, (a) => formatAddr(parseIPAddr(a[0] as string)) === a[0]),
  member('isUnspecified', 'ip_is_unspecified', [K8sTypes.ip], T.bool, (a) => isUnspecified(ipOf(a[0]!))),
  member('isLoopback', 'ip_is_loopback', [K8sTypes.ip], T.bool, (a) => isLoopback(ipOf(a[0]!))),
  member('isLinkLocalMulticast', 'ip_is_link_local_multicast', [K8sTypes.ip], T.bool, (a) => {
    const b = ipOf(a[0]!);
    return b.length === 4 ? isIn(b, [224, 0, 0, 0], 24) : b[0] === 0xff && (b[1]! & 0x0f) === 0x02;
  }),
  member('isLinkLocalUnicast', 'ip_is_link_local_unicast', [K8sTypes.ip], T.bool, (a) => isLinkLocalUnicast(ipOf(a[0]!))),
  member('isGlobalUnicast', 'ip_is_global_unicast', [K8sTypes.ip], T.bool, (a) => {
    const b = ipOf(a[0]!);
    if (b.length === 4 && b.every((x) => x === 255)) return false;
    return !isUnspecified(b) && !isLoopback(b) && !isMulticast(b) && !isLinkLocalUnicast(b);
  }),
  global('isIP', 'is_ip', [T.string], T.bool, (a) => canParse(() => parseIPAddr(a[0] as string))),
  global('string', 'ip_to_string', [K8sTypes.ip], T.string, (a) => formatAddr(ipOf(a[0]!))),
  global('cidr', 'string_to_cidr', [T.string], K8sTypes.cidr, (a) => parseCIDR(a[0] as string)),
  member('containsIP', 'cidr_contains_ip_string', [K8sTypes.cidr, T.string], T.bool, (a) => inRange(cidrOf(a[0]!), parseIPAddr(a[1] as string))),
  member('containsIP', 'cidr_contains_ip_ip', [K8sTypes.cidr, K8sTypes.ip], T.bool, (a) => inRange(cidrOf(a[0]!), ipOf(a[1]!))),
  member('containsCIDR', 'cidr_contains_cidr_string', [K8sTypes.cidr, T.string], T.bool, (a) => containsCIDR(cidrOf(a[0]!), parseCIDR(a[1] as string))),
  member('containsCIDR', 'cidr_contains_cidr', [K8sTypes.cidr, K8sTypes.cidr], T.bool, (a) => containsCIDR(cidrOf(a[0]!), cidrOf(a[1]!))),
  member('ip', 'cidr_ip', [K8sTypes.cidr], K8sTypes.ip, (a) => new IPV(cidrOf(a[0]!).addr)),
  member('prefixLength', 'cidr_prefix_length', [K8sTypes.cidr], T.int, (a) => BigInt(cidrOf(a[0]!).bits)),
  member('masked', 'cidr_masked', [K8sTypes.cidr], K8sTypes.cidr, (a) => cidrOf(a[0]!).masked()),
  global('isCIDR', 'is_cidr', [T.string], T.bool, (a) => canParse(() => parseCIDR(a[0] as string))),
  global('string', 'cidr_to_string', [K8sTypes.cidr], T.string, (a) => cidrOf(a[0]!).toString()),
];
