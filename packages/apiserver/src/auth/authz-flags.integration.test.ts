/** The apiserver process with a mistaken --authorization-mode: it ends before starting anything, with upstream's messages. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { nodeArgs, packageMain } from '@kubeling/testenv';

test('mode list mistakes end the process with every message, aggregated', async () => {
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const flags = ['--etcd-servers=http://127.0.0.1:1', '--authorization-mode=RBAC,Magic,RBAC'];
    const child = spawn(process.execPath, nodeArgs(packageMain('apiserver'), flags), { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (c) => resolve({ code: c, stderr: err }));
  });
  assert.equal(code, 1);
  assert.equal(
    stderr.split('\n').find((l) => l.startsWith('Error:')),
    'Error: [authorization-mode "Magic" is not a valid mode, authorization-mode ["RBAC" "Magic" "RBAC"] has mode specified more than once]',
  );
});
