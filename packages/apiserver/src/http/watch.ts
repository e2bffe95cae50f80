/**
 * Streams a watch as chunked NDJSON on the raw response: one `{"type","object"}`
 * per line, flushed as written; BOOKMARKs at an interval when asked; an ERROR event
 * (410 Expired) when the start revision is gone; the stream ends at
 * `timeoutSeconds` (or a random 30–60 min), when the client goes away, or when a
 * slow client falls too far behind.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '@kubeling/api';
import { StatusError, internalError } from '@kubeling/apimachinery';
import type { CacheEvent, EventType } from '../storage/cacher.js';

export interface WatchStreamOptions {
  timeoutSeconds: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  /** Encodes an object for an event (the resource's external form). */
  encode(obj: KubeObject, ev?: CacheEvent): string;
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
      'Content-Type': 'application/json',
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
    this.write(`{"type":"${type}","object":${this.opts.encode(obj, ev)}}\n`);
  }

  bookmark(annotations?: Record<string, string>): void {
    if (this.closed) return;
    const rv = Math.max(this.lastRev, this.opts.currentRevision());
    this.lastRev = rv;
    const obj = { ...this.opts.typeMeta, metadata: { resourceVersion: String(rv), ...(annotations ? { annotations } : {}) } };
    this.write(`{"type":"BOOKMARK","object":${JSON.stringify(obj)}}\n`);
  }

  /** Sends an ERROR event with the Status of `err`, then ends the stream. */
  error(err: unknown): void {
    if (this.closed) return;
    const status = err instanceof StatusError ? err.status : internalError('watch ended unexpectedly').status;
    this.write(`{"type":"ERROR","object":${JSON.stringify(status)}}\n`);
    this.close();
  }

  private write(line: string): void {
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
