import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { fieldErrorMessage, type FieldError } from '@kubeling/apimachinery';
import {
  claimTemplateNames,
  defaultDaemonSetSpec,
  defaultDeploymentSpec,
  defaultReplicaSetSpec,
  defaultStatefulSetSpec,
  validateDaemonSetSpec,
  validateDeploymentSpec,
  validateReplicaSetSpec,
  validateSelectorAndTemplate,
  validateStatefulSetSpec,
} from './apps-v1-validation.js';

type Obj = Record<string, unknown>;
const messages = (errs: FieldError[]) => errs.map(fieldErrorMessage);

/** kubernetes/examples' cockroachdb StatefulSet (_archived/cockroachdb/cockroachdb-statefulset.yaml), its long shell script cut. */
const COCKROACHDB = `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: cockroachdb
  labels:
    app: cockroachdb
spec:
  serviceName: "cockroachdb"
  replicas: 3
  selector:
    matchLabels:
      app: cockroachdb
  template:
    metadata:
      labels:
        app: cockroachdb
    spec:
      initContainers:
      - name: bootstrap
        image: cockroachdb/cockroach-k8s-init:0.2
        imagePullPolicy: IfNotPresent
        args:
        - "-on-start=/on-start.sh"
        - "-service=cockroachdb"
        env:
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        volumeMounts:
        - name: datadir
          mountPath: "/cockroach/cockroach-data"
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              labelSelector:
                matchExpressions:
                - key: app
                  operator: In
                  values:
                  - cockroachdb
              topologyKey: kubernetes.io/hostname
      containers:
      - name: cockroachdb
        image: cockroachdb/cockroach:v1.1.0
        imagePullPolicy: IfNotPresent
        ports:
        - containerPort: 26257
          name: grpc
        - containerPort: 8080
          name: http
        volumeMounts:
        - name: datadir
          mountPath: /cockroach/cockroach-data
        command:
          - "/bin/bash"
          - "-ecx"
          - |
            exec /cockroach/cockroach start --logtostderr --insecure --host "$(hostname -f)" --http-host 0.0.0.0
      terminationGracePeriodSeconds: 60
      volumes:
      - name: datadir
        persistentVolumeClaim:
          claimName: datadir
  volumeClaimTemplates:
  - metadata:
      name: datadir
    spec:
      accessModes:
        - "ReadWriteOnce"
      resources:
        requests:
          storage: 1Gi
`;

function deployment(spec: Obj = {}, podSpec: Obj = {}, labels: Record<string, string> = { app: 'd' }): Obj {
  const s: Obj = {
    selector: { matchLabels: { app: 'd' } },
    template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...podSpec } },
    ...spec,
  };
  defaultDeploymentSpec(s);
  return s;
}

test('the cockroachdb StatefulSet of kubernetes/examples is valid: a template volume may share a claim template name', () => {
  const docs = parseAllDocuments(COCKROACHDB).map((d) => d.toJS() as Obj);
  const sts = docs.find((d) => d.kind === 'StatefulSet')!;
  const spec = sts.spec as Obj;
  defaultStatefulSetSpec(spec);
  assert.deepEqual(claimTemplateNames(spec), ['datadir']);
  assert.deepEqual(messages(validateStatefulSetSpec(spec)), []);
  // kubeling's shared selector-and-template check, given the claim names as volumes that exist unlisted
  assert.deepEqual(messages(validateSelectorAndTemplate(spec as never, { extraVolumes: claimTemplateNames(spec) })), []);
  // a claim template alone backs a mount too (the usual pattern)
  const template = spec.template as { spec: { volumes?: unknown } };
  delete template.spec.volumes;
  assert.deepEqual(messages(validateSelectorAndTemplate(spec as never, { extraVolumes: claimTemplateNames(spec) })), []);
});

test('StatefulSet spec validation follows upstream: the template is checked for labels, restart policy and deadline only', () => {
  const spec: Obj = {
    replicas: -1,
    podManagementPolicy: 'Sometimes',
    selector: { matchLabels: { app: 's' } },
    template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'NoImage' }], restartPolicy: 'Never', activeDeadlineSeconds: 5 } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: -1, maxUnavailable: 0 } },
    ordinals: { start: -2 },
  };
  defaultStatefulSetSpec(spec);
  assert.deepEqual(messages(validateStatefulSetSpec(spec)), [
    "spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or 'Parallel'",
    'spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0',
    'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: cannot be 0',
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    'spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0',
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
    'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported',
  ]);
  const bad: Obj = {
    selector: {},
    template: {},
    updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } },
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' },
  };
  defaultStatefulSetSpec(bad);
  assert.deepEqual(messages(validateStatefulSetSpec(bad)), [
    "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:1, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'",
    'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"',
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset',
  ]);
});

