/**
 * Upgrade requests (exec, attach) go through the same routing, hooks and
 * handlers as any other: the server's `upgrade` event is routed with a
 * response bound to the socket, which carries any refusal as an ordinary
 * answer. A handler that hands the socket over (kubelet-proxy.ts) calls
 * `app.upgraded(req)`: fastify's response hooks never run for such a request,
 * so whatever records responses (audit, metrics) adds an upgraded hook too.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { upgradeResponse } from '@kubeling/client/remotecommand';
import { upgrades } from './kubelet-proxy.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Runs `fn` for each request that was upgraded and handed over, after the hooks added before it. */
    addUpgradedHook(fn: (req: FastifyRequest) => void): void;
    /** Tells the upgraded hooks that `req` was upgraded and handed over. */
    upgraded(req: FastifyRequest): void;
  }
}

export const upgradeRouting = fp(
  async (app) => {
    const hooks: ((req: FastifyRequest) => void)[] = [];
    app.decorate('addUpgradedHook', (fn: (req: FastifyRequest) => void) => {
      hooks.push(fn);
    });
    app.decorate('upgraded', (req: FastifyRequest) => {
      for (const h of hooks) h(req);
    });
    app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      upgrades.set(req, { socket, head });
      app.routing(req, upgradeResponse(req, socket));
    });
  },
  { name: 'kubeling-upgrades' },
);
