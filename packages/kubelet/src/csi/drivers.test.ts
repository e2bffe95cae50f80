import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CsiError, grpcStatus } from '@kubeling/csi';
import { DriverRegistry, highestSupportedVersion, rpcErrorText, type CsiConn } from './drivers.js';

test('highestSupportedVersion: the highest 1.x, never 0.x or 2.x', () => {
  assert.deepEqual(highestSupportedVersion(['1.0.0']), [1, 0, 0]);
  assert.deepEqual(highestSupportedVersion(['0.3.0', 'v1.2.0', '1.1.0', '2.0.0']), [1, 2, 0]);
  assert.throws(() => highestSupportedVersion([]), /empty array for supported versions/);
  assert.throws(() => highestSupportedVersion(['0.3.0']), /highest supported version reported by driver is 0.3.0, must be v1.x/);
  assert.throws(() => highestSupportedVersion(['2.0.0', 'nope']), /could not find a highest supported version/);
});

test('validate: upstream messages for no version and for a driver already registered at that version', () => {
  const r = new DriverRegistry(() => ({ call: async <T>() => ({}) as T, close() {} }));
  assert.throws(
    () => r.validate('RegisterPlugin', 'd', []),
    /^Error: kubernetes.io\/csi: RegisterPlugin for CSI driver "d" failed. Plugin returned an empty list for supported versions$/,
  );
  assert.throws(() => r.validate('ValidatePlugin', 'd', ['3.0.0']), /None of the versions specified \["3.0.0"\] are supported/);
  r.set('d', '/s', r.validate('RegisterPlugin', 'd', ['1.0.0']));
  assert.throws(
    () => r.validate('ValidatePlugin', 'd', ['1.0.0']),
    /Another driver with the same name is already registered with a higher supported version: "1.0.0"/,
  );
  assert.deepEqual(r.validate('ValidatePlugin', 'd', ['1.1.0']), [1, 1, 0]);
});

test('a client per registered driver, closed when it goes; an unregistered one is upstream\'s "not found" error', async () => {
  const opened: string[] = [];
  const closed: string[] = [];
  const conn = (endpoint: string): CsiConn => {
    opened.push(endpoint);
    return {
      call: async <T>(_s: string, method: string) =>
        (method === 'NodeGetCapabilities' ? { capabilities: [{ rpc: { type: 'STAGE_UNSTAGE_VOLUME' } }] } : {}) as T,
      close: () => closed.push(endpoint),
    };
  };
  const r = new DriverRegistry(conn);
  const seen: string[] = [];
  r.onChange((n, reg) => seen.push(`${n}:${reg}`));
  assert.throws(() => r.client('d'), /^Error: driver name d not found in the list of registered CSI drivers$/);
  r.set('d', 'unix:///x.sock', [1, 0, 0]);
  r.registered('d');
  assert.equal(r.client('d'), r.client('d'));
  assert.deepEqual([...(await r.nodeCapabilities('d'))], ['STAGE_UNSTAGE_VOLUME']);
  r.delete('d');
  assert.deepEqual(opened, ['unix:///x.sock']);
  assert.deepEqual(closed, ['unix:///x.sock']);
  assert.deepEqual(seen, ['d:true', 'd:false']);
  await assert.rejects(r.nodeCapabilities('d'), /not found in the list of registered CSI drivers/);
});

test('rpcErrorText prints a driver error as grpc-go does', () => {
  assert.equal(rpcErrorText(new CsiError(grpcStatus.NOT_FOUND, 'volume v not found')), 'rpc error: code = NotFound desc = volume v not found');
  assert.equal(rpcErrorText(new Error('plain')), 'plain');
});
