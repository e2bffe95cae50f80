import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ComponentShell, parseComponentArgs } from './component.js';

const cmd = { name: 'test-component', defaults: { securePort: 10299, qps: 7, burst: 9 }, flags: { widgets: { type: 'string', default: '3' } } } as const;

function withKubeconfig(fn: (path: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'component-'));
  try {
    const path = join(dir, 'kubeconfig');
    writeFileSync(path, 'apiVersion: v1\nkind: Config\n');
    fn(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the common flags have upstream defaults and the component adds its own', () => {
  withKubeconfig((kubeconfig) => {
    const { options, values } = parseComponentArgs(cmd, [`--kubeconfig=${kubeconfig}`, '--master=http://127.0.0.1:6443/', '--log-level=silent']);
    assert.equal(options.config.server, 'http://127.0.0.1:6443');
    assert.equal(options.leaderElect, true);
    assert.deepEqual([options.leaseDurationMs, options.renewDeadlineMs, options.retryPeriodMs], [15_000, 10_000, 2_000]);
    assert.deepEqual([options.bindAddress, options.port, options.qps, options.burst], ['127.0.0.1', 10299, 7, 9]);
    assert.equal(values.widgets, '3');
  });
});

test('the common flags and the component flags are parsed; an unknown flag is refused', () => {
  withKubeconfig((kubeconfig) => {
    const args = [
      `--kubeconfig=${kubeconfig}`,
      '--master=http://127.0.0.1:6443',
      '--log-level=silent',
      '--leader-elect=false',
      '--leader-elect-lease-duration=3s',
      '--leader-elect-retry-period=500ms',
      '--secure-port=0',
      '--kube-api-qps=100',
      '--widgets=5',
    ];
    const { options, values } = parseComponentArgs(cmd, args);
    assert.equal(options.leaderElect, false);
    assert.deepEqual([options.leaseDurationMs, options.retryPeriodMs, options.port, options.qps], [3_000, 500, 0, 100]);
    assert.equal(values.widgets, '5');
    assert.throws(() => parseComponentArgs(cmd, [`--kubeconfig=${kubeconfig}`, '--master=http://127.0.0.1:6443', '--gadgets=1']), /gadgets/);
  });
});

test('without leader election the work runs from start to stop, and the leader gauge follows it', async () => {
  const calls: string[] = [];
  const shell = new ComponentShell(
    {
      name: 'kube-test',
      userAgent: 'test',
      defaultQps: 5,
      defaultBurst: 10,
      config: { server: 'http://127.0.0.1:1', namespace: 'default', insecureSkipTLSVerify: false },
      leaderElect: false,
      log: pino({ level: 'silent' }),
      identity: 'me',
    },
    { start: async () => void calls.push('start'), stop: () => void calls.push('stop') },
  );
  const gauge = async () => /leader_election_master_status\{name="kube-test"\} (\d)/.exec(await shell.metrics.metrics())?.[1];
  assert.equal(shell.identity, 'me');
  assert.equal(await gauge(), '0');
  await shell.start();
  assert.deepEqual(calls, ['start']);
  assert.equal(shell.leading, true);
  assert.equal(await gauge(), '1');
  assert.equal(shell.address, undefined, 'no port, no health server');
  await shell.stop();
  assert.deepEqual(calls, ['start', 'stop']);
  assert.equal(shell.leading, false);
  assert.equal(await gauge(), '0');
});
