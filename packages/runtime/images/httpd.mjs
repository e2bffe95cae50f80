// The built-in "httpd" image: Apache's default page on the pod's IP and its
// container port (NGINX_PORT, as the runtime passes the first container port;
// 80 otherwise), an access log line per request on stdout as httpd's image writes them.
import { createServer } from 'node:http';

const host = process.env.POD_IP || '127.0.0.1';
const port = Number(process.env.NGINX_PORT || 80);
const page = '<html><body><h1>It works!</h1></body></html>\n';

const server = createServer((req, res) => {
  const ok = req.url === '/' || req.url === '/index.html';
  const out = ok
    ? page
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
