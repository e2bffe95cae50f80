// agnhost's `webhook` and `crd-conversion-webhook` subcommands (as of agnhost
// 2.21): the admission webhook and the CRD conversion webhook of the
// conformance suite's webhook tests, served over HTTPS with the given
// certificate. What they answer (decisions, messages, patches, conversions and
// the errors of their Go decoders) follows upstream; see agnhost.mjs for the rest.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { posix } from 'node:path';
import { createSecureContext } from 'node:tls';

// ---- Go's net/http, encoding/json, fmt and klog, as clients and logs see them --

/** klog lines on stderr ("E1015 10:00:00.000000   pid file] msg"); info only at --v or above; fatal exits 255. */
function klog(f) {
  const p = (n, w = 2) => String(n).padStart(w, '0');
  const line = (sev, file, msg) => {
    const d = new Date();
    const ts = `${p(d.getMonth() + 1)}${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds() * 1000, 6)}`;
    process.stderr.write(`${sev}${ts} ${String(process.pid).padStart(7)} ${file}] ${msg}\n`);
  };
  const info = (level, file, msg) => level <= (Number(f.v) || 0) && line('I', file, msg);
  return { error: (file, msg) => line('E', file, msg), info, fatal: (file, msg) => process.exit(line('F', file, msg) ?? 255) };
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** encoding/json's output: compact, with <, >, &, U+2028 and U+2029 escaped (they only occur inside strings). */
const goJSON = (v) => JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** json.Marshal of a map[string]interface{}: keys sorted at every level. */
const sortKeys = (v) => (Array.isArray(v) ? v.map(sortKeys) : isObject(v) ? Object.fromEntries(keys(v).map((k) => [k, sortKeys(v[k])])) : v);
const keys = (o) => Object.keys(o).sort();

/** The name encoding/json gives a JSON value's type in its errors. */
const goKind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v);

