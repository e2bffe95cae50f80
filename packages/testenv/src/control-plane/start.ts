/**
 * startControlPlane: a kubeling control plane in the test's own process — the
 * apiserver over HTTPS on a loopback port, with the controllers, the scheduler
 * and hollow (or real) kubelets chosen by the options — storing its objects in
 * the shared etcd under a prefix of its own. `stop()` stops them all and
 * deletes the prefix.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { buildApiServer, type ApiServer } from '@kubeling/apiserver';
import { RestClient, type ClientConfig } from '@kubeling/client';
import { ControllerManager, selectControllers } from '@kubeling/controller-manager';
import { Kubelet } from '@kubeling/kubelet';
import { KubelingRuntime } from '@kubeling/runtime';
import { SchedulerServer, buildConfig } from '@kubeling/scheduler';
import { freePort } from '../etcd.js';
import { etcdEndpoints } from './etcd.js';
import { applyManifests } from './manifests.js';
import { ObjectClient } from './objects.js';
import { sharedPKI } from './pki.js';

export interface ControlPlaneOptions {
  /** Files or folders of CustomResourceDefinitions (and anything else) applied before the control plane is handed over. */
  crds?: string | readonly string[];
  /**
   * The controller-manager's controllers: 'all' (upstream's default set, as
   * `--controllers=*`), a list of names (`namespace`, `garbagecollector`,
   * `deployment`, `replicaset`, …), or 'none'. Default 'all'. Without
   * `nodelifecycle` the apiserver runs without TaintNodesByCondition.
   */
  controllers?: 'all' | 'none' | readonly string[];
  /** Run the scheduler (default true). */
  scheduler?: boolean;
  /** How many nodes, each a kubelet in this process (default 0). */
  nodes?: number;
  /**
   * What the nodes run: 'hollow' pods become Running without any process
   * (default); 'kubeling' runs each container as a host process.
   */
  runtime?: 'hollow' | 'kubeling';
  /** 'RBAC' checks every request against roles (the bootstrap policy is installed); 'AlwaysAllow' (default) does not. */
  authz?: 'AlwaysAllow' | 'RBAC';
  /**
   * API Priority and Fairness (default false): its FlowSchemas and priority
   * levels, and the queuing of requests by them. Off, every start skips
   * writing its ~20 objects; a test's load seldom needs fairness.
   */
  priorityAndFairness?: boolean;
  /** Where the temporary files go (the kubeconfig, the nodes' state); a fresh folder under the system's temporary folder by default. */
  dir?: string;
  /** Log level of the components, to stderr ('silent'). */
  logLevel?: 'silent' | 'error' | 'warn' | 'info' | 'debug';
}

/** A kubeconfig (clientcmd v1 Config) with its credentials inline. */
export interface KubeConfigObject {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data': string; 'client-key-data': string } }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace: string } }[];
  'current-context': string;
}

/** A user of the control plane: a client certificate for `name` in `groups`. */
export interface User {
  name: string;
  groups: readonly string[];
  client: ObjectClient;
  kubeconfig: KubeConfigObject;
  /** The kubeconfig as a file, for kubectl and other clients. */
  kubeconfigPath: string;
}

export interface ControlPlane {
  /** The apiserver's URL, https://127.0.0.1:<port>. */
  server: string;
  /** The cluster CA (PEM), which the serving certificate chains to. */
  caPem: string;
  /** The admin's kubeconfig (group system:masters). */
  kubeconfig: KubeConfigObject;
  kubeconfigPath: string;
  /** A client as the admin. */
  client: ObjectClient;
  users: {
    admin: User;
    /** A user in `groups` (plus system:authenticated): under `authz: 'RBAC'` it may do what its bindings allow. */
    asUser(name: string, groups?: readonly string[]): Promise<User>;
  };
  /** The names of the nodes (`node-0`, …), registered when startControlPlane resolves. */
  nodes: string[];
  /**
   * Resolves once the controllers and the scheduler have filled their caches
   * and run. startControlPlane does not wait for it: objects created before
   * are handled as soon as they have.
   */
  componentsStarted: Promise<void>;
  /** Where this control plane keeps its keys in etcd. */
  etcdPrefix: string;
  /** Applies manifests from files or folders (server-side apply, as the admin). */
  applyManifests(paths: string | readonly string[]): ReturnType<typeof applyManifests>;
  /** Stops everything it started and deletes its keys; calling it again does nothing. */
  stop(): Promise<void>;
}

