/**
 * Service environment variables as upstream's kubelet makes them: the
 * namespace's Services with a cluster IP (unless enableServiceLinks is
 * false) and the master `kubernetes` Service always, the container's own
 * variables over them, and $(VAR) able to refer to them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod } from './kinds.js';
import { containerEnv, serviceEnv, type EnvSources, type ServiceLike } from './podutil.js';

type Port = { name?: string; port: number; protocol?: string };
const svc = (name: string, clusterIP: string, ports: Port[]): ServiceLike => ({ metadata: { name }, spec: { clusterIP, ports } });

test("upstream's FromServices: host, ports, named ports and Docker's link variables; headless Services have none", () => {
  assert.deepEqual(
    serviceEnv([
      svc('fooservice', '127.1.3.4', [
        { name: 'http', port: 8765, protocol: 'TCP' },
        { name: 'dns-udp', port: 53, protocol: 'UDP' },
      ]),
      svc('headless', 'None', [{ port: 80 }]),
    ]),
    {
      FOOSERVICE_SERVICE_HOST: '127.1.3.4',
      FOOSERVICE_SERVICE_PORT: '8765',
      FOOSERVICE_SERVICE_PORT_HTTP: '8765',
      FOOSERVICE_SERVICE_PORT_DNS_UDP: '53',
      FOOSERVICE_PORT: 'tcp://127.1.3.4:8765',
      FOOSERVICE_PORT_8765_TCP: 'tcp://127.1.3.4:8765',
      FOOSERVICE_PORT_8765_TCP_PROTO: 'tcp',
      FOOSERVICE_PORT_8765_TCP_PORT: '8765',
      FOOSERVICE_PORT_8765_TCP_ADDR: '127.1.3.4',
      FOOSERVICE_PORT_53_UDP: 'udp://127.1.3.4:53',
      FOOSERVICE_PORT_53_UDP_PROTO: 'udp',
      FOOSERVICE_PORT_53_UDP_PORT: '53',
      FOOSERVICE_PORT_53_UDP_ADDR: '127.1.3.4',
    },
  );
});

test('a container gets its namespace Services and the master one; its own variables win; enableServiceLinks: false keeps only the master', async () => {
  const src: EnvSources = {
    configMap: async () => undefined,
    secret: async () => undefined,
    services: async () => ({
      namespace: [svc('my-db', '127.1.0.9', [{ port: 5432 }])],
      master: svc('kubernetes', '127.1.0.1', [{ name: 'https', port: 443 }]),
    }),
  };
  const pod = (links?: boolean): Pod =>
    ({ metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [], ...(links === undefined ? {} : { enableServiceLinks: links }) } }) as unknown as Pod;
  const c = {
    name: 'c',
    env: [
      { name: 'MY_DB_SERVICE_PORT', value: 'mine' },
      { name: 'URL', value: 'db:$(MY_DB_SERVICE_HOST)' },
    ],
  } as Container;
  const env = await containerEnv(pod(), c, src, '127.0.0.1', '127.2.0.5', {});
  assert.equal(env.MY_DB_SERVICE_HOST, '127.1.0.9');
  assert.equal(env.MY_DB_SERVICE_PORT, 'mine');
  assert.equal(env.URL, 'db:127.1.0.9');
  assert.equal(env.KUBERNETES_SERVICE_HOST, '127.1.0.1');
  assert.equal(env.KUBERNETES_PORT_443_TCP, 'tcp://127.1.0.1:443');
  const noLinks = await containerEnv(pod(false), { name: 'c' } as Container, src, '127.0.0.1', '127.2.0.5', {});
  assert.equal(noLinks.MY_DB_SERVICE_HOST, undefined);
  assert.equal(noLinks.KUBERNETES_SERVICE_HOST, '127.1.0.1');
});
