/**
 * The kubelet's /portForward/<namespace>/<pod>[/<uid>] (upstream's
 * pkg/kubelet/server/server.go getPortForward and the CRI streaming server's
 * portforward/httpstream.go): a SPDY/3.1 upgrade negotiating
 * portforward.k8s.io, whose stream pairs are each joined to a port of the
 * pod's sandbox.
 *
 * Where a forwarded stream goes: the sandbox's IP as the runtime reports it
 * (CRI PodSandboxStatus). With kubeling's runtime that is the pod's address
 * inside 127.0.0.0/8, where its containers listen; with containerd it is the
 * pod's address on its network, reachable from the node — unlike upstream,
 * which connects to localhost inside the pod's network namespace, a server
 * bound only to the pod's own loopback is not reached that way.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  dialTCP,
  HEADER_STREAM_PROTOCOL,
  isSpdyUpgrade,
  offeredStreamProtocols,
  PORT_FORWARD_PROTOCOL_V1,
  servePortForward,
  SPDY_31,
  SpdyConnection,
} from '@kubeling/client/remotecommand';
import type { CriRuntime } from '@kubeling/cri';
import type { Pod } from './kinds.js';
import { sandboxesOf } from './pod-state.js';

/** An answer instead of the upgrade: code, reason, message and any extra headers. */
export interface Refusal {
  code: number;
  reason: string;
  message: string;
  headers?: Record<string, string>;
}

const refuse = (code: number, reason: string, message: string, headers?: Record<string, string>): Refusal => ({
  code,
  reason,
  message,
  ...(headers ? { headers } : {}),
});

/** The pod's ready sandbox and its IP, or why there is none (upstream's messages). */
async function sandboxOf(runtime: CriRuntime, pod: Pod): Promise<{ id: string; ip: string } | Refusal> {
  const { name, namespace, uid } = pod.metadata;
  const desc = `${name}_${namespace}(${uid})`;
  const ready = (await sandboxesOf(runtime, uid!)).find((s) => s.state === 'SANDBOX_READY');
  if (!ready) return refuse(500, 'InternalError', `failed to find sandboxID for pod ${desc}`);
  const st = await runtime.podSandboxStatus(ready.id).catch(() => undefined);
  const ip = st?.network?.ip;
  if (!ip) return refuse(500, 'InternalError', `pod sandbox ${ready.id} of pod ${desc} has no IP address`);
  return { id: ready.id, ip };
}

/**
 * Upgrades the request and serves port forwarding to `pod`, or says why not.
 * The session is handed to `track` (the server ends it when it stops).
 */
export async function servePodPortForward(
  runtime: CriRuntime,
  pod: Pod | undefined,
  uid: string | undefined,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  track: (c: SpdyConnection) => void,
): Promise<Refusal | undefined> {
  if (!pod || (uid && pod.metadata.uid !== uid)) return refuse(404, 'NotFound', 'pod does not exist');
  if (!pod.spec?.containers?.length) return refuse(400, 'BadRequest', 'pod has no containers');
  if (!isSpdyUpgrade(req.headers)) {
    return refuse(400, 'BadRequest', `unable to upgrade: only ${SPDY_31} upgrades are served for port forwarding (the apiserver tunnels WebSocket clients)`);
  }
  const offered = offeredStreamProtocols(req.headers);
  if (!offered.length) return refuse(400, 'BadRequest', 'unable to upgrade: X-Stream-Protocol-Version is required');
  if (!offered.includes(PORT_FORWARD_PROTOCOL_V1)) {
    return refuse(
      403,
      'Forbidden',
      `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${PORT_FORWARD_PROTOCOL_V1}]`,
      { 'X-Accepted-Stream-Protocol-Versions': PORT_FORWARD_PROTOCOL_V1 },
    );
  }
  const sb = await sandboxOf(runtime, pod);
  if ('code' in sb) return sb;
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${SPDY_31}\r\n${HEADER_STREAM_PROTOCOL}: ${PORT_FORWARD_PROTOCOL_V1}\r\n\r\n`,
  );
  const conn = new SpdyConnection(socket, { server: true, head });
  track(conn);
  // As the CRI streaming server names it: the sandbox, with no uid.
  servePortForward(conn, { pod: sb.id, uid: '', dial: (port) => dialTCP(sb.ip, port) });
  return undefined;
}