/** strconv.Quote (fmt's %q): control characters escaped, other characters as they are. */
function goQuote(s) {
  const esc = { '"': '\\"', '\\': '\\\\', '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
  const hex = (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  return `"${String(s).replace(/[^ -~]|["\\]/g, (c) => esc[c] ?? (c < ' ' || c === '\x7f' ? hex(c) : c))}"`;
}

/** fmt's %s of a decoded JSON value: strings as they are, other types in fmt's %!s(...) form. */
function goFormatS(v) {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (typeof v !== 'object') return `%!s(${typeof v === 'boolean' ? 'bool' : Number.isInteger(v) ? 'int64' : 'float64'}=${v})`;
  const items = Array.isArray(v) ? v.map(goFormatS) : keys(v).map((k) => `${k}:${goFormatS(v[k])}`);
  return Array.isArray(v) ? `[${items.join(' ')}]` : `map[${items.join(' ')}]`;
}

/** encoding/json's syntax error for text JSON.parse refused: the offending character as V8 reports it. */
function goSyntaxError(text, e) {
  const m = String(e?.message);
  const at = /position (\d+)/.exec(m);
  const c = at ? text[Number(at[1])] : /Unexpected token '(.)'/.exec(m)?.[1];
  if (/end of JSON input/.test(m) || c === undefined) return 'unexpected end of JSON input';
  return `invalid character '${c}' ${/after JSON/.test(m) ? 'after top-level value' : 'looking for beginning of value'}`;
}

/** encoding/json's match of object keys to struct fields: the exact name, else any case. */
function field(obj, name) {
  const k = name in obj ? name : Object.keys(obj).find((key) => key.toLowerCase() === name.toLowerCase());
  return k === undefined ? undefined : obj[k];
}

/** A map[string]string struct field decoded by encoding/json: null is an empty map, null values are "". */
function stringMap(v, where) {
  if (v === undefined || v === null) return { map: {} };
  if (!isObject(v)) return { err: `json: cannot unmarshal ${goKind(v)} into Go struct field ${where} of type map[string]string` };
  const map = {};
  for (const [k, x] of Object.entries(v)) {
    if (x !== null && typeof x !== 'string') return { err: `json: cannot unmarshal ${goKind(x)} into Go struct field ${where} of type string` };
    map[k] = x ?? '';
  }
  return { map };
}

/** http.Error: the message and a newline as text/plain, with nosniff. */
const httpError = (res, code, msg) => res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end(`${msg}\n`);

/** A handler that panicked (a nil pointer dereferenced): Go's server drops the connection unanswered. */
const drop = (res) => res.socket?.destroy();

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString();
}

/** http.ServeMux over exact paths: an unclean path is redirected (301) to its clean form, an unknown one is 404. */
function serveMux(routes) {
  return (req, res) => {
    const [raw = '/', query] = (req.url ?? '/').split(/\?(.*)/s);
    const path = raw.replace(/%([\da-f]{2})/gi, (_m, h) => String.fromCharCode(Number.parseInt(h, 16)));
    let clean = posix.normalize(`/${path}`);
    if (clean.length > 1 && clean.endsWith('/') && !path.endsWith('/')) clean = clean.slice(0, -1);
    if (clean !== path) {
      res.writeHead(301, { location: query === undefined ? clean : `${clean}?${query}` });
      return res.end();
    }
    if (!routes[path]) return httpError(res, 404, '404 page not found');
    routes[path](req, res);
  };
}

/** The certificate and key as tls.LoadX509KeyPair reads them; failing, klog.Fatal. */
function loadKeyPair(f, k) {
  const read = (p) => {
    try {
      return readFileSync(p);
    } catch (e) {
      const why = { ENOENT: 'no such file or directory', EACCES: 'permission denied', EISDIR: 'is a directory' }[e.code] ?? e.message;
      k.fatal('config.go', `${e.code === 'EISDIR' ? 'read' : 'open'} ${p}: ${why}`);
    }
  };
  const [cert, key] = [read(f['tls-cert-file']), read(f['tls-private-key-file'])];
  if (!cert.includes('-----BEGIN')) k.fatal('config.go', 'tls: failed to find any PEM data in certificate input');
  if (!key.includes('-----BEGIN')) k.fatal('config.go', 'tls: failed to find any PEM data in key input');
  try {
    createSecureContext({ cert, key });
  } catch (e) {
    k.fatal('config.go', /mismatch/i.test(e.message) ? 'tls: private key does not match public key' : e.message);
  }
  return { cert, key };
}

/** Flags, then ListenAndServeTLS on --port (all of the pod's addresses); a listen error is a panic (status 2). */
function serveTLS(args, { flags, HOST }, routes) {
  const f = flags(args, { 'tls-cert-file': '', 'tls-private-key-file': '', port: '443' });
  if (f._.length) {
    // cobra.MaximumNArgs(0): the error, and agnhost's exit status 0.
    process.stderr.write(`Error: accepts at most 0 arg(s), received ${f._.length}\n`);
    process.exit(0);
  }
  const k = klog(f);
  routes['/readyz'] = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('ok');
  for (const [path, h] of Object.entries(routes)) routes[path] = (req, res) => h(req, res, k);
  const server = createServer(loadKeyPair(f, k), serveMux(routes));
  server.on('error', (e) => {
    const why = { EADDRINUSE: 'bind: address already in use', EACCES: 'bind: permission denied' }[e.code] ?? e.message;
    process.stderr.write(`panic: listen tcp :${f.port}: ${why}\n`);
    process.exit(2);
  });
  server.listen(Number(f.port), HOST);
}

// ---- apimachinery's decoders -----------------------------------------------------

/** The group versions of the schemes' types: the webhook's (core, admission, admissionregistration) and the converter's (apiextensions). */
const WEBHOOK_SCHEME = {
  name: 'k8s.io/kubernetes/test/images/agnhost/webhook/scheme.go:31',
  gvs: ['v1', 'admission.k8s.io/v1', 'admission.k8s.io/v1beta1', 'admissionregistration.k8s.io/v1', 'admissionregistration.k8s.io/v1beta1'],
};
const CONVERTER_SCHEME = {
  name: 'k8s.io/kubernetes/test/images/agnhost/crd-conversion-webhook/converter/framework.go:207',
  gvs: ['v1', 'apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'],
};

const gvString = (g, v) => (g ? `${g}/${v}` : v);
const gvkString = (t) => `${t.group}/${t.version}, Kind=${t.kind}`;
const notRegistered = (kind, gv, scheme) => `no kind ${goQuote(kind)} is registered for version ${goQuote(gv)} in scheme ${goQuote(scheme.name)}`;
const FIND_KIND = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** The serializer's Interpret: apiVersion and kind read with encoding/json, the group version parsed. */
function interpret(v) {
  const fail = (why) => ({ err: `couldn't get version/kind; json parse error: json: cannot unmarshal ${why}` });
  if (v === null) return { group: '', version: '', kind: '' };
  if (!isObject(v)) return fail(`${goKind(v)} into Go value of type ${FIND_KIND}`);
  const [apiVersion, kind] = [field(v, 'apiVersion') ?? '', field(v, 'kind') ?? ''];
  if (typeof apiVersion !== 'string') return fail(`${goKind(apiVersion)} into Go struct field .apiVersion of type string`);
  if (typeof kind !== 'string') return fail(`${goKind(kind)} into Go struct field .kind of type string`);
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '', kind };
  const parts = apiVersion.split('/');
  if (parts.length > 2) return { err: `unexpected GroupVersion string: ${apiVersion}` };
  return parts.length === 1 ? { group: '', version: apiVersion, kind } : { group: parts[0], version: parts[1], kind };
}

