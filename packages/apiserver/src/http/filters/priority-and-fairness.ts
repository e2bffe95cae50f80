/**
 * The API Priority and Fairness filter (k8s.io/apiserver pkg/server/filters
 * priority-and-fairness.go). In the handler chain it runs after impersonation
 * and before authorization, as in kube-apiserver's DefaultBuildHandlerChain, so
 * it classifies the user the request acts as.
 *
 * - Each request is classified by the FlowSchemas and goes through its priority
 *   level: at once (exempt, or a free seat), after waiting in a fair queue, or
 *   not at all: 429 TooManyRequests with `Retry-After` ("Too many requests,
 *   please try again later.") when its queue is full, its Reject level is
 *   full, or it waited longer than a quarter of its timeout (at most a minute).
 * - Responses name the FlowSchema and priority level by UID in
 *   `X-Kubernetes-PF-FlowSchema-UID` / `X-Kubernetes-PF-PriorityLevel-UID`.
 * - The seat is held until the response is done, or the client goes away; a
 *   watch holds it only while it is being set up (until its handler returns,
 *   upstream's watch initialization signal). Other long-running requests
 *   (exec, attach, port-forward, proxy, logs) are not held back at all.
 *
 * Upstream writes its 429 as plain text; here it is a v1 Status (with
 * `details.retryAfterSeconds`), as every other error of this server.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { flowcontrolv1 } from '@kubeling/api';
import { tooManyRequests } from '@kubeling/apimachinery';
import type { Admission, FlowControl } from '../../flowcontrol/controller.js';
import { dumpPriorityLevels, dumpQueues, dumpRequests } from '../../flowcontrol/debug.js';
import type { RequestDigest } from '../../flowcontrol/rule.js';
import { parseRequestInfo, q1, type Query, type RequestInfo } from '../request-info.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on a watch admitted by APF: ends its seat once the handler has set the watch up. */
    apfHandlerDone?: () => void;
    /** Ends the seat of a request admitted by APF (idempotent). */
    apfRelease?: () => void;
  }
}

export const TOO_MANY_REQUESTS_MESSAGE = 'Too many requests, please try again later.';

export interface PriorityAndFairnessOptions {
  flowControl: FlowControl;
  /** The server's request timeout (upstream --request-timeout, 60 s): requests wait a quarter of theirs at most. */
  requestTimeoutSeconds: number;
}

const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** kube-apiserver's long-running check (BasicLongRunningRequestCheck of watch and proxy verbs and these subresources). */
export function isLongRunning(info: RequestInfo): boolean {
  if (info.verb === 'watch' || info.verb === 'proxy') return true;
  if (info.isResourceRequest) return LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  return info.path.startsWith('/debug/pprof/');
}

