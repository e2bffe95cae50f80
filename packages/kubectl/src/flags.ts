/**
 * kubectl's flags: one table of names, their short forms and kinds. Value
 * flags take `--flag=v` or `--flag v`; boolean flags take `--flag` or
 * `--flag=true|false`; list flags repeat. A few short forms mean different
 * things per command, as in kubectl: `-f` follows in `logs` and names a file
 * elsewhere, `-p` is `--previous` in `logs` and `--patch` in `patch`.
 */

export class UsageError extends Error {}

export interface Flags {
  // connection and kubeconfig
  kubeconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  token?: string;
  server?: string;
  namespace?: string;
  as?: string;
  asGroup: string[];
  cacheDir?: string;
  insecureSkipTlsVerify: boolean;
  requestTimeout?: string;
  // selection
  allNamespaces: boolean;
  selector?: string;
  fieldSelector?: string;
  filenames: string[];
  recursive: boolean;
  all: boolean;
  ignoreNotFound: boolean;
  // output
  output?: string;
  template?: string;
  showLabels: boolean;
  showKind: boolean;
  noHeaders: boolean;
  showManagedFields: boolean;
  watch?: boolean;
  watchOnly: boolean;
  sortBy?: string;
  labelColumns: string[];
  // writes
  dryRun?: string;
  validate?: string;
  fieldManager?: string;
  serverSide: boolean;
  forceConflicts: boolean;
  overwrite: boolean;
  cascade?: string;
  gracePeriod?: string;
  now: boolean;
  force: boolean;
  wait?: boolean;
  timeout?: string;
  // generators and friends
  replicas?: string;
  image?: string;
  restart?: string;
  port?: string;
  targetPort?: string;
  protocol?: string;
  type?: string;
  name?: string;
  schedule?: string;
  generator?: string;
  from?: string;
  tcp: string[];
  externalName?: string;
  env: string[];
  labels?: string;
  fromLiteral: string[];
  command: boolean;
  // logs
  tail?: string;
  container?: string;
  stdin: boolean;
  tty: boolean;
  rm: boolean;
  podRunningTimeout?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  since?: string;
  allContainers: boolean;
  // patch, wait, rollout, explain, auth, config, api-resources
  patch?: string;
  for?: string;
  toRevision?: string;
  revision?: string;
  current: boolean;
  minify: boolean;
  raw: boolean;
  list: boolean;
  quiet: boolean;
  apiGroup?: string;
  namespaced?: boolean;
  verbs: string[];
  subresource?: string;
  help: boolean;
  verbosity?: string;
  // top, autoscale
  containers: boolean;
  sum: boolean;
  showCapacity: boolean;
  useProtocolBuffers?: boolean;
  min?: string;
  max?: string;
  cpuPercent?: string;
}

type Kind = 'string' | 'list' | 'bool';
interface Def {
  key: keyof Flags;
  kind: Kind;
}