/** A body decoded with no target type (read as JSON; an empty YAML body is null): its kind required and registered. */
function decodeTop(text, scheme, yaml) {
  let v = null;
  if (text.trim() !== '' || !yaml) {
    try {
      v = JSON.parse(text);
    } catch (e) {
      return { err: `couldn't get version/kind; json parse error: ${goSyntaxError(text, e)}` };
    }
  }
  const t = interpret(v);
  if (t.err) return t;
  if (!t.kind) return { err: `Object 'Kind' is missing in '${text}'` };
  if (!t.version) return { err: `Object 'apiVersion' is missing in '${text}'` };
  const gv = gvString(t.group, t.version);
  return scheme.gvs.includes(gv) ? { obj: v, ...t } : { err: notRegistered(t.kind, gv, scheme) };
}

/**
 * An embedded object decoded into a typed target (the universal deserializer
 * with `into`): a missing apiVersion/kind defaults to the target's; an object
 * of another registered kind leaves the target empty; a target type outside
 * the scheme (the CRD types) takes the object whatever its kind.
 */
function decodeInto(raw, want, registered = true) {
  if (raw === undefined || raw === null) return { obj: {} };
  const t = interpret(raw);
  if (t.err || !registered) return t.err ? t : { obj: raw };
  const kind = t.kind || want.kind;
  let { group, version } = t;
  if (!version && !group) [group, version] = [want.group, want.version];
  else if (!version && group === want.group) version = want.version;
  if (kind === want.kind && group === want.group && version === want.version) return { obj: raw };
  const gv = gvString(group, version);
  return WEBHOOK_SCHEME.gvs.includes(gv) ? { obj: {} } : { err: notRegistered(kind, gv, WEBHOOK_SCHEME) };
}

/** An embedded object decoded with encoding/json into a struct: no object at all is "unexpected end of JSON input". */
function unmarshalStruct(raw, type) {
  if (raw === undefined || raw === null) return { err: 'unexpected end of JSON input' };
  return isObject(raw) ? { obj: raw } : { err: `json: cannot unmarshal ${goKind(raw)} into Go value of type ${type}` };
}

// ---- webhook -------------------------------------------------------------------