/** Without authentication every request acts as the cluster's administrator (as audit records it here). */
const UNAUTHENTICATED_ADMIN = { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] };

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration ("30s", "1m30s", "500ms") in milliseconds; undefined when it is not one. */
export function parseGoDuration(s: string): number | undefined {
  if (!/^(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+$/.test(s)) return undefined;
  let ms = 0;
  for (const m of s.matchAll(/(\d+(?:\.\d*)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
  return ms;
}

/**
 * How long a request may wait in its queue (getRequestWaitContext): a quarter
 * of its deadline — the `timeout` parameter when shorter than the server's —
 * and never over a minute. Watches have no deadline: a quarter of the server's.
 */
export function waitLimitMs(info: RequestInfo, query: Query, requestTimeoutSeconds: number): number {
  const server = requestTimeoutSeconds * 1000;
  let timeout = server;
  if (info.verb !== 'watch') {
    const asked = parseGoDuration(q1(query, 'timeout') ?? '');
    if (asked !== undefined && asked > 0 && asked < server) timeout = asked;
  }
  return Math.min(timeout / 4, 60_000);
}

function digestOf(req: FastifyRequest, info: RequestInfo): RequestDigest {
  const user = req.user ?? UNAUTHENTICATED_ADMIN;
  // Upstream's request info names a Namespace's own namespace: /api/v1/namespaces/x is "in" x.
  const namespace = info.resource === 'namespaces' && info.name ? info.name : info.namespace;
  return {
    user: { name: user.name, groups: user.groups },
    isResourceRequest: info.isResourceRequest,
    verb: info.verb,
    path: info.path,
    apiGroup: info.apiGroup,
    namespace,
    resource: info.resource,
    subresource: info.subresource,
  };
}

function setHeaders(reply: FastifyReply, a: Admission): void {
  // UIDs, not names: the names an operator chose may tell a client it was put at a low priority.
  reply.raw.setHeader(flowcontrolv1.HEADER_PRIORITY_LEVEL_UID, a.priorityLevel.metadata.uid ?? '');
  reply.raw.setHeader(flowcontrolv1.HEADER_FLOW_SCHEMA_UID, a.flowSchema.metadata.uid ?? '');
}

export const priorityAndFairness = fp<PriorityAndFairnessOptions>(
  async (app, { flowControl: fc, requestTimeoutSeconds }) => {
    const reject = (a: Admission) => {
      const pl = a.priorityLevel.metadata.name ?? '';
      fc.dropped.record(pl);
      return tooManyRequests(TOO_MANY_REQUESTS_MESSAGE, fc.dropped.retryAfter(pl));
    };

    app.addHook('onRequest', async (req, reply) => {
      const info = parseRequestInfo(req.method, req.url.split('?')[0]!, req.query as Query);
      const watch = info.verb === 'watch';
      if (!watch && isLongRunning(info)) return;
      const d = digestOf(req, info);
      const descr = {
        user: d.user.name,
        verb: info.verb,
        path: info.path,
        namespace: d.namespace,
        name: info.name,
        apiGroup: info.apiGroup,
        apiVersion: info.apiVersion,
        resource: info.resource,
        subresource: info.subresource,
      };
      const a = fc.admit(d, descr, waitLimitMs(info, req.query as Query, requestTimeoutSeconds));
      setHeaders(reply, a);
      if ('rejected' in a) throw reject(a);
      const { ticket, state } = a;
      // The response closing before a seat came means the client went away.
      const gone = () => ticket.cancel();
      reply.raw.once('close', gone);
      const admitted = await ticket.admitted;
      reply.raw.off('close', gone);
      if (!admitted) throw reject(a);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        ticket.finish();
        fc.released(state);
      };
      reply.raw.once('close', release);
      req.apfRelease = release;
      if (watch) req.apfHandlerDone = release;
    });
    app.addHook('onResponse', async (req) => {
      req.apfRelease?.();
    });
    app.addHook('onRoute', (route) => {
      // A watch's seat ends when its handler returns: the watch is set up (or failed) by then.
      const handler = route.handler;
      route.handler = function apfHandler(this: unknown, req, reply) {
        const done = () => req.apfHandlerDone?.();
        let out: unknown;
        try {
          out = handler.call(this as never, req, reply);
        } catch (e) {
          done();
          throw e;
        }
        if (out instanceof Promise) return out.finally(done);
        done();
        return out;
      };
    });
  },
  { name: 'kubeling-priority-and-fairness', dependencies: ['kubeling-status-errors'] },
);

/** /debug/api_priority_and_fairness/dump_*: text dumps (GET; authorized as non-resource URLs). */
export const apfDebugRoutes: FastifyPluginAsync<{ flowControl: FlowControl }> = async (app, { flowControl: fc }) => {
  const text = (reply: FastifyReply, body: string) => reply.type('text/plain; charset=utf-8').send(body);
  const base = '/debug/api_priority_and_fairness';
  app.get(`${base}/dump_priority_levels`, async (_req, reply) => text(reply, dumpPriorityLevels(fc)));
  app.get(`${base}/dump_queues`, async (_req, reply) => text(reply, dumpQueues(fc)));
  app.get(`${base}/dump_requests`, async (req, reply) => text(reply, dumpRequests(fc, !!q1(req.query as Query, 'includeRequestDetails'))));
};
