/** `npm run up`'s port choice: a port is never handed out twice, and a taken one is skipped. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { PortReservations } from '../../scripts/ports.js';

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
const free = async () => {
  const s = await listenOn(0);
  const p = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return p;
};

test('with the preferred port taken, three members with a client and a peer port each get six different ports', async () => {
  let base = 0;
  let blocker: Server | undefined;
  // A base port with room above it (ports handed out by the OS may be reused; retry a few).
  for (let i = 0; i < 20 && !blocker; i++) {
    base = await free();
    if (base > 65000) continue;
    blocker = await listenOn(base).catch(() => undefined);
  }
  assert.ok(blocker, 'a port to block');
  const ports = new PortReservations();
  try {
    const got: number[] = [];
    // As `up --ha` asks: the client port from base + 2i, the peer port from the client port + 1.
    for (let i = 0; i < 3; i++) {
      const client = await ports.take(base + 2 * i);
      got.push(client, await ports.take(client + 1));
    }
    assert.equal(new Set(got).size, 6, `distinct: ${got.join(',')}`);
    assert.ok(!got.includes(base), 'the taken port is skipped');
    // Held until released: nothing else can bind them meanwhile.
    await assert.rejects(listenOn(got[0]!));
    await ports.release(got[0]!);
    const s = await listenOn(got[0]!);
    await new Promise((r) => s.close(r));
  } finally {
    await ports.releaseAll();
    await new Promise((r) => blocker!.close(r));
  }
});