const status = (fields) => ({ metadata: {}, ...fields });
/** toV1AdmissionResponse, and the webhooks' denials: not allowed, with a status message. */
const deny = (message) => ({ allowed: false, status: status({ message }) });
const allow = () => ({ allowed: true });
/** An allowed response carrying a JSONPatch, its bytes as upstream's constants have them. */
const patched = (patch) => ({ allowed: true, patch: Buffer.from(patch).toString('base64'), patchType: 'JSONPatch' });

const PATCH = {
  firstLabel: '[\n         { "op": "add", "path": "/metadata/labels", "value": {"added-label": "yes"}}\n     ]',
  additionalLabel: '[\n         { "op": "add", "path": "/metadata/labels/added-label", "value": "yes" }\n     ]',
  updateLabel: '[\n         { "op": "replace", "path": "/metadata/labels/added-label", "value": "yes" }\n     ]',
  stage1: '[\n         { "op": "add", "path": "/data/mutation-stage-1", "value": "yes" }\n     ]',
  stage2: '[\n         { "op": "add", "path": "/data/mutation-stage-2", "value": "yes" }\n     ]',
  initContainer:
    '[\n\t\t {"op":"add","path":"/spec/initContainers","value":[{"image":"webhook-added-image","name":"webhook-added-init-container","resources":{}}]}\n\t]',
};

const gvr = (r) => ({ group: r?.group ?? '', version: r?.version ?? '', resource: r?.resource ?? '' });
/** fmt's %s of a metav1.GroupVersionResource value (its String method has a pointer receiver, so the fields print). */
const gvrText = (r) => `{${r.group} ${r.version} ${r.resource}}`;
const sameGVR = (a, b) => a.group === b.group && a.version === b.version && a.resource === b.resource;
const PODS = { group: '', version: 'v1', resource: 'pods' };
const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps' };
const core = (kind) => ({ group: '', version: 'v1', kind });
const labelsOf = (o) => (isObject(o?.metadata) && isObject(o.metadata.labels) ? o.metadata.labels : {});
const dataOf = (o) => (isObject(o?.data) ? o.data : {});

/** The mutating configmap and custom resource webhooks: stage 1 on mutation-start, stage 2 once stage 1 is there. */
function stagePatch(data) {
  let patch;
  if (data['mutation-start'] === 'yes') patch = PATCH.stage1;
  if (data['mutation-stage-1'] === 'yes') patch = PATCH.stage2;
  // Without a patch, no patchType either.
  return patch ? patched(patch) : allow();
}

/** The validating configmap and custom resource webhooks: disallowed data on create/update, nondeletable on delete. */
function dataCheck(data, op, disallow, nondeletable) {
  const v = data['webhook-e2e-test'];
  if (v === 'webhook-disallow' && (op === 'CREATE' || op === 'UPDATE')) return { allowed: false, status: status({ reason: disallow }) };
  if (v === 'webhook-nondeletable' && op === 'DELETE') return { allowed: false, status: status({ reason: nondeletable }) };
  return allow();
}

/** A custom resource's `data` (any case), as encoding/json fills struct { ObjectMeta; Data map[string]string }. */
const crData = (raw) => {
  const cr = unmarshalStruct(raw, 'struct { v1.ObjectMeta; Data map[string]string }');
  return cr.err ? cr : stringMap(field(cr.obj, 'Data'), '.Data');
};

