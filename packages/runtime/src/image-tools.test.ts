/**
 * The tools the runtime's agnhost image carries beside the host's: nc, as
 * the conformance suite's Service reachability checks run it (`nc -zv -t -w 2
 * host port`, and UDP with stdin as the datagram).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';

const NC = fileURLToPath(new URL('../images/bin/nc.mjs', import.meta.url));
let tcp: Server;
let udp: Socket;
let tcpPort: number;
let udpPort: number;

before(async () => {
  // A client that only checks the port (-z) resets the connection: that is no error here.
  tcp = createServer((s) => {
    s.on('error', () => undefined);
    s.end('hello from tcp\n');
  });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  tcpPort = (tcp.address() as { port: number }).port;
  udp = createSocket('udp4');
  udp.on('message', (m, r) => udp.send(`echo: ${m}`, r.port, r.address));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  udpPort = udp.address().port;
});
after(() => {
  tcp?.close();
  udp?.close();
});

/** Runs nc without blocking this process, whose servers must answer it. */
function nc(args: string[], input = ''): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [NC, ...args], { timeout: 10_000 });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d: Buffer) => (stdout += d));
  p.stderr.on('data', (d: Buffer) => (stderr += d));
  p.stdin.end(input);
  return new Promise((resolve) => p.on('close', (status) => resolve({ status, stdout, stderr })));
}

test('nc -zv -t: status 0 and netcat-openbsd words when the port answers, 1 when refused', async () => {
  const ok = await nc(['-zv', '-t', '-w', '2', 'localhost', String(tcpPort)]);
  assert.deepEqual([ok.status, ok.stderr], [0, `Connection to localhost ${tcpPort} port [tcp/*] succeeded!\n`]);
  const refused = await nc(['-zv', '-t', '-w', '2', '127.0.0.1', '1']);
  assert.deepEqual([refused.status, refused.stderr], [1, 'nc: connect to 127.0.0.1 port 1 (tcp) failed: Connection refused\n']);
});

test('nc -u: stdin as one datagram, the answer on stdout; TCP without -z relays the connection', async () => {
  const r = await nc(['-v', '-u', '-w', '2', '127.0.0.1', String(udpPort)], 'hostName\n');
  assert.equal(r.status, 0);
  assert.equal(r.stdout, 'echo: hostName\n');
  const t = await nc(['-w', '2', '127.0.0.1', String(tcpPort)]);
  assert.equal(t.stdout, 'hello from tcp\n');
});
