/**
 * Kubernetes' URL library (k8s.io/apiserver/pkg/cel/library/urls.go) and
 * named-format library (library/format.go).
 *
 * URLs are parsed as Go's net/url does for them: `url()` and `isURL()` accept
 * what `url.ParseRequestURI` accepts (an absolute URL or an absolute path),
 * and the accessors follow `url.URL` (Host keeps the port and IPv6 brackets,
 * Hostname and Port split them, EscapedPath re-escapes, Query decodes).
 * Errors read `URL parse error during conversion from string: parse "x":
 * invalid URI for request`.
 */
import { isQualifiedName, isValidLabelValue, nameIsDNS1035Label, nameIsDNSLabel, nameIsDNSSubdomain } from '@kubeling/apimachinery';
import { parseDate, parseDateTime } from './lib-time.js';
import { type Overload, global, member } from './registry.js';
import { K8sTypes, listOf, mapOf, optionalOf, T } from './types.js';
import { ArrayList, CelError, NativeMap, OPTIONAL_NONE, OpaqueV, OptionalV, type Val } from './values.js';

interface ParsedURL {
  scheme: string;
  opaque: string;
  host: string;
  path: string;
  rawPath: string;
  rawQuery: string;
}

const urlError = (raw: string, msg: string) => new Error(`parse ${JSON.stringify(raw)}: ${msg}`);

function pathUnescape(s: string, raw: string): string {
  if (!/%/.test(s)) return s;
  const bad = /%(?![0-9A-Fa-f]{2})(.{0,2})/.exec(s);
  if (bad) throw urlError(raw, `invalid URL escape ${JSON.stringify(`%${bad[1]}`)}`);
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
}

/** Go's url.ParseRequestURI (viaRequest) or url.Parse. */
export function parseGoURL(raw: string, viaRequest: boolean): ParsedURL {
  let rest = raw;
  if ([...rest].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) throw urlError(raw, 'net/url: invalid control character in URL');
  if (!viaRequest) rest = rest.split('#')[0]!;
  if (rest === '' && viaRequest) throw urlError(raw, 'empty url');
  const u: ParsedURL = { scheme: '', opaque: '', host: '', path: '', rawPath: '', rawQuery: '' };
  if (rest === '*') return { ...u, path: '*' };
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (sm) {
    u.scheme = sm[1]!.toLowerCase();
    rest = rest.slice(sm[0].length);
  } else if (rest.startsWith(':')) throw urlError(raw, 'missing protocol scheme');
  const q = rest.indexOf('?');
  if (q >= 0) {
    u.rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    if (u.scheme) return { ...u, opaque: rest };
    if (viaRequest) throw urlError(raw, 'invalid URI for request');
    const colon = rest.indexOf(':');
    const slash = rest.indexOf('/');
    if (colon >= 0 && (slash < 0 || colon < slash)) throw urlError(raw, 'first path segment in URL cannot contain colon');
  }
  if ((u.scheme || !viaRequest) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const i = authority.indexOf('/');
    if (i >= 0) {
      rest = authority.slice(i);
      authority = authority.slice(0, i);
    }
    const at = authority.lastIndexOf('@');
    const host = at >= 0 ? authority.slice(at + 1) : authority;
    u.host = parseHost(host, raw);
  }
  u.rawPath = rest;
  u.path = pathUnescape(rest, raw);
  return u;
}

function parseHost(host: string, raw: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw urlError(raw, "missing ']' in host");
    const port = host.slice(i + 1);
    if (port !== '' && !/^:\d*$/.test(port)) throw urlError(raw, `invalid port ${JSON.stringify(port)} after host`);
    return host;
  }
  const c = host.lastIndexOf(':');
  if (c >= 0 && !/^:\d*$/.test(host.slice(c))) throw urlError(raw, `invalid port ${JSON.stringify(host.slice(c))} after host`);
  const bad = /[^A-Za-z0-9\-._~!$&'()*+,;=:%]/.exec(host);
  if (bad) throw urlError(raw, `invalid character ${JSON.stringify(bad[0])} in host name`);
  return pathUnescape(host, raw);
}

const hostname = (h: string) => {
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  const c = h.lastIndexOf(':');
  return c >= 0 ? h.slice(0, c) : h;
};
const port = (h: string) => {
  const i = h.startsWith('[') ? h.indexOf(']') + 1 : 0;
  const c = h.indexOf(':', i);
  return c >= 0 && /^\d*$/.test(h.slice(c + 1)) ? h.slice(c + 1) : '';
};

