/**
 * exec over SPDY/3.1 bridged to a WebSocket streaming server, as client-go's
 * SPDY executor drives it: protocol negotiation, the streams it opens, stdin
 * through to the command and closed at its end, stdout and stderr back, and
 * the Status on the error stream (v4) or only a failure's message (v2).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { dialUpgrade, exitStatus } from './remotecommand.js';
import { SpdyConnection, type SpdyStream } from './spdy-connection.js';
import { negotiateSpdyStreamProtocol, serveSpdyRemoteCommand } from './spdy-remotecommand.js';

let streaming: WebSocketServer;
let kubelet: Server;
let url: URL;

before(async () => {
  // The runtime's side: stdin upper-cased to stdout; at stdin's close, a line on stderr and exit code 3.
  streaming = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (p) => (p.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
  streaming.on('connection', (ws) => {
    ws.on('message', (d: Buffer) => {
      if (d[0] === 0) ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(d.subarray(1).toString().toUpperCase())]));
      else if (d[0] === 255 && d[1] === 0) {
        ws.send(Buffer.concat([Buffer.from([2]), Buffer.from('done\n')]));
        ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(exitStatus(3, ['upper'])))]));
        ws.close(1000);
      }
    });
  });
  await new Promise((r) => streaming.once('listening', r));
  const target = `ws://127.0.0.1:${(streaming.address() as AddressInfo).port}/exec`;
  kubelet = createServer();
  kubelet.on('upgrade', (req, socket, head) => {
    void serveSpdyRemoteCommand(req, socket, head, target, { stdin: true, stdout: true, stderr: true, tty: false, streamCreationTimeoutMs: 500 }).then((r) => {
      if (!(r instanceof SpdyConnection)) socket.end(`HTTP/1.1 ${r.code} Refused\r\n\r\n${r.message}`);
    });
  });
  await new Promise<void>((r) => kubelet.listen(0, '127.0.0.1', r));
  url = new URL(`http://127.0.0.1:${(kubelet.address() as AddressInfo).port}/exec/ns/pod/c`);
});

after(() => {
  kubelet?.close();
  streaming?.close();
});

const read = (s: SpdyStream) =>
  new Promise<string>((resolve) => {
    let b = '';
    s.on('data', (d: Buffer) => (b += d.toString()));
    s.on('end', () => resolve(b));
  });

async function dial(protocol: string) {
  const r = await dialUpgrade({ upgrade: 'SPDY/3.1', connection: 'Upgrade', 'x-stream-protocol-version': protocol }, { url, method: 'POST' });
  assert.ok(r.upgraded);
  assert.equal(r.res.headers['x-stream-protocol-version'], protocol);
  return new SpdyConnection(r.socket, { server: false, head: r.head });
}

test('negotiation: the client first protocol served; none offered is channel.k8s.io; none served is refused as upstream words it', () => {
  assert.equal(negotiateSpdyStreamProtocol({ 'x-stream-protocol-version': 'v5.channel.k8s.io, v4.channel.k8s.io, v3.channel.k8s.io' }), 'v4.channel.k8s.io');
  assert.equal(negotiateSpdyStreamProtocol({}), 'channel.k8s.io');
  assert.deepEqual(negotiateSpdyStreamProtocol({ 'x-stream-protocol-version': 'v9.channel.k8s.io' }), {
    code: 403,
    message:
      'unable to upgrade: unable to negotiate protocol: client supports [v9.channel.k8s.io], server accepts [v4.channel.k8s.io v3.channel.k8s.io v2.channel.k8s.io channel.k8s.io]',
    headers: { 'X-Accepted-Stream-Protocol-Versions': 'v4.channel.k8s.io, v3.channel.k8s.io, v2.channel.k8s.io, channel.k8s.io' },
  });
});

test('v4: stdin through, stdout and stderr back, the Status with the exit code on the error stream, every stream ended', async () => {
  const conn = await dial('v4.channel.k8s.io');
  const error = await conn.createStream({ streamtype: ['error'] });
  const stdin = await conn.createStream({ streamtype: ['stdin'] });
  const stdout = await conn.createStream({ streamtype: ['stdout'] });
  const stderr = await conn.createStream({ streamtype: ['stderr'] });
  const [out, err, status] = [read(stdout), read(stderr), read(error)];
  stdin.end('hello');
  assert.equal(await out, 'HELLO');
  assert.equal(await err, 'done\n');
  assert.deepEqual(JSON.parse(await status), exitStatus(3, ['upper']));
  conn.destroy();
});

test("v2: the error stream holds only the failure's message", async () => {
  const conn = await dial('v2.channel.k8s.io');
  const error = await conn.createStream({ streamtype: ['error'] });
  const stdin = await conn.createStream({ streamtype: ['stdin'] });
  const stdout = await conn.createStream({ streamtype: ['stdout'] });
  const stderr = await conn.createStream({ streamtype: ['stderr'] });
  const [out, status] = [read(stdout), read(error)];
  void read(stderr);
  stdin.end('x');
  assert.equal(await out, 'X');
  assert.equal(await status, 'command terminated with non-zero exit code: error executing command [upper], exit code 3');
  conn.destroy();
});

test('a client that never opens its streams is told so on the error stream', async () => {
  const conn = await dial('v4.channel.k8s.io');
  const error = await conn.createStream({ streamtype: ['error'] });
  assert.equal(await read(error), 'timed out waiting for client to create streams');
  conn.destroy();
});
