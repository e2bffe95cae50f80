// The built-in "agnhost" image: the conformance suite's test server
// (registry.k8s.io/e2e-test-images/agnhost), its subcommands written anew for
// kubeling's runtime with what the tests observe of them. Servers listen on the
// pod's IP (POD_IP), so pods of one node can use the same ports.
//
//   agnhost pause | netexec | serve-hostname | liveness | test-webserver |
//           entrypoint-tester | mounttest | porter | webhook |
//           crd-conversion-webhook (these two in agnhost-webhook.mjs) | nettest |
//           logs-generator | guestbook | dns-suffix | dns-server-list | etc-hosts
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { promises as dnsPromises } from 'node:dns';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { createServer as createTcpServer } from 'node:net';
import { hostname as osHostname } from 'node:os';
import { join, normalize } from 'node:path';
import { crdConversionWebhook, webhook } from './agnhost-webhook.mjs';

const HOST = process.env.POD_IP || '0.0.0.0';
const hostname = () => process.env.HOSTNAME || osHostname();
const log = (line) => process.stdout.write(`${line}\n`);
const logErr = (line) => process.stderr.write(`${line}\n`);
/** Go's log package: a timestamped line on stderr. */
const glog = (line) => {
  const d = new Date();
  const p = (n) => String(n).padStart(2, '0');
  process.stderr.write(`${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${line}\n`);
};
/** The path the image's binary was started as (/agnhost, or /agnhost-2 through its link). */
const ARGV0 = process.env.KUBELING_ARGV0 || '/agnhost';

/** klog's flags, which agnhost accepts on every subcommand (and ignores here). */
const KLOG = {
  v: '0',
  vmodule: '',
  logtostderr: true,
  alsologtostderr: false,
  log_dir: '',
  log_file: '',
  log_file_max_size: '1800',
  stderrthreshold: '2',
  skip_headers: false,
  skip_log_headers: false,
  add_dir_header: false,
  one_output: false,
  log_backtrace_at: '',
};

/** Go's flag package: --name=value, -name=value, --name value, and bare booleans. */
function flags(args, own) {
  const defaults = { ...KLOG, ...own };
  const out = { ...defaults };
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m = /^--?([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) {
      rest.push(a);
      continue;
    }
    const name = m[1];
    if (!(name in defaults)) {
      logErr(`flag provided but not defined: -${name}`);
      process.exit(2);
    }
    if (m[2] !== undefined) out[name] = typeof defaults[name] === 'boolean' ? m[2] !== 'false' : m[2];
    else if (typeof defaults[name] === 'boolean') out[name] = true;
    else out[name] = args[++i];
  }
  return { ...out, _: rest };
}

function onTerm(fn) {
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => fn(sig));
}

// ---- pause -------------------------------------------------------------------

function pause() {
  // SIGINT exits 1 and SIGTERM 2, as agnhost's pause does (handled before it says it is paused).
  process.on('SIGINT', () => process.exit(1));
  process.on('SIGTERM', () => process.exit(2));
  log('Paused');
  setInterval(() => undefined, 1 << 30);
}

// ---- netexec -----------------------------------------------------------------

