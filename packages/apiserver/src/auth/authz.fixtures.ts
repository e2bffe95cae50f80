/**
 * A SubjectAccessReview webhook for the authorization integration tests: a
 * loopback HTTP server answering each review with `decide(spec, path)`,
 * recording what it was asked, and the kubeconfig file that names it.
 */
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Review {
  path: string;
  token: string | undefined;
  body: { apiVersion: string; kind: string; spec: Record<string, any> };
}

/** The review's status; a number is that HTTP status with no review. */
export type Decide = (spec: Record<string, any>, path: string) => Record<string, unknown> | number;

export interface SarWebhook {
  reviews: Review[];
  url: string;
  /** A kubeconfig file in `dir` whose server is this webhook at `path` (with a bearer token the webhook records). */
  kubeconfig(dir: string, name: string, path?: string): string;
  close(): Promise<void>;
}

export async function startSarWebhook(decide: Decide): Promise<SarWebhook> {
  const reviews: Review[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const path = req.url ?? '';
      reviews.push({ path, token: req.headers.authorization?.replace(/^Bearer /, ''), body });
      const status = decide(body.spec ?? {}, path);
      if (typeof status === 'number') {
        res.writeHead(status).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: body.apiVersion, kind: 'SubjectAccessReview', status }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    reviews,
    url,
    kubeconfig(dir, name, path = '/authorize') {
      const file = join(dir, `${name}.kubeconfig`);
      writeFileSync(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          `- name: authz`,
          `  cluster: {server: "${url}${path}"}`,
          'users:',
          '- name: apiserver',
          '  user: {token: webhook-secret}',
          'contexts:',
          '- name: authz',
          '  context: {cluster: authz, user: apiserver}',
          'current-context: authz',
          '',
        ].join('\n'),
      );
      return file;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        // The apiserver's client keeps connections alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}
