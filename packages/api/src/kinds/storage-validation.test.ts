/**
 * Defaulting and validation of PersistentVolumes, claims and storage.k8s.io/v1
 * kinds, each error in kube-apiserver 1.33's words (`field: Type: value: detail`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage, type FieldError } from '@kubeling/apimachinery';
import {
  defaultPersistentVolumeClaim,
  prepareClaimSpec,
  validatePersistentVolumeClaimSpec,
  validatePersistentVolumeClaimUpdate,
} from './core-v1-claim-validation.js';
import { accessModesAsString, persistentVolumeClaimClass } from './core-v1-storage-common.js';
import { defaultPersistentVolume, validatePersistentVolumeSpec, validatePersistentVolumeUpdate } from './core-v1-storage-validation.js';
import {
  defaultCSIDriver,
  defaultStorageClass,
  validateCSIDriver,
  validateCSINode,
  validateCSIStorageCapacity,
  validateStorageClass,
  validateVolumeAttachment,
} from './storage-v1-validation.js';
import { defaultVolume, validateVolumeSource } from './core-v1-volumes.js';

const msgs = (errs: FieldError[]) => errs.map(fieldErrorMessage);
const DNS_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const pvSpec = (extra: object = {}) => ({
  capacity: { storage: '1Gi' },
  accessModes: ['ReadWriteOnce'],
  csi: { driver: 'hostpath.kubeling.io', volumeHandle: 'h' },
  ...extra,
});

test('PersistentVolume defaults: Pending, Retain, Filesystem; a given policy stays', () => {
  const pv = { spec: { persistentVolumeReclaimPolicy: 'Delete' } } as Record<string, any>;
  defaultPersistentVolume(pv);
  assert.deepEqual(pv, { spec: { persistentVolumeReclaimPolicy: 'Delete', volumeMode: 'Filesystem' }, status: { phase: 'Pending' } });
});

test('PersistentVolume spec: access modes, capacity, one source, local needs affinity, node selectors', () => {
  assert.deepEqual(msgs(validatePersistentVolumeSpec(pvSpec())), []);
  assert.deepEqual(
    msgs(validatePersistentVolumeSpec(pvSpec({ accessModes: ['ReadWriteOncePod', 'ReadWriteOnce', 'Sometimes'], capacity: { storage: '1Gi', cpu: '1' } }))),
    [
      'spec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
      'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
      'spec.capacity: Unsupported value: map[string]string{"cpu":"1", "storage":"1Gi"}: supported values: "storage"',
    ],
  );
  assert.deepEqual(msgs(validatePersistentVolumeSpec(pvSpec({ capacity: { storage: '-1' } }))), [
    'spec.capacity[storage]: Invalid value: -1: must be a valid resource quantity',
    'spec.capacity[storage]: Invalid value: "-1": must be greater than zero',
  ]);
  assert.deepEqual(msgs(validatePersistentVolumeSpec(pvSpec({ hostPath: { path: '/a/../b', type: 'Weird' }, persistentVolumeReclaimPolicy: 'Keep' }))), [
    'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
    'spec.hostPath.path: Invalid value: "/a/../b": must not contain \'..\'',
    'spec.hostPath.type: Unsupported value: "Weird": supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"',
    'spec.csi: Forbidden: may not specify more than 1 volume type',
  ]);
  assert.deepEqual(msgs(validatePersistentVolumeSpec(pvSpec({ csi: { driver: 'kubeling.io/hostpath' } }))), [
    `spec.csi.driver: Invalid value: "kubeling.io/hostpath": ${DNS_SUBDOMAIN}`,
    'spec.csi.volumeHandle: Required value',
  ]);
  const affinity = (req: object) => ({ required: { nodeSelectorTerms: [{ matchExpressions: [req] }] } });
  assert.deepEqual(
    msgs(validatePersistentVolumeSpec(pvSpec({ csi: undefined, local: { path: '/d' }, nodeAffinity: affinity({ key: 'k', operator: 'In' }) }))),
    ["spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
  );
  assert.deepEqual(
    msgs(validatePersistentVolumeSpec(pvSpec({ csi: undefined, nfs: { server: 's', path: 'rel' }, nodeAffinity: { required: { nodeSelectorTerms: [] } } }))),
    [
      'spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term',
      'spec.nfs.path: Invalid value: "rel": must be an absolute path',
    ],
  );
  assert.deepEqual(msgs(validatePersistentVolumeSpec({ capacity: { storage: '1' }, accessModes: ['ReadWriteOnce'], local: { path: '/d' } })), [
    'spec.nodeAffinity: Required value: Local volume requires node affinity',
  ]);
});

test('PersistentVolume CSI secret references: the four validateCSIPersistentVolumeSource checks, nodeStageSecretRef unchecked as upstream', () => {
  const csi = (refs: object) => pvSpec({ csi: { driver: 'hostpath.kubeling.io', volumeHandle: 'h', ...refs } });
  const refs = ['controllerPublishSecretRef', 'controllerExpandSecretRef', 'nodePublishSecretRef', 'nodeExpandSecretRef'];
  for (const k of refs) {
    assert.deepEqual(msgs(validatePersistentVolumeSpec(csi({ [k]: { name: 's', namespace: 'n' } }))), [], k);
    assert.deepEqual(msgs(validatePersistentVolumeSpec(csi({ [k]: {} }))), [`spec.csi.${k}.name: Required value`, `spec.csi.${k}.namespace: Required value`]);
    assert.deepEqual(msgs(validatePersistentVolumeSpec(csi({ [k]: { name: 'S_1', namespace: 'a.b' } }))), [
      `spec.csi.${k}.name: Invalid value: "S_1": ${DNS_SUBDOMAIN}`,
      `spec.csi.${k}.namespace: Invalid value: "a.b": must not contain dots`,
    ]);
  }
  // kube-apiserver's validateCSIPersistentVolumeSource has no check for nodeStageSecretRef.
  assert.deepEqual(msgs(validatePersistentVolumeSpec(csi({ nodeStageSecretRef: {} }))), []);
});

test('PersistentVolume update: the source and volume mode are immutable; an expand secret may be added', () => {
  const old = { spec: { ...pvSpec(), volumeMode: 'Filesystem' } };
  const expand = { spec: { ...old.spec, csi: { ...old.spec.csi, controllerExpandSecretRef: { name: 's', namespace: 'n' } } } };
  assert.deepEqual(msgs(validatePersistentVolumeUpdate(expand, old)), []);
  const changed = validatePersistentVolumeUpdate({ spec: { ...old.spec, csi: { ...old.spec.csi, volumeHandle: 'x' }, volumeMode: 'Block' } }, old);
  assert.equal(changed[0]!.field, 'spec.persistentvolumesource');
  assert.match(
    fieldErrorMessage(changed[0]!),
    /^spec\.persistentvolumesource: Forbidden: spec\.persistentvolumesource is immutable after creation\n- csi: .*\n\+ csi: .*"x"/,
  );
  assert.equal(fieldErrorMessage(changed[1]!), 'volumeMode: Invalid value: "Block": field is immutable');
});

test('claims: defaults, spec validation, data sources normalized', () => {
  const pvc = { spec: {} } as Record<string, any>;
  defaultPersistentVolumeClaim(pvc);
  assert.deepEqual(pvc, { spec: { volumeMode: 'Filesystem' }, status: { phase: 'Pending' } });
  assert.deepEqual(
    msgs(validatePersistentVolumeClaimSpec({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0' } }, storageClassName: 'Bad_Class' })),
    ['spec.resources[storage]: Invalid value: "0": must be greater than zero', `spec.storageClassName: Invalid value: "Bad_Class": ${DNS_SUBDOMAIN}`],
  );
  const refs = {
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1' } },
    dataSource: { kind: 'Thing', name: 'a' },
    dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'b' },
  };
  assert.deepEqual(msgs(validatePersistentVolumeClaimSpec(refs)), [
    `spec.dataSource: Invalid value: "Thing": must be 'PersistentVolumeClaim' when referencing the default apiGroup`,
    'spec: Invalid value: "spec.dataSource": must match dataSourceRef',
  ]);
  const spec: Record<string, any> = { dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's', namespace: 'other' } };
  prepareClaimSpec(spec, undefined);
  assert.deepEqual(spec, {
    dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's' },
    dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 's' },
  });
});

test('claim update: volumeName once, requests only when bound, not below the status capacity', () => {
  const spec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'standard', volumeMode: 'Filesystem' };
  const pending = { spec, status: { phase: 'Pending' } };
  assert.deepEqual(validatePersistentVolumeClaimUpdate({ spec: { ...spec, volumeName: 'pv' }, status: pending.status }, pending), []);
  const grown = { spec: { ...spec, resources: { requests: { storage: '2Gi' } } }, status: pending.status };
  assert.match(
    fieldErrorMessage(validatePersistentVolumeClaimUpdate(grown, pending)[0]!),
    /^spec: Forbidden: spec is immutable after creation except resources\.requests and volumeAttributesClassName for bound claims\n- resources: .*\n\+ resources: .*2Gi/,
  );
  const bound = { spec: { ...spec, volumeName: 'pv', resources: { requests: { storage: '2Gi' } } }, status: { phase: 'Bound', capacity: { storage: '2Gi' } } };
  const more = { ...bound, spec: { ...bound.spec, resources: { requests: { storage: '3Gi' } } } };
  assert.deepEqual(validatePersistentVolumeClaimUpdate(more, bound), []);
  const less = { ...bound, spec: { ...bound.spec, resources: { requests: { storage: '1Gi' } } } };
  assert.deepEqual(msgs(validatePersistentVolumeClaimUpdate(less, more)), [
    'spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
  ]);
  const recover = { ...more, status: { phase: 'Bound', capacity: { storage: '2Gi' } } };
  const back = { ...recover, spec: { ...recover.spec, resources: { requests: { storage: '2500Mi' } } } };
  assert.deepEqual(validatePersistentVolumeClaimUpdate(back, recover), [], 'recovering from a failed expansion: down to above the capacity');
  assert.deepEqual(msgs(validatePersistentVolumeClaimUpdate({ ...bound, spec: { ...bound.spec, volumeMode: 'Block' } }, bound)), [
    `spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n- volumeMode: "Filesystem"\n+ volumeMode: "Block"`,
    'volumeMode: Invalid value: "Block": field is immutable',
  ]);
  assert.equal(
    persistentVolumeClaimClass({ metadata: { annotations: { 'volume.beta.kubernetes.io/storage-class': 'beta' } }, spec: { storageClassName: 'x' } }),
    'beta',
  );
  assert.equal(accessModesAsString(['ReadWriteOncePod', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce']), 'RWO,RWX,RWOP');
});

test('StorageClass, CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity', () => {
  const cls: Record<string, any> = {
    provisioner: 'Kubeling.io/hostpath',
    parameters: { '': 'x' },
    allowedTopologies: [{ matchLabelExpressions: [{ key: 'k', values: ['a', 'a'] }] }, { matchLabelExpressions: [{ key: 'k', values: ['a'] }] }],
  };
  defaultStorageClass(cls);
  assert.equal(cls.reclaimPolicy, 'Delete');
  assert.equal(cls.volumeBindingMode, 'Immediate');
  assert.deepEqual(msgs(validateStorageClass(cls)), [
    'parameters: Invalid value: "": field can not be empty.',
    'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
    'allowedTopologies[1].matchLabelExpressions: Duplicate value: ""',
  ]);
  const drv: Record<string, any> = {
    spec: { fsGroupPolicy: 'Some', tokenRequests: [{ audience: 'a', expirationSeconds: 60 }, { audience: 'a' }], volumeLifecycleModes: ['Forever'] },
  };
  defaultCSIDriver(drv);
  assert.deepEqual(msgs(validateCSIDriver(drv)), [
    'spec.fsGroupPolicy: Unsupported value: "Some": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    'spec.tokenRequests[1].audience: Duplicate value: "a"',
    'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"',
  ]);
  assert.deepEqual(msgs(validateCSIDriver({ spec: {} })), [
    'spec.attachedRequired: Required value',
    'spec.podInfoOnMount: Required value',
    'spec.storageCapacity: Required value',
    'spec.seLinuxMount: Required value',
  ]);
  assert.deepEqual(
    msgs(
      validateCSINode({
        spec: {
          drivers: [
            { name: 'd.io', nodeID: '', topologyKeys: ['a/b/c'] },
            { name: 'd.io', nodeID: 'n', allocatable: { count: -1 } },
          ],
        },
      }),
    ),
    [
      'spec.drivers[0].nodeID: Required value',
      "spec.drivers[0]: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      'spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0',
      'spec.drivers[1].name: Duplicate value: "d.io"',
    ],
  );
  assert.deepEqual(msgs(validateVolumeAttachment({ spec: { attacher: 'd.io', nodeName: 'n', source: { persistentVolumeName: 'p', inlineVolumeSpec: {} } } })), [
    'spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
  ]);
  assert.deepEqual(msgs(validateVolumeAttachment({ spec: { attacher: '', nodeName: 'n', source: { persistentVolumeName: '' } } })), [
    'spec.attacher: Required value',
    'spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName',
    'spec.attacher: Required value',
    `spec.attacher: Invalid value: "": ${DNS_SUBDOMAIN}`,
  ]);
  assert.deepEqual(msgs(validateCSIStorageCapacity({ storageClassName: '', capacity: '-1Gi' })), [
    `storageClassName: Invalid value: "": ${DNS_SUBDOMAIN}`,
    'capacity: Invalid value: "-1Gi": must be greater than or equal to 0',
  ]);
});

test("a pod's generic ephemeral volume: its claim template is validated and defaulted as a claim", () => {
  const v: Record<string, any> = {
    name: 'scratch',
    ephemeral: { volumeClaimTemplate: { metadata: { name: 'x', labels: { a: 'b' } }, spec: { resources: {} } } },
  };
  defaultVolume(v);
  assert.equal(v.ephemeral.volumeClaimTemplate.spec.volumeMode, 'Filesystem');
  assert.deepEqual(msgs(validateVolumeSource(v, 'spec.volumes[0]')), [
    'spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set',
    'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: at least 1 access mode is required',
    'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value',
  ]);
  assert.deepEqual(msgs(validateVolumeSource({ name: 'e', ephemeral: {} }, 'spec.volumes[0]')), [
    'spec.volumes[0].ephemeral.volumeClaimTemplate: Required value',
  ]);
});