function netexec(args) {
  const f = flags(args, {
    'http-port': '8080',
    'udp-port': '8081',
    'sctp-port': '-1',
    shell: '/bin/sh',
    'http-override': '',
    'tls-cert-file': '',
    'tls-private-key-file': '',
    'delay-shutdown': '0',
  });
  const send = (res, code, body, type = 'text/plain; charset=utf-8') => {
    res.writeHead(code, { 'content-type': type });
    res.end(body);
  };
  const handlers = {
    '/': (_req, res) => send(res, 200, `NOW: ${goTime(new Date())}`),
    '/clientip': (req, res) => send(res, 200, `${req.socket.remoteAddress}:${req.socket.remotePort}`),
    '/header': (req, res, q) => send(res, 200, req.headers[(q.get('key') ?? '').toLowerCase()] ?? ''),
    '/echo': (_req, res, q) => {
      const c = q.get('code');
      if (c && !/^-?\d+$/.test(c)) return send(res, 200, `argument 'code' must be an integer or empty, got "${c}"\n`);
      const code = c ? Number(c) : 200;
      send(res, code >= 100 && code <= 999 ? code : 200, q.get('msg') ?? '');
    },
    '/exit': (_req, res, q) => {
      const c = q.get('code') || '0';
      if (!/^-?\d+$/.test(c)) return send(res, 200, `argument 'code' must be an integer [0-127] or empty, got "${c}"\n`);
      const timeout = goDuration(q.get('timeout') || '0');
      const wait = goDuration(q.get('wait') || '0');
      if (timeout === undefined) return send(res, 200, `argument 'timeout' must be a valid golang duration or empty, got "${q.get('timeout')}"\n`);
      if (wait === undefined) return send(res, 200, `argument 'wait' must be a valid golang duration or empty, got "${q.get('wait')}"\n`);
      glog(`Will begin shutdown in ${q.get('wait') || '0s'}, allowing ${q.get('timeout') || '0s'} for connections to close, then will exit with ${Number(c)}`);
      setTimeout(() => {
        // No timeout: exit at once, the request unanswered; otherwise answer and let connections close.
        if (!timeout) process.exit(Number(c));
        res.end();
        server.close();
        setTimeout(() => process.exit(Number(c)), timeout);
      }, wait);
    },
    '/healthz': (_req, res) => {
      res.writeHead(udpReady ? 200 : 412);
      res.end();
    },
    '/hostname': (_req, res) => send(res, 200, hostname()),
    '/hostName': (_req, res) => send(res, 200, hostname()),
    '/shell': (_req, res, q) => {
      const cmd = q.get('shellCommand') || q.get('cmd') || '';
      glog(`GET /shell?cmd=${cmd}`);
      execFile(f.shell, ['-c', cmd], { timeout: 60_000 }, (err, stdout, stderr) => {
        // Keys only when there is something to say, sorted, as Go marshals the map.
        const out = {};
        if (err) out.error = err.code !== undefined && typeof err.code === 'number' ? `exit status ${err.code}` : err.message;
        if (`${stdout}${stderr}`) out.output = `${stdout}${stderr}`;
        send(res, 200, JSON.stringify(out));
      });
    },
    '/dial': (_req, res, q) => dial(q, res, send),
    '/redirect': (_req, res, q) => {
      res.writeHead(303, { location: q.get('location') || '/' });
      res.end();
    },
    '/shutdown': () => process.exit(0),
    '/upload': (req, res) => upload(req, res, send),
  };
  let udpReady = false;
  const handler = (req, res) => {
    const override = f['http-override'] ? new URL(f['http-override'], 'http://x') : undefined;
    const url = override ?? new URL(req.url ?? '/', 'http://x');
    // Unregistered paths are the root's, as Go's ServeMux routes them.
    const h = handlers[url.pathname] ?? handlers['/'];
    // /echo says what it echoes (the lifecycle hook tests look for it); /shell says its command itself.
    if (url.pathname === '/echo') glog(`GET /echo?msg=${url.searchParams.get('msg') ?? ''}&code=${url.searchParams.get('code') ?? ''}`);
    else if (url.pathname !== '/shell') glog(`${req.method} ${url.pathname}`);
    h(req, res, url.searchParams);
  };
  // HTTPS when given a certificate and key, as netexec's --tls-* flags ask.
  const tls = f['tls-cert-file'] && f['tls-private-key-file'];
  const server = tls
    ? createHttpsServer({ cert: readFileSync(f['tls-cert-file']), key: readFileSync(f['tls-private-key-file']) }, handler)
    : createServer(handler);
  server.listen(Number(f['http-port']), HOST, () => glog(`Started HTTP server on port ${f['http-port']}`));
  server.on('error', (e) => {
    glog(e.message);
    process.exit(1);
  });
  const udpPort = Number(f['udp-port']);
  if (udpPort > 0) {
    const udp = createSocket('udp4');
    udp.on('message', (msg, r) => {
      const text = msg.toString().trim().toLowerCase();
      if (!text) return;
      let reply;
      if (text === 'hostname') reply = hostname();
      else if (text.startsWith('echo ')) reply = text.slice(5);
      else if (text === 'clientip') reply = `${r.address}:${r.port}`;
      else {
        glog(`Unknown UDP command received from ${r.address}:${r.port}: ${text}`);
        return;
      }
      udp.send(reply, r.port, r.address);
    });
    udp.bind(udpPort, HOST === '0.0.0.0' ? undefined : HOST, () => {
      udpReady = true;
      glog(`Started UDP server on port ${udpPort}`);
    });
  }
}

