import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:https';
import { createCA, issue } from './index.js';

test('a CA issues server and client certificates that TLS accepts both ways', async () => {
  const ca = await createCA();
  const server = await issue(ca, { commonName: 'kube-apiserver', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server' });
  const client = await issue(ca, { commonName: 'jane', organizations: ['dev', 'system:masters'], usage: 'client' });
  const x = new X509Certificate(client.certPem);
  assert.equal(x.subject, 'CN=jane\nO=dev\nO=system:masters');
  assert.ok(x.verify(new X509Certificate(ca.certPem).publicKey));
  assert.match(new X509Certificate(server.certPem).subjectAltName ?? '', /DNS:localhost, IP Address:127\.0\.0\.1/);
  const srv = createServer({ cert: server.certPem, key: server.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const sock = req.socket as import('node:tls').TLSSocket;
    res.end(JSON.stringify({ authorized: sock.authorized, subject: sock.getPeerCertificate().subject }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  const body = await new Promise<string>((resolve, reject) => {
    request({ host: '127.0.0.1', port, ca: ca.certPem, cert: client.certPem, key: client.keyPem }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    })
      .on('error', reject)
      .end();
  });
  srv.close();
  const seen = JSON.parse(body);
  assert.equal(seen.authorized, true);
  assert.equal(seen.subject.CN, 'jane');
  assert.deepEqual(seen.subject.O, ['dev', 'system:masters']);
});