const table: [names: string[], key: keyof Flags, kind: Kind][] = [
  [['--kubeconfig'], 'kubeconfig', 'string'],
  [['--context'], 'context', 'string'],
  [['--cluster'], 'cluster', 'string'],
  [['--user'], 'user', 'string'],
  [['--token'], 'token', 'string'],
  [['--server', '-s'], 'server', 'string'],
  [['--namespace', '-n'], 'namespace', 'string'],
  [['--as'], 'as', 'string'],
  [['--as-group'], 'asGroup', 'list'],
  [['--cache-dir'], 'cacheDir', 'string'],
  [['--insecure-skip-tls-verify'], 'insecureSkipTlsVerify', 'bool'],
  [['--request-timeout'], 'requestTimeout', 'string'],
  [['--all-namespaces', '-A'], 'allNamespaces', 'bool'],
  [['--selector', '-l'], 'selector', 'string'],
  [['--field-selector'], 'fieldSelector', 'string'],
  [['--filename', '-f'], 'filenames', 'list'],
  [['--recursive', '-R'], 'recursive', 'bool'],
  [['--all'], 'all', 'bool'],
  [['--ignore-not-found'], 'ignoreNotFound', 'bool'],
  [['--output', '-o'], 'output', 'string'],
  [['--template'], 'template', 'string'],
  [['--show-labels'], 'showLabels', 'bool'],
  [['--show-kind'], 'showKind', 'bool'],
  [['--no-headers'], 'noHeaders', 'bool'],
  [['--show-managed-fields'], 'showManagedFields', 'bool'],
  [['--watch', '-w'], 'watch', 'bool'],
  [['--watch-only'], 'watchOnly', 'bool'],
  [['--sort-by'], 'sortBy', 'string'],
  [['--label-columns', '-L'], 'labelColumns', 'list'],
  [['--dry-run'], 'dryRun', 'string'],
  [['--validate'], 'validate', 'string'],
  [['--field-manager'], 'fieldManager', 'string'],
  [['--server-side'], 'serverSide', 'bool'],
  [['--force-conflicts'], 'forceConflicts', 'bool'],
  [['--overwrite'], 'overwrite', 'bool'],
  [['--cascade'], 'cascade', 'string'],
  [['--grace-period'], 'gracePeriod', 'string'],
  [['--now'], 'now', 'bool'],
  [['--force'], 'force', 'bool'],
  [['--wait'], 'wait', 'bool'],
  [['--timeout'], 'timeout', 'string'],
  [['--replicas', '-r'], 'replicas', 'string'],
  [['--image'], 'image', 'string'],
  [['--restart'], 'restart', 'string'],
  [['--port'], 'port', 'string'],
  [['--target-port'], 'targetPort', 'string'],
  [['--protocol'], 'protocol', 'string'],
  [['--type'], 'type', 'string'],
  [['--name'], 'name', 'string'],
  [['--schedule'], 'schedule', 'string'],
  [['--generator'], 'generator', 'string'],
  [['--from'], 'from', 'string'],
  [['--tcp'], 'tcp', 'list'],
  [['--external-name'], 'externalName', 'string'],
  [['--env'], 'env', 'list'],
  [['--labels'], 'labels', 'string'],
  [['--from-literal'], 'fromLiteral', 'list'],
  [['--command'], 'command', 'bool'],
  [['--tail'], 'tail', 'string'],
  [['--container', '-c'], 'container', 'string'],
  [['--follow'], 'follow', 'bool'],
  [['--previous'], 'previous', 'bool'],
  [['--timestamps'], 'timestamps', 'bool'],
  [['--since'], 'since', 'string'],
  [['--all-containers'], 'allContainers', 'bool'],
  [['--stdin', '-i'], 'stdin', 'bool'],
  [['--tty', '-t'], 'tty', 'bool'],
  [['--rm'], 'rm', 'bool'],
  [['--pod-running-timeout'], 'podRunningTimeout', 'string'],
  [['--patch'], 'patch', 'string'],
  [['--for'], 'for', 'string'],
  [['--to-revision'], 'toRevision', 'string'],
  [['--revision'], 'revision', 'string'],
  [['--current'], 'current', 'bool'],
  [['--minify'], 'minify', 'bool'],
  [['--raw'], 'raw', 'bool'],
  [['--list'], 'list', 'bool'],
  [['--quiet', '-q'], 'quiet', 'bool'],
  [['--api-group'], 'apiGroup', 'string'],
  [['--namespaced'], 'namespaced', 'bool'],
  [['--verbs'], 'verbs', 'list'],
  [['--subresource'], 'subresource', 'string'],
  [['--help', '-h'], 'help', 'bool'],
  [['--containers'], 'containers', 'bool'],
  [['--sum'], 'sum', 'bool'],
  [['--show-capacity'], 'showCapacity', 'bool'],
  // The metrics API is read as JSON whatever this says; the output is the same.
  [['--use-protocol-buffers'], 'useProtocolBuffers', 'bool'],
  [['--min'], 'min', 'string'],
  [['--max'], 'max', 'string'],
  [['--cpu-percent'], 'cpuPercent', 'string'],
  // Log verbosity: accepted for habit's sake; this kubectl logs nothing at any level.
  [['--v', '-v'], 'verbosity', 'string'],
];

