import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostsFileContent, parseResolvConf, podDnsConfig } from './dns.js';

const dir = mkdtempSync(join(tmpdir(), 'kubelet-dns-'));
const resolvConf = join(dir, 'resolv.conf');
writeFileSync(resolvConf, '# host\nnameserver 127.0.0.53\nsearch corp.example lab.example\noptions edns0 trust-ad\n');
const o = { clusterDNS: ['127.1.0.10'], clusterDomain: 'cluster.local', resolvConf };

test('resolv.conf parsing: nameservers, the last search line, options, comments', () => {
  assert.deepEqual(parseResolvConf('nameserver 1.1.1.1 # x\ndomain a.example\nsearch b.example c.example.\noptions ndots:2\n;x\nnameserver ::1\n'), {
    servers: ['1.1.1.1', '::1'],
    searches: ['b.example', 'c.example'],
    options: ['ndots:2'],
  });
});

test('ClusterFirst: the cluster DNS, the cluster search path before the host one, ndots:5', () => {
  const { config, missingClusterDNS } = podDnsConfig({ containers: [] } as never, 'team', o);
  assert.equal(missingClusterDNS, false);
  assert.deepEqual(config, {
    servers: ['127.1.0.10'],
    searches: ['team.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'],
    options: ['ndots:5'],
  });
});

test('Default, host network, None, and no cluster DNS', () => {
  const host = { servers: ['127.0.0.53'], searches: ['corp.example', 'lab.example'], options: ['edns0', 'trust-ad'] };
  assert.deepEqual(podDnsConfig({ dnsPolicy: 'Default' } as never, 'ns', o).config, host);
  assert.deepEqual(podDnsConfig({ hostNetwork: true } as never, 'ns', o).config, host, 'ClusterFirst on the host network is Default');
  assert.deepEqual(podDnsConfig({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } as never, 'ns', o).config.servers, ['127.1.0.10']);
  assert.deepEqual(podDnsConfig({ dnsPolicy: 'None' } as never, 'ns', o).config, { servers: [], searches: [], options: [] });
  const fallback = podDnsConfig({} as never, 'ns', { ...o, clusterDNS: [] });
  assert.equal(fallback.missingClusterDNS, true);
  assert.deepEqual(fallback.config, host);
});

test('dnsConfig adds servers and searches once and replaces options by name', () => {
  const spec = {
    dnsPolicy: 'ClusterFirst',
    dnsConfig: {
      nameservers: ['127.0.0.9', '127.1.0.10'],
      searches: ['extra.example', 'cluster.local'],
      options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
    },
  };
  assert.deepEqual(podDnsConfig(spec as never, 'ns', o).config, {
    servers: ['127.1.0.10', '127.0.0.9'],
    searches: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example', 'extra.example'],
    options: ['ndots:2', 'edns0'],
  });
  const none = podDnsConfig({ dnsPolicy: 'None', dnsConfig: { nameservers: ['127.0.0.9'], searches: ['a.example'] } } as never, 'ns', o).config;
  assert.deepEqual(none, { servers: ['127.0.0.9'], searches: ['a.example'], options: [] });
});

test('the managed /etc/hosts: localhost lines, the pod by FQDN with a subdomain, host aliases', () => {
  const text = hostsFileContent(
    { hostname: 'db-0', subdomain: 'db', hostAliases: [{ ip: '127.0.0.7', hostnames: ['foo.local', 'bar.local'] }] } as never,
    'db-0',
    'prod',
    ['127.2.1.5'],
    'cluster.local',
  );
  assert.equal(
    text,
    [
      '# Kubernetes-managed hosts file.',
      '127.0.0.1\tlocalhost',
      '::1\tlocalhost ip6-localhost ip6-loopback',
      'fe00::0\tip6-localnet',
      'fe00::0\tip6-mcastprefix',
      'fe00::1\tip6-allnodes',
      'fe00::2\tip6-allrouters',
      '127.2.1.5\tdb-0.db.prod.svc.cluster.local\tdb-0',
      '',
      '# Entries added by HostAliases.',
      '127.0.0.7\tfoo.local\tbar.local',
      '',
    ].join('\n'),
  );
  assert.match(hostsFileContent({} as never, 'web', 'ns', ['127.2.1.6'], 'cluster.local'), /\n127\.2\.1\.6\tweb\n$/);
  const hostFile = join(dir, 'hosts');
  writeFileSync(hostFile, '127.0.0.1 localhost\n');
  assert.equal(
    hostsFileContent({ hostNetwork: true, hostAliases: [{ ip: '127.0.0.8', hostnames: ['x'] }] } as never, 'p', 'ns', ['127.0.0.1'], 'cluster.local', hostFile),
    '127.0.0.1 localhost\n\n# Entries added by HostAliases.\n127.0.0.8\tx\n',
  );
});
