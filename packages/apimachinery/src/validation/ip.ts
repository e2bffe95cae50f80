/**
 * IP address syntax, as k8s.io/apimachinery/pkg/util/validation (ip.go)
 * checks it through k8s.io/utils/net ParseIPSloppy (Go 1.16's net.ParseIP):
 * IPv4 octets may have leading zeros, which upstream still accepts.
 */

const BIG = 0xffffff;

function dtoi(s: string, i: number): [n: number, end: number] | undefined {
  let n = 0;
  let j = i;
  for (; j < s.length && s[j]! >= '0' && s[j]! <= '9'; j++) {
    n = n * 10 + (s.charCodeAt(j) - 48);
    if (n >= BIG) return undefined;
  }
  return j === i ? undefined : [n, j];
}

function xtoi(s: string, i: number): [n: number, end: number] | undefined {
  let n = 0;
  let j = i;
  for (; j < s.length; j++) {
    const ch = s[j]!;
    if (!/^[0-9a-fA-F]$/.test(ch)) break;
    n = n * 16 + parseInt(ch, 16);
    if (n >= BIG) return undefined;
  }
  return j === i ? undefined : [n, j];
}

function parseIPv4(s: string): number[] | undefined {
  const out: number[] = [];
  let i = 0;
  for (let k = 0; k < 4; k++) {
    if (i >= s.length) return undefined;
    if (k > 0) {
      if (s[i] !== '.') return undefined;
      i++;
    }
    const r = dtoi(s, i);
    if (!r || r[0] > 0xff) return undefined;
    out.push(r[0]);
    i = r[1];
  }
  return i === s.length ? out : undefined;
}

function parseIPv6(input: string): boolean {
  let s = input;
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return true;
  }
  let i = 0;
  while (i < 16) {
    const r = xtoi(s, 0);
    if (!r || r[0] > 0xffff) return false;
    const c = r[1];
    if (c < s.length && s[c] === '.') {
      if (ellipsis < 0 && i !== 12) return false;
      if (i + 4 > 16) return false;
      if (!parseIPv4(s)) return false;
      s = '';
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(c);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return false;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return false;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return false;
  if (i < 16) return ellipsis >= 0;
  return ellipsis < 0;
}

/** Whether `value` parses as an IP address the way upstream's (sloppy) parser accepts it. */
export function parseIPSloppy(value: string): boolean {
  for (const c of value) {
    if (c === '.') return parseIPv4(value) !== undefined;
    if (c === ':') return parseIPv6(value);
  }
  return false;
}

/** An IPv4 or IPv6 address (IPv4 octets may have leading zeros, as upstream still accepts). */
export const isValidIP = (value: string): string[] => (parseIPSloppy(value) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
