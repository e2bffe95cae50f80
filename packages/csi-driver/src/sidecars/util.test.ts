/**
 * The shared helpers against the upstream behaviour they copy: BinarySI
 * quantities, gRPC error text, access modes, finalizer names, topology and
 * the resize conditions merge.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowedTopologiesMatch,
  attacherFinalizer,
  bytesToQuantity,
  errorText,
  mayBeInProgress,
  mergeResizeConditions,
  nodeAffinityFor,
  toCsiAccessMode,
  volumeIsAccessible,
} from './util.js';
import { grpcError } from './testing.js';
import { registrationSocketName, socketPathOf } from './registrar.js';

test('bytes print as resource.NewQuantity(n, BinarySI) does', () => {
  assert.equal(bytesToQuantity(10 * 2 ** 30), '10Gi');
  assert.equal(bytesToQuantity(1536 * 2 ** 20), '1536Mi');
  assert.equal(bytesToQuantity(1500), '1500');
  assert.equal(bytesToQuantity('0'), '0');
});

test('gRPC errors read as grpc-go prints them; others by their message', () => {
  assert.equal(errorText(grpcError(8, 'full')), 'rpc error: code = ResourceExhausted desc = full');
  assert.equal(errorText(new Error('plain')), 'plain');
  assert.equal(mayBeInProgress(grpcError(4, 'x')), true);
  assert.equal(mayBeInProgress(grpcError(3, 'x')), false);
  assert.equal(mayBeInProgress(new Error('socket')), true);
});

test('access modes map to CSI as csi-lib-utils does', () => {
  assert.equal(toCsiAccessMode(['ReadWriteOnce'], false), 'SINGLE_NODE_WRITER');
  assert.equal(toCsiAccessMode(['ReadWriteOnce'], true), 'SINGLE_NODE_MULTI_WRITER');
  assert.equal(toCsiAccessMode(['ReadWriteOncePod'], true), 'SINGLE_NODE_SINGLE_WRITER');
  assert.equal(toCsiAccessMode(['ReadWriteMany', 'ReadOnlyMany'], false), 'MULTI_NODE_MULTI_WRITER');
  assert.equal(toCsiAccessMode(['ReadOnlyMany'], false), 'MULTI_NODE_READER_ONLY');
  assert.throws(
    () => toCsiAccessMode(['ReadOnlyMany', 'ReadWriteOnce'], false),
    /CSI does not support ReadOnlyMany and ReadWriteOnce on the same PersistentVolume/,
  );
  assert.throws(() => toCsiAccessMode([], false), /unsupported AccessMode combination/);
});

test('names: the attacher finalizer and the registration socket', () => {
  assert.equal(attacherFinalizer('hostpath.csi.kubeling.io'), 'external-attacher/hostpath-csi-kubeling-io');
  assert.equal(attacherFinalizer('odd.'), 'external-attacher/odd-X');
  assert.equal(registrationSocketName('hostpath.csi.kubeling.io'), 'hostpath.csi.kubeling.io-reg.sock');
  assert.equal(socketPathOf('unix:///run/csi.sock'), '/run/csi.sock');
});

test('topology: node affinity from segments, accessibility and allowed topologies', () => {
  const affinity = nodeAffinityFor([{ segments: { zone: 'a', node: 'n1' } }, { segments: {} }]);
  assert.deepEqual(affinity, {
    required: {
      nodeSelectorTerms: [
        {
          matchExpressions: [
            { key: 'node', operator: 'In', values: ['n1'] },
            { key: 'zone', operator: 'In', values: ['a'] },
          ],
        },
      ],
    },
  });
  assert.equal(nodeAffinityFor([]), undefined);
  assert.equal(volumeIsAccessible(affinity, { node: 'n1', zone: 'a' }), true);
  assert.equal(volumeIsAccessible(affinity, { node: 'n2', zone: 'a' }), false);
  assert.equal(volumeIsAccessible(undefined, {}), true);
  assert.equal(allowedTopologiesMatch([{ matchLabelExpressions: [{ key: 'node', values: ['n1', 'n2'] }] }], { node: 'n2' }), true);
  assert.equal(allowedTopologiesMatch([{ matchLabelExpressions: [{ key: 'node', values: ['n1'] }] }], { node: 'n2' }), false);
});

test('resize conditions merge as upstream: others kept, same status kept as it was, old resize ones dropped', () => {
  const old = [
    { type: 'Other', status: 'True' },
    { type: 'Resizing', status: 'True', lastTransitionTime: 'old' },
    { type: 'ControllerResizeError', status: 'True', message: 'x' },
  ];
  assert.deepEqual(mergeResizeConditions(old, [{ type: 'Resizing', status: 'True', lastTransitionTime: 'new' }]), [
    { type: 'Other', status: 'True' },
    { type: 'Resizing', status: 'True', lastTransitionTime: 'old' },
  ]);
  assert.deepEqual(mergeResizeConditions(old, [{ type: 'FileSystemResizePending', status: 'True' }]), [
    { type: 'Other', status: 'True' },
    { type: 'FileSystemResizePending', status: 'True' },
  ]);
  assert.deepEqual(mergeResizeConditions(old, []), [{ type: 'Other', status: 'True' }]);
});
