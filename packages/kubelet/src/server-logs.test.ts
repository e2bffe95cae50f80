/**
 * The container log as a reader gets it from the kubelet: CRI lines back to
 * output, partial pieces joined to the line they end in, and output whose last
 * line has no newline (`cat` of a file without one) kept, without a newline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { criToChunks, criToLines } from './server.js';

const T1 = '2026-01-01T00:00:01.000000000Z';
const T2 = '2026-01-01T00:00:02.000000000Z';

test('whole lines end in a newline; partial pieces join the line they end in', () => {
  const text = `${T1} stdout F one\n${T1} stdout P tw\n${T2} stdout F o\n`;
  assert.deepEqual(criToChunks(text, false), ['one\n', 'two\n']);
  assert.deepEqual(criToChunks(text, true), [`${T1} one\n`, `${T1} two\n`]);
  assert.deepEqual(criToLines(text, false), ['one', 'two']);
});

test('output that ends without a newline is kept as it is', () => {
  const text = `${T1} stdout P pod-1secret-value-1\n${T2} stdout P configmap-value-1\n`;
  assert.deepEqual(criToChunks(text, false), ['pod-1secret-value-1configmap-value-1']);
  assert.deepEqual(criToChunks(text, true), [`${T1} pod-1secret-value-1configmap-value-1`]);
  assert.deepEqual(criToChunks(`${T1} stdout F a\n${T2} stdout P b\n`, false), ['a\n', 'b']);
  // since: what was written before is left out.
  assert.deepEqual(criToChunks(`${T1} stdout F a\n${T2} stdout P b\n`, false, Date.parse(T2)), ['b']);
});
