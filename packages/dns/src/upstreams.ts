/**
 * The resolvers names outside the cluster go to: the `nameserver` lines of
 * the host's resolv.conf, as CoreDNS's `forward . /etc/resolv.conf`. An
 * address of this server itself is left out, so a query never loops back.
 */
import { readFileSync } from 'node:fs';

export function hostUpstreams(file = '/etc/resolv.conf', self: string[] = []): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const ip = m[1]!.replace(/%.*$/, '');
    const addr = ip.includes(':') ? `[${ip}]:53` : `${ip}:53`;
    if (!self.includes(addr)) out.push(addr);
  }
  return out;
}
