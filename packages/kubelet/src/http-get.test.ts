/**
 * Probes and hooks over HTTPS do not check the pod's certificate, as
 * upstream's prober does not; redirects are answered, not followed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpGetStatus } from './http-get.js';

const OPENSSL = '/usr/bin/openssl';

test('a self-signed HTTPS server is probed; a redirect is its status; a refused connection rejects', {
  skip: existsSync(OPENSSL) ? false : 'no openssl',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubelet-https-'));
  try {
    execFileSync(
      OPENSSL,
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=pod', '-days', '1', '-keyout', join(dir, 'k'), '-out', join(dir, 'c')],
      {
        stdio: 'ignore',
      },
    );
    const server = createServer({ key: readFileSync(join(dir, 'k')), cert: readFileSync(join(dir, 'c')) }, (req, res) => {
      if (req.url === '/moved') res.writeHead(302, { location: '/' }).end();
      else res.end(req.headers['user-agent']);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.equal(await httpGetStatus(`${base}/readyz`, { 'user-agent': 'kube-probe/1.32' }, 2000), 200);
      assert.equal(await httpGetStatus(`${base}/moved`, {}, 2000), 302);
    } finally {
      server.close();
    }
    await assert.rejects(httpGetStatus(base, {}, 2000), /ECONNREFUSED/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
