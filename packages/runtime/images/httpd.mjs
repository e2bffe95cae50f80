// The built-in "httpd" image: files of its DocumentRoot ($HTTPD_PREFIX/htdocs,
// where the image has Apache's default index.html) on the pod's IP and its
// container port (NGINX_PORT, as the runtime passes the first container port;
// 80 otherwise), an access log line per request on stdout as httpd's image
// writes them. Where the container has no such directory (the runtime's
// rootless mode), the default page is served as if it were there.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';

const host = process.env.POD_IP || '127.0.0.1';
const port = Number(process.env.NGINX_PORT || 80);
const root = join(process.env.HTTPD_PREFIX || '/usr/local/apache2', 'htdocs');
const page = '<html><body><h1>It works!</h1></body></html>\n';
const hasRoot = existsSync(root);

/** The file a request path names under the DocumentRoot (index.html for a directory), or undefined. */
function file(url) {
  const rel = normalize(decodeURIComponent(new URL(url, 'http://x').pathname)).replace(/^(\.\.(\/|$))+/, '');
  if (!hasRoot) return rel === '/' || rel === '/index.html' ? page : undefined;
  let p = join(root, rel);
  try {
    if (statSync(p).isDirectory()) p = join(p, 'index.html');
    return readFileSync(p);
  } catch {
    return undefined;
  }
}

const server = createServer((req, res) => {
  const body = file(req.url ?? '/');
  const ok = body !== undefined;
  const out = ok
    ? body
    : '<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n</body></html>\n';
  res.writeHead(ok ? 200 : 404, { 'content-type': 'text/html', server: 'Apache/2.4.38 (Unix)' }).end(out);
  const when = new Date().toUTCString();
  process.stdout.write(
    `${req.socket.remoteAddress} - - [${when}] "${req.method} ${req.url} HTTP/${req.httpVersion}" ${ok ? 200 : 404} ${Buffer.byteLength(out)}\n`,
  );
});
server.listen(port, host, () => {
  process.stderr.write(`AH00094: Command line: 'httpd -D FOREGROUND' (listening on ${host}:${port})\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGWINCH', stop);
