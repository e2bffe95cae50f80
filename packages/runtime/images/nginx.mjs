// The built-in "nginx" image: a static HTTP server on the pod's IP and its
// container port (NGINX_PORT), serving the welcome page and writing an access
// log line per request to stdout, as nginx's default image does.
import { createServer } from 'node:http';

const host = process.env.POD_IP || '127.0.0.1';
const port = Number(process.env.NGINX_PORT || 80);
const page = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>Served by kubeling's built-in nginx image from pod ${process.env.HOSTNAME || ''}.</p>
</body>
</html>
`;

const server = createServer((req, res) => {
  const body = req.url === '/' || req.url === '/index.html' ? page : undefined;
  const status = body ? 200 : 404;
  const out = body ?? '<html><body><h1>404 Not Found</h1></body></html>\n';
  res.writeHead(status, { 'content-type': 'text/html', server: 'nginx (kubeling)' }).end(out);
  const when = new Date().toUTCString();
  process.stdout.write(
    `${req.socket.remoteAddress} - - [${when}] "${req.method} ${req.url} HTTP/${req.httpVersion}" ${status} ${Buffer.byteLength(out)} "-" "${req.headers['user-agent'] ?? '-'}"\n`,
  );
});
server.listen(port, host, () => {
  process.stdout.write(`nginx: listening on ${host}:${port}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGQUIT', stop);