/** The admit functions by path: a v1 AdmissionRequest in, a response out (undefined where upstream returns nil). */
const ADMIT = {
  '/always-allow-delay-5s': async (_r, k) => {
    k.info(2, 'alwaysallow.go', 'always-allow-with-delay sleeping for 5 seconds');
    await new Promise((r) => setTimeout(r, 5000));
    k.info(2, 'alwaysallow.go', 'calling always-allow');
    return { allowed: true, status: status({ message: 'this webhook allows all requests' }) };
  },
  '/always-deny': () => deny('this webhook denies all requests'),
  '/add-label': (r) => {
    const obj = unmarshalStruct(r.object, 'struct { v1.ObjectMeta "json:\\"metadata,omitempty\\"" }');
    if (obj.err) return deny(obj.err);
    const meta = field(obj.obj, 'metadata') ?? {};
    if (!isObject(meta)) return deny(`json: cannot unmarshal ${goKind(meta)} into Go struct field .metadata of type v1.ObjectMeta`);
    const labels = stringMap(field(meta, 'labels'), 'ObjectMeta.metadata.labels');
    if (labels.err) return deny(labels.err);
    if (Object.keys(labels.map).length === 0) return patched(PATCH.firstLabel);
    if (!('added-label' in labels.map)) return patched(PATCH.additionalLabel);
    return labels.map['added-label'] !== 'yes' ? patched(PATCH.updateLabel) : allow();
  },
  '/pods': (r) => {
    if (!sameGVR(gvr(r.resource), PODS)) return deny(`expect resource to be ${gvrText(PODS)}`);
    const pod = decodeInto(r.object, core('Pod'));
    if (pod.err) return deny(pod.err);
    let msg = '';
    const label = labelsOf(pod.obj)['webhook-e2e-test'];
    if (label === 'webhook-disallow') msg += 'the pod contains unwanted label; ';
    // This pod's review is never answered: the webhook's caller times out.
    if (label === 'wait-forever') return new Promise(() => undefined);
    const containers = Array.isArray(pod.obj.spec?.containers) ? pod.obj.spec.containers : [];
    for (const c of containers) if (String(c?.name ?? '').includes('webhook-disallow')) msg += 'the pod contains unwanted container name; ';
    return msg ? deny(msg.trim()) : allow();
  },
  '/pods/attach': (r) => {
    if (r.name !== 'to-be-attached-pod') return allow();
    const res = gvr(r.resource);
    if (!sameGVR(res, PODS)) return deny(`expect resource to be ${gvrText(PODS)}, got ${gvrText(res)}`);
    if (r.subResource !== 'attach') return deny(`expect subresource to be attach, got ${r.subResource ?? ''}`);
    const opts = decodeInto(r.object, core('PodAttachOptions'));
    if (opts.err) return deny(opts.err);
    if (opts.obj.stdin !== true || opts.obj.container !== 'container1') return allow();
    return deny("attaching to pod 'to-be-attached-pod' is not allowed");
  },
  '/mutating-pods': (r) => {
    if (!sameGVR(gvr(r.resource), PODS)) return undefined;
    const pod = decodeInto(r.object, core('Pod'));
    if (pod.err) return deny(pod.err);
    return pod.obj.metadata?.name === 'webhook-to-be-mutated' ? patched(PATCH.initContainer) : allow();
  },
  '/configmaps': (r) => {
    if (!sameGVR(gvr(r.resource), CONFIGMAPS)) return undefined;
    const cm = decodeInto(r.operation === 'DELETE' ? r.oldObject : r.object, core('ConfigMap'));
    if (cm.err) return deny(cm.err);
    const nondeletable = 'the configmap cannot be deleted because it contains unwanted key and value';
    return dataCheck(dataOf(cm.obj), r.operation, 'the configmap contains unwanted key and value', nondeletable);
  },
  '/mutating-configmaps': (r) => {
    if (!sameGVR(gvr(r.resource), CONFIGMAPS)) return undefined;
    const cm = decodeInto(r.object, core('ConfigMap'));
    return cm.err ? deny(cm.err) : stagePatch(dataOf(cm.obj));
  },
  '/custom-resource': (r) => {
    const data = crData(r.operation === 'DELETE' ? r.oldObject : r.object);
    if (data.err) return deny(data.err);
    const nondeletable = 'the custom resource cannot be deleted because it contains unwanted key and value';
    return dataCheck(data.map, r.operation, 'the custom resource contains unwanted data', nondeletable);
  },
  '/mutating-custom-resource': (r) => {
    const data = crData(r.object);
    return data.err ? deny(data.err) : stagePatch(data.map);
  },
  '/crd': (r) => {
    const v1beta1 = { group: 'apiextensions.k8s.io', version: 'v1beta1', resource: 'customresourcedefinitions' };
    const v1 = { ...v1beta1, version: 'v1' };
    const res = gvr(r.resource);
    if (!sameGVR(res, v1beta1) && !sameGVR(res, v1)) return deny(`expect resource to be one of [${gvrText(v1beta1)}, ${gvrText(v1)}] but got ${gvrText(res)}`);
    const crd = decodeInto(r.object, { group: res.group, version: res.version, kind: 'CustomResourceDefinition' }, false);
    if (crd.err) return deny(crd.err);
    return labelsOf(crd.obj)['webhook-e2e-test'] === 'webhook-disallow' ? deny('the crd contains unwanted label') : allow();
  },
};