/** netexec /upload: the multipart field `file` written under the uploads directory (mode 0700). */
function upload(req, res, send) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers['content-type'] ?? '');
    const b = boundary ? `--${boundary[1] ?? boundary[2]}` : undefined;
    let data;
    if (b) {
      for (const part of body.toString('latin1').split(b)) {
        const at = part.indexOf('\r\n\r\n');
        if (at < 0 || !/name="file"/.test(part.slice(0, at))) continue;
        data = Buffer.from(part.slice(at + 4).replace(/\r\n$/, ''), 'latin1');
      }
    }
    if (!data) return send(res, 200, JSON.stringify({ error: 'Unable to upload file.' }));
    try {
      const dir = mkdtempSync(join(process.env.KUBELING_ROOT || '/tmp', 'uploads-'));
      const path = join(dir, `upload${Math.floor(Math.random() * 1e9)}`);
      writeFileSync(path, data);
      chmodSync(path, 0o700);
      glog(`Wrote upload to ${path}`);
      send(res, 201, JSON.stringify({ output: path }));
    } catch {
      send(res, 200, JSON.stringify({ error: 'Unable to write file.' }));
    }
  });
}

/** Go's time.Time String(): `2006-01-02 15:04:05.999999999 +0000 UTC`. */
function goTime(d) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)} +0000 UTC`;
}

/** A Go duration (`1.5s`, `300ms`, `2m`) in milliseconds; undefined when malformed. */
function goDuration(v) {
  if (v === '0') return 0;
  const unit = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = v;
  while (rest) {
    const m = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/.exec(rest);
    if (!m) return undefined;
    total += Number(m[1]) * unit[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** netexec /dial: asks host:port `tries` times over HTTP or UDP; 200 when the last try answered, 417 otherwise. */
function dial(q, res, send) {
  const host = q.get('host') ?? '';
  const port = q.get('port') ?? '';
  const request = q.get('request') ?? '';
  const protocol = (q.get('protocol') ?? '').toLowerCase() || 'http';
  const t = q.get('tries');
  glog(`GET /dial?host=${host}&protocol=${protocol}&port=${port}&request=${request}&tries=${t ?? ''}`);
  if (t && !/^-?\d+$/.test(t)) return send(res, 400, `tries parameter is invalid. strconv.Atoi: parsing "${t}": invalid syntax\n`);
  const tries = t ? Number(t) : 1;
  if (!request) return send(res, 400, 'request parameter not specified. <nil>\n');
  if (!['http', 'udp'].includes(protocol)) return send(res, 400, `unsupported protocol. ${protocol}\n`);
  if (!host || !/^\d+$/.test(port)) return send(res, 400, `host and/or port param are invalid. address ${host}:${port}: missing port in address\n`);
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const one = () =>
    new Promise((resolve) => {
      if (protocol === 'http') {
        const path = `/${request}`;
        const r = httpRequest({ host, port: Number(port), path: normalize(path), timeout: 5000 }, (resp) => {
          let b = '';
          resp.on('data', (d) => (b += d));
          resp.on('end', () => resolve({ ok: true, body: b }));
          resp.on('error', () => resolve({ ok: true, body: '' }));
        });
        r.on('timeout', () => r.destroy(new Error('Client.Timeout exceeded while awaiting headers')));
        r.on('error', (e) =>
          resolve({
            ok: false,
            body: `Get "http://${target}${path}": ${e.code === 'ECONNREFUSED' ? `dial tcp ${target}: connect: connection refused` : e.message}`,
          }),
        );
        r.end();
      } else {
        const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
        const timer = setTimeout(() => {
          s.close();
          resolve({ ok: false, body: `reading from udp connection failed. err:'read udp ${target}: i/o timeout'` });
        }, 5000);
        s.on('message', (m) => {
          clearTimeout(timer);
          s.close();
          resolve({ ok: true, body: m.toString() });
        });
        s.on('error', (e) => {
          clearTimeout(timer);
          s.close();
          resolve({ ok: false, body: `udp connection write failed. err:${e.message}` });
        });
        s.send(request, Number(port), host);
      }
    });
  (async () => {
    const responses = [];
    const errors = [];
    let last = '';
    for (let i = 0; i < tries; i++) {
      const r = await one();
      if (r.ok) {
        responses.push(r.body);
        last = r.body;
      } else {
        errors.push(r.body);
        last = '';
      }
    }
    // Go's map marshalled: sorted keys; responses only when the last try answered something.
    const out = {};
    if (errors.length) out.errors = errors;
    if (last) out.responses = responses;
    send(res, 200, JSON.stringify(out));
  })();
}

// ---- serve-hostname ----------------------------------------------------------

function serveHostname(args) {
  const f = flags(args, { tcp: false, udp: false, http: true, close: false, port: '9376' });
  if (f.http && (f.tcp || f.udp)) {
    glog("Can't serve TCP/UDP mode and HTTP mode at the same time");
    process.exit(1);
  }
  const port = Number(f.port);
  const name = hostname();
  if (f.tcp) {
    createTcpServer((c) => {
      glog(`TCP request from ${c.remoteAddress}:${c.remotePort}`);
      c.end(name);
    }).listen(port, HOST);
  }
  if (f.udp) {
    const u = createSocket('udp4');
    u.on('message', (_m, r) => {
      glog(`UDP request from ${r.address}:${r.port}`);
      u.send(name, r.port, r.address);
    });
    u.bind(port, HOST === '0.0.0.0' ? undefined : HOST);
  }
  if (f.http) {
    createServer((req, res) => {
      glog(`HTTP request from ${req.socket.remoteAddress}:${req.socket.remotePort}`);
      if (f.close) res.setHeader('connection', 'close');
      res.end(name);
    }).listen(port, HOST);
  }
  glog(`Serving on port ${port}.`);
  // SIGTERM: still serving for 60 s (until the pod is deleted), then exit 0.
  process.on('SIGTERM', () => {
    glog('Shutting down after receiving signal: terminated.');
    glog('Awaiting pod deletion.');
    setTimeout(() => process.exit(0), 60_000);
  });
}

// ---- liveness ----------------------------------------------------------------

function liveness() {
  const started = Date.now();
  createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const secs = (Date.now() - started) / 1000;
    if (url.pathname === '/started') return res.writeHead(200).end(`${secs}s`);
    if (url.pathname === '/healthz') {
      if (secs > 10) res.writeHead(500).end(`error: ${secs}`);
      else res.writeHead(200).end('ok');
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('loc') ?? '/' }).end();
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
  }).listen(8080, HOST);
}

// ---- test-webserver ----------------------------------------------------------

/**
 * test-webserver: the container's filesystem over HTTP, with CORS headers. Here a
 * container's root is its working directory, so that is what is served.
 */
function testWebserver(args) {
  const f = flags(args, { port: '80' });
  const root = process.cwd();
  createServer((req, res) => {
    res.setHeader('cache-control', 'private');
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-credentials', 'true');
    res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'DNT,X-Mx-ReqToken,Keep-Alive,User-Agent,X-Requested-With,Cache-Control,Content-Type');
    const rel = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.(\/|$))+/, '');
    const path = join(root, rel);
    try {
      const st = statSync(path);
      if (st.isDirectory()) {
        const names = readdirSync(path).sort();
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<pre>\n${names.map((n) => `<a href="${n}">${n}</a>`).join('\n')}\n</pre>\n`);
      } else res.writeHead(200).end(readFileSync(path));
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
    }
  }).listen(Number(f.port), HOST);
}

