import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Duplex, PassThrough } from 'node:stream';
import {
  decodeHeaderBlock,
  encodeHeaderBlock,
  FrameDecoder,
  FrameEncoder,
  HEADER_DICTIONARY,
  RST_STATUS,
  SpdyProtocolError,
  splitFrame,
  type SpdyFrame,
} from './spdy.js';
import { SpdyConnection, type SpdyStream } from './spdy-connection.js';

test('the header dictionary is the one SPDY/3 specifies, byte for byte', () => {
  assert.equal(HEADER_DICTIONARY.length, 1423);
  assert.equal(createHash('sha256').update(HEADER_DICTIONARY).digest('hex'), '51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02');
});

test('header blocks: lower-cased names, several values joined by NUL, a repeated name refused', () => {
  const b = encodeHeaderBlock({ StreamType: ['data'], port: ['80'], multi: ['a', 'b'] });
  assert.deepEqual(decodeHeaderBlock(b), { streamtype: ['data'], port: ['80'], multi: ['a', 'b'] });
  const twice = Buffer.concat([encodeHeaderBlock({ a: ['1'], b: ['2'] })]);
  twice.write('a', 4 + 4 + 1 + 4 + 1 + 4, 'latin1'); // rename b to a
  assert.throws(() => decodeHeaderBlock(twice), SpdyProtocolError);
  assert.throws(() => decodeHeaderBlock(b.subarray(0, b.length - 1)), /truncated/);
});

/** Cuts `bytes` into frames as a reader would, however the bytes arrive. */
async function decodeAll(dec: FrameDecoder, chunks: Buffer[]): Promise<SpdyFrame[]> {
  const out: SpdyFrame[] = [];
  let buf = Buffer.alloc(0);
  for (const c of chunks) {
    buf = Buffer.concat([buf, c]);
    for (let cut = splitFrame(buf); cut; cut = splitFrame(buf)) {
      buf = buf.subarray(cut.size);
      out.push(await dec.decode(cut.frame));
    }
  }
  assert.equal(buf.length, 0);
  return out;
}

test('every frame type round-trips, header blocks sharing one compression context, whatever the byte boundaries', async () => {
  const frames: SpdyFrame[] = [
    { type: 'SYN_STREAM', streamId: 1, associatedTo: 0, priority: 3, fin: false, unidirectional: false, headers: { streamtype: ['error'], port: ['80'] } },
    { type: 'SYN_REPLY', streamId: 1, fin: false, headers: {} },
    { type: 'SYN_STREAM', streamId: 3, associatedTo: 1, priority: 0, fin: true, unidirectional: true, headers: { streamtype: ['data'], port: ['80'] } },
    { type: 'DATA', streamId: 3, fin: false, data: Buffer.from('GET / HTTP/1.1\r\n\r\n') },
    { type: 'DATA', streamId: 3, fin: true, data: Buffer.alloc(0) },
    { type: 'HEADERS', streamId: 3, fin: true, headers: { x: ['y'] } },
    { type: 'RST_STREAM', streamId: 5, status: RST_STATUS.CANCEL },
    { type: 'SETTINGS', clear: false, entries: [{ flags: 1, id: 7, value: 65536 }] },
    { type: 'PING', id: 7 },
    { type: 'WINDOW_UPDATE', streamId: 3, delta: 1000 },
    { type: 'GOAWAY', lastGoodStreamId: 3, status: 0 },
  ];
  const enc = new FrameEncoder();
  const bytes = Buffer.concat(await Promise.all(frames.map((f) => enc.encode(f))));
  enc.close();
  for (const step of [bytes.length, 1, 7, 64]) {
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += step) chunks.push(bytes.subarray(i, i + step));
    const dec = new FrameDecoder();
    const got = await decodeAll(dec, chunks);
    dec.close();
    assert.deepEqual(got, frames);
  }
});

