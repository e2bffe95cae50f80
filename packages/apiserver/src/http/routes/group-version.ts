/**
 * The API's group-versions, one encapsulated plugin each: `/api/v1` and
 * `/apis/<group>/<version>` serve their APIResourceList and, below it, every
 * resource request of that group-version (resource-handler.ts). Any other
 * `/apis/<group>/<version>` gets the same routes, which find nothing there:
 * 404 (OPTIONS, as on every resource path, 405).
 *
 * The resource routes set `req.k8s`, the request's parsed path, which the
 * audit record and the request metrics read.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceCatalog } from '../../apiextensions/catalog.js';
import { methodNotAllowed, notFoundPath } from '@kubeling/apimachinery';
import { apiResourceList } from '../discovery.js';
import { parseRequestInfo, type RequestInfo } from '../request-info.js';
import { handleResource, type HandlerContext } from '../resource-handler.js';
import type { Aggregator } from '../../aggregator/controller.js';
import { proxyToAPIService, type ProxyDeps } from '../../aggregator/proxy.js';

declare module 'fastify' {
  interface FastifyRequest {
    k8s?: RequestInfo;
  }
}

/** What the resource handlers are given besides the request itself. */
export type ResourceDeps = Omit<HandlerContext, 'req' | 'reply' | 'info' | 'def' | 'opts'> & { opts: Omit<HandlerContext['opts'], 'upgraded'> };

interface GroupVersionOptions {
  deps: ResourceDeps;
  catalog: ResourceCatalog;
  /** Absent when the prefix names them as parameters. */
  groupVersion?: { group: string; version: string };
  /** The aggregation layer: group-versions an APIService hands to an extension server are proxied there. */
  aggregation?: { aggregator: Aggregator } & ProxyDeps;
}

const RESOURCE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const groupVersion: FastifyPluginAsync<GroupVersionOptions> = async (app, { deps, catalog, groupVersion: gv, aggregation }) => {
  const opts = { ...deps.opts, upgraded: (req: FastifyRequest) => app.upgraded(req) };
  if (aggregation) {
    // Before any route of the parameterised prefix: what an extension server serves is proxied as it is.
    app.addHook('preHandler', async (req, reply) => {
      const { group, version } = req.params as { group: string; version: string };
      const a = aggregation.aggregator.remote(group, version);
      if (!a) return;
      req.k8s = parseRequestInfo(req.method, req.url.split('?')[0]!, req.query as Record<string, string>);
      await proxyToAPIService(req, reply, a, aggregation);
      return reply;
    });
  }
  app.get('', async (req) => {
    const { group, version } = gv ?? (req.params as { group: string; version: string });
    const list = apiResourceList(catalog, group, version);
    if (!list) throw notFoundPath();
    return list;
  });
  app.route({
    method: [...RESOURCE_METHODS],
    url: '/*',
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      const info = parseRequestInfo(req.method, req.url.split('?')[0]!, req.query as Record<string, string>);
      req.k8s = info;
      if (!info.isResourceRequest) throw notFoundPath();
      const def = catalog.find(info.apiGroup, info.apiVersion, info.resource);
      if (!def) throw notFoundPath();
      return handleResource({ req, reply, info, def, ...deps, opts });
    },
  });
  app.route({
    method: ['OPTIONS'],
    url: '/*',
    handler: async () => {
      throw methodNotAllowed();
    },
  });
};

/** Every group-version's routes, under its own prefix, then the catch-all for unknown ones. */
export const apiRoutes: FastifyPluginAsync<{ deps: ResourceDeps; catalog: ResourceCatalog; aggregation?: GroupVersionOptions['aggregation'] }> = async (
  app,
  { deps, catalog, aggregation },
) => {
  // The built-in group-versions get routes of their own; CRDs' come and go behind the parameterised prefix.
  for (const gv of catalog.groupVersions()) {
    app.register(groupVersion, { prefix: gv.group ? `/apis/${gv.group}/${gv.version}` : `/api/${gv.version}`, deps, catalog, groupVersion: gv });
  }
  app.register(groupVersion, { prefix: '/apis/:group/:version', deps, catalog, ...(aggregation ? { aggregation } : {}) });
};