const defs = new Map<string, Def>();
for (const [names, key, kind] of table) for (const n of names) defs.set(n, { key, kind });

/** Flags whose value may be left off: `--dry-run` alone means `--dry-run=client`. */
const OPTIONAL_VALUE: Partial<Record<keyof Flags, string>> = { dryRun: 'client', validate: 'strict' };

export function emptyFlags(): Flags {
  return {
    asGroup: [],
    insecureSkipTlsVerify: false,
    stdin: false,
    tty: false,
    rm: false,
    allNamespaces: false,
    filenames: [],
    recursive: false,
    all: false,
    ignoreNotFound: false,
    showLabels: false,
    showKind: false,
    noHeaders: false,
    showManagedFields: false,
    watchOnly: false,
    labelColumns: [],
    serverSide: false,
    forceConflicts: false,
    overwrite: false,
    now: false,
    force: false,
    tcp: [],
    env: [],
    fromLiteral: [],
    command: false,
    follow: false,
    previous: false,
    timestamps: false,
    allContainers: false,
    current: false,
    minify: false,
    raw: false,
    list: false,
    quiet: false,
    verbs: [],
    help: false,
    containers: false,
    sum: false,
    showCapacity: false,
  };
}

function parseBool(flag: string, v: string): boolean {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new UsageError(`invalid argument "${v}" for "${flag}" flag: strconv.ParseBool: parsing "${v}": invalid syntax`);
}

/** Splits argv into flags and positional arguments; everything after `--` is positional. */
export function parseArgs(argv: string[]): { g: Flags; args: string[]; dashArgs: string[] } {
  argv = [...argv];
  const g = emptyFlags();
  const rec = g as unknown as Record<string, unknown>;
  const args: string[] = [];
  let dashArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      dashArgs = argv.slice(i + 1);
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      args.push(a);
      continue;
    }
    let flag: string;
    let inline: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      flag = eq > 0 ? a.slice(0, eq) : a;
      inline = eq > 0 ? a.slice(eq + 1) : undefined;
    } else {
      // Short flags as pflag reads them: `-n x`, `-nx`, `-n=x`, `-ojsonpath={.a}`, and `-Aw` (booleans together).
      flag = a.slice(0, 2);
      inline = a.length > 2 ? a.slice(a[2] === '=' ? 3 : 2) : undefined;
    }
    const cmd = args[0];
    if (cmd === 'logs' && (flag === '-f' || flag === '-p')) {
      rec[flag === '-f' ? 'follow' : 'previous'] = inline === undefined ? true : parseBool(flag, inline);
      continue;
    }
    if (cmd === 'patch' && flag === '-p') flag = '--patch';
    const def = defs.get(flag);
    if (!def)
      throw new UsageError(`unknown ${flag.startsWith('--') ? 'flag' : 'shorthand flag'}: ${flag.startsWith('--') ? flag : `'${flag.slice(1)}' in ${a}`}`);
    if (def.kind === 'bool') {
      if (inline !== undefined && !flag.startsWith('--') && a[2] !== '=') {
        // `-Aw`: the rest are more boolean shorthands.
        rec[def.key] = true;
        argv.splice(i + 1, 0, `-${inline}`);
        continue;
      }
      rec[def.key] = inline === undefined ? true : parseBool(flag, inline);
      continue;
    }
    let v = inline;
    if (v === undefined) {
      const opt = OPTIONAL_VALUE[def.key];
      if (opt !== undefined) v = opt;
      else {
        v = argv[++i];
        if (v === undefined) throw new UsageError(`flag needs an argument: ${flag}`);
      }
    }
    if (def.kind === 'list') (rec[def.key] as string[]).push(v);
    else rec[def.key] = v;
  }
  return { g, args, dashArgs };
}