// ---- entrypoint-tester -------------------------------------------------------

function entrypointTester(args) {
  log(`[${ARGV0} entrypoint-tester${args.map((a) => ` ${a}`).join('')}]`);
}

// ---- mounttest ---------------------------------------------------------------

/** Go's os.FileMode String(): "-rw-r--r--", "drwxrwxrwx", with setuid/setgid/sticky letters. */
function goMode(st) {
  const perm = st.mode & 0o777;
  const rwx = (p) => `${p & 4 ? 'r' : '-'}${p & 2 ? 'w' : '-'}${p & 1 ? 'x' : '-'}`;
  let kind = '-';
  if (st.isDirectory()) kind = 'd';
  else if (st.isSymbolicLink()) kind = 'L';
  let prefix = '';
  if (st.mode & 0o4000) prefix += 'u';
  if (st.mode & 0o2000) prefix += 'g';
  if (st.mode & 0o1000) prefix += 't';
  return `${prefix}${kind}${rwx(perm >> 6)}${rwx((perm >> 3) & 7)}${rwx(perm & 7)}`;
}

function mounttest(args) {
  const f = flags(args, {
    fs_type: '',
    file_content: '',
    file_content_in_loop: '',
    file_mode: '',
    file_perm: '',
    file_owner: '',
    new_file_0644: '',
    new_file_0666: '',
    new_file_0660: '',
    new_file_0777: '',
    retry_time: '180',
    break_on_expected_content: true,
  });
  process.umask(0);
  const NEW_CONTENT = 'mount-tester new file\n';
  let failed = false;
  const content = (path) => {
    try {
      log(`content of file "${path}": ${readFileSync(path, 'utf8')}`);
    } catch (e) {
      failed = true;
      log(`error reading file content for "${path}": ${e.message}`);
    }
  };
  const stat = (path, what, fn) => {
    try {
      fn(statSync(path));
    } catch (e) {
      failed = true;
      log(`error from ${what}("${path}"): ${e.message}`);
    }
  };
  // Upstream's order: fs type, new files, mode, perms, owner, content, content in a loop.
  if (f.fs_type) {
    try {
      // Upstream names tmpfs (its magic number) and prints any other type's number.
      const type = statfsSync(f.fs_type).type;
      log(`mount type of "${f.fs_type}": ${type === 0x01021994 ? 'tmpfs' : type}`);
    } catch (e) {
      failed = true;
      log(`error from statfs("${f.fs_type}"): ${e.message}`);
    }
  }
  for (const [flag, mode] of [
    ['new_file_0644', 0o644],
    ['new_file_0666', 0o666],
    ['new_file_0660', 0o660],
    ['new_file_0777', 0o777],
  ]) {
    if (!f[flag]) continue;
    try {
      writeFileSync(f[flag], NEW_CONTENT, { mode });
      content(f[flag]);
    } catch (e) {
      failed = true;
      log(`error writing new file "${f[flag]}": ${e.message}`);
    }
  }
  if (f.file_mode) stat(f.file_mode, 'Stat', (st) => log(`mode of file "${f.file_mode}": ${goMode(st)}`));
  if (f.file_perm) stat(f.file_perm, 'Stat', (st) => log(`perms of file "${f.file_perm}": ${goPerm(st.mode)}`));
  if (f.file_owner) {
    stat(f.file_owner, 'stat', (st) => {
      log(`owner UID of "${f.file_owner}": ${st.uid}`);
      log(`owner GID of "${f.file_owner}": ${st.gid}`);
    });
  }
  if (f.file_content) content(f.file_content);
  if (f.file_content_in_loop) {
    const path = f.file_content_in_loop;
    const deadline = Date.now() + Number(f.retry_time) * 1000;
    let lastFailed = false;
    const loop = () => {
      if (Date.now() >= deadline) {
        process.exitCode = failed || lastFailed ? 1 : 0;
        return;
      }
      try {
        const text = readFileSync(path, 'utf8');
        lastFailed = false;
        log(`content of file "${path}": ${text}`);
        if (!f.break_on_expected_content) {
          // keep printing until the time is up
        } else if (text === NEW_CONTENT) {
          process.exitCode = failed ? 1 : 0;
          return;
        } else process.stdout.write(`Unexpected content. Expected: ${NEW_CONTENT}. Retrying`);
      } catch (e) {
        lastFailed = true;
        log(`Error reading file ${path}: ${e.message}, retrying`);
      }
      setTimeout(loop, 2000);
    };
    loop();
    return;
  }
  process.exitCode = failed ? 1 : 0;
}

