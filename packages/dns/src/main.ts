#!/usr/bin/env -S node --conditions=kubeling-dist
/**
 * kubeling-dns: the cluster's DNS, as CoreDNS with kubeadm's Corefile serves it
 * (the kubernetes plugin over `cluster.local`, `in-addr.arpa` and `ip6.arpa`,
 * `pods insecure`, `ttl 30`, everything else forwarded to the host's resolvers).
 *
 *   --kubeconfig=PATH | --master=URL
 *   --listen=127.0.0.1:10053          UDP and TCP
 *   --cluster-domain=cluster.local
 *   --ttl=30
 *   --upstream=IP:PORT                repeatable; default: the nameservers of --resolv-conf
 *   --resolv-conf=/etc/resolv.conf
 *   --healthz-bind-address=127.0.0.1 --healthz-port=8080   /healthz, /readyz and /metrics
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { Counter, Registry } from 'prom-client';
import { InformerFactory, RestClient, loadKubeConfig, resolveClientConfig, serveHealth, stopOnSignals } from '@kubeling/client';
import { DnsServer } from './server.js';
import { informerSource } from './source.js';
import { hostUpstreams } from './upstreams.js';
import { Zone } from './zone.js';

function hostPort(v: string, flag: string): { host: string; port: number } {
  const at = v.lastIndexOf(':');
  const port = Number(v.slice(at + 1));
  if (at < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --${flag} ${JSON.stringify(v)}: want IP:PORT`);
  return { host: v.slice(0, at).replace(/^\[|\]$/g, ''), port };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      master: { type: 'string' },
      listen: { type: 'string', default: '127.0.0.1:10053' },
      'cluster-domain': { type: 'string', default: 'cluster.local' },
      ttl: { type: 'string', default: '30' },
      upstream: { type: 'string', multiple: true },
      'resolv-conf': { type: 'string', default: '/etc/resolv.conf' },
      'healthz-bind-address': { type: 'string', default: '127.0.0.1' },
      'healthz-port': { type: 'string', default: '8080' },
      'log-level': { type: 'string', default: 'info' },
    },
    strict: true,
  });
  const listen = hostPort(values.listen, 'listen');
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl < 0 || ttl > 3600) throw new Error(`invalid --ttl ${JSON.stringify(values.ttl)}: 0 to 3600 seconds`);
  for (const u of values.upstream ?? []) hostPort(u, 'upstream');
  const log = pino({ level: values['log-level'], base: { component: 'dns' } });
  const config = resolveClientConfig(loadKubeConfig({ explicitPath: values.kubeconfig }), { server: values.master });
  const client = new RestClient(config, { userAgent: 'kubeling-dns/v0.1.0' });
  const informers = new InformerFactory(client);
  const { source, synced } = informerSource(informers);
  const zone = new Zone(source, { domain: values['cluster-domain'], ttl });
  informers.start();
  await synced();
  const self = [`${listen.host}:53`, values.listen];
  const upstreams = values.upstream?.length ? values.upstream : hostUpstreams(values['resolv-conf'], self);
  const server = new DnsServer({ zone, host: listen.host, port: listen.port, upstreams, log });
  const addr = await server.start();
  const metrics = new Registry();
  new Counter({
    name: 'coredns_dns_requests_total',
    help: 'Counter of DNS requests made per answer source.',
    labelNames: ['source'],
    registers: [metrics],
    collect() {
      this.reset();
      for (const [k, v] of Object.entries(server.counts)) this.inc({ source: k }, v);
    },
  });
  const health = await serveHealth(metrics, Number(values['healthz-port']), values['healthz-bind-address']);
  log.info({ address: `${addr.host}:${addr.port}`, domain: zone.domain, upstreams }, 'dns started');
  stopOnSignals(async () => {
    health.close();
    await server.close();
    informers.stop();
    client.close();
  });
}

main().catch((e) => {
  process.stderr.write(`kubeling-dns: ${(e as Error).message}\n`);
  process.exit(1);
});