test('frames compressed by another zlib (two SYN_STREAMs, one context) decode', async () => {
  // Made with Python's zlib (compressobj level 9 with the dictionary, a sync flush per block).
  const hex = [
    '800300010000003c0000000100000000000078f9e3c6a7c202253a703a2b294a4dcc851625aca9a0808614cb45a024cc64610024398b209198094adc8c0600000000ffff',
    '800300010000001800000003000000000000c2aa15540a2512d209000000ffff',
  ];
  const dec = new FrameDecoder();
  const got = await decodeAll(dec, [Buffer.from(hex.join(''), 'hex')]);
  dec.close();
  assert.deepEqual(
    got.map((f) => f.type === 'SYN_STREAM' && [f.streamId, f.headers]),
    [
      [1, { streamtype: ['error'], port: ['80'], requestid: ['0'] }],
      [3, { streamtype: ['data'], port: ['80'], requestid: ['0'] }],
    ],
  );
});

test('a header block that does not inflate, or another SPDY version, is a protocol error', async () => {
  const dec = new FrameDecoder();
  const bad = Buffer.from('800300020000000c00000001deadbeefdeadbeef', 'hex');
  await assert.rejects(dec.decode(splitFrame(bad)!.frame), SpdyProtocolError);
  dec.close();
  const v2 = Buffer.from('8002000600000004000000', 'hex');
  await assert.rejects(new FrameDecoder().decode(splitFrame(Buffer.concat([v2, Buffer.from([1])]))!.frame), /unsupported SPDY version 2/);
});

/** Two connected in-memory byte streams. */
function pair(): [Duplex, Duplex] {
  const ab = new PassThrough();
  const ba = new PassThrough();
  return [Duplex.from({ readable: ba, writable: ab }), Duplex.from({ readable: ab, writable: ba })];
}

const readAll = (s: SpdyStream) =>
  new Promise<string>((resolve) => {
    let b = '';
    s.on('data', (d: Buffer) => (b += d.toString()));
    s.on('end', () => resolve(b));
  });

test('a session: streams opened and accepted, data and FIN both ways, pings echoed', async () => {
  const [a, b] = pair();
  const client = new SpdyConnection(a, { server: false });
  const server = new SpdyConnection(b, { server: true });
  server.on('stream', (s) => {
    assert.equal(s.id % 2, 1);
    s.reply();
    void readAll(s).then((got) => s.end(`${s.header('port')}:${got.toUpperCase()}`));
  });
  const s1 = await client.createStream({ port: ['80'] });
  const s2 = await client.createStream({ port: ['81'] });
  assert.deepEqual([s1.id, s2.id], [1, 3]);
  const r1 = readAll(s1);
  const r2 = readAll(s2);
  s2.end('second');
  s1.write('fir');
  s1.end('st');
  assert.deepEqual(await Promise.all([r1, r2]), ['80:FIRST', '81:SECOND']);
  assert.ok((await client.ping()) >= 0);
  assert.ok((await server.ping()) >= 0);
  client.close();
  await new Promise((r) => server.once('close', r));
});

test('a refused stream rejects createStream; a reset reaches the other side as a reset, not an error', async () => {
  const [a, b] = pair();
  const client = new SpdyConnection(a, { server: false });
  const server = new SpdyConnection(b, { server: true });
  let accepted: SpdyStream | undefined;
  server.on('stream', (s) => {
    if (s.header('port') === 'bad') return s.reset(RST_STATUS.REFUSED_STREAM);
    s.reply();
    accepted = s;
  });
  await assert.rejects(client.createStream({ port: ['bad'] }), /stream reset by the peer \(status 3\)/);
  const ok = await client.createStream({ port: ['1'] });
  const reset = new Promise((r) => ok.once('reset', r));
  accepted!.reset();
  assert.equal(await reset, RST_STATUS.CANCEL);
  assert.ok(ok.destroyed);
  client.destroy();
  server.destroy();
});

test('the session ending ends its streams', async () => {
  const [a, b] = pair();
  const client = new SpdyConnection(a, { server: false });
  const server = new SpdyConnection(b, { server: true });
  server.on('stream', (s) => s.reply());
  const s = await client.createStream({});
  const closed = new Promise((r) => s.once('close', r));
  server.destroy();
  await closed;
  await assert.rejects(client.createStream({}), /closed|ended/);
});
