/**
 * Request metrics (apiserver_request_total and _duration_seconds), by verb,
 * resource, subresource and code, for every answered request but watches; an
 * upgraded request counts once with code 101. The labels come from the
 * request info the resource routes set (`req.k8s`); other requests, and those
 * refused before their handler ran, are labelled by HTTP method alone.
 */
import fp from 'fastify-plugin';
import type { ApiMetrics } from '../../metrics.js';

export const requestMetrics = fp<{ metrics: ApiMetrics }>(
  async (app, { metrics }) => {
    app.addHook('onResponse', async (req, reply) => {
      const info = req.k8s;
      if (info?.verb === 'watch') return;
      metrics.request(info?.verb ?? req.method.toLowerCase(), info?.resource ?? '', info?.subresource ?? '', reply.statusCode, reply.elapsedTime / 1000);
    });
    app.addUpgradedHook((req) => metrics.request(req.k8s?.verb ?? req.method.toLowerCase(), req.k8s?.resource ?? '', req.k8s?.subresource ?? '', 101, 0));
  },
  { name: 'kubeling-request-metrics', dependencies: ['kubeling-upgrades'] },
);