/** One AdmissionReview (admission.k8s.io v1 or v1beta1), answered in the version it came in with its request's uid. */
async function admit(req, res, fn, k) {
  const body = await readBody(req);
  const contentType = req.headers['content-type'] ?? '';
  if (contentType !== 'application/json') {
    // Logged, and answered with an empty 200.
    k.error('main.go', `contentType=${contentType}, expect application/json`);
    return res.end();
  }
  k.info(2, 'main.go', `handling request: ${body}`);
  // The universal deserializer: a body starting with "{" is JSON, anything else YAML.
  const d = decodeTop(body, WEBHOOK_SCHEME, !/^\s*\{/.test(body));
  let bad = d.err && `Request could not be decoded: ${d.err}`;
  if (!bad && (d.kind !== 'AdmissionReview' || d.group !== 'admission.k8s.io')) bad = `Unsupported group version kind: ${gvkString(d)}`;
  if (bad) {
    k.error('main.go', bad);
    return httpError(res, 400, bad);
  }
  // No request, or a nil response: upstream dereferences it and the handler panics.
  const request = d.obj.request;
  const out = isObject(request) ? await fn(request, k) : undefined;
  if (!out) return drop(res);
  const { allowed, status, patch, patchType } = out;
  const response = { uid: typeof request.uid === 'string' ? request.uid : '', allowed, status, patch, patchType };
  const review = goJSON({ kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${d.version}`, response });
  k.info(2, 'main.go', `sending response: ${review}`);
  res.writeHead(200, { 'content-type': 'application/json' }).end(review);
}

export function webhook(args, helpers) {
  serveTLS(args, helpers, Object.fromEntries(Object.entries(ADMIT).map(([path, fn]) => [path, (req, res, k) => admit(req, res, fn, k)])));
}

// ---- crd-conversion-webhook ----------------------------------------------------

const failure = (message) => ({ status: { metadata: {}, status: 'Failure', message } });

/** The example converter: stable.example.com v1's `hostPort` is v2's `host` and `port`. */
function convertExample(obj, to) {
  const from = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  if (to === from) return failure(`conversion from a version to itself should not call the webhook: ${to}`);
  const out = structuredClone(obj);
  if (from === 'stable.example.com/v1') {
    if (to !== 'stable.example.com/v2') return failure(`unexpected conversion version ${goQuote(to)}`);
    if ('hostPort' in out) {
      // A hostPort that is not a string fails upstream's type assertion: a panic.
      if (typeof out.hostPort !== 'string') return { panic: true };
      const parts = out.hostPort.split(':');
      if (parts.length !== 2) return failure(`invalid hostPort value \`${out.hostPort}\``);
      delete out.hostPort;
      [out.host, out.port] = parts;
    }
  } else if (from === 'stable.example.com/v2') {
    if (to !== 'stable.example.com/v1') return failure(`unexpected conversion version ${goQuote(to)}`);
    if ('host' in out || 'port' in out) {
      out.hostPort = `${'host' in out ? goFormatS(out.host) : ''}:${'port' in out ? goFormatS(out.port) : ''}`;
      delete out.host;
      delete out.port;
    }
  } else return failure(`unexpected conversion version ${goQuote(from)}`);
  return { obj: out };
}

