/**
 * A parser for the Prometheus text exposition format 0.0.4, enough for the
 * kubelet's /metrics/resource (what metrics-server reads with Prometheus'
 * textparse in pkg/scraper/client/resource/decode.go):
 *
 *   # HELP name text            (text escapes \\ and \n)
 *   # TYPE name counter|gauge|histogram|summary|untyped
 *   # any other comment
 *   name{label="value",...} value [timestamp_ms]
 *
 * Label values unescape \\, \" and \n; a trailing comma inside the braces is
 * allowed; values are Go floats (NaN, +Inf, -Inf included); the optional
 * timestamp is an integer of milliseconds. A malformed line throws a
 * PrometheusParseError naming the line; nothing is half-returned.
 */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch, when the line carries one. */
  timestampMs?: number;
}

export interface PromFamily {
  help?: string;
  type?: string;
}

export interface PromParseResult {
  samples: PromSample[];
  /** HELP and TYPE by metric family name. */
  families: Map<string, PromFamily>;
}

export class PrometheusParseError extends Error {
  constructor(
    readonly line: number,
    why: string,
  ) {
    super(`line ${line}: ${why}`);
    this.name = 'PrometheusParseError';
  }
}

const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
const LABEL_START = /[a-zA-Z_]/;
const LABEL_CHAR = /[a-zA-Z0-9_]/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Go's strconv.ParseFloat for the forms an exposition writes. */
function parseValue(s: string): number | undefined {
  switch (s) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  return Number(s);
}

const unescapeHelp = (s: string) => s.replace(/\\(\\|n)/g, (_m, c: string) => (c === 'n' ? '\n' : '\\'));

/** One sample line, read left to right. */
function parseSample(line: string, n: number): PromSample {
  let i = 0;
  const fail = (why: string): never => {
    throw new PrometheusParseError(n, why);
  };
  const skipBlank = () => {
    while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  };
  if (!NAME_START.test(line[i] ?? '')) fail('expected a metric name');
  const start = i;
  while (i < line.length && NAME_CHAR.test(line[i]!)) i++;
  const name = line.slice(start, i);
  const labels: Record<string, string> = {};
  skipBlank();
  if (line[i] === '{') {
    i++;
    for (;;) {
      skipBlank();
      if (line[i] === '}') {
        i++;
        break;
      }
      if (!LABEL_START.test(line[i] ?? '')) fail('expected a label name');
      const ls = i;
      while (i < line.length && LABEL_CHAR.test(line[i]!)) i++;
      const label = line.slice(ls, i);
      skipBlank();
      if (line[i] !== '=') fail(`expected "=" after label ${label}`);
      i++;
      skipBlank();
      if (line[i] !== '"') fail(`expected a quoted value for label ${label}`);
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) fail(`unterminated value for label ${label}`);
        i++;
        if (c === '"') break;
        if (c === '\\') {
          const e = line[i++];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else fail(`invalid escape in the value of label ${label}`);
        } else value += c;
      }
      if (Object.hasOwn(labels, label)) fail(`duplicate label ${label}`);
      labels[label] = value;
      skipBlank();
      if (line[i] === ',') i++;
      else if (line[i] !== '}') fail('expected "," or "}" after a label');
    }
  }
  skipBlank();
  const rest = line
    .slice(i)
    .trim()
    .split(/[ \t]+/);
  if (!rest[0]) fail('expected a value');
  if (rest.length > 2) fail('unexpected text after the timestamp');
  const value = parseValue(rest[0]!);
  if (value === undefined) fail(`invalid value ${JSON.stringify(rest[0])}`);
  const sample: PromSample = { name, labels, value: value! };
  if (rest[1] !== undefined) {
    if (!/^-?\d+$/.test(rest[1])) fail(`invalid timestamp ${JSON.stringify(rest[1])}`);
    sample.timestampMs = Number(rest[1]);
  }
  return sample;
}

/** Parses a whole exposition. */
export function parsePrometheusText(text: string): PromParseResult {
  const samples: PromSample[] = [];
  const families = new Map<string, PromFamily>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = {}));
    return f;
  };
  const lines = text.split('\n');
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!.replace(/\r$/, '');
    const n = k + 1;
    if (!line.trim()) continue;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t]+(.*))?$/.exec(line);
      if (!m) continue; // an ordinary comment
      const [, kind, name, rest = ''] = m;
      if (kind === 'HELP') family(name!).help = unescapeHelp(rest);
      else {
        const t = rest.trim();
        if (!TYPES.has(t)) throw new PrometheusParseError(n, `invalid metric type ${JSON.stringify(t)}`);
        family(name!).type = t;
      }
      continue;
    }
    samples.push(parseSample(line.trimStart(), n));
  }
  return { samples, families };
}
