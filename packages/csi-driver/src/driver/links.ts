/**
 * The filesystem side of staging and publishing: a staging or target path
 * becomes a symbolic link to the volume's folder (the kubeling runtime
 * exposes mounts as links, so no privilege is needed), an empty folder the
 * CO made there is replaced, and only links the driver made are removed.
 * Also the disk usage of a volume folder, as `du` counts it.
 */
import { lstatSync, mkdirSync, readdirSync, readlinkSync, rmdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { alreadyExists } from './args.js';

/** What is at `path`: nothing, a link (and where it points), an empty folder, or something else. */
export function inspect(path: string): { kind: 'absent' } | { kind: 'link'; to: string } | { kind: 'empty-dir' } | { kind: 'other' } {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return { kind: 'absent' };
  }
  if (st.isSymbolicLink()) return { kind: 'link', to: resolve(dirname(path), readlinkSync(path)) };
  if (st.isDirectory() && readdirSync(path).length === 0) return { kind: 'empty-dir' };
  return { kind: 'other' };
}

/**
 * Makes `path` a link to `to`. An existing link to `to` is kept; an empty
 * folder is replaced; a link elsewhere or any other content is ALREADY_EXISTS.
 */
export function linkTo(path: string, to: string): void {
  const at = inspect(path);
  if (at.kind === 'link') {
    if (at.to === to) return;
    throw alreadyExists(`${path} is already in use by another volume`);
  }
  if (at.kind === 'other') throw alreadyExists(`${path} already exists and is not an empty directory`);
  if (at.kind === 'empty-dir') rmdirSync(path);
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(to, path, 'dir');
}

/** Removes `path` when it is a link to `to`; anything else at `path` is left alone. Returns whether it removed it. */
export function unlinkIfTo(path: string, to: string): boolean {
  const at = inspect(path);
  if (at.kind !== 'link' || at.to !== to) return false;
  unlinkSync(path);
  return true;
}

/** Bytes and inodes used under `dir`, as `du` counts them (512-byte blocks; links are not followed). */
export async function diskUsage(dir: string, maxEntries = 1_000_000): Promise<{ bytes: number; inodes: number }> {
  let bytes = 0;
  let inodes = 0;
  const stack = [dir];
  while (stack.length && inodes < maxEntries) {
    const p = stack.pop()!;
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(p);
    } catch {
      continue;
    }
    inodes++;
    bytes += Math.max(st.blocks * 512, st.isDirectory() ? 0 : st.size);
    if (st.isDirectory()) {
      try {
        for (const name of await readdir(p)) stack.push(join(p, name));
      } catch {
        // unreadable folder: counted without its content
      }
    }
  }
  return { bytes, inodes };
}
