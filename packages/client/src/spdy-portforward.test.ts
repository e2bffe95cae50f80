import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Duplex, PassThrough, Transform } from 'node:stream';
import { SpdyConnection } from './spdy-connection.js';
import { isSpdyUpgrade, offeredStreamProtocols, openPortForward, servePortForward, spdyTunnelProtocols } from './spdy-portforward.js';

function pair(): [Duplex, Duplex] {
  const ab = new PassThrough();
  const ba = new PassThrough();
  return [Duplex.from({ readable: ba, writable: ab }), Duplex.from({ readable: ab, writable: ba })];
}

const text = (s: NodeJS.ReadableStream) =>
  new Promise<string>((resolve) => {
    let b = '';
    s.on('data', (d: Buffer) => (b += d.toString()));
    s.on('end', () => resolve(b));
  });

/** A pod whose port 80 answers upper case and ends when the client does; nothing listens elsewhere. */
function session() {
  const [a, b] = pair();
  const client = new SpdyConnection(a, { server: false });
  const server = new SpdyConnection(b, { server: true });
  const done: [number, string | undefined][] = [];
  servePortForward(server, {
    pod: 'sandbox-1',
    uid: '',
    dial: async (port) => {
      if (port !== 80) throw new Error(`dial tcp4 127.0.0.9:${port}: connect: connection refused`);
      return new Transform({ transform: (c: Buffer, _e, cb) => cb(null, c.toString().toUpperCase()) });
    },
    onDone: (port, err) => done.push([port, err]),
    streamCreationTimeoutMs: 300,
  });
  return { client, server, done };
}

test('a forwarded connection: data both ways, the error stream empty, both streams ended with the connection', async () => {
  const { client, server, done } = session();
  const { data, error } = await openPortForward(client, 80, 0);
  const answer = text(data);
  data.end('hello');
  assert.equal(await answer, 'HELLO');
  assert.equal(await error, '');
  const second = await openPortForward(client, 80, 1);
  const a2 = text(second.data);
  second.data.end('again');
  assert.equal(await a2, 'AGAIN');
  assert.deepEqual(done, [
    [80, undefined],
    [80, undefined],
  ]);
  client.destroy();
  server.destroy();
});

test("a port nothing listens on: upstream's message on the error stream, the data stream ended", async () => {
  const { client, server } = session();
  const { data, error } = await openPortForward(client, 81, 0);
  const got = text(data);
  assert.equal(await error, 'error forwarding port 81 to pod sandbox-1, uid : dial tcp4 127.0.0.9:81: connect: connection refused');
  assert.equal(await got, '');
  client.destroy();
  server.destroy();
});

test('streams without a valid port or type are refused; a lone stream times out with a message', async () => {
  const { client, server } = session();
  await assert.rejects(client.createStream({ streamtype: ['data'] }), /stream reset/);
  await assert.rejects(client.createStream({ port: ['0'], streamtype: ['data'] }), /stream reset/);
  await assert.rejects(client.createStream({ port: ['80'], streamtype: ['other'] }), /stream reset/);
  const lone = await client.createStream({ port: ['80'], streamtype: ['error'], requestid: ['9'] });
  lone.end();
  assert.equal(await text(lone), 'timed out waiting for streams of request 9');
  client.destroy();
  server.destroy();
});

test('the upgrade headers: SPDY/3.1 upgrades, tunneled WebSocket subprotocols, the stream protocols offered', () => {
  assert.equal(isSpdyUpgrade({ connection: 'Upgrade', upgrade: 'SPDY/3.1' }), true);
  assert.equal(isSpdyUpgrade({ connection: 'Upgrade', upgrade: 'websocket' }), false);
  assert.deepEqual(spdyTunnelProtocols({ 'sec-websocket-protocol': 'SPDY/3.1+portforward.k8s.io, v4.channel.k8s.io, SPDY/3.1+other' }), ['portforward.k8s.io']);
  assert.deepEqual(offeredStreamProtocols({ 'x-stream-protocol-version': ['portforward.k8s.io', 'a, b'] }), ['portforward.k8s.io', 'a', 'b']);
});
