/**
 * The certificates of the control planes a process starts. One CA, one serving
 * certificate (127.0.0.1 and localhost) and one ServiceAccount key serve them
 * all: each control plane is a separate trust domain only by its etcd prefix,
 * and making keys per start would cost more than the start itself. Client
 * certificates are issued once per identity and kept.
 */
import { APISERVER_DNS, APISERVER_IPS, createCA, issue, serviceAccountKeys, type CA, type CertAndKey } from '@kubeling/pki';

export interface SharedPKI {
  ca: CA;
  serving: CertAndKey;
  sa: { privatePem: string; publicPem: string };
  /** A client certificate for user `cn` in groups `orgs`, issued once. */
  client(cn: string, orgs?: readonly string[]): Promise<CertAndKey>;
}

let shared: Promise<SharedPKI> | undefined;

async function make(): Promise<SharedPKI> {
  const ca = await createCA('kubeling-testenv-ca');
  const [serving, sa] = await Promise.all([
    issue(ca, { commonName: 'kube-apiserver', dnsNames: APISERVER_DNS, ips: APISERVER_IPS, usage: 'server' }),
    serviceAccountKeys(),
  ]);
  const clients = new Map<string, Promise<CertAndKey>>();
  return {
    ca,
    serving,
    sa,
    client: (cn, orgs = []) => {
      const key = JSON.stringify([cn, [...orgs].sort()]);
      let c = clients.get(key);
      if (!c) {
        c = issue(ca, { commonName: cn, organizations: [...orgs], usage: 'client' });
        clients.set(key, c);
      }
      return c;
    },
  };
}

export function sharedPKI(): Promise<SharedPKI> {
  if (!shared) {
    shared = make();
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}
