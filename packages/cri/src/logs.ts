/**
 * CRI log files (kubelet pkg/kubelet/kuberuntime/logs): one line per output
 * line, `<RFC3339Nano time> <stream> <tag> <content>`, tag F for a full line
 * and P for a partial one cut by the writer.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';

/** RFC 3339 with nanoseconds, as containerd writes it. */
export function nanoTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
}

const MAX_LINE = 16 * 1024;

export class CriLogWriter {
  private readonly out: WriteStream | undefined;
  constructor(path: string) {
    if (!path) return;
    mkdirSync(dirname(path), { recursive: true });
    this.out = createWriteStream(path, { flags: 'a' });
  }

  /** Copies a stream into the log, line by line. */
  follow(stream: Readable, name: 'stdout' | 'stderr'): void {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      rest += chunk;
      let i: number;
      while ((i = rest.indexOf('\n')) >= 0) {
        this.line(name, 'F', rest.slice(0, i));
        rest = rest.slice(i + 1);
      }
      while (rest.length > MAX_LINE) {
        this.line(name, 'P', rest.slice(0, MAX_LINE));
        rest = rest.slice(MAX_LINE);
      }
    });
    stream.on('end', () => {
      // What is left without a newline at the end is a partial line, as containerd writes it (a reader adds no newline).
      if (rest) this.line(name, 'P', rest);
      rest = '';
    });
  }

  line(stream: 'stdout' | 'stderr', tag: 'F' | 'P', content: string): void {
    this.out?.write(`${nanoTime()} ${stream} ${tag} ${content}\n`);
  }

  close(): Promise<void> {
    return new Promise((r) => (this.out ? this.out.end(() => r()) : r()));
  }
}

/** Parses one CRI log line. */
export function parseCriLine(line: string): { time: string; stream: string; tag: string; content: string } | undefined {
  const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/.exec(line);
  if (!m) return undefined;
  return { time: m[1]!, stream: m[2]!, tag: m[3]!, content: m[4]! };
}
