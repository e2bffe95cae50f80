/** The small plugins with plain injected lookups: namespaces, exec, node taints, external IPs, AlwaysDeny, operation filtering. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '@kubeling/api';
import { StatusError, alreadyExists, notFound } from '@kubeling/apimachinery';
import { OperationFilter } from './attributes.js';
import type { AdmissionAttributes, ValidatingAdmission } from './index.js';
import { NamespaceAutoProvision, NamespaceExists } from './namespaceplugins.js';
import { DenyExec } from './podrestrictions.js';
import { AlwaysDeny, DenyServiceExternalIPs, TaintNodesByCondition } from './simpleplugins.js';

const obj = (kind: string, name: string, spec: object = {}): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name }, spec }) as KubeObject;
const NS = { group: '', resource: 'namespaces' };

async function message(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return `${e.status.code} ${e.status.message}`;
  }
}

test('NamespaceAutoProvision creates a missing namespace once; NamespaceExists answers its 404', async () => {
  const have = new Set(['default']);
  const created: string[] = [];
  const namespaces = {
    async get(_ns: string | undefined, name: string) {
      if (!have.has(name)) throw notFound(NS, name);
      return obj('Namespace', name);
    },
    async create(_ns: string | undefined, o: KubeObject) {
      created.push(o.metadata.name!);
      if (o.metadata.name === 'racing') throw alreadyExists(NS, 'racing');
      have.add(o.metadata.name!);
      return o;
    },
  };
  const auto = new NamespaceAutoProvision(() => namespaces);
  const a: AdmissionAttributes = { operation: 'CREATE', resource: '/configmaps', namespace: 'fresh' };
  assert.equal(auto.handles(a), true);
  assert.equal(auto.handles({ ...a, dryRun: true }), false);
  assert.equal(auto.handles({ ...a, resource: '/namespaces', namespace: undefined }), false);
  await auto.admit(obj('ConfigMap', 'c'), a);
  await auto.admit(obj('ConfigMap', 'c'), a);
  await auto.admit(obj('ConfigMap', 'c'), { ...a, namespace: 'racing' });
  assert.deepEqual(created, ['fresh', 'racing'], 'created once; AlreadyExists from a racing create is fine');

  const exists = new NamespaceExists(() => namespaces);
  assert.equal(await message(exists.validate(obj('ConfigMap', 'c'), { ...a, namespace: 'fresh' })), 'ok');
  assert.equal(await message(exists.validate(obj('ConfigMap', 'c'), { ...a, namespace: 'gone' })), '404 namespaces "gone" not found');
});

test('DenyEscalatingExec refuses exec into privileged or host-namespace pods; DenyExecOnPrivileged only privileged ones', async () => {
  const pods: Record<string, KubeObject> = {
    priv: obj('Pod', 'priv', { containers: [{ name: 'c', securityContext: { privileged: true } }] }),
    hostpid: obj('Pod', 'hostpid', { hostPID: true, containers: [{ name: 'c' }] }),
    plain: obj('Pod', 'plain', { containers: [{ name: 'c' }] }),
  };
  const getter = () => ({
    async get(_ns: string | undefined, name: string) {
      if (!pods[name]) throw notFound({ group: '', resource: 'pods' }, name);
      return pods[name]!;
    },
  });
  const esc = new DenyExec('DenyEscalatingExec', getter);
  const priv = new DenyExec('DenyExecOnPrivileged', getter);
  const exec = (name: string): AdmissionAttributes => ({ operation: 'CONNECT', resource: '/pods', subresource: 'exec', namespace: 'd', name });
  const options = { apiVersion: 'v1', kind: 'PodExecOptions', metadata: {} } as KubeObject;
  assert.equal(esc.handles(exec('x')), true);
  assert.equal(esc.handles({ ...exec('x'), subresource: 'portforward' }), false);
  assert.equal(await message(esc.validate(options, exec('priv'))), '403 pods "priv" is forbidden: cannot exec into or attach to a privileged container');
  assert.equal(
    await message(esc.validate(options, exec('hostpid'))),
    '403 pods "hostpid" is forbidden: cannot exec into or attach to a container using host pid',
  );
  assert.equal(await message(esc.validate(options, exec('plain'))), 'ok');
  assert.equal(await message(esc.validate(options, exec('none'))), '403 pods "none" is forbidden: pods "none" not found');
  assert.equal(await message(priv.validate(options, exec('hostpid'))), 'ok');
  assert.equal(await message(priv.validate(options, exec('priv'))), '403 pods "priv" is forbidden: cannot exec into or attach to a privileged container');
});

test('TaintNodesByCondition adds not-ready:NoSchedule once; DenyServiceExternalIPs refuses only new external IPs', async () => {
  const t = new TaintNodesByCondition();
  const node = obj('Node', 'n', { taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }] });
  await t.admit(node);
  await t.admit(node);
  assert.deepEqual((node as any).spec.taints, [
    { key: 'dedicated', value: 'x', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
  ]);
  assert.equal(t.handles({ operation: 'UPDATE', resource: '/nodes', namespace: undefined }), false);

  const d = new DenyServiceExternalIPs();
  const svc = (ips?: string[]) => obj('Service', 's', ips ? { externalIPs: ips } : {});
  const create: AdmissionAttributes = { operation: 'CREATE', resource: '/services', namespace: 'd' };
  assert.equal(await message(d.validate(svc(), create)), 'ok');
  assert.equal(await message(d.validate(svc(['1.2.3.4']), create)), '403 services "s" is forbidden: Use of external IPs is denied by admission control');
  const update = { ...create, operation: 'UPDATE' as const, name: 's', old: svc(['1.2.3.4', '5.6.7.8']) };
  assert.equal(await message(d.validate(svc(['5.6.7.8']), update)), 'ok');
  assert.equal(await message(d.validate(svc(['9.9.9.9']), update)), '403 services "s" is forbidden: Use of external IPs is denied by admission control');
});

test('AlwaysDeny refuses everything in upstream words; an OperationFilter hides other operations from a plugin', async () => {
  const deny = new AlwaysDeny();
  assert.equal(
    await message(deny.admit(obj('ConfigMap', ''), { operation: 'CREATE', resource: '/configmaps', namespace: 'd' })),
    '403 configmaps "Unknown" is forbidden: admission control is denying all modifications',
  );
  assert.equal(
    await message(deny.validate(obj('Deployment', 'web'), { operation: 'DELETE', resource: 'apps/deployments', namespace: 'd', name: 'web' })),
    '403 deployments.apps "web" is forbidden: admission control is denying all modifications',
  );
  const seen: string[] = [];
  const inner: ValidatingAdmission = { name: 'X', handles: () => true, validate: async (_o, a) => void seen.push(a.operation) };
  const f = new OperationFilter(['CREATE'], inner);
  assert.equal(f.name, 'X');
  assert.equal(f.handles({ operation: 'CONNECT', resource: '/pods', namespace: 'd' }), false);
  assert.equal(f.handles({ operation: 'CREATE', resource: '/pods', namespace: 'd' }), true);
  await f.validate(obj('Pod', 'p'), { operation: 'CREATE', resource: '/pods', namespace: 'd' });
  assert.deepEqual(seen, ['CREATE']);
});
