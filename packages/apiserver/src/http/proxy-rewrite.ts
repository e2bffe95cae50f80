/**
 * The pure parts of the proxy subresources (pods, services and nodes /proxy):
 *
 * - which request and response headers cross the hop (hop-by-hop ones and the
 *   caller's credentials never do; the backend's CORS headers are dropped, as
 *   upstream's corsRemovingTransport does);
 * - URLs in Location headers and in HTML rewritten to go through the proxy
 *   path again (k8s.io/apimachinery/pkg/util/proxy/transport.go rewriteURL
 *   and rewriteHTML, with its table of tag attributes that hold URLs).
 *
 * The HTML rewriting reads tags with a small scanner instead of a full HTML
 * parser: comments, declarations and the text of raw-text elements (script,
 * style, ...) are passed over; only the URL attributes that change are
 * rewritten, the rest of the document is left byte for byte.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { posix } from 'node:path';

/** Headers that describe one connection, never forwarded (RFC 7230 6.1, as Go's ReverseProxy lists them). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The caller's credentials (the filters consumed them): never handed to a pod. */
const CREDENTIALS = /^(authorization|impersonate-.*|x-remote-.*)$/;

const CORS = new Set(['access-control-allow-credentials', 'access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-origin']);

/** Header names listed in Connection, also hop-by-hop. */
function connectionTokens(v: string | string[] | undefined): Set<string> {
  return new Set(
    (Array.isArray(v) ? v.join(',') : (v ?? ''))
      .split(',')
      .map((x) => x.trim().toLowerCase())
      .filter(Boolean),
  );
}

/**
 * The headers sent to the backend: the client's end-to-end headers (its Host
 * too, as upstream keeps req.Host), X-Forwarded-For with the client's address
 * appended; an upgrade keeps Connection and Upgrade.
 */
