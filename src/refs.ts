/**
 * Mapping a reference from the manifest to a stored file. The only way a
 * request reaches bytes on disk: paths are built from hex ids checked here,
 * never from anything the client sent.
 */
import type { FileRef } from './types.ts';

/** Folder under dist/ that holds all archive data; never served directly. */
export const DATA_PREFIX = '_data';
export const MANIFEST_PATH = `${DATA_PREFIX}/manifest.json`;
export const ID_LENGTH = 20;

export type Encoding = 'identity' | 'gzip' | 'br';

export interface ParsedRef {
  id: string;
  gzip?: string;
  br?: string;
}

/** Whether `text` from `start` holds an id: ID_LENGTH lower-case hex digits. */
function idAt(text: string, start: number): boolean {
  if (start + ID_LENGTH > text.length) return false;
  for (let i = start; i < start + ID_LENGTH; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** `<id>` or `<id>/<gzip id>/<br id>`, read without a pattern (it runs on every lookup); null for anything else. */
export function parseRef(ref: FileRef): ParsedRef | null {
  const step = ID_LENGTH + 1;
  if (ref.length === ID_LENGTH) return idAt(ref, 0) ? { id: ref } : null;
  if (ref.length !== 3 * ID_LENGTH + 2 || ref[ID_LENGTH] !== '/' || ref[step + ID_LENGTH] !== '/') return null;
  if (!idAt(ref, 0) || !idAt(ref, step) || !idAt(ref, 2 * step)) return null;
  return { id: ref.slice(0, ID_LENGTH), gzip: ref.slice(step, step + ID_LENGTH), br: ref.slice(2 * step) };
}

/** `_data/r/ab/abcdef…` for a valid id; null for anything else. */
export function dataPath(id: string): string | null {
  return id.length === ID_LENGTH && idAt(id, 0) ? `${DATA_PREFIX}/r/${id.slice(0, 2)}/${id}` : null;
}

/** Number of person/film index shards. */
export const SHARD_COUNT = 64;

/** One FNV-1a step. */
const fnv = (h: number, byte: number) => Math.imul(h ^ byte, 0x01000193) >>> 0;

/** FNV-1a over the UTF-8 bytes: which shard holds a name. Same in build and runtime. */
export function shardOf(name: string, count = SHARD_COUNT): number {
  let h = 0x811c9dc5;
  // The name's UTF-8 bytes, written out here rather than through a TextEncoder on every lookup.
  for (let i = 0; i < name.length; i++) {
    let c = name.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < name.length) {
      const low = name.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate, as TextEncoder writes it
    if (c < 0x80) h = fnv(h, c);
    else if (c < 0x800) h = fnv(fnv(h, 0xc0 | (c >> 6)), 0x80 | (c & 0x3f));
    else if (c < 0x10000) h = fnv(fnv(fnv(h, 0xe0 | (c >> 12)), 0x80 | ((c >> 6) & 0x3f)), 0x80 | (c & 0x3f));
    else h = fnv(fnv(fnv(fnv(h, 0xf0 | (c >> 18)), 0x80 | ((c >> 12) & 0x3f)), 0x80 | ((c >> 6) & 0x3f)), 0x80 | (c & 0x3f));
  }
  return h % count;
}

/** Lower-case hex of a sha256 digest, with WebCrypto so it runs under Node and Deno. */
export async function sha256Hex(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}
