import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProxyableIP, splitSchemeNamePort } from '../registry/core/proxy-location.js';
import { backendRequestHeaders, clientResponseHeaders, rewriteHTML, rewriteURL } from './proxy-rewrite.js';

test('[scheme:]name[:port], as upstream splits it', () => {
  assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
  assert.deepEqual(splitSchemeNamePort('web:80'), { scheme: '', name: 'web', port: '80' });
  assert.deepEqual(splitSchemeNamePort('web:http'), { scheme: '', name: 'web', port: 'http' });
  assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
  assert.deepEqual(splitSchemeNamePort('http:web:'), { scheme: 'http', name: 'web', port: '' });
  for (const bad of ['', ':80', 'ftp:web:21', 'a:b:c:d', 'https::443']) assert.equal(splitSchemeNamePort(bad), undefined, bad);
});

test('what the proxy may reach: unicast addresses, loopback included; never link-local, multicast or unspecified', () => {
  for (const ok of ['127.7.9.4', '10.0.0.1', '::1', '2001:db8::1', '::ffff:127.0.0.1']) assert.equal(isProxyableIP(ok), true, ok);
  for (const no of ['169.254.169.254', '0.0.0.0', '224.0.0.1', '255.255.255.255', 'fe80::1', 'ff02::1', '::', '::ffff:169.254.1.1', 'localhost', ''])
    assert.equal(isProxyableIP(no), false, no);
});

const ctx = { pathPrepend: '/api/v1/namespaces/ns/services/web:80/proxy', backendHost: '127.7.9.4:8080', requestHost: '127.0.0.1:8001' };

test('Location and links: same-host absolute paths get the proxy prefix; other hosts and relative paths stay', () => {
  const cases: [string, string][] = [
    ['/login?next=%2F#top', '/api/v1/namespaces/ns/services/web:80/proxy/login?next=%2F#top'],
    ['/redirected/target/', '/api/v1/namespaces/ns/services/web:80/proxy/redirected/target/'],
    ['/', '/api/v1/namespaces/ns/services/web:80/proxy/'],
    ['http://127.7.9.4:8080/a/../b', '/api/v1/namespaces/ns/services/web:80/proxy/b'],
    // The host the client asked keeps its scheme and host.
    ['http://127.0.0.1:8001/x', 'http://127.0.0.1:8001/api/v1/namespaces/ns/services/web:80/proxy/x'],
    ['http://example.com/x', 'http://example.com/x'],
    ['//example.com/x', '//example.com/x'],
    ['relative/page', 'relative/page'],
    ['?q=1', '?q=1'],
    ['mailto:a@b.c', 'mailto:a@b.c'],
    ['http://127.7.9.4:8080', 'http://127.7.9.4:8080'],
    // Already through the proxy: only the backend's host goes.
    ['/api/v1/namespaces/ns/services/web:80/proxy/x', '/api/v1/namespaces/ns/services/web:80/proxy/x'],
    ['http://127.7.9.4:8080/api/v1/namespaces/ns/services/web:80/proxy/x', '/api/v1/namespaces/ns/services/web:80/proxy/x'],
    ['/bad%zzescape', '/bad%zzescape'],
  ];
  for (const [from, to] of cases) assert.equal(rewriteURL(from, ctx), to, from);
});

test('HTML: the URL attributes of the tags upstream lists are rewritten, the rest left as it was', () => {
  const rw = (u: string) => rewriteURL(u, ctx);
  const P = '/api/v1/namespaces/ns/services/web:80/proxy';
  assert.equal(
    rewriteHTML(`<pre><a href="kubelet.log">kubelet.log</a><A HREF='/google.log'>google.log</A></pre>`, rw),
    `<pre><a href="kubelet.log">kubelet.log</a><A HREF="${P}/google.log">google.log</A></pre>`,
  );
  assert.equal(rewriteHTML(`<img src=/k.jpg alt="/not-a-url"/><img data-x="/y">`, rw), `<img src="${P}/k.jpg" alt="/not-a-url"/><img data-x="/y">`);
  assert.equal(
    rewriteHTML(`<form action="/submit?a=1&amp;b=2" method=post><input formaction='/go'></form>`, rw),
    `<form action="${P}/submit?a=1&amp;b=2" method=post><input formaction="${P}/go"></form>`,
  );
  // Comments and the text of scripts are not markup.
  const untouched = `<!-- <a href="/c"> --><script>document.write('<a href="/s">')</script><p title="a > b">x</p>`;
  assert.equal(rewriteHTML(untouched, rw), untouched);
  assert.equal(rewriteHTML(`<script src="/app.js"></script><a href="/after">`, rw), `<script src="${P}/app.js"></script><a href="${P}/after">`);
  assert.equal(rewriteHTML('a < b and <<x', rw), 'a < b and <<x');
  assert.equal(rewriteHTML('<!DOCTYPE html><html manifest="/m"><a href="/x"', rw), `<!DOCTYPE html><html manifest="${P}/m"><a href="${P}/x"`);
});

test('headers: hop-by-hop and credentials stay behind; X-Forwarded-For grows; CORS answers are dropped', () => {
  const out = backendRequestHeaders(
    {
      host: '127.0.0.1:8001',
      accept: 'text/html',
      connection: 'keep-alive, X-Secret',
      'x-secret': '1',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      authorization: 'Bearer t',
      'impersonate-user': 'x',
      'x-forwarded-for': '10.1.1.1',
    },
    '127.0.0.1',
    false,
  );
  assert.deepEqual(out, { host: '127.0.0.1:8001', accept: 'text/html', 'x-forwarded-for': '10.1.1.1, 127.0.0.1' });
  const up = backendRequestHeaders({ connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': 'k' }, '::1', true);
  assert.deepEqual(up, { 'sec-websocket-key': 'k', connection: 'Upgrade', upgrade: 'websocket', 'x-forwarded-for': '::1' });
  assert.deepEqual(
    clientResponseHeaders([
      'Content-Type',
      'text/plain',
      'Connection',
      'close, X-Hop',
      'X-Hop',
      'a',
      'Access-Control-Allow-Origin',
      '*',
      'Set-Cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
    ]),
    [
      ['Content-Type', 'text/plain'],
      ['Set-Cookie', 'a=1'],
      ['Set-Cookie', 'b=2'],
    ],
  );
});