export function backendRequestHeaders(h: IncomingHttpHeaders, clientIP: string, upgrade: boolean): OutgoingHttpHeaders {
  const listed = connectionTokens(h.connection);
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || HOP_BY_HOP.has(k) || listed.has(k) || CREDENTIALS.test(k)) continue;
    out[k] = v;
  }
  if (upgrade) {
    out.connection = 'Upgrade';
    if (h.upgrade) out.upgrade = h.upgrade;
  }
  const prior = h['x-forwarded-for'];
  out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${clientIP}` : clientIP;
  return out;
}

/** The backend's response headers the client gets, in order (raw name/value pairs). */
export function clientResponseHeaders(raw: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  const listed = connectionTokens(pairs.filter(([k]) => k.toLowerCase() === 'connection').map(([, v]) => v));
  return pairs.filter(([k]) => {
    const l = k.toLowerCase();
    return !HOP_BY_HOP.has(l) && !listed.has(l) && !CORS.has(l);
  });
}

/** What a URL rewrite knows: the proxy path prefix, and the two hosts that count as "the same host". */
export interface RewriteContext {
  /** The request path before the proxied path, e.g. /api/v1/namespaces/x/services/y:80/proxy. */
  pathPrepend: string;
  /** host:port of the backend the request went to. */
  backendHost: string;
  /** The Host header the client sent. */
  requestHost: string;
}

interface ParsedURL {
  scheme: string;
  /** undefined: no authority at all. */
  host: string | undefined;
  path: string;
  /** ?query#fragment, as written. */
  rest: string;
}

/** Go's url.Parse, for what rewriting looks at; undefined where Go would fail. */
function parseURL(s: string): ParsedURL | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters make Go's url.Parse fail too
  if (/[\u0000-\u001f\u007f]/.test(s)) return undefined;
  let rest = s;
  let scheme = '';
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest);
  if (m) {
    scheme = m[1]!;
    rest = rest.slice(m[0].length);
  }
  const split = (x: string) => {
    const i = x.search(/[?#]/);
    return i < 0 ? [x, ''] : [x.slice(0, i), x.slice(i)];
  };
  let host: string | undefined;
  if (rest.startsWith('//')) {
    const [hp, after] = split(rest.slice(2));
    const slash = hp!.indexOf('/');
    const authority = slash < 0 ? hp! : hp!.slice(0, slash);
    host = authority.slice(authority.lastIndexOf('@') + 1);
    rest = (slash < 0 ? '' : hp!.slice(slash)) + after;
  } else if (scheme && !rest.startsWith('/')) {
    // An opaque URL (mailto:, javascript:): no path to rewrite.
    return { scheme, host: undefined, path: '', rest };
  }
  const [path, tail] = split(rest);
  if (/%(?![0-9a-fA-F]{2})/.test(path!)) return undefined;
  return { scheme, host, path: path!, rest: tail! };
}

/** Go's path.Join: cleaned, no trailing slash (but "/"). */
function joinPath(a: string, b: string): string {
  const p = posix.normalize(`${a}/${b}`);
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

/**
 * A URL the backend sent, made to go through the proxy (transport.go
 * rewriteURL): URLs of other hosts and relative paths stay as they are; a
 * same-host absolute path gets the proxy prefix, and loses its scheme and host
 * unless the host is the one the client asked (the apiserver's own requests
 * carry no scheme or host to put back).
 */
export function rewriteURL(target: string, ctx: RewriteContext): string {
  const u = parseURL(target);
  if (!u) return target;
  const differentHost = !!u.host && u.host !== ctx.backendHost && u.host !== ctx.requestHost;
  if (differentHost || !u.path.startsWith('/')) return target;
  let scheme = u.scheme;
  let host = u.host;
  if (u.host !== ctx.requestHost) {
    scheme = '';
    host = undefined;
  }
  let path = u.path;
  if (!path.startsWith(ctx.pathPrepend)) {
    path = joinPath(ctx.pathPrepend, u.path);
    if (u.path.endsWith('/') && !path.endsWith('/')) path += '/';
  }
  return `${scheme ? `${scheme}:` : ''}${host !== undefined ? `//${host}` : ''}${path}${u.rest}`;
}

/** The attributes that hold URLs, by tag (transport.go atomsToAttrs). */
const URL_ATTRS: Record<string, readonly string[]> = {
  a: ['href'],
  applet: ['codebase'],
  area: ['href'],
  audio: ['src'],
  base: ['href'],
  blockquote: ['cite'],
  body: ['background'],
  button: ['formaction'],
  command: ['icon'],
  del: ['cite'],
  embed: ['src'],
  form: ['action'],
  frame: ['longdesc', 'src'],
  head: ['profile'],
  html: ['manifest'],
  iframe: ['longdesc', 'src'],
  img: ['longdesc', 'src', 'usemap'],
  input: ['src', 'usemap', 'formaction'],
  ins: ['cite'],
  link: ['href'],
  object: ['classid', 'codebase', 'data', 'usemap'],
  q: ['cite'],
  script: ['src'],
  source: ['src'],
  video: ['poster', 'src'],
};

/** Elements whose content is text up to their end tag, where tags are not looked for. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const unescapeHTML = (s: string) =>
  s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (all, e: string) => {
    if (e[0] === '#') {
      const n = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
      return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : all;
    }
    return ENTITIES[e.toLowerCase()] ?? all;
  });

const escapeHTML = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&#34;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

/** Rewrites the URL attributes of one start tag's attribute text. */
function rewriteAttributes(tag: string, attrs: string, rewrite: (u: string) => string): string {
  const wanted = URL_ATTRS[tag];
  if (!wanted) return attrs;
  return attrs.replace(ATTR, (all, name: string, dq?: string, sq?: string, bare?: string) => {
    const raw = dq ?? sq ?? bare;
    if (raw === undefined || !wanted.includes(name.toLowerCase())) return all;
    const value = unescapeHTML(raw);
    const next = rewrite(value);
    return next === value ? all : `${name}="${escapeHTML(next)}"`;
  });
}

/** An HTML document with the URLs in its tags' URL attributes passed through `rewrite`. */
export function rewriteHTML(html: string, rewrite: (u: string) => string): string {
  let out = '';
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    out += html.slice(i, lt);
    let end: number;
    if (html.startsWith('<!--', lt)) {
      end = html.indexOf('-->', lt + 4);
      end = end < 0 ? html.length : end + 3;
      out += html.slice(lt, end);
      i = end;
      continue;
    }
    const m = /^<([a-zA-Z][^\s/>]*)/.exec(html.slice(lt, lt + 256));
    if (!m) {
      // An end tag, a declaration, or a lone '<': passed on up to its '>' (or as it is).
      end = /^<[/!?]/.test(html.slice(lt, lt + 2)) ? html.indexOf('>', lt) : lt;
      end = end < 0 ? html.length : end + 1;
      out += html.slice(lt, end);
      i = end;
      continue;
    }
    // The start tag runs to the first '>' outside quotes.
    let j = lt + m[0].length;
    let quote = '';
    for (; j < html.length; j++) {
      const ch = html[j]!;
      if (quote) {
        if (ch === quote) quote = '';
      } else if (ch === '"' || ch === "'") quote = ch;
      else if (ch === '>') break;
    }
    const name = m[1]!.toLowerCase();
    out += m[0] + rewriteAttributes(name, html.slice(lt + m[0].length, j), rewrite) + (j < html.length ? '>' : '');
    i = j + 1;
    if (RAW_TEXT.has(name)) {
      const close = html.slice(i).search(new RegExp(`</${name}[\\s/>]`, 'i'));
      const stop = close < 0 ? html.length : i + close;
      out += html.slice(i, stop);
      i = stop;
    }
  }
  return out + html.slice(i);
}
