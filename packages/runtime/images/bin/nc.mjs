// nc, as much of netcat-openbsd's as the conformance suite's Service checks
// use from agnhost: `nc [-z] [-v] [-t|-u] [-w secs] host port`. TCP: with -z,
// connect and close (status 0 when the connection is made); without, stdin
// to the connection and the connection to stdout. UDP: stdin sent as one
// datagram, the first answer printed. -v says on stderr whether it connected,
// in netcat-openbsd's words. The host is resolved as the C library does
// (the container's resolv.conf search list).
import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';

const o = { z: false, v: false, u: false, w: 0 };
const rest = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (!a.startsWith('-') || a === '-') {
    rest.push(a);
    continue;
  }
  for (const f of a.slice(1)) {
    if (f === 'z') o.z = true;
    else if (f === 'v') o.v = true;
    else if (f === 'u') o.u = true;
    else if (f === 't') o.u = false;
    else if (f === 'w') o.w = Number(args[++i]);
    else if (f === 'n' || f === '4') continue;
  }
}
const [host, portArg] = rest;
const port = Number(portArg);
if (!host || !Number.isInteger(port)) {
  process.stderr.write('usage: nc [-zvtu] [-w timeout] destination port\n');
  process.exit(1);
}
const proto = o.u ? 'udp' : 'tcp';
const fail = (msg) => {
  if (o.v) process.stderr.write(`nc: connect to ${host} port ${port} (${proto}) failed: ${msg}\n`);
  process.exit(1);
};
let address;
try {
  address = (await lookup(host)).address;
} catch {
  process.stderr.write(`nc: getaddrinfo for host "${host}" port ${port}: Name or service not known\n`);
  process.exit(1);
}
const timeoutMs = (o.w || 10) * 1000;
const readStdin = () =>
  new Promise((resolve) => {
    if (process.stdin.isTTY) return resolve(Buffer.alloc(0));
    const chunks = [];
    process.stdin.on('data', (d) => chunks.push(d));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', () => resolve(Buffer.concat(chunks)));
  });

if (o.u) {
  const data = await readStdin();
  const s = createSocket(address.includes(':') ? 'udp6' : 'udp4');
  const timer = setTimeout(() => {
    s.close();
    process.exit(0);
  }, timeoutMs);
  s.on('message', (m) => {
    process.stdout.write(m);
    clearTimeout(timer);
    s.close();
    process.exit(0);
  });
  s.on('error', (e) => fail(e.code === 'ECONNREFUSED' ? 'Connection refused' : e.message));
  s.send(data, port, address, (e) => {
    if (e) fail(e.message);
    else if (o.v) process.stderr.write(`Connection to ${host} ${port} port [udp/*] succeeded!\n`);
  });
} else {
  const sock = connect({ host: address, port, timeout: timeoutMs });
  sock.once('timeout', () => {
    sock.destroy();
    fail('Operation timed out');
  });
  sock.once('error', (e) => fail(e.code === 'ECONNREFUSED' ? 'Connection refused' : e.message));
  sock.once('connect', async () => {
    sock.setTimeout(0);
    if (o.v) process.stderr.write(`Connection to ${host} ${port} port [tcp/*] succeeded!\n`);
    if (o.z) {
      sock.destroy();
      process.exit(0);
    }
    sock.pipe(process.stdout);
    sock.on('end', () => process.exit(0));
    const data = await readStdin();
    sock.end(data);
    if (o.w) setTimeout(() => process.exit(0), timeoutMs).unref();
  });
}
