/**
 * The cluster's DNS records, as CoreDNS's kubernetes plugin answers them
 * (the Kubernetes DNS-Based Service Discovery specification,
 * kubernetes/dns docs/specification.md, with kubeadm's Corefile: `pods
 * insecure`, reverse zones with fallthrough):
 *
 *   <svc>.<ns>.svc.<zone>                 A/AAAA: the cluster IPs; headless: each ready endpoint's address;
 *                                         ExternalName: a CNAME to its external name
 *   <host>.<svc>.<ns>.svc.<zone>          A/AAAA of a headless Service's endpoint, by its hostname or dashed IP
 *   _<port>._<proto>.<svc>.<ns>.svc.<zone> SRV per named port (ClusterIP: the Service; headless: each endpoint)
 *   <a-b-c-d>.<ns>.pod.<zone>             A of the address the name spells
 *   d.c.b.a.in-addr.arpa (and ip6.arpa)   PTR of a cluster IP or a headless endpoint's address
 *   dns-version.<zone>                    TXT: the specification's version
 *
 * Names are matched without regard to case. A name that exists without a
 * record of the asked type is answered NOERROR with no answers; a name that
 * does not exist is NXDOMAIN; both carry the zone's SOA. A reverse name of an
 * address the cluster does not know falls through to the forwarder.
 */
import type { KubeObject, corev1, discoveryv1 } from '@kubeling/api';

export type Service = corev1.Service & KubeObject;
export type EndpointSlice = discoveryv1.EndpointSlice & KubeObject;
type ServicePort = NonNullable<NonNullable<Service['spec']>['ports']>[number];
type EndpointPort = NonNullable<EndpointSlice['ports']>[number];

/** What the zone reads: the Services and EndpointSlices the informers hold. */
export interface ZoneSource {
  service(namespace: string, name: string): Service | undefined;
  /** The EndpointSlices labelled with the Service's name. */
  slices(namespace: string, service: string): EndpointSlice[];
  /** Whether a namespace has any Service (CoreDNS answers NOERROR for `<ns>.svc.<zone>` then). */
  namespaceExists(namespace: string): boolean;
  /** Services whose cluster IPs include the address. */
  servicesByIP(ip: string): Service[];
  /** Headless endpoints holding the address: the slice and the endpoint. */
  endpointsByIP(ip: string): { slice: EndpointSlice; endpoint: discoveryv1.Endpoint }[];
}

export type RecordType = 'A' | 'AAAA' | 'CNAME' | 'SRV' | 'PTR' | 'TXT' | 'SOA' | 'NS';

export interface Record {
  name: string;
  type: RecordType;
  ttl: number;
  data: string | string[] | { priority: number; weight: number; port: number; target: string } | Soa;
}

export interface Soa {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

export interface Answer {
  /** NOERROR, NXDOMAIN; `forward` means the name is not the zone's to answer. */
  rcode: 'NOERROR' | 'NXDOMAIN' | 'forward';
  answers: Record[];
  additionals: Record[];
  authorities: Record[];
}

export interface ZoneOptions {
  /** The cluster domain, `cluster.local`. */
  domain: string;
  /** Seconds; kubeadm's Corefile sets 30. */
  ttl: number;
}

/** The version of the DNS specification this answers to. */
export const SPEC_VERSION = '1.1.0';

const lower = (s: string) => s.toLowerCase().replace(/\.$/, '');

/** `1-2-3-4` for 1.2.3.4; IPv6 with `-` for each `:`. */
export function dashed(ip: string): string {
  return ip.replaceAll('.', '-').replaceAll(':', '-');
}

/** The address a dashed label spells, or undefined. */
export function undashed(label: string): { ip: string; family: 4 | 6 } | undefined {
  const v4 = label.split('-');
  if (v4.length === 4 && v4.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return { ip: v4.join('.'), family: 4 };
  const v6 = label.replaceAll('-', ':');
  if (v6.includes(':') && isIPv6(v6)) return { ip: v6, family: 6 };
  return undefined;
}

function isIPv6(s: string): boolean {
  if (!/^[0-9a-f:]+$/i.test(s)) return false;
  const parts = s.split('::');
  if (parts.length > 2) return false;
  const groups = parts.flatMap((p) => (p ? p.split(':') : []));
  if (groups.some((g) => g.length === 0 || g.length > 4)) return false;
  return parts.length === 2 ? groups.length < 8 : groups.length === 8;
}

/** Expands an IPv6 address to its eight groups of four hex digits. */
function expandIPv6(ip: string): string[] {
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => g.padStart(4, '0').toLowerCase());
}

/** The address a reverse name (`4.3.2.1.in-addr.arpa`, nibbles under `ip6.arpa`) names. */
export function reverseAddress(name: string): string | undefined {
  const n = lower(name);
  if (n.endsWith('.in-addr.arpa')) {
    const parts = n.slice(0, -'.in-addr.arpa'.length).split('.');
    if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
    return parts.reverse().map(Number).join('.');
  }
  if (n.endsWith('.ip6.arpa')) {
    const nibbles = n.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || !nibbles.every((x) => /^[0-9a-f]$/.test(x))) return undefined;
    const hex = nibbles.reverse().join('');
    return canonicalIPv6(hex.match(/.{4}/g)!.join(':'));
  }
  return undefined;
}

