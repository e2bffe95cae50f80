/** The Pod Security Standards checks: a pod → upstream's reasons and details per level and version. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LevelVersion } from './api.js';
import { Evaluator, aggregateCheckResults, forbiddenDetail, forbiddenReason } from './evaluator.js';
import type { PodMeta, PodSpec } from './pod.js';

const ev = new Evaluator();
const evaluate = (lv: LevelVersion, spec: PodSpec, meta: PodMeta = {}) => aggregateCheckResults(ev.evaluatePod(lv, meta, spec));
const latest = (level: LevelVersion['level']): LevelVersion => ({ level, version: 'latest' });
const detail = (lv: LevelVersion, spec: PodSpec, meta?: PodMeta) => forbiddenDetail(evaluate(lv, spec, meta));

/** What restricted requires of a container, so that a case can break one thing. */
const good = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
const restrictedPod = (over: Partial<PodSpec> = {}, sc: object = {}): PodSpec => ({
  containers: [{ name: 'c', image: 'i', securityContext: { ...good, ...sc } }],
  ...over,
});

test('latest is the newest policy version (v1.32) and privileged evaluates nothing', () => {
  assert.equal(ev.maxVersion, 32);
  assert.deepEqual(ev.evaluatePod(latest('privileged'), {}, { hostNetwork: true }), []);
  assert.equal(evaluate(latest('restricted'), restrictedPod()).allowed, true);
  assert.equal(evaluate(latest('baseline'), { containers: [{ name: 'c' }] }).allowed, true);
});

test('a privileged, host-sharing pod: every reason in upstream order with its detail', () => {
  const spec: PodSpec = {
    hostNetwork: true,
    hostPID: true,
    hostIPC: true,
    containers: [
      {
        name: 'c',
        ports: [{ hostPort: 8080 }, { hostPort: 10000 }],
        securityContext: { privileged: true, capabilities: { add: ['NET_ADMIN', 'CHOWN', 'SYS_ADMIN'] } },
      },
    ],
    volumes: [{ name: 'host', hostPath: { path: '/' } }],
  };
  assert.equal(
    detail(latest('baseline'), spec),
    'non-default capabilities (container "c" must not include "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add), ' +
      'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true), hostPath volumes (volume "host"), ' +
      'hostPort (container "c" uses hostPorts 10000, 8080), privileged (container "c" must not set securityContext.privileged=true)',
  );
  assert.equal(
    detail(latest('restricted'), spec),
    'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true), hostPort (container "c" uses hostPorts 10000, 8080), ' +
      'privileged (container "c" must not set securityContext.privileged=true), ' +
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]; container "c" must not include "CHOWN", "NET_ADMIN", "SYS_ADMIN" in securityContext.capabilities.add), ' +
      'restricted volume types (volume "host" uses restricted volume type "hostPath"), ' +
      'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
      'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
  assert.equal(forbiddenReason(evaluate(latest('baseline'), spec)), 'non-default capabilities, host namespaces, hostPath volumes, hostPort, privileged');
});

