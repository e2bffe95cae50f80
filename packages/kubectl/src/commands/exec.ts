/**
 * `exec (POD | TYPE/NAME) [-c CONTAINER] [-i] [-t] -- COMMAND [args...]`: the
 * command runs in the container over a WebSocket to pods/exec
 * (v5.channel.k8s.io, v4 as a fallback), stdout and stderr come back on their
 * channels, stdin goes up with -i (and is closed at its end on v5), and the
 * command's exit code becomes ours, as with kubectl.
 */
import { StringDecoder } from 'node:string_decoder';
import { CHANNEL_CLOSE, CHANNEL_ERROR, CHANNEL_STDERR, CHANNEL_STDIN, CHANNEL_STDOUT, STREAM_PROTOCOL_V5, STREAM_PROTOCOLS, exitCodeOf } from '@kubeling/client';
import type { Ctx } from '../ctx.js';
import { pathSegment } from '../discovery.js';
import { UsageError } from '../flags.js';
import { defaultContainer, podOf } from './misc.js';

type Obj = Record<string, any>;

/** Thrown for a command that ended with a non-zero code: kubectl says so and exits with it. */
export class ExitCodeError extends Error {
  constructor(readonly code: number) {
    super(`command terminated with exit code ${code}`);
  }
}

export async function exec(ctx: Ctx, args: string[]): Promise<number> {
  const g = ctx.g;
  const [target, ...extra] = args;
  if (!target) throw new UsageError('error: pod, type/name or --filename must be specified');
  if (extra.length) throw new UsageError(`exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\nSee 'kubectl exec -h' for help and examples`);
  const command = ctx.dashArgs;
  if (!command.length) throw new UsageError('error: you must specify at least one command for the container');
  const ns = pathSegment(ctx.ns, 'namespace');
  const name = await podOf(ctx, target, 'exec into');
  const pod = await ctx.client.get<Obj>(`/api/v1/namespaces/${ns}/pods/${name}`);
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') throw new UsageError(`error: cannot exec into a container in a completed pod; current phase is ${phase}`);
  const container = g.container ?? defaultContainer(ctx, pod);
  const stdinStream = ctx.io.stdinStream ?? process.stdin;
  let tty = g.tty;
  if (tty && !(stdinStream as { isTTY?: boolean }).isTTY) {
    ctx.io.err('Unable to use a TTY - input is not a terminal or the right kind of file\n');
    tty = false;
  }
  const q = new URLSearchParams();
  for (const c of command) q.append('command', c);
  q.set('container', container);
  if (g.stdin) q.set('stdin', 'true');
  q.set('stdout', 'true');
  if (!tty) q.set('stderr', 'true');
  if (tty) q.set('tty', 'true');
  const out = new StringDecoder('utf8');
  const err = new StringDecoder('utf8');
  let status: Obj | undefined;
  const onMessage = (data: Buffer) => {
    if (!data.length) return;
    const body = data.subarray(1);
    if (data[0] === CHANNEL_STDOUT) ctx.io.out(out.write(body));
    else if (data[0] === CHANNEL_STDERR) ctx.io.err(err.write(body));
    else if (data[0] === CHANNEL_ERROR) {
      try {
        status = JSON.parse(body.toString()) as Obj;
      } catch {
        status = { status: 'Failure', message: body.toString() };
      }
    }
  };
  const ws = await ctx.client.websocket(`/api/v1/namespaces/${ns}/pods/${name}/exec`, q, STREAM_PROTOCOLS, onMessage);
  const v5 = ws.protocol === STREAM_PROTOCOL_V5;
  const done = new Promise<void>((resolve, reject) => {
    if (ws.readyState === ws.CLOSED) return resolve();
    ws.on('close', () => resolve());
    ws.on('error', reject);
  });
  let restoreTty: (() => void) | undefined;
  const onData = (b: Buffer | string) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([CHANNEL_STDIN]), Buffer.from(b)]));
  };
  const onEnd = () => {
    if (v5 && ws.readyState === ws.OPEN) ws.send(Buffer.from([CHANNEL_CLOSE, CHANNEL_STDIN]));
  };
  if (g.stdin) {
    const s = stdinStream as NodeJS.ReadStream;
    if (tty && typeof s.setRawMode === 'function') {
      s.setRawMode(true);
      restoreTty = () => s.setRawMode(false);
    }
    s.on('data', onData);
    s.once('end', onEnd);
  }
  const abort = () => ws.close(1000);
  ctx.io.signal?.addEventListener('abort', abort, { once: true });
  try {
    await done;
  } finally {
    ctx.io.signal?.removeEventListener('abort', abort);
    if (g.stdin) {
      stdinStream.off('data', onData);
      stdinStream.off('end', onEnd);
      (stdinStream as NodeJS.ReadStream).pause?.();
    }
    restoreTty?.();
    ctx.io.out(out.end());
    ctx.io.err(err.end());
  }
  if (!status) return 0;
  const code = exitCodeOf(status);
  if (code === 0) return 0;
  if (code !== undefined) throw new ExitCodeError(code);
  throw new UsageError(`error: ${status.message ?? 'error stream protocol error: unknown error'}`);
}
