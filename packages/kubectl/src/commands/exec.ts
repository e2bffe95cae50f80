/**
 * The streaming commands, over a WebSocket to pods/exec or pods/attach
 * (v5.channel.k8s.io, v4 as a fallback): stdout and stderr come back on their
 * channels, stdin goes up with -i (and is closed at its end on v5).
 *
 * - `exec (POD | TYPE/NAME) [-c CONTAINER] [-i] [-t] -- COMMAND [args...]`:
 *   the command's exit code becomes ours, as with kubectl.
 * - `attach (POD | TYPE/NAME) [-c CONTAINER] [-i] [-t]`: the container's own
 *   stdio from now on; leaving detaches.
 * - `run -i [--rm]` attaches to the pod it made (see attachRun).
 */
import { StringDecoder } from 'node:string_decoder';
import type { corev1 } from '@kubeling/api';
import type { Status } from '@kubeling/apimachinery';
import {
  CHANNEL_CLOSE,
  CHANNEL_ERROR,
  CHANNEL_STDERR,
  CHANNEL_STDIN,
  CHANNEL_STDOUT,
  STREAM_PROTOCOL_V5,
  STREAM_PROTOCOLS,
  exitCodeOf,
} from '@kubeling/client';
import type { Ctx } from '../ctx.js';
import { pathSegment } from '../discovery.js';
import { UsageError } from '../flags.js';
import { asNumber, asObject, nested } from '../json.js';
import { defaultContainer, podOf } from './misc.js';

/** The Status a stream session ends with on its error channel (or one made up from what came instead). */
type StreamStatus = Partial<Status>;

/** Thrown for a command that ended with a non-zero code: kubectl says so and exits with it. */
export class ExitCodeError extends Error {
  constructor(readonly code: number) {
    super(`command terminated with exit code ${code}`);
  }
}

/** What one stream session ended with: the final Status from the error channel, if any. */
async function streamSession(ctx: Ctx, path: string, q: URLSearchParams, stdin: boolean): Promise<StreamStatus | undefined> {
  const out = new StringDecoder('utf8');
  const err = new StringDecoder('utf8');
  let status: StreamStatus | undefined;
  const onMessage = (data: Buffer) => {
    if (!data.length) return;
    const body = data.subarray(1);
    if (data[0] === CHANNEL_STDOUT) ctx.io.out(out.write(body));
    else if (data[0] === CHANNEL_STDERR) ctx.io.err(err.write(body));
    else if (data[0] === CHANNEL_ERROR) {
      try {
        status = JSON.parse(body.toString()) as StreamStatus;
      } catch {
        status = { status: 'Failure', message: body.toString() };
      }
    }
  };
  const ws = await ctx.client.websocket(path, q, STREAM_PROTOCOLS, onMessage);
  const v5 = ws.protocol === STREAM_PROTOCOL_V5;
  const done = new Promise<void>((resolve, reject) => {
    if (ws.readyState === ws.CLOSED) return resolve();
    ws.on('close', () => resolve());
    ws.on('error', reject);
  });
  const stdinStream = (ctx.io.stdinStream ?? process.stdin) as NodeJS.ReadStream;
  let restoreTty: (() => void) | undefined;
  const onData = (b: Buffer | string) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([CHANNEL_STDIN]), Buffer.from(b)]));
  };
  const onEnd = () => {
    if (v5 && ws.readyState === ws.OPEN) ws.send(Buffer.from([CHANNEL_CLOSE, CHANNEL_STDIN]));
  };
  if (stdin) {
    if (q.get('tty') === 'true' && typeof stdinStream.setRawMode === 'function') {
      stdinStream.setRawMode(true);
      restoreTty = () => stdinStream.setRawMode(false);
    }
    stdinStream.on('data', onData);
    stdinStream.once('end', onEnd);
  }
  const abort = () => ws.close(1000);
  ctx.io.signal?.addEventListener('abort', abort, { once: true });
  try {
    await done;
  } finally {
    ctx.io.signal?.removeEventListener('abort', abort);
    if (stdin) {
      stdinStream.off('data', onData);
      stdinStream.off('end', onEnd);
      stdinStream.pause?.();
    }
    restoreTty?.();
    ctx.io.out(out.end());
    ctx.io.err(err.end());
  }
  return status;
}

/** The query every stream sends: container, which streams, and a tty only when stdin is one. */
function streamQuery(ctx: Ctx, container: string, stdin: boolean): URLSearchParams {
  let tty = ctx.g.tty;
  if (tty && !((ctx.io.stdinStream ?? process.stdin) as { isTTY?: boolean }).isTTY) {
    ctx.io.err('Unable to use a TTY - input is not a terminal or the right kind of file\n');
    tty = false;
  }
  const q = new URLSearchParams();
  q.set('container', container);
  if (stdin) q.set('stdin', 'true');
  q.set('stdout', 'true');
  if (!tty) q.set('stderr', 'true');
  if (tty) q.set('tty', 'true');
  return q;
}