/** The shortest form of an IPv6 address (RFC 5952), for comparing with what the API holds. */
export function canonicalIPv6(ip: string): string {
  const groups = expandIPv6(ip).map((g) => g.replace(/^0+(?=.)/, ''));
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.len).join(':')}`;
}

const familyOf = (ip: string): 4 | 6 => (ip.includes(':') ? 6 : 4);

export class Zone {
  readonly domain: string;

  constructor(
    private readonly src: ZoneSource,
    private readonly o: ZoneOptions,
  ) {
    this.domain = lower(o.domain);
  }

  /** The zone's SOA record (CoreDNS: ns.dns.<zone>, hostmaster.<zone>, serial from the clock). */
  soa(now = Date.now()): Record {
    return {
      name: this.domain,
      type: 'SOA',
      ttl: this.o.ttl,
      data: {
        mname: `ns.dns.${this.domain}`,
        rname: `hostmaster.${this.domain}`,
        serial: Math.floor(now / 1000) % 2 ** 32,
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: this.o.ttl,
      },
    };
  }

  /** Whether a name is this zone's to answer (its domain, or a reverse name). */
  authoritative(name: string): boolean {
    const n = lower(name);
    return n === this.domain || n.endsWith(`.${this.domain}`);
  }

  answer(qname: string, qtype: string): Answer {
    const name = qname.replace(/\.$/, '');
    const n = lower(name);
    if (n.endsWith('.in-addr.arpa') || n.endsWith('.ip6.arpa')) return this.reverse(name, qtype);
    if (!this.authoritative(n)) return { rcode: 'forward', answers: [], additionals: [], authorities: [] };
    const rel = n === this.domain ? [] : n.slice(0, -(this.domain.length + 1)).split('.');
    const found = this.lookup(name, rel, qtype);
    if (found === undefined) return { rcode: 'NXDOMAIN', answers: [], additionals: [], authorities: [this.soa()] };
    const answers = [...found.answers];
    // A CNAME (an ExternalName Service) inside the zone is followed, as CoreDNS's kubernetes plugin does, a few hops at most.
    for (let hop = 0; hop < 8 && qtype !== 'CNAME'; hop++) {
      const last = answers.at(-1);
      if (last?.type !== 'CNAME' || answers.length !== hop + 1) break;
      const target = String(last.data);
      if (!this.authoritative(target) || target === this.domain) break;
      const next = this.lookup(target, target.slice(0, -(this.domain.length + 1)).split('.'), qtype);
      if (!next) break;
      answers.push(...next.answers);
    }
    return { rcode: 'NOERROR', answers, additionals: found.additionals ?? [], authorities: answers.length ? [] : [this.soa()] };
  }

  /** The records of a name inside the zone, or undefined when it does not exist. */
  private lookup(name: string, rel: string[], qtype: string): { answers: Record[]; additionals?: Record[] } | undefined {
    const ttl = this.o.ttl;
    const rec = (type: RecordType, data: Record['data']): Record => ({ name, type, ttl, data });
    // The zone apex: its SOA and NS.
    if (rel.length === 0) {
      if (qtype === 'SOA') return { answers: [{ ...this.soa(), name }] };
      if (qtype === 'NS') return { answers: [rec('NS', `ns.dns.${this.domain}`)] };
      return { answers: [] };
    }
    if (rel.length === 1 && rel[0] === 'dns-version') return { answers: qtype === 'TXT' ? [rec('TXT', [SPEC_VERSION])] : [] };
    const kind = rel.at(-1);
    // <a-b-c-d>.<ns>.pod.<zone>
    if (kind === 'pod') {
      if (rel.length === 1) return { answers: [] };
      if (rel.length === 2) return this.src.namespaceExists(rel[0]!) ? { answers: [] } : undefined;
      if (rel.length !== 3) return undefined;
      const addr = undashed(rel[0]!);
      if (!addr) return undefined;
      const want = addr.family === 4 ? 'A' : 'AAAA';
      return { answers: qtype === want ? [rec(want, addr.ip)] : [] };
    }
    if (kind !== 'svc') return undefined;
    if (rel.length === 1) return { answers: [] };
    const ns = rel.at(-2)!;
    if (rel.length === 2) return this.src.namespaceExists(ns) ? { answers: [] } : undefined;
    const svcName = rel.at(-3)!;
    const svc = this.src.service(ns, svcName);
    if (!svc) return undefined;
    const rest = rel.slice(0, -3);
    const fqdn = `${svc.metadata.name}.${svc.metadata.namespace}.svc.${this.domain}`;
    if (rest.length === 0) return this.serviceRecords(name, svc, fqdn, qtype);
    if (rest.length === 1) {
      // <host>.<svc>.<ns>.svc: a headless Service's endpoint.
      if (!headless(svc)) return undefined;
      const eps = this.readyEndpoints(svc).filter((e) => e.host === rest[0]);
      if (!eps.length) return undefined;
      return { answers: eps.filter((e) => addrType(e.ip) === qtype).map((e) => rec(addrType(e.ip), e.ip)) };
    }
    if (rest.length === 2 && rest[0]!.startsWith('_') && rest[1]!.startsWith('_')) {
      // _<port>._<proto>.<svc>.<ns>.svc
      const port = rest[0]!.slice(1);
      const proto = rest[1]!.slice(1).toUpperCase();
      const ports = (svc.spec?.ports ?? []).filter((p) => p.name && lower(p.name) === port && (p.protocol ?? 'TCP') === proto);
      if (!ports.length || svc.spec?.type === 'ExternalName') return undefined;
      if (qtype !== 'SRV') return { answers: [] };
      return this.srv(name, svc, fqdn, ports);
    }
    return undefined;
  }

  private serviceRecords(name: string, svc: Service, fqdn: string, qtype: string): { answers: Record[]; additionals?: Record[] } {
    const ttl = this.o.ttl;
    const rec = (type: RecordType, data: Record['data']): Record => ({ name, type, ttl, data });
    if (svc.spec?.type === 'ExternalName') {
      const target = lower(svc.spec.externalName ?? '');
      return { answers: target ? [rec('CNAME', target)] : [] };
    }
    if (qtype === 'SRV')
      return this.srv(
        name,
        svc,
        fqdn,
        (svc.spec?.ports ?? []).filter((p) => p.name),
      );
    if (qtype !== 'A' && qtype !== 'AAAA' && qtype !== 'ANY') return { answers: [] };
    const ips = headless(svc) ? this.readyEndpoints(svc).map((e) => e.ip) : clusterIPs(svc);
    const unique = [...new Set(ips)];
    return { answers: unique.filter((ip) => qtype === 'ANY' || addrType(ip) === qtype).map((ip) => rec(addrType(ip), ip)) };
  }

  /** SRV records of a Service's named ports: the Service itself, or each ready endpoint of a headless one. */
  private srv(name: string, svc: Service, fqdn: string, ports: ServicePort[]): { answers: Record[]; additionals: Record[] } {
    const ttl = this.o.ttl;
    const answers: Record[] = [];
    const additionals: Record[] = [];
    if (headless(svc)) {
      const eps = this.readyEndpoints(svc);
      const targets: { port: number; target: string; ip: string }[] = [];
      for (const p of ports) {
        for (const e of eps) {
          // The endpoint's port of the Service port's name and protocol.
          const port = e.ports.find((x) => (x.name ?? '') === (p.name ?? '') && (x.protocol ?? 'TCP') === (p.protocol ?? 'TCP'))?.port;
          if (port) targets.push({ port, target: `${e.host}.${fqdn}`, ip: e.ip });
        }
      }
      const weight = targets.length ? Math.floor(100 / targets.length) : 0;
      for (const t of targets) {
        answers.push({ name, type: 'SRV', ttl, data: { priority: 0, weight, port: t.port, target: t.target } });
        additionals.push({ name: t.target, type: addrType(t.ip), ttl, data: t.ip });
      }
      return { answers, additionals };
    }
    const weight = ports.length ? Math.floor(100 / ports.length) : 0;
    for (const p of ports) answers.push({ name, type: 'SRV', ttl, data: { priority: 0, weight, port: p.port, target: fqdn } });
    if (answers.length) for (const ip of clusterIPs(svc)) additionals.push({ name: fqdn, type: addrType(ip), ttl, data: ip });
    return { answers, additionals };
  }

  /** The ready addresses of a Service's EndpointSlices (all of them with publishNotReadyAddresses), each with its DNS host label. */
  private readyEndpoints(svc: Service): { ip: string; host: string; ports: EndpointPort[] }[] {
    const out: { ip: string; host: string; ports: EndpointPort[] }[] = [];
    const all = (svc.spec as { publishNotReadyAddresses?: boolean } | undefined)?.publishNotReadyAddresses === true;
    for (const sl of this.src.slices(svc.metadata.namespace ?? '', svc.metadata.name ?? '')) {
      if (sl.addressType === 'FQDN') continue;
      for (const e of sl.endpoints ?? []) {
        // A missing ready condition counts as ready, as the API documents.
        if (!all && e.conditions?.ready === false) continue;
        for (const ip of e.addresses ?? []) out.push({ ip, host: e.hostname ? lower(e.hostname) : dashed(ip), ports: sl.ports ?? [] });
      }
    }
    return out;
  }

  private reverse(name: string, qtype: string): Answer {
    const ip = reverseAddress(name);
    const none: Answer = { rcode: 'forward', answers: [], additionals: [], authorities: [] };
    if (!ip) return none;
    const ttl = this.o.ttl;
    const targets = new Set<string>();
    for (const s of this.src.servicesByIP(ip)) targets.add(`${s.metadata.name}.${s.metadata.namespace}.svc.${this.domain}`);
    for (const { slice, endpoint } of this.src.endpointsByIP(ip)) {
      const svc = slice.metadata.labels?.['kubernetes.io/service-name'];
      if (!svc) continue;
      const host = endpoint.hostname ? lower(endpoint.hostname) : dashed(ip);
      targets.add(`${host}.${svc}.${slice.metadata.namespace}.svc.${this.domain}`);
    }
    if (!targets.size) return none;
    const answers: Record[] = qtype === 'PTR' || qtype === 'ANY' ? [...targets].map((t) => ({ name, type: 'PTR', ttl, data: t })) : [];
    return { rcode: 'NOERROR', answers, additionals: [], authorities: answers.length ? [] : [this.soa()] };
  }
}

function headless(svc: Service): boolean {
  return svc.spec?.clusterIP === 'None';
}

function clusterIPs(svc: Service): string[] {
  const ips = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : svc.spec?.clusterIP ? [svc.spec.clusterIP] : [];
  return ips.filter((ip) => ip && ip !== 'None');
}

function addrType(ip: string): 'A' | 'AAAA' {
  return familyOf(ip) === 4 ? 'A' : 'AAAA';
}