/** Go's URL.EscapedPath: the path as written when it is valid, else re-escaped. */
function escapedPath(u: ParsedURL): string {
  if (u.rawPath && /^([A-Za-z0-9\-._~!$&'()*+,;=:@/[\]]|%[0-9A-Fa-f]{2})*$/.test(u.rawPath)) return u.rawPath;
  return u.path.replace(/[^A-Za-z0-9\-._~$&+,/:;=@]/gu, (c) =>
    [...new TextEncoder().encode(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/** Go's url.ParseQuery (pairs with an invalid escape or a semicolon are dropped). */
function parseQuery(q: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of q.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    const [k, v] = eq >= 0 ? [part.slice(0, eq), part.slice(eq + 1)] : [part, ''];
    try {
      const key = decodeURIComponent(k.replaceAll('+', ' '));
      const val = decodeURIComponent(v.replaceAll('+', ' '));
      out.set(key, [...(out.get(key) ?? []), val]);
    } catch {
      // dropped, as Go drops a pair it cannot unescape
    }
  }
  return out;
}

export class URLV extends OpaqueV {
  readonly typeName = 'kubernetes.URL';
  constructor(
    readonly raw: string,
    readonly u: ParsedURL,
  ) {
    super();
  }
  equals(o: OpaqueV): boolean {
    return o instanceof URLV && o.raw === this.raw;
  }
}

function stringToURL(s: string): URLV {
  try {
    parseGoURL(s, true);
    return new URLV(s, parseGoURL(s, false));
  } catch (e) {
    throw new CelError(`URL parse error during conversion from string: ${(e as Error).message}`);
  }
}

const isURL = (s: string) => {
  try {
    parseGoURL(s, true);
    return true;
  } catch {
    return false;
  }
};

const uv = (v: Val) => (v as URLV).u;

export const urls: Overload[] = [
  global('url', 'string_to_url', [T.string], K8sTypes.url, (a) => stringToURL(a[0] as string)),
  member('getScheme', 'url_get_scheme', [K8sTypes.url], T.string, (a) => uv(a[0]!).scheme),
  member('getHost', 'url_get_host', [K8sTypes.url], T.string, (a) => uv(a[0]!).host),
  member('getHostname', 'url_get_hostname', [K8sTypes.url], T.string, (a) => hostname(uv(a[0]!).host)),
  member('getPort', 'url_get_port', [K8sTypes.url], T.string, (a) => port(uv(a[0]!).host)),
  member('getEscapedPath', 'url_get_escaped_path', [K8sTypes.url], T.string, (a) => escapedPath(uv(a[0]!))),
  member('getQuery', 'url_get_query', [K8sTypes.url], mapOf(T.string, listOf(T.string)), (a) => {
    const q = parseQuery(uv(a[0]!).rawQuery);
    return new NativeMap([...q].map(([k, v]) => [k, new ArrayList(v)] as [Val, Val]));
  }),
  global('isURL', 'is_url_string', [T.string], T.bool, (a) => isURL(a[0] as string)),
];

/** A named format (k8s.io/apiserver/pkg/cel Format): a validation function and, for the cost model, a regex size. */
export class FormatV extends OpaqueV {
  readonly typeName = 'kubernetes.NamedFormat';
  constructor(
    readonly name: string,
    readonly validate: (s: string) => string[],
    readonly maxRegexSize: number,
  ) {
    super();
  }
  equals(o: OpaqueV): boolean {
    return o instanceof FormatV && o.name === this.name;
  }
}

const valid = (test: (s: string) => boolean, msg: string) => (s: string) => (test(s) ? [] : [msg]);
const ok = (f: (s: string) => unknown) => (s: string) => {
  try {
    f(s);
    return true;
  } catch {
    return false;
  }
};

/**
 * The formats of library/format.go. MaxRegexSize values for uri, uuid, byte,
 * date and datetime are the lengths of the govalidator/strfmt patterns
 * upstream measures (approximated here; they only scale the runtime cost of
 * `validate`).
 */
export const NAMED_FORMATS: Record<string, FormatV> = {
  dns1123Label: new FormatV('DNS1123Label', (s) => nameIsDNSLabel(s, false), 30),
  dns1123Subdomain: new FormatV('DNS1123Subdomain', (s) => nameIsDNSSubdomain(s, false), 60),
  dns1035Label: new FormatV('DNS1035Label', (s) => nameIsDNS1035Label(s, false), 30),
  qualifiedName: new FormatV('QualifiedName', isQualifiedName, 60),
  dns1123LabelPrefix: new FormatV('DNS1123LabelPrefix', (s) => nameIsDNSLabel(s, true), 30),
  dns1123SubdomainPrefix: new FormatV('DNS1123SubdomainPrefix', (s) => nameIsDNSSubdomain(s, true), 60),
  dns1035LabelPrefix: new FormatV('DNS1035LabelPrefix', (s) => nameIsDNS1035Label(s, true), 30),
  labelValue: new FormatV('LabelValue', isValidLabelValue, 40),
  uri: new FormatV(
    'URI',
    (s) => {
      try {
        parseGoURL(s, true);
        return [];
      } catch (e) {
        return [(e as Error).message];
      }
    },
    1011,
  ),
  uuid: new FormatV(
    'uuid',
    valid((s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[0-9a-f]{32}$/i.test(s), 'does not match the UUID format'),
    81,
  ),
  byte: new FormatV(
    'byte',
    valid((s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s), 'invalid base64'),
    84,
  ),
  date: new FormatV('date', valid(ok(parseDate), 'invalid date'), 130),
  datetime: new FormatV('datetime', valid(ok(parseDateTime), 'invalid datetime'), 130),
};

export const formats: Overload[] = [
  member('validate', 'format-validate', [K8sTypes.format, T.string], optionalOf(listOf(T.string)), (a) => {
    const errs = (a[0] as FormatV).validate(a[1] as string);
    return errs.length ? new OptionalV(new ArrayList(errs)) : OPTIONAL_NONE;
  }),
  global('format.named', 'format-named', [T.string], optionalOf(K8sTypes.format), (a) => {
    const f = Object.hasOwn(NAMED_FORMATS, a[0] as string) ? NAMED_FORMATS[a[0] as string] : undefined;
    return f ? new OptionalV(f) : OPTIONAL_NONE;
  }),
  ...Object.entries(NAMED_FORMATS).map(([name, f]) => global(`format.${name}`, `format.${name}`, [], K8sTypes.format, () => f)),
];
