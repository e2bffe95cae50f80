/**
 * Streams a watch on the raw response, chunked: as NDJSON, one `{"type","object"}`
 * per line, or — when the client asks for protobuf first — as length-prefixed
 * frames of enveloped meta/v1 WatchEvents (`application/vnd.kubernetes.protobuf;stream=watch`,
 * apiserver pkg/endpoints/handlers/watch.go); flushed as written. BOOKMARKs at an
 * interval when asked; an ERROR event (410 Expired) when the start revision is
 * gone; the stream ends at `timeoutSeconds` (or a random 30–60 min), when the
 * client goes away, or when a slow client falls too far behind.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '@kubeling/api';
import { StatusError, internalError } from '@kubeling/apimachinery';
import type { CacheEvent, EventType } from '../storage/cacher.js';
import type { Store } from '../registry/store.js';
import { parseResourceVersion } from '../registry/versions.js';
import type { HandlerContext } from './context.js';
import { PROTOBUF_TYPE, encode, outputFormat } from './codec.js';
import { includeObject, listQuery } from './options.js';
import { encodeProtobufBody, hasProtobuf, protobufWatchFrame } from './protobuf.js';
import { tableWanted, toTable } from './table.js';
import type { Query } from './request-info.js';

export interface WatchStreamOptions {
  timeoutSeconds: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  /** Events as protobuf frames rather than JSON lines. */
  protobuf?: boolean;
  /** Encodes an object for an event (the resource's external form): JSON text, or its protobuf envelope. */
  encode(obj: KubeObject, ev?: CacheEvent): string | Buffer;
  /** The latest revision the stream is known to be current with. */
  currentRevision(): number;
  /** BOOKMARK object skeleton: apiVersion + kind. */
  typeMeta: { apiVersion: string; kind: string };
  /** Max bytes buffered for a slow client before the watch is closed. */
  maxBufferedBytes?: number;
  onClose?(): void;
}

export class WatchStream {
  private closed = false;
  private lastRev = 0;
  private timers: NodeJS.Timeout[] = [];
  stop: (() => void) | undefined;

  constructor(
    req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly opts: WatchStreamOptions,
  ) {
    res.writeHead(200, {
      // JSON keeps its plain media type; other encodings say `stream=watch` (upstream handlers/watch.go).
      'Content-Type': opts.protobuf ? `${PROTOBUF_TYPE};stream=watch` : 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    const end = () => this.close();
    req.on('close', end);
    res.on('close', end);
    this.timers.push(setTimeout(end, opts.timeoutSeconds * 1000));
    if (opts.bookmarks) {
      this.timers.push(setInterval(() => this.bookmark(), opts.bookmarkIntervalMs));
    }
  }

  start(fromRev: number): void {
    this.lastRev = fromRev;
  }

  event(type: EventType, obj: KubeObject, ev?: CacheEvent): void {
    if (this.closed) return;
    const rev = Number(obj.metadata.resourceVersion ?? 0);
    if (rev > this.lastRev) this.lastRev = rev;
    this.send(type, this.opts.encode(obj, ev));
  }

  /** One event: a JSON line, or a protobuf frame around the object's envelope. */
  private send(type: string, object: string | Buffer): void {
    if (this.opts.protobuf) this.write(protobufWatchFrame(type, typeof object === 'string' ? Buffer.from(object) : object));
    else this.write(`{"type":"${type}","object":${String(object)}}\n`);
  }

  /** A BOOKMARK's object or an ERROR's Status in the stream's encoding. */
  private body(obj: unknown): string | Buffer {
    return (this.opts.protobuf && encodeProtobufBody(obj)) || encode(obj, false).payload;
  }

  bookmark(annotations?: Record<string, string>): void {
    if (this.closed) return;
    const rv = Math.max(this.lastRev, this.opts.currentRevision());
    this.lastRev = rv;
    const obj = { ...this.opts.typeMeta, metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) } };
    this.send('BOOKMARK', this.body(obj));
  }

