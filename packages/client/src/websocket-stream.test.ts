/**
 * A byte stream served over a WebSocket as the apiserver's wsstream Reader
 * serves pods/log: binary messages under binary.k8s.io, base64 text under
 * base64.binary.k8s.io, closed when the stream ends.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import WebSocket from 'ws';
import { serveWebSocketStream } from './remotecommand.js';

let server: Server;
let url: string;

before(async () => {
  server = createServer();
  server.on('upgrade', (req, socket, head) => {
    const log = new PassThrough();
    serveWebSocketStream(req, socket, head, log);
    log.write('container is ');
    setTimeout(() => log.end('alive\n'), 20);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/namespaces/ns/pods/p/log`;
});
after(() => server?.close());

function receive(protocol: string): Promise<{ protocol: string; messages: [string, boolean][]; code: number }> {
  const ws = new WebSocket(url, [protocol]);
  const messages: [string, boolean][] = [];
  ws.on('message', (d: Buffer, binary) => messages.push([d.toString(), binary]));
  return new Promise((resolve, reject) => {
    ws.on('close', (code) => resolve({ protocol: ws.protocol, messages, code }));
    ws.on('error', reject);
  });
}

test('binary.k8s.io: the bytes as binary messages, then a normal close', async () => {
  const r = await receive('binary.k8s.io');
  assert.equal(r.protocol, 'binary.k8s.io');
  assert.equal(r.messages.map(([m]) => m).join(''), 'container is alive\n');
  assert.ok(r.messages.every(([, binary]) => binary));
  assert.equal(r.code, 1000);
});

test('base64.binary.k8s.io: the bytes base64-encoded in text messages', async () => {
  const r = await receive('base64.binary.k8s.io');
  assert.equal(r.protocol, 'base64.binary.k8s.io');
  assert.equal(r.messages.map(([m]) => Buffer.from(m, 'base64').toString()).join(''), 'container is alive\n');
  assert.ok(r.messages.every(([, binary]) => !binary));
});