/** Go's FileMode.Perm().String(): the permission bits alone. */
function goPerm(mode) {
  const rwx = (p) => `${p & 4 ? 'r' : '-'}${p & 2 ? 'w' : '-'}${p & 1 ? 'x' : '-'}`;
  const perm = mode & 0o777;
  return `-${rwx(perm >> 6)}${rwx((perm >> 3) & 7)}${rwx(perm & 7)}`;
}

// ---- porter ------------------------------------------------------------------

/** The content type Go's http.DetectContentType gives a short body: HTML by its opening tag, else plain text. */
function sniffedType(body) {
  const t = body.replace(/^[\t\n\f\r ]+/, '');
  const html = /^<(!DOCTYPE HTML|HTML|HEAD|SCRIPT|IFRAME|H1|DIV|FONT|TABLE|A|STYLE|TITLE|B|BODY|BR|P|!--)[ >]/i.test(t);
  return html ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
}

/**
 * SERVE_PORT_<n>=<text> serves the text on port n, SERVE_TLS_PORT_<n> over TLS
 * (the image's localhost certificate, or CERT_FILE and KEY_FILE);
 * --json-response answers {"Method": ..., "Body": <text>} instead.
 */
function porter(args) {
  const f = flags(args, { 'json-response': false });
  const handler = (value) => (req, res) => {
    if (f['json-response']) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Method: req.method, Body: value }));
    else res.writeHead(200, { 'content-type': sniffedType(value) }).end(value);
  };
  const here = new URL('.', import.meta.url).pathname;
  for (const [k, v] of Object.entries(process.env)) {
    const plain = /^SERVE_PORT_(\d+)$/.exec(k);
    const tls = /^SERVE_TLS_PORT_(\d+)$/.exec(k);
    if (plain) createServer(handler(v)).listen(Number(plain[1]), HOST);
    else if (tls) {
      const cert = readFileSync(process.env.CERT_FILE || join(here, 'porter/localhost.crt'));
      const key = readFileSync(process.env.KEY_FILE || join(here, 'porter/localhost.key'));
      createHttpsServer({ cert, key }, handler(v)).listen(Number(tls[1]), HOST);
    }
  }
  onTerm(() => process.exit(0));
}

// ---- nettest ------------------------------------------------------------------

