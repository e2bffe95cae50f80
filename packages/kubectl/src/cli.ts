/**
 * kubeling's kubectl: the client side of the seeds' story. Flags are parsed
 * and manifests validated before any connection; the kubeconfig resolves in
 * kubectl's order; discovery is cached under --cache-dir; every command goes
 * through the shared REST client; errors print the kubectl way with exit 1.
 */
import { isStatusError } from '@kubeling/apimachinery';
import { Ctx, type IO } from './ctx.js';
import { parseArgs, UsageError } from './flags.js';
import { apply } from './commands/apply.js';
import { auth } from './commands/auth.js';
import { autoscale } from './commands/autoscale.js';
import { config } from './commands/config.js';
import { createFromFiles, createGenerator, expose, replace, run as runCmd } from './commands/create.js';
import { del } from './commands/delete.js';
import { diff } from './commands/diff.js';
import { describe } from './commands/describe.js';
import { attach, exec, ExitCodeError } from './commands/exec.js';
import { explain } from './commands/explain.js';
import { get } from './commands/get.js';
import { apiResources, apiVersions, clusterInfo, logs, version } from './commands/misc.js';
import { edit, labelOrAnnotate, patch, scale, setImage } from './commands/modify.js';
import { rollout } from './commands/rollout.js';
import { top } from './commands/top.js';
import { wait } from './commands/wait.js';
import { PathSegmentError } from './discovery.js';
import { jsonpath } from '@kubeling/apimachinery';
const { JSONPathError } = jsonpath;
import { TemplateError } from './print/gotemplate.js';

export type { IO } from './ctx.js';
export { UsageError, parseArgs } from './flags.js';
export { columns } from './print/printers.js';

type Command = (ctx: Ctx, args: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  version: (ctx) => version(ctx),
  'api-versions': (ctx) => apiVersions(ctx),
  'api-resources': (ctx) => apiResources(ctx),
  'cluster-info': clusterInfo,
  get,
  describe,
  create: (ctx, args) =>
    ctx.g.filenames.length
      ? createFromFiles(ctx)
      : args.length
        ? createGenerator(ctx, args)
        : Promise.reject(new UsageError('error: must specify one of -f and -k')),
  apply,
  diff,
  replace,
  delete: del,
  run: runCmd,
  expose,
  edit,
  patch,
  label: (ctx, args) => labelOrAnnotate(ctx, 'label', args),
  annotate: (ctx, args) => labelOrAnnotate(ctx, 'annotate', args),
  scale,
  autoscale,
  set: (ctx, [sub, ...args]) => {
    if (sub !== 'image') throw new UsageError(`error: unknown command "${sub ?? ''}" for "kubectl set"\nAvailable Commands: image`);
    return setImage(ctx, args);
  },
  rollout,
  wait,
  logs,
  exec,
  attach,
  explain,
  auth,
  config,
  top,
};

const HELP = `kubectl controls the Kubernetes cluster manager (kubeling's kubectl).

Basic Commands:
  create, expose, run, set image, explain, get, edit, delete, replace
Deploy Commands:
  rollout status|history|undo|restart|pause|resume, scale, autoscale
Cluster Management Commands:
  cluster-info, top node|pod
Troubleshooting and Debugging Commands:
  describe, logs, exec, attach, auth can-i, auth whoami
Advanced Commands:
  apply, diff, patch, replace, wait
Settings Commands:
  label, annotate
Other Commands:
  api-resources, api-versions, config view|get-contexts|current-context|use-context|set-context, version

Usage:
  kubectl [flags] [options]
`;

/** How an error reaches the user: `Error from server (Reason): message`, or kubectl's `error: ...`. */
function report(io: IO, e: unknown): number {
  if (isStatusError(e)) {
    io.err(`Error from server${e.status.reason ? ` (${e.status.reason})` : ''}: ${e.status.message}\n`);
    return 1;
  }
  const msg = (e as Error).message ?? String(e);
  if (e instanceof ExitCodeError) {
    io.err(`${msg}\n`);
    return e.code;
  }
  if (e instanceof UsageError || e instanceof PathSegmentError) {
    io.err(`${/^(error|Error|You must|Warning)/.test(msg) ? '' : 'error: '}${msg}\n`);
    return 1;
  }
  if (e instanceof JSONPathError || e instanceof TemplateError) {
    io.err(`error: error executing template: ${msg}\n`);
    return 1;
  }
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT') {
    io.err(
      `The connection to the server ${(e as { address?: string; port?: number }).address ?? ''}${(e as { port?: number }).port ? `:${(e as { port?: number }).port}` : ''} was refused - did you specify the right host or port?\n`,
    );
    return 1;
  }
  io.err(`error: ${msg}\n`);
  return 1;
}

export async function run(argv: string[], io: IO): Promise<number> {
  let ctx: Ctx | undefined;
  try {
    const { g, args, dashArgs } = parseArgs(argv);
    const [cmd, ...rest] = args;
    if (!cmd || cmd === 'help' || (g.help && !cmd)) {
      io.out(HELP);
      return 0;
    }
    const command = COMMANDS[cmd];
    if (!command) throw new UsageError(`error: unknown command "${cmd}" for "kubectl"`);
    if (g.help) {
      io.out(`${HELP}\nSee the kubectl reference for "${cmd}".\n`);
      return 0;
    }
    ctx = new Ctx(g, io, dashArgs);
    return await command(ctx, rest);
  } catch (e) {
    return report(io, e);
  } finally {
    ctx?.close();
  }
}
