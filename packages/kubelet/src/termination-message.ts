/**
 * Termination messages (kuberuntime getTerminationMessage): each container
 * gets a file of its own, mounted at its `terminationMessagePath`; when the
 * container has exited the kubelet reads what it wrote there (at most 4 KiB)
 * into the terminated state's message. With `terminationMessagePolicy:
 * FallbackToLogsOnError`, a container that failed and wrote nothing gets the
 * tail of its log instead (80 lines, at most 2 KiB).
 */
import { chmodSync, mkdirSync, openSync, readSync, closeSync, fstatSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseCriLine, type ContainerStatus, type Mount } from '@kubeling/cri';
import type { Container } from './kinds.js';

const MAX_MESSAGE = 4 * 1024;
const MAX_LOG_LINES = 80;
const MAX_LOG_BYTES = 2 * 1024;

export const terminationMessageFile = (rootDir: string, uid: string, container: string, attempt: number): string =>
  join(rootDir, 'pods', uid, 'containers', container, `${attempt}-termination-log`);

/** The mount of a new container's termination message file (made empty here), unless it mounts something there itself. */
export function terminationMessageMount(rootDir: string, uid: string, c: Container, attempt: number, mounts: Mount[]): Mount | undefined {
  const path = c.terminationMessagePath;
  if (!path || mounts.some((m) => m.container_path === path)) return undefined;
  const file = terminationMessageFile(rootDir, uid, c.name, attempt);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, '');
  // Any user the container runs as may write it (upstream chmods it so too, whatever the umask).
  chmodSync(file, 0o666);
  return { container_path: path, host_path: file, readonly: false };
}

/** The last `max` bytes of a file (the first `max` with `head`), or undefined when it cannot be read. */
function readBytes(file: string, max: number, head: boolean): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const n = Math.min(size, max);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, head ? 0 : size - n);
    return buf.toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The message of an exited container: what it wrote to its termination message file, or its log's tail as the policy allows. */
export function terminationMessage(rootDir: string, uid: string, c: Container, exited: ContainerStatus): string {
  const written = c.terminationMessagePath ? (readBytes(terminationMessageFile(rootDir, uid, c.name, exited.metadata.attempt), MAX_MESSAGE, true) ?? '') : '';
  if (written || c.terminationMessagePolicy !== 'FallbackToLogsOnError' || exited.exit_code === 0 || !exited.log_path) return written;
  // The log's tail: CRI lines, partial lines joined, the last 80 lines and 2 KiB of them.
  const raw = readBytes(exited.log_path, 64 * 1024, false) ?? '';
  let text = '';
  for (const line of raw.split('\n')) {
    const l = parseCriLine(line);
    if (!l) continue;
    text += l.tag === 'P' ? l.content : `${l.content}\n`;
  }
  // The last 80 lines as written: a last line without its newline stays without one.
  const lines = text.split('\n');
  const ended = lines.at(-1) === '';
  if (ended) lines.pop();
  const tail = lines.slice(-MAX_LOG_LINES).join('\n') + (ended ? '\n' : '');
  return tail.length > MAX_LOG_BYTES ? tail.slice(-MAX_LOG_BYTES) : tail;
}
