/**
 * pods/<name>/portforward (upstream pkg/registry/core/pod/rest/subresources.go
 * PortForwardREST): the client's upgrade goes on to the kubelet of the pod's
 * node, at /portForward/<namespace>/<pod>, which forwards to the pod.
 *
 * - A SPDY/3.1 upgrade (kubectl before 1.31, which POSTs it) is replayed to
 *   the kubelet and, once it answers 101, joined byte for byte.
 * - A WebSocket upgrade offering `SPDY/3.1+portforward.k8s.io` (kubectl 1.31+;
 *   1.30 with KUBECTL_PORT_FORWARD_WEBSOCKETS=true) is tunneled as upstream's
 *   streamtunnel.go does: the apiserver upgrades to SPDY/3.1 at the kubelet
 *   (a POST), then completes the WebSocket handshake with the protocol the
 *   kubelet chose, and carries the SPDY bytes inside binary messages.
 * - Any other WebSocket upgrade is replayed to the kubelet as it is (which
 *   says what it serves).
 *
 * Nothing is decoded here: the SPDY session is the kubelet's and the client's.
 */
import { badRequest, serviceUnavailable } from '@kubeling/apimachinery';
import {
  dialUpgrade,
  isSpdyUpgrade,
  isWebSocketUpgrade,
  PORT_FORWARD_PROTOCOL_V1,
  SPDY_31,
  spdyTunnelProtocols,
  spliceUpgrade,
  tunnelSpdyOverWebSocket,
  type UpgradeResult,
} from '@kubeling/client/remotecommand';
import type { Store } from '../registry/store.js';
import type { HandlerContext } from './context.js';
import { kubeletError, kubeletURL, requireCreateForGet, upgrades } from './kubelet-proxy.js';
import type { Query } from './request-info.js';

/** The `ports` asked for, checked as PodPortForwardOptions' conversion would. */
function portsOf(q: Query): string[] {
  const raw = q.ports;
  const ports = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]).flatMap((p) => p.split(',')).filter(Boolean);
  for (const p of ports) {
    if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535) throw badRequest(`invalid port ${JSON.stringify(p)}: must be between 1 and 65535`);
  }
  return ports;
}

export async function podPortForward(c: HandlerContext, store: Store, ns: string | undefined) {
  await requireCreateForGet(c, ns, 'portforward');
  const pod = await store.get(ns, c.info.name);
  const ports = portsOf(c.req.query as Query);
  const up = upgrades.get(c.req.raw);
  if (!up || !(isWebSocketUpgrade(c.req.headers) || isSpdyUpgrade(c.req.headers))) throw badRequest('Upgrade request required');
  const params = new URLSearchParams();
  for (const p of ports) params.append('port', p);
  const url = await kubeletURL(c, pod, `/portForward/${encodeURIComponent(ns ?? '')}/${encodeURIComponent(c.info.name)}${ports.length ? `?${params}` : ''}`);
  const kc = c.opts.kubeletClient;
  const creds = kc ? { cert: kc.cert, key: kc.key, ...(kc.ca ? { ca: kc.ca } : {}) } : {};
  const nodeName = (pod.spec as { nodeName?: string }).nodeName;
  const unreachable = (e: Error): never => {
    throw serviceUnavailable(`the kubelet of node "${nodeName}" could not be reached: ${e.message}`);
  };
  const tunneled = isWebSocketUpgrade(c.req.headers) ? spdyTunnelProtocols(c.req.headers) : [];
  let res: UpgradeResult;
  if (tunneled.length) {
    // The kubelet is asked for SPDY with the protocols the client tunnels (streamtunnel.go createSPDYRequest).
    const headers = {
      connection: 'Upgrade',
      upgrade: SPDY_31,
      'x-stream-protocol-version': tunneled,
      ...(c.req.headers['user-agent'] ? { 'user-agent': c.req.headers['user-agent'] } : {}),
    };
    res = await dialUpgrade(headers, { url, method: 'POST', ...creds }).catch(unreachable);
  } else {
    res = await dialUpgrade(c.req.headers, { url, method: isSpdyUpgrade(c.req.headers) ? 'POST' : 'GET', ...creds }).catch(unreachable);
  }
  if (!res.upgraded) throw await kubeletError(res.res);
  c.reply.hijack();
  c.reply.raw.detachSocket(up.socket as never);
  c.opts.upgraded?.(c.req);
  if (!tunneled.length) return spliceUpgrade(up.socket, up.head, res);
  const chosen =
    String(res.res.headers['x-stream-protocol-version'] ?? '').trim() ||
    (tunneled.includes(PORT_FORWARD_PROTOCOL_V1) ? PORT_FORWARD_PROTOCOL_V1 : tunneled[0]!);
  tunnelSpdyOverWebSocket(c.req.raw, up.socket, up.head, chosen, { socket: res.socket, head: res.head });
}