/**
 * A web server on --port for network checks between pods: POST /write
 * {"Source": ...} counts a message from that source, /read answers the whole
 * state as indented JSON, /status says pass, running or fail, /quit exits.
 * Meanwhile it posts its hostname to every endpoint of --service (read with
 * the pod's service account), 15 rounds, as upstream's contactOthers.
 */
function nettest(args) {
  const f = flags(args, { port: '8080', peers: '8', service: 'nettest', namespace: 'default', 'delay-shutdown': '0' });
  const peers = Number(f.peers);
  const state = { Hostname: process.env.HOSTNAME || osHostname(), Sent: null, Received: null, Errors: null, Log: null, StillContactingPeers: true };
  const logf = (msg) => {
    state.Log = [...(state.Log ?? []), msg].slice(-500);
  };
  const appendErr = (msg) => {
    state.Errors = [...(state.Errors ?? []), msg];
  };
  const delay = Number(f['delay-shutdown']);
  if (delay > 0)
    process.on('SIGTERM', () => {
      log(`Sleeping ${delay} seconds before exit ...`);
      setTimeout(() => process.exit(0), delay * 1000);
    });
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/quit') process.exit(0);
    if (path === '/read') return res.writeHead(200).end(JSON.stringify(state, null, '\t'));
    if (path === '/status') {
      const sent = Object.keys(state.Sent ?? {}).length;
      const received = Object.keys(state.Received ?? {}).length;
      if (sent >= peers && received >= peers) return res.end('pass');
      if (state.StillContactingPeers) return res.end('running');
      logf(`Declaring failure for ${f.namespace}/${f.service} with ${sent} sent and ${received} received and ${peers} peers`);
      return res.end('fail');
    }
    if (path === '/write') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        let wp = {};
        try {
          wp = JSON.parse(body);
        } catch (e) {
          appendErr(e.message);
        }
        if (!wp.Source) appendErr(`${state.Hostname}: Got request with no source`);
        else {
          state.Received ??= {};
          state.Received[wp.Source] = (state.Received[wp.Source] ?? 0) + 1;
        }
        res.writeHead(200).end(`${JSON.stringify({ Hostname: state.Hostname })}\n`);
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
  });
  server.listen(Number(f.port), HOST);
  void contactOthers(f, peers, state, logf).finally(() => (state.StillContactingPeers = false));
}

/** GETs a path of the apiserver with the pod's service account, as client-go's in-cluster config does. */
function inCluster(path) {
  const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    return Promise.reject(new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined'));
  const token = containerFile(`${sa}/token`).trim();
  const ca = containerFile(`${sa}/ca.crt`);
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host, port, path, ca, headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, timeout: 10_000 }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => ((res.statusCode ?? 500) < 300 ? resolve(JSON.parse(b)) : reject(new Error(`${res.statusCode}: ${b}`))));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

async function contactOthers(f, peers, state, logf) {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const sleepMs = Math.max(5, Math.floor(peers / 10)) * 1000;
  const timeoutMs = Math.max(300, peers) * 1000;
  const endpoints = async () => {
    const out = new Set();
    try {
      const ep = await inCluster(`/api/v1/namespaces/${f.namespace}/endpoints/${f.service}`);
      for (const ss of ep.subsets ?? []) for (const a of ss.addresses ?? []) for (const p of ss.ports ?? []) out.add(`http://${a.ip}:${p.port}`);
    } catch (e) {
      logf(`Unable to read the endpoints for ${f.namespace}/${f.service}: ${e.message}.`);
    }
    return out;
  };
  let version;
  for (const start = Date.now(); Date.now() - start < timeoutMs; await sleep(sleepMs + 1000)) {
    try {
      version = await inCluster('/version');
      log(`Server version: ${JSON.stringify(version)}`);
      break;
    } catch (e) {
      log(`Unable to get server version: ${e.message}; retrying.`);
    }
  }
  if (!version) return;
  for (const start = Date.now(); Date.now() - start < timeoutMs; await sleep(sleepMs)) {
    const eps = await endpoints();
    if (eps.size >= peers) break;
    logf(
      `${f.namespace}/${f.service} has ${eps.size} endpoints ([${[...eps].join(' ')}]), which is less than ${peers} as expected. Waiting for all endpoints to come up.`,
    );
  }
  for (let i = 0; i < 15; i++) {
    for (const ep of await endpoints()) {
      logf(`Attempting to contact ${ep}`);
      try {
        const r = await fetch(`${ep}/write`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ Source: state.Hostname, Dest: ep }),
        });
        const wr = JSON.parse(await r.text());
        state.Sent ??= {};
        state.Sent[wr.Hostname] = (state.Sent[wr.Hostname] ?? 0) + 1;
      } catch (e) {
        logf(`Warning: unable to contact the endpoint "${ep}": ${e.message}`);
      }
    }
    await sleep(sleepMs);
  }
}