test('StatefulSet defaults follow upstream', () => {
  const a: Obj = { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } };
  defaultStatefulSetSpec(a);
  assert.deepEqual(a, {
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    replicas: 1,
    revisionHistoryLimit: 10,
  });
  const b: Obj = { updateStrategy: { type: 'RollingUpdate' } };
  defaultStatefulSetSpec(b);
  assert.deepEqual(b.updateStrategy, { type: 'RollingUpdate' });
});

test('Deployment: replicas, selector against template labels, strategy, deadlines', () => {
  assert.deepEqual(messages(validateDeploymentSpec(deployment())), []);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ replicas: -1 }))), ['spec.replicas: Invalid value: -1: must be greater than or equal to 0']);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ selector: { matchLabels: { app: 'other' } } }))), [
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"d"}: `selector` does not match template `labels`',
  ]);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ selector: { matchLabels: {} } }))), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
  ]);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ selector: undefined }))), [
    'spec.selector: Required value',
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"d"}: `selector` does not match template `labels`',
  ]);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ selector: { matchExpressions: [{ key: 'app', operator: 'Near', values: ['d'] }] } }))), [
    'spec.selector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"Near", Values:[]string{"d"}}}}: invalid label selector',
  ]);
  assert.deepEqual(
    messages(validateDeploymentSpec(deployment({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } } }))),
    ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0'],
  );
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ strategy: { rollingUpdate: { maxUnavailable: '150%', maxSurge: 'lots' } } }))), [
    "spec.strategy.rollingUpdate.maxSurge: Invalid value: lots: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 150%: must not be greater than 100%',
  ]);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ strategy: { type: 'Recreate', rollingUpdate: {} } }))), [
    "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
  ]);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ strategy: { type: 'BlueGreen' } }))), [
    'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
  ]);
  assert.deepEqual(messages(validateDeploymentSpec(deployment({ minReadySeconds: 10, progressDeadlineSeconds: 10 }))), [
    'spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds',
  ]);
  // the template: pod spec, restart policy, deadline, labels under upstream's path
  assert.deepEqual(
    messages(
      validateDeploymentSpec(
        deployment({}, { restartPolicy: 'OnFailure', activeDeadlineSeconds: 30, volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/' } }] }),
      ),
    ),
    [
      'spec.template.spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
      'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    ],
  );
  assert.deepEqual(messages(validateDeploymentSpec(deployment({}, {}, { app: 'd', 'a b': 'x' }))), [
    "spec.template.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  ]);
  // a volume without a source becomes an emptyDir when the template is defaulted
  const withScratch = deployment({}, { volumes: [{ name: 'scratch' }] });
  assert.deepEqual(((withScratch.template as Obj).spec as Obj).volumes, [{ name: 'scratch', emptyDir: {} }]);
  assert.deepEqual(validateDeploymentSpec(withScratch), []);
  // a Deployment without a template still names its missing containers
  const noTemplate: Obj = { selector: { matchLabels: { app: 'd' } } };
  defaultDeploymentSpec(noTemplate);
  assert.deepEqual(messages(validateDeploymentSpec(noTemplate)), [
    'spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`',
    'spec.template.spec.containers: Required value',
  ]);
});

test('ReplicaSet and DaemonSet specs', () => {
  const rs: Obj = {
    replicas: 2,
    minReadySeconds: -1,
    selector: { matchLabels: { app: 'r' } },
    template: { metadata: { labels: { app: 'r' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  };
  defaultReplicaSetSpec(rs);
  assert.deepEqual(messages(validateReplicaSetSpec(rs)), ['spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0']);

  const ds: Obj = {
    selector: { matchLabels: { app: 'x' } },
    template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  };
  defaultDaemonSetSpec(ds);
  assert.deepEqual(ds.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.deepEqual(validateDaemonSetSpec(ds), []);
  (ds.updateStrategy as Obj).rollingUpdate = { maxUnavailable: 1, maxSurge: '10%' };
  assert.deepEqual(messages(validateDaemonSetSpec(ds)), [
    'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 10%: may not be set when maxUnavailable is non-zero',
  ]);
  (ds.updateStrategy as Obj).rollingUpdate = { maxUnavailable: '0%', maxSurge: 0 };
  assert.deepEqual(messages(validateDaemonSetSpec(ds)), ['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0']);
  ds.updateStrategy = { type: 'Sometimes' };
  ds.selector = {};
  assert.deepEqual(messages(validateDaemonSetSpec(ds)), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset',
    'spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
  ]);
});
