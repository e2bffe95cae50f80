/**
 * kubeling-proxy: Services' cluster IPs made reachable on this machine.
 *
 *   --kubeconfig=PATH | --master=URL
 *   --healthz-bind-address=127.0.0.1 --healthz-port=10256
 *   --nodeport-addresses=127.0.0.1    where NodePort Services listen (loopback addresses only)
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import { Gauge, Registry } from 'prom-client';
import { InformerFactory, RestClient, loadKubeConfig, resolveClientConfig, serveHealth, stopOnSignals } from '@kubeling/client';
import { Proxier } from './proxier.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      master: { type: 'string' },
      'healthz-bind-address': { type: 'string', default: '127.0.0.1' },
      'healthz-port': { type: 'string', default: '10256' },
      'nodeport-addresses': { type: 'string', default: '127.0.0.1' },
      'log-level': { type: 'string', default: 'info' },
    },
    strict: true,
  });
  const log = pino({ level: values['log-level'], base: { component: 'proxy' } });
  const config = resolveClientConfig(loadKubeConfig({ explicitPath: values.kubeconfig }), { server: values.master });
  const client = new RestClient(config, { userAgent: 'kubeling-proxy/v0.1.0' });
  const informers = new InformerFactory(client);
  const proxier = new Proxier(informers, log, values['nodeport-addresses']!.split(',').filter(Boolean));
  proxier.init();
  informers.start();
  const metrics = new Registry();
  new Gauge({
    name: 'kubeproxy_sync_proxy_rules_service_listeners',
    help: 'Service ports this proxy listens on.',
    registers: [metrics],
    collect() {
      this.set(proxier.listening.length);
    },
  });
  const health = await serveHealth(metrics, Number(values['healthz-port']), values['healthz-bind-address']);
  log.info({ port: (health.address() as { port: number }).port }, 'proxy started');
  stopOnSignals(async () => {
    health.close();
    informers.stop();
    await proxier.close();
    client.close();
  });
}

main().catch((e) => {
  process.stderr.write(`proxy: ${(e as Error).message}\n`);
  process.exit(1);
});