// ---- guestbook -----------------------------------------------------------------

/** The names to try for `name`, as the C library reads resolv.conf: search domains first below ndots dots. */
async function resolveName(name) {
  if (/^[\d.]+$/.test(name) || name.includes(':')) return name;
  const conf = { servers: [], search: [], ndots: 1 };
  try {
    for (const line of containerFile('/etc/resolv.conf').split('\n')) {
      const [key, ...vals] = line.trim().split(/\s+/);
      if (key === 'nameserver' && vals[0]) conf.servers.push(vals[0]);
      else if (key === 'search') conf.search = vals;
      else if (key === 'options') for (const o of vals) if (o.startsWith('ndots:')) conf.ndots = Number(o.slice(6)) || 1;
    }
  } catch {
    // no resolv.conf: the host's resolver
  }
  if (!conf.servers.length) return (await dnsPromises.lookup(name, { family: 4 })).address;
  const resolver = new dnsPromises.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers(conf.servers);
  const searched = conf.search.map((d) => `${name}.${d}`);
  for (const n of name.split('.').length - 1 >= conf.ndots ? [name, ...searched] : [...searched, name]) {
    try {
      const [a] = await resolver.resolve4(n);
      if (a) return a;
    } catch {
      // the next candidate
    }
  }
  throw new Error(`lookup ${name}: no such host`);
}

/** GET http://host:port/request with a 5 s timeout: the body, or an error. */
async function dialHTTP(request, host, port) {
  const ip = await resolveName(host);
  const r = await fetch(`http://${ip}:${port}/${request}`, { signal: AbortSignal.timeout(5000) });
  return r.text();
}

/**
 * The guestbook app of kubectl's conformance test, one program in three
 * roles: a store (/get, /set, /register) that, given --replicaof, registers
 * with the primary, which pushes each /set to its replicas on --backend-port;
 * and a frontend (/guestbook?cmd=get|set) that asks agnhost-replica or
 * agnhost-primary.
 */
function guestbook(args) {
  const f = flags(args, { 'http-port': '80', 'backend-port': '6379', replicaof: '' });
  let store = {};
  const replicas = [];
  const query = (req) => new URL(req.url ?? '/', 'http://x').searchParams;
  const json = (res, v) => res.end(JSON.stringify(v));
  const fail = (res, code, msg) => res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end(`${msg}\n`);
  const handlers = {
    '/register': (req, res) => {
      const ip = query(req).get('host') ?? '';
      log(`GET /register?host=${ip}`);
      json(res, { data: store });
      replicas.push(ip);
      log(`Node '${ip}' registered.`);
    },
    '/get': (req, res) => {
      const key = query(req).get('key') ?? '';
      log(`GET /get?key=${key}`);
      json(res, { data: key === '' ? store : (store[key] ?? '') });
    },
    '/set': async (req, res) => {
      const q = query(req);
      const key = q.get('key') ?? '';
      const value = q.get('value') ?? '';
      log(`GET /set?key=${key}&value=${value}`);
      if (key === '') return fail(res, 400, 'cannot set with empty key.');
      store[key] = value;
      for (const replica of replicas) {
        try {
          await dialHTTP(`set?key=${key}&value=${value}`, replica, f['backend-port']);
        } catch (e) {
          return fail(res, 417, `encountered error while propagating to replica '${replica}': ${e.message}`);
        }
      }
      json(res, { message: 'Updated' });
    },
    '/guestbook': async (req, res) => {
      const q = query(req);
      const cmd = (q.get('cmd') ?? '').toLowerCase();
      const key = q.get('key') ?? '';
      const value = q.get('value') ?? '';
      log(`GET /guestbook?cmd=${cmd}&key=${key}&value=${value}`);
      if (cmd !== 'get' && cmd !== 'set') return fail(res, 400, `unsupported cmd: '${cmd}'`);
      if (cmd === 'set' && key === '') return fail(res, 400, 'cannot set with empty key.');
      try {
        res.end(await dialHTTP(`${cmd}?key=${key}&value=${value}`, cmd === 'get' ? 'agnhost-replica' : 'agnhost-primary', f['backend-port']));
      } catch (e) {
        fail(res, 417, `encountered error: ${e.message}`);
      }
    },
  };
  createServer((req, res) => {
    const h = handlers[(req.url ?? '/').split('?')[0]];
    if (!h) return fail(res, 404, '404 page not found');
    void h(req, res);
  }).listen(Number(f['http-port']), HOST);
  if (!f.replicaof) return;
  void (async () => {
    // The address the primary pushes to: the pod's.
    const self = process.env.POD_IP || '127.0.0.1';
    for (const start = Date.now(); Date.now() - start < 15_000; await new Promise((r) => setTimeout(r, 1000))) {
      try {
        log(`Registering to primary: ${f.replicaof}:${f['backend-port']}/register?host=${self}`);
        const answer = JSON.parse(await dialHTTP(`register?host=${self}`, f.replicaof, f['backend-port']));
        store = answer.data ?? {};
        log(`Registered to node: ${f.replicaof}`);
        return;
      } catch (e) {
        log(`encountered error while registering to primary: ${e.message}. Retrying in 1s.`);
      }
    }
    logErr('Timed out while registering to primary.');
    process.exit(1);
  })();
}