  /** Sends an ERROR event with the Status of `err`, then ends the stream. */
  error(err: unknown): void {
    if (this.closed) return;
    const status = err instanceof StatusError ? err.status : internalError('watch ended unexpectedly').status;
    this.send('ERROR', this.body(status));
    this.close();
  }

  private write(line: string | Buffer): void {
    this.res.write(line);
    if (this.res.writableLength > (this.opts.maxBufferedBytes ?? 32 * 1024 * 1024)) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.stop?.();
    this.opts.onClose?.();
    if (!this.res.writableEnded) this.res.end();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/** The protobuf envelope of each cache event's object, shared by every protobuf watcher of the event. */
const protobufOfEvent = new WeakMap<CacheEvent, string | Buffer>();

/** GET ...?watch: a watch of the collection (or of one object, on the /watch/ paths) as a chunked stream. */
export async function serveWatch(c: HandlerContext, store: Store, ns: string | undefined) {
  const q = c.req.query as Query;
  const opts = listQuery(q, true);
  // A watch of one object (the /watch/ paths with a name) is a watch of its name.
  if (c.info.name) opts.fieldSelector = [`metadata.name=${c.info.name}`, ...(opts.fieldSelector ? [opts.fieldSelector] : [])].join(',');
  const timeoutParam = opts.timeoutSeconds;
  const min = c.opts.minRequestTimeoutSeconds;
  const timeoutSeconds = timeoutParam && timeoutParam > 0 ? timeoutParam : min + Math.floor(Math.random() * min);
  const sendInitial = opts.sendInitialEvents === true;
  parseResourceVersion(opts.resourceVersion); // 400 before the stream starts
  store.filter(opts); // 400 on bad selectors before the stream starts
  c.reply.hijack();
  const typeMeta = { apiVersion: c.def.group ? `${c.def.group}/${c.def.version}` : c.def.version, kind: c.def.kind };
  const table = tableWanted(c.req.headers.accept);
  const include = includeObject(q);
  let columnsSent = false;
  const cacheable = !store.strategy.toExternal && !store.strategy.convert && !table;
  // Protobuf when the client asks for it before JSON (Tables are JSON).
  const protobuf = !table && outputFormat(c.req.headers.accept, hasProtobuf(typeMeta.apiVersion, typeMeta.kind)) === 'protobuf';
  const encodeObject = (obj: KubeObject): string | Buffer => (protobuf && encodeProtobufBody(obj)) || encode(obj, false).payload;
  const stream = new WatchStream(c.req.raw, c.reply.raw, {
    timeoutSeconds,
    bookmarks: opts.allowWatchBookmarks,
    bookmarkIntervalMs: c.opts.bookmarkIntervalMs,
    protobuf,
    encode: (obj, ev) => {
      if (table) {
        const t = toTable(c.def, [store.external(obj)], { resourceVersion: obj.metadata.resourceVersion }, include, !columnsSent, table);
        columnsSent = true;
        return encode(t, false).payload;
      }
      // Every watcher of an event shares its encoding (computed once per event and encoding).
      if (cacheable && ev && ev.obj === obj) {
        if (!protobuf) return (ev.json ??= encode(store.external(obj), false).payload);
        let pb = protobufOfEvent.get(ev);
        if (!pb) protobufOfEvent.set(ev, (pb = encodeObject(store.external(obj))));
        return pb;
      }
      return encodeObject(store.external(obj));
    },
    currentRevision: () => store.cacher.rev,
    typeMeta,
  });
  try {
    const stop = await store.watch(
      ns,
      opts,
      {
        event: (type, obj, ev) => stream.event(type, obj, ev),
        error: (err) => stream.error(err),
      },
      sendInitial ? { ...(opts.resourceVersion !== undefined && opts.resourceVersion !== '' ? { notOlderThan: opts.resourceVersion } : {}) } : undefined,
    );
    if (stream.isClosed) stop();
    else stream.stop = stop;
    if (sendInitial) stream.bookmark({ 'k8s.io/initial-events-end': 'true' });
  } catch (e) {
    stream.error(e);
  }
}

// ---- subresources --------------------------------------------------------------