interface Stoppable {
  stop(): Promise<void> | void;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfigOf(server: string, caPem: string, user: string, cert: { certPem: string; keyPem: string }): KubeConfigObject {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kubeling', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(cert.certPem), 'client-key-data': b64(cert.keyPem) } }],
    contexts: [{ name: 'kubeling', context: { cluster: 'kubeling', user, namespace: 'default' } }],
    'current-context': 'kubeling',
  };
}

function clientConfigOf(server: string, caPem: string, cert: { certPem: string; keyPem: string }): ClientConfig {
  return { server, namespace: 'default', ca: Buffer.from(caPem), cert: Buffer.from(cert.certPem), key: Buffer.from(cert.keyPem), insecureSkipTLSVerify: false };
}

/** The controllers flag of an option. */
function controllerSpec(c: ControlPlaneOptions['controllers']): string[] {
  if (c === undefined || c === 'all') return ['*'];
  if (c === 'none') return [];
  return [...c];
}

/** Starts a control plane; see ControlPlaneOptions for what runs. */
export async function startControlPlane(o: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const [endpoints, pki, port] = await Promise.all([etcdEndpoints(), sharedPKI(), freePort()]);
  const id = randomBytes(6).toString('hex');
  const etcdPrefix = `/kubeling-testenv/${id}`;
  const dir = o.dir ? resolve(o.dir) : mkdtempSync(join(tmpdir(), 'kubeling-cp-'));
  const ownsDir = !o.dir;
  const log = pino({ level: o.logLevel ?? 'silent' }, pino.destination(2));
  const started: Stoppable[] = [];
  const clients: ObjectClient[] = [];
  let api: ApiServer | undefined;
  let stopped = false;
  let componentsStarted: Promise<void> = Promise.resolve();

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // What is still starting is let finish, then stopped with the rest.
    await componentsStarted.catch(() => undefined);
    for (const s of started.reverse()) await Promise.resolve(s.stop()).catch(() => undefined);
    for (const c of clients) c.close();
    await api?.close({ deleteStorage: true }).catch(() => undefined);
    if (ownsDir) rmSync(dir, { recursive: true, force: true });
  };

  try {
    const server = `https://127.0.0.1:${port}`;
    const spec = controllerSpec(o.controllers);
    // TaintNodesByCondition's not-ready taint is lifted only by the node lifecycle controller: without it, nodes would take no pods.
    const nodeLifecycle = selectControllers(spec).some((d) => d.name === 'nodelifecycle');
    api = await buildApiServer({
      etcdServers: endpoints,
      etcdPrefix,
      logger: false,
      tls: { cert: pki.serving.certPem, key: pki.serving.keyPem, clientCA: pki.ca.certPem },
      serviceAccount: { signingKeyPem: pki.sa.privatePem, publicKeyPems: [pki.sa.publicPem] },
      authorizationMode: o.authz ?? 'AlwaysAllow',
      advertiseAddress: `127.0.0.1:${port}`,
      componentProbes: [],
      enablePriorityAndFairness: o.priorityAndFairness ?? false,
      ...(nodeLifecycle ? {} : { admission: { disable: ['TaintNodesByCondition'] } }),
    });
    // Listening runs the start-up hooks (caches filled, bootstrap objects made): the API is ready when it resolves.
    await api.app.listen({ host: '127.0.0.1', port });

    const users = new Map<string, Promise<User>>();
    const userFor = (name: string, groups: readonly string[]): Promise<User> => {
      const key = JSON.stringify([name, groups]);
      let u = users.get(key);
      if (!u) {
        u = (async () => {
          const cert = await pki.client(name, groups);
          const kubeconfig = kubeconfigOf(server, pki.ca.certPem, name, cert);
          const kubeconfigPath = join(dir, `kubeconfig-${users.size}`);
          writeFileSync(kubeconfigPath, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
          const client = new ObjectClient(
            new RestClient(clientConfigOf(server, pki.ca.certPem, cert), { qps: 1000, burst: 1000, userAgent: 'kubeling-testenv' }),
          );
          clients.push(client);
          return { name, groups: [...groups], client, kubeconfig, kubeconfigPath };
        })();
        users.set(key, u);
      }
      return u;
    };
    const admin = await userFor('kubeling-admin', ['system:masters']);
    // The admin's first request needs discovery: read it now, before the components' start competes with it.
    await admin.client.resourceFor('v1', 'Namespace');

    const componentConfig = async (cn: string, orgs: string[] = []) => clientConfigOf(server, pki.ca.certPem, await pki.client(cn, orgs));
    // The controllers and the scheduler fill their caches while the caller goes on, as in a cluster that
    // has just started: what is created meanwhile is handled once they have listed it.
    const components: Promise<void>[] = [];
    if (spec.length) {
      components.push(
        (async () => {
          const cm = new ControllerManager({
            config: await componentConfig('system:kube-controller-manager'),
            leaderElect: false,
            controllers: spec,
            log: log.child({ component: 'controller-manager' }),
            serviceAccountKeyPem: pki.sa.privatePem,
            rootCAPem: pki.ca.certPem,
            qps: 500,
            burst: 1000,
          });
          started.push(cm);
          await cm.start();
        })(),
      );
    }
    if (o.scheduler ?? true) {
      components.push(
        (async () => {
          const sched = new SchedulerServer({
            config: await componentConfig('system:kube-scheduler'),
            leaderElect: false,
            scheduler: buildConfig(),
            log: log.child({ component: 'scheduler' }),
            qps: 500,
            burst: 1000,
          });
          started.push(sched);
          await sched.start();
        })(),
      );
    }
    componentsStarted = Promise.all(components).then(() => undefined);
    // Not awaited here; a failure shows in componentsStarted and in the components' log.
    componentsStarted.catch(() => undefined);
    const nodes = Array.from({ length: o.nodes ?? 0 }, (_, i) => `node-${i}`);
    // Pod addresses in 127.0.0.0/8, a second octet per control plane so that real pods of two never collide.
    const octet = 64 + (randomBytes(1)[0]! % 64);
    await Promise.all(
      nodes.map(async (nodeName, i) => {
        const k = new Kubelet({
          config: await componentConfig(`system:node:${nodeName}`, ['system:nodes']),
          nodeName,
          runtime: new KubelingRuntime({
            backend: o.runtime === 'kubeling' ? 'process' : 'hollow',
            root: join(dir, nodeName, 'runtime'),
            podCIDR: `127.${octet}.${i}.0/24`,
          }),
          rootDir: join(dir, nodeName),
          port: 0,
          capacity: { cpu: '8', memory: '32Gi', pods: '110' },
          qps: 100,
          burst: 200,
          log: log.child({ component: 'kubelet', node: nodeName }),
        });
        started.push(k);
        await k.start();
      }),
    );

    if (o.crds) await applyManifests(admin.client, o.crds);

    return {
      server,
      caPem: pki.ca.certPem,
      kubeconfig: admin.kubeconfig,
      kubeconfigPath: admin.kubeconfigPath,
      client: admin.client,
      users: { admin, asUser: (name, groups = []) => userFor(name, groups) },
      nodes,
      componentsStarted,
      etcdPrefix,
      applyManifests: (paths) => applyManifests(admin.client, paths),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