// ---- logs-generator ------------------------------------------------------------

/** A klog line: `Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg`. */
function klogLine(level, where, msg) {
  const d = new Date();
  const p = (n, w = 2) => String(n).padStart(w, '0');
  const time = `${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}000`;
  return `${level}${time} ${String(process.pid).padStart(7)} ${where}] ${msg}`;
}

/** --log-lines-total N lines over --run-duration, evenly, each a made-up API request: `<id> <method> <url> <status>`. */
function logsGenerator(args) {
  const f = flags(args, { 'log-lines-total': '0', t: '', 'run-duration': '0', d: '' });
  const total = Number(f.t || f['log-lines-total']);
  const duration = goDuration(f.d || f['run-duration']);
  if (!(total > 0)) {
    logErr(klogLine('F', 'logs_generator.go:56', `Invalid total number of lines: ${total}`));
    process.exit(255);
  }
  if (!(duration > 0)) {
    logErr(klogLine('F', 'logs_generator.go:60', `Invalid duration: ${f.d || f['run-duration']}`));
    process.exit(255);
  }
  const pick = (xs) => xs[Math.floor(Math.random() * xs.length)];
  const alnum = 'bcdfghjklmnpqrstvwxz2456789';
  const line = (id) => {
    const pod = Array.from({ length: 3 + Math.floor(Math.random() * 2) }, () => pick(alnum)).join('');
    const status = 200 + Math.floor(Math.random() * 400);
    return `${id} ${pick(['GET', 'POST', 'PUT'])} /api/v1/namespaces/${pick(['kube-system', 'default', 'ns'])}/pods/${pod} ${status}`;
  };
  let id = 0;
  logErr(klogLine('I', 'logs_generator.go:67', line(id++)));
  const timer = setInterval(() => {
    if (id >= total) return clearInterval(timer);
    logErr(klogLine('I', 'logs_generator.go:67', line(id++)));
  }, duration / total);
}

// ---- dns-suffix, dns-server-list, etc-hosts ----------------------------------------

/** A file of the container (under its directory when it runs without namespaces of its own). */
function containerFile(path) {
  const root = process.env.KUBELING_ROOT;
  const p = root && existsSync(join(root, path)) ? join(root, path) : path;
  return readFileSync(p, 'utf8');
}

/** The words after the first resolv.conf line starting with `key`, comma-joined as agnhost prints them. */
function resolvConfList(key, what) {
  const line = containerFile('/etc/resolv.conf')
    .split('\n')
    .find((l) => l.startsWith(key));
  if (line === undefined) {
    logErr(`panic: Could not find DNS ${what} list!`);
    process.exit(2);
  }
  console.log(line.split(' ').slice(1).join(','));
}

const [cmd = 'pause', ...rest] = process.argv.slice(2);
const commands = {
  pause,
  netexec,
  'serve-hostname': serveHostname,
  liveness,
  'test-webserver': testWebserver,
  'entrypoint-tester': entrypointTester,
  mounttest,
  porter,
  nettest,
  'logs-generator': logsGenerator,
  guestbook,
  'dns-suffix': () => resolvConfList('search', 'search'),
  'dns-server-list': () => resolvConfList('nameserver', 'search'),
  'etc-hosts': () => console.log(containerFile('/etc/hosts')),
  webhook: (args) => webhook(args, { flags, HOST }),
  'crd-conversion-webhook': (args) => crdConversionWebhook(args, { flags, HOST }),
};
if (!commands[cmd]) {
  // agnhost ignores the root command's error: the message, and exit status 0.
  logErr(`Error: unknown command "${cmd}" for "app"\nRun 'app --help' for usage.`);
  process.exit(0);
}
commands[cmd](rest);
