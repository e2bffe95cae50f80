/**
 * The older WebSocket channel protocols (channel.k8s.io to v3) bridged to a
 * v4 streaming server, as the conformance suite's websocket exec test speaks
 * them: output passes as it is, and the error channel carries a failure's
 * message only, nothing at all on success.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { bridgeWebSocket, exitStatus } from './remotecommand.js';

let streaming: WebSocketServer;
let bridge: Server;
let url: string;

before(async () => {
  // A v4-only streaming server: "out" on stdout, then the exit code the path names.
  streaming = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: (p) => (p.has('v4.channel.k8s.io') ? 'v4.channel.k8s.io' : false) });
  streaming.on('connection', (ws, req) => {
    const code = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('code'));
    ws.send(Buffer.concat([Buffer.from([1]), Buffer.from('out')]));
    ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(exitStatus(code, ['cmd'])))]));
    ws.close(1000);
  });
  await new Promise((r) => streaming.once('listening', r));
  const target = `ws://127.0.0.1:${(streaming.address() as AddressInfo).port}/exec`;
  bridge = createServer();
  bridge.on('upgrade', (req, socket, head) => {
    void bridgeWebSocket(req, socket, head, `${target}${new URL(req.url ?? '/', 'http://x').search}`).catch(() => socket.destroy());
  });
  await new Promise<void>((r) => bridge.listen(0, '127.0.0.1', r));
  url = `ws://127.0.0.1:${(bridge.address() as AddressInfo).port}/exec`;
});
after(() => {
  bridge?.close();
  streaming?.close();
});

function messages(protocol: string, code: number): Promise<{ protocol: string; got: [number, string][] }> {
  const ws = new WebSocket(`${url}?code=${code}`, [protocol]);
  const got: [number, string][] = [];
  ws.on('message', (d: Buffer) => got.push([d[0]!, d.subarray(1).toString()]));
  return new Promise((resolve, reject) => {
    ws.on('close', () => resolve({ protocol: ws.protocol, got }));
    ws.on('error', reject);
  });
}

test('channel.k8s.io: stdout as it is, nothing on the error channel on success', async () => {
  assert.deepEqual(await messages('channel.k8s.io', 0), { protocol: 'channel.k8s.io', got: [[1, 'out']] });
});

test("v3.channel.k8s.io: a failure's message on the error channel", async () => {
  assert.deepEqual(await messages('v3.channel.k8s.io', 2), {
    protocol: 'v3.channel.k8s.io',
    got: [
      [1, 'out'],
      [3, 'command terminated with non-zero exit code: error executing command [cmd], exit code 2'],
    ],
  });
});