/** Each object of a ConversionRequest converted to its desiredAPIVersion; the first failure is the whole result. */
function doConversion(request, k) {
  const to = typeof request.desiredAPIVersion === 'string' ? request.desiredAPIVersion : '';
  const converted = [];
  for (const raw of Array.isArray(request.objects) ? request.objects : []) {
    // Unstructured's decoder: an object with a kind (no object at all is its decoder's EOF).
    const text = raw === null || raw === undefined ? '' : JSON.stringify(raw);
    let why = text === '' ? 'EOF' : undefined;
    if (!why && !isObject(raw)) why = `json: cannot unmarshal ${goKind(raw)} into Go value of type map[string]interface {}`;
    if (!why && (typeof raw.kind !== 'string' || !raw.kind)) why = `Object 'Kind' is missing in '${text}'`;
    if (why) {
      k.error('framework.go', why);
      return failure(`failed to unmarshall object (${text}) with error: ${why}`);
    }
    const c = convertExample(raw, to);
    if (c.panic || c.status) {
      if (c.status) k.error('framework.go', c.status.message);
      return c;
    }
    c.obj.apiVersion = to;
    converted.push(sortKeys(c.obj));
  }
  return { converted: converted.length ? converted : null, status: { metadata: {}, status: 'Success' } };
}

/**
 * goautoneg's reading of Accept for upstream's JSON and YAML serializers: a 400 unless a clause is application/json,
 * application/yaml, application/* or * / *. The answer here is always JSON text, which is also YAML.
 */
function acceptable(accept) {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const range = part.split(';')[0];
    const [type, sub = type === '*' ? '*' : undefined, extra] = range.split('/').map((x) => x.trim());
    return extra === undefined && ((type === '*' && sub === '*') || (type === 'application' && ['json', 'yaml', '*'].includes(sub)));
  });
}

/** One ConversionReview (apiextensions.k8s.io v1 or v1beta1), answered in its version with the request emptied. */
async function convert(req, res, k) {
  const body = await readBody(req);
  const contentType = req.headers['content-type'] ?? '';
  const format = { 'application/json': 'json', 'application/yaml': 'yaml' }[contentType];
  if (!format) {
    k.error('framework.go', `invalid Content-Type header \`${contentType}\``);
    return httpError(res, 400, `invalid Content-Type header \`${contentType}\``);
  }
  k.info(2, 'framework.go', `handling request: ${body}`);
  const d = decodeTop(body, CONVERTER_SCHEME, format === 'yaml');
  let bad = d.err && `failed to deserialize body (${body}) with error ${d.err}`;
  if (!bad && (d.kind !== 'ConversionReview' || d.group !== 'apiextensions.k8s.io')) bad = `Unsupported group version kind: ${gvkString(d)}`;
  if (bad) {
    k.error('framework.go', d.err ?? bad);
    return httpError(res, 400, bad);
  }
  // No request: upstream dereferences it and the handler panics.
  const request = d.obj.request;
  const c = isObject(request) ? doConversion(request, k) : { panic: true };
  if (c.panic) return drop(res);
  const response = { uid: typeof request.uid === 'string' ? request.uid : '', convertedObjects: c.converted ?? null, result: c.status };
  const emptied = { uid: '', desiredAPIVersion: '', objects: null };
  const review = { kind: 'ConversionReview', apiVersion: `apiextensions.k8s.io/${d.version}`, request: emptied, response };
  k.info(2, 'framework.go', `sending response: ${goJSON(response)}`);
  if (!acceptable(req.headers.accept ?? '')) {
    k.error('framework.go', `invalid accept header \`${req.headers.accept}\``);
    return httpError(res, 400, `invalid accept header \`${req.headers.accept}\``);
  }
  // Upstream sets no Content-Type: Go's server sniffs the body as plain text.
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(`${goJSON(review)}\n`);
}

export function crdConversionWebhook(args, helpers) {
  serveTLS(args, helpers, { '/crdconvert': convert });
}
