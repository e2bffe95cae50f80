/** Helpers the validation modules share; not part of the package's exports. */
import { Buffer } from 'node:buffer';
import type { PathLike } from '../field-errors.js';

/** The length Go's `len` gives a string: its UTF-8 bytes. */
export const byteLen = (s: string): number => Buffer.byteLength(s, 'utf8');

/** `p.name`, or `name` when `p` is the root. */
export const child = (p: PathLike, name: string): string => (String(p) ? `${String(p)}.${name}` : name);