/** A failed final Status as kubectl reports it. */
function failed(status: StreamStatus | undefined): number {
  if (!status) return 0;
  const code = exitCodeOf(status);
  if (code === 0) return 0;
  if (code !== undefined) throw new ExitCodeError(code);
  throw new UsageError(`error: ${status.message ?? 'error stream protocol error: unknown error'}`);
}

export async function exec(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const [target, ...extra] = args;
  if (!target) throw new UsageError('error: pod, type/name or --filename must be specified');
  if (extra.length)
    throw new UsageError(`exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\nSee 'kubectl exec -h' for help and examples`);
  const command = ctx.dashArgs;
  if (!command.length) throw new UsageError('error: you must specify at least one command for the container');
  const ns = pathSegment(ctx.ns, 'namespace');
  const name = await podOf(ctx, target, 'exec into');
  const pod = await ctx.client.get<corev1.Pod>(`/api/v1/namespaces/${ns}/pods/${name}`);
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw new UsageError(`error: cannot exec into a container in a completed pod; current phase is ${phase}`);
  const q = streamQuery(ctx, g.container ?? defaultContainer(ctx, pod), g.stdin);
  for (const c of command) q.append('command', c);
  return failed(await streamSession(ctx, `/api/v1/namespaces/${ns}/pods/${name}/exec`, q, g.stdin));
}

export async function attach(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const [target] = args;
  if (!target) throw new UsageError("error: expected POD, TYPE/NAME, or TYPE NAME, (1) arguments\nSee 'kubectl attach -h' for help and examples");
  const ns = pathSegment(ctx.ns, 'namespace');
  const name = await podOf(ctx, target, 'attach to');
  const pod = await ctx.client.get<corev1.Pod>(`/api/v1/namespaces/${ns}/pods/${name}`);
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw new UsageError(`error: cannot attach a container in a completed pod; current phase is ${phase}`);
  const q = streamQuery(ctx, g.container ?? defaultContainer(ctx, pod), g.stdin);
  if (!g.quiet) ctx.io.err("If you don't see a command prompt, try pressing enter.\n");
  return failed(await streamSession(ctx, `/api/v1/namespaces/${ns}/pods/${name}/attach`, q, g.stdin));
}

const finished = (p: corev1.Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/**
 * `run -i`: waits for the pod to run, attaches to it (or prints its logs when
 * it is already done), waits for it to end, deletes it with `--rm`, and exits
 * with its container's exit code, as kubectl.
 */
export async function attachRun(ctx: Ctx, ns: string, name: string): Promise<number> {
  const path = `/api/v1/namespaces/${ns}/pods/${name}`;
  const deadline = Date.now() + ctx.duration(ctx.g.podRunningTimeout ?? '1m', 60_000);
  let pod = await ctx.client.get<corev1.Pod>(path);
  while (pod.status?.phase !== 'Running' && !finished(pod)) {
    if (Date.now() > deadline) throw new UsageError('error: timed out waiting for the condition');
    if (ctx.io.signal?.aborted) return 1;
    await new Promise((r) => setTimeout(r, 200));
    pod = await ctx.client.get<corev1.Pod>(path);
  }
  if (!ctx.g.quiet) ctx.io.err("If you don't see a command prompt, try pressing enter.\n");
  if (!finished(pod)) {
    const status = await streamSession(ctx, `${path}/attach`, streamQuery(ctx, name, true), true).catch((e: unknown) => ({
      status: 'Failure',
      message: (e as Error).message,
    }));
    if (status?.status === 'Failure') {
      // The container may have ended between our look and the attach: its status follows shortly.
      for (let i = 0; i < 50 && !finished(pod); i++) {
        await new Promise((r) => setTimeout(r, 200));
        pod = await ctx.client.get<corev1.Pod>(path);
      }
      if (!finished(pod)) throw new UsageError(`error: ${status.message}`);
    }
  }
  // Done before we could attach: its output is in the logs.
  if (finished(pod)) await ctx.client.stream(`${path}/log`, {}, (b) => ctx.io.out(b.toString()), ctx.io.signal);
  while (!finished(pod) && Date.now() < deadline + 60_000 && !ctx.io.signal?.aborted) {
    await new Promise((r) => setTimeout(r, 200));
    pod = await ctx.client.get<corev1.Pod>(path);
  }
  if (ctx.g.rm) {
    await ctx.client.delete(path);
    ctx.io.out(`pod "${name}" deleted\n`);
  }
  const term = asObject(nested(pod.status?.containerStatuses?.[0], 'state', 'terminated'));
  if (pod.status?.phase === 'Failed' || (term && term.exitCode !== 0)) {
    ctx.io.err(`pod ${ns}/${name} terminated (${term?.reason ?? pod.status?.reason ?? 'Error'})${term?.message ? `\n${term.message}` : ''}\n`);
    return asNumber(term?.exitCode) || 1;
  }
  return 0;
}
