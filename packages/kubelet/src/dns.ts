/**
 * A pod's DNS configuration and its /etc/hosts, as upstream's kubelet makes
 * them (pkg/kubelet/network/dns/dns.go GetPodDNS; kubelet_pods.go
 * managedHostsFileContent):
 *
 * - `dnsPolicy` ClusterFirst (the default) gives the cluster DNS servers, the
 *   search path `<ns>.svc.<domain> svc.<domain> <domain>` followed by the
 *   host's, and `ndots:5`; with no cluster DNS configured it falls back to
 *   Default. Default gives the host's resolv.conf. ClusterFirst on the host
 *   network is Default unless the policy is ClusterFirstWithHostNet. None gives
 *   nothing but what `dnsConfig` says.
 * - `dnsConfig` adds nameservers and searches (without repeating one) and
 *   options (an option of the same name replaced by the pod's).
 * - /etc/hosts: localhost lines, the pod's IP with its FQDN (hostname and
 *   subdomain) and hostname, then the pod's `hostAliases`; on the host network,
 *   the host's file with the aliases after it.
 */
import { readFileSync } from 'node:fs';
import type { corev1 } from '@kubeling/api';

/** The pod fields read here (dnsConfig and hostAliases are not in the typed subset of the spec). */
type PodSpec = corev1.PodSpec & {
  dnsConfig?: { nameservers?: string[]; searches?: string[]; options?: { name?: string; value?: string }[] };
  hostAliases?: { ip?: string; hostnames?: string[] }[];
};

export interface DnsConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

export interface ClusterDnsOptions {
  /** The cluster DNS servers (`--cluster-dns`); none means pods get the host's configuration. */
  clusterDNS: string[];
  /** `--cluster-domain`. */
  clusterDomain: string;
  /** `--resolv-conf`: the host's resolver configuration ('' for none). */
  resolvConf: string;
}

/** The most searches and the longest search line upstream passes on (validation.MaxDNSSearchPaths, MaxDNSSearchListChars). */
const MAX_SEARCHES = 32;
const MAX_SEARCH_CHARS = 2048;

/** The nameservers, search domains and options of a resolv.conf text. */
export function parseResolvConf(text: string): DnsConfig {
  const out: DnsConfig = { servers: [], searches: [], options: [] };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    if (!line) continue;
    const [key, ...fields] = line.split(/\s+/);
    if (key === 'nameserver' && fields[0]) out.servers.push(fields[0]);
    else if (key === 'search' || key === 'domain') out.searches = fields.map((f) => f.replace(/\.$/, ''));
    else if (key === 'options') out.options.push(...fields);
  }
  return out;
}

function hostConfig(file: string): DnsConfig {
  if (!file) return { servers: [], searches: [], options: [] };
  try {
    return parseResolvConf(readFileSync(file, 'utf8'));
  } catch {
    return { servers: [], searches: [], options: [] };
  }
}

const unique = (xs: string[]) => [...new Set(xs)];

/** Options merged by name: the later value of a name replaces the earlier one, in first-seen order. */
function mergeOptions(base: string[], extra: { name?: string; value?: string }[]): string[] {
  const byName = new Map<string, string>();
  for (const o of base) byName.set(o.split(':')[0]!, o);
  for (const o of extra) if (o.name) byName.set(o.name, o.value !== undefined ? `${o.name}:${o.value}` : o.name);
  return [...byName.values()];
}

/** What upstream's kubelet does when the search line is too long: keep what fits. */
function trimSearches(searches: string[]): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const s of searches) {
    if (out.length >= MAX_SEARCHES || chars + s.length + (out.length ? 1 : 0) > MAX_SEARCH_CHARS) break;
    chars += s.length + (out.length ? 1 : 0);
    out.push(s);
  }
  return out;
}

/** The pod's resolver configuration, and whether the cluster DNS was asked for but none is configured. */
export function podDnsConfig(spec: PodSpec, namespace: string, o: ClusterDnsOptions): { config: DnsConfig; missingClusterDNS: boolean } {
  const policy = spec.dnsPolicy ?? 'ClusterFirst';
  let kind: 'cluster' | 'host' | 'none';
  if (policy === 'None') kind = 'none';
  else if (policy === 'ClusterFirstWithHostNet') kind = 'cluster';
  else if (policy === 'ClusterFirst') kind = spec.hostNetwork ? 'host' : 'cluster';
  else kind = 'host';
  let missingClusterDNS = false;
  if (kind === 'cluster' && o.clusterDNS.length === 0) {
    kind = 'host';
    missingClusterDNS = true;
  }
  let config: DnsConfig = { servers: [], searches: [], options: [] };
  if (kind === 'host') config = hostConfig(o.resolvConf);
  else if (kind === 'cluster') {
    const host = hostConfig(o.resolvConf);
    const d = o.clusterDomain.replace(/\.$/, '');
    const cluster = d ? [`${namespace}.svc.${d}`, `svc.${d}`, d] : [];
    config = { servers: [...o.clusterDNS], searches: unique([...cluster, ...host.searches]), options: ['ndots:5'] };
  }
  const extra = spec.dnsConfig;
  if (extra) {
    config = {
      servers: unique([...config.servers, ...(extra.nameservers ?? [])]),
      searches: unique([...config.searches, ...(extra.searches ?? [])]),
      options: mergeOptions(config.options, extra.options ?? []),
    };
  }
  config.searches = trimSearches(config.searches);
  return { config, missingClusterDNS };
}

/** The /etc/hosts the kubelet writes for a pod (managedHostsFileContent). */
export function hostsFileContent(spec: PodSpec, podName: string, namespace: string, podIPs: string[], clusterDomain: string, hostFile = '/etc/hosts'): string {
  const aliases = (spec.hostAliases ?? []).filter((a) => a.ip && a.hostnames?.length);
  const aliasText = aliases.length ? `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip}\t${a.hostnames!.join('\t')}`).join('\n')}\n` : '';
  if (spec.hostNetwork) {
    let host = '';
    try {
      host = readFileSync(hostFile, 'utf8');
    } catch {
      // no host file: the aliases alone
    }
    return host + aliasText;
  }
  const hostname = spec.hostname || podName;
  const lines = [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
  ];
  const domain = clusterDomain.replace(/\.$/, '');
  for (const ip of podIPs) {
    if (spec.subdomain && domain) lines.push(`${ip}\t${hostname}.${spec.subdomain}.${namespace}.svc.${domain}\t${hostname}`);
    else lines.push(`${ip}\t${hostname}`);
  }
  return `${lines.join('\n')}\n${aliasText}`;
}