const cases: { name: string; lv: LevelVersion; spec: PodSpec; meta?: PodMeta; want: string }[] = [
  {
    name: 'AppArmor: unconfined fields and annotations',
    lv: latest('baseline'),
    spec: {
      securityContext: { appArmorProfile: { type: 'Unconfined' } },
      containers: [{ name: 'a', securityContext: { appArmorProfile: { type: 'Unconfined' } } }],
    },
    meta: {
      annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined', 'container.apparmor.security.beta.kubernetes.io/b': 'localhost/x' },
    },
    want: 'forbidden AppArmor profiles (pod and container "a" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"")',
  },
  {
    name: 'SELinux: bad type, user and role',
    lv: latest('baseline'),
    spec: {
      securityContext: { seLinuxOptions: { user: 'u' } },
      containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'spc_t', role: 'r' } } }],
    },
    want: 'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)',
  },
  {
    name: 'SELinux container_engine_t is allowed from v1.31 only',
    lv: { level: 'baseline', version: 30 },
    spec: { containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'container_engine_t' } } }] },
    want: 'seLinuxOptions (container "a" set forbidden securityContext.seLinuxOptions: type "container_engine_t")',
  },
  {
    name: '…and passes at v1.31',
    lv: { level: 'baseline', version: 31 },
    spec: { containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'container_engine_t' } } }] },
    want: '',
  },
  {
    name: '/proc mount',
    lv: latest('baseline'),
    spec: {
      containers: [
        { name: 'a', securityContext: { procMount: 'Unmasked' } },
        { name: 'b', securityContext: { procMount: 'Default' } },
      ],
    },
    want: 'procMount (container "a" must not set securityContext.procMount to "Unmasked")',
  },
  {
    name: 'seccomp baseline: Unconfined on pod and containers',
    lv: latest('baseline'),
    spec: {
      securityContext: { seccompProfile: { type: 'Unconfined' } },
      initContainers: [{ name: 'i', securityContext: { seccompProfile: { type: 'Unconfined' } } }],
      containers: [{ name: 'a' }],
    },
    want: 'seccompProfile (pod and container "i" must not set securityContext.seccompProfile.type to "Unconfined")',
  },
  {
    name: 'seccomp before v1.19 reads the annotations',
    lv: { level: 'baseline', version: 18 },
    spec: { containers: [{ name: 'a' }] },
    meta: { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/a': 'runtime/default' } },
    want: 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")',
  },
  {
    name: 'sysctls outside the safe set, in pod order',
    lv: latest('baseline'),
    spec: { securityContext: { sysctls: [{ name: 'net.core.somaxconn' }, { name: 'net.ipv4.tcp_rmem' }, { name: 'kernel.msgmax' }] }, containers: [] },
    want: 'forbidden sysctls (net.core.somaxconn, kernel.msgmax)',
  },
  {
    name: 'tcp_rmem is safe only from v1.32',
    lv: { level: 'baseline', version: 31 },
    spec: { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_rmem' }, { name: 'net.ipv4.tcp_keepalive_time' }] } },
    want: 'forbidden sysctls (net.ipv4.tcp_rmem)',
  },
  {
    name: 'Windows hostProcess',
    lv: latest('baseline'),
    spec: {
      securityContext: { windowsOptions: { hostProcess: true } },
      containers: [{ name: 'a', securityContext: { windowsOptions: { hostProcess: true } } }, { name: 'b' }],
    },
    want: 'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)',
  },
  {
    name: 'restricted: explicit runAsNonRoot=false, runAsUser=0, bad seccomp',
    lv: latest('restricted'),
    spec: restrictedPod({ securityContext: { runAsNonRoot: false, runAsUser: 0 } }, { runAsUser: 0, seccompProfile: { type: 'Unconfined' } }),
    want:
      'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod and container "c" must not set runAsUser=0), ' +
      'seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")',
  },
  {
    name: 'restricted: NET_BIND_SERVICE may be added; volumes of several restricted types',
    lv: latest('restricted'),
    spec: restrictedPod(
      {
        volumes: [
          { name: 'n', nfs: {} },
          { name: 'g', gitRepo: {} },
          { name: 'ok', emptyDir: {} },
          { name: 'x', somethingNew: {} },
        ],
      },
      { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } },
    ),
    want: 'restricted volume types (volumes "n", "g", "x" use restricted volume types "gitRepo", "nfs", "unknown")',
  },
  {
    name: 'restricted: runAsUser=0 is allowed before v1.23, capabilities before v1.22',
    lv: { level: 'restricted', version: 21 },
    spec: restrictedPod({}, { runAsUser: 0, capabilities: null }),
    want: '',
  },
  {
    name: 'restricted before v1.22 keeps the baseline capabilities check',
    lv: { level: 'restricted', version: 21 },
    spec: restrictedPod({}, { capabilities: { add: ['NET_RAW'] } }),
    want: 'non-default capabilities (container "c" must not include "NET_RAW" in securityContext.capabilities.add)',
  },
  {
    name: 'restricted before v1.8 does not require allowPrivilegeEscalation=false',
    lv: { level: 'restricted', version: 7 },
    spec: { containers: [{ name: 'c', securityContext: { runAsNonRoot: true } }] },
    want: '',
  },
  {
    name: 'restricted from v1.25 exempts Windows pods from the Linux-only requirements',
    lv: { level: 'restricted', version: 25 },
    spec: { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] },
    want: '',
  },
  {
    name: '…which v1.24 still requires',
    lv: { level: 'restricted', version: 24 },
    spec: { os: { name: 'windows' }, securityContext: { runAsNonRoot: true }, containers: [{ name: 'c' }] },
    want:
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
      'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
      'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  },
  {
    name: 'versions beyond the newest are evaluated as the newest',
    lv: { level: 'baseline', version: 99 },
    spec: { securityContext: { sysctls: [{ name: 'net.ipv4.tcp_wmem' }] } },
    want: '',
  },
  {
    name: 'init and ephemeral containers count; names in visiting order',
    lv: latest('baseline'),
    spec: {
      initContainers: [{ name: 'z', securityContext: { privileged: true } }],
      containers: [{ name: 'a', securityContext: { privileged: true } }],
      ephemeralContainers: [{ name: 'e', securityContext: { privileged: true } }],
    },
    want: 'privileged (containers "z", "a", "e" must not set securityContext.privileged=true)',
  },
];

for (const c of cases) {
  test(c.name, () => {
    assert.equal(detail(c.lv, c.spec, c.meta), c.want);
  });
}

test('a check without a reason is reported as unknown; details join only when present', () => {
  const a = aggregateCheckResults([{ allowed: true }, { allowed: false }, { allowed: false, forbiddenReason: 'r', forbiddenDetail: 'd' }]);
  assert.equal(forbiddenReason(a), 'unknown forbidden reason, r');
  assert.equal(forbiddenDetail(a), 'unknown forbidden reason, r (d)');
});
