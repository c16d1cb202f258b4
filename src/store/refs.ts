/**
 * Mapping a reference from the manifest to a stored file. The only way a
 * request reaches bytes on disk: paths are built from hex ids checked here,
 * never from anything the client sent.
 */
import type { FileRef } from '../shared/types.ts';

/** Folder under dist/ that holds all archive data; never served directly. */
export const DATA_PREFIX = '_data';
export const MANIFEST_PATH = `${DATA_PREFIX}/manifest.json`;
export const ID_LENGTH = 20;

/**
 * A stored file's id, from the lower-case hex SHA-256 of its bytes: its first
 * ID_LENGTH digits. The build hashes with Node's crypto, the reader with
 * WebCrypto (sha256Hex) and the deploy check again with Node's: one digest,
 * one id, named here.
 */
export const contentId = (sha256Hex: string): string => sha256Hex.slice(0, ID_LENGTH);

/** Whether `text` from `start` holds an id: ID_LENGTH lower-case hex digits. */
function idAt(text: string, start: number): boolean {
  if (start + ID_LENGTH > text.length) return false;
  for (let i = start; i < start + ID_LENGTH; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/**
 * Where an answer is stored: a file of its own (`file` is then the answer's
 * own id) or bytes `start` to `end` of a pack, a file of small answers laid
 * end to end and stored gzipped, the range being of its inflated bytes.
 * `file` is the id (content hash) of the whole file, which is checked before
 * any slice of it is used.
 */
export interface Place {
  file: string;
  /** Null for a file of its own; [start, end) within the inflated pack otherwise. */
  range: [number, number] | null;
}

export interface ParsedRef {
  /** The id of the answer's own bytes (what its ETag is made from). */
  id: string;
  /** Where its bytes are. */
  at: Place;
}

/** Whether `text` from `start` to `end` is a whole number written in decimal digits, without leading zeros. */
function numberAt(text: string, start: number, end: number): number {
  if (end <= start || end - start > 10 || (text[start] === '0' && end - start > 1)) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * A ref is `<id>` (a file of its own) or `<id>@<pack id>:<start>-<end>` (a
 * range of a pack), read without a pattern. Null for anything else.
 */
export function parseRef(ref: FileRef): ParsedRef | null {
  if (!idAt(ref, 0)) return null;
  const id = ref.slice(0, ID_LENGTH);
  if (ref.length === ID_LENGTH) return { id, at: { file: id, range: null } };
  const packEnd = 2 * ID_LENGTH + 1;
  if (ref[ID_LENGTH] !== '@' || !idAt(ref, ID_LENGTH + 1) || ref[packEnd] !== ':') return null;
  const dash = ref.indexOf('-', packEnd);
  const start = numberAt(ref, packEnd + 1, dash);
  const end = dash === -1 ? -1 : numberAt(ref, dash + 1, ref.length);
  if (start < 0 || end < start) return null;
  return { id, at: { file: ref.slice(ID_LENGTH + 1, packEnd), range: [start, end] } };
}

/** A ref naming where `id` is: its own file, or a range of a pack. */
export const refOf = (id: string, pack?: { id: string; start: number; end: number }): string =>
  pack ? `${id}@${pack.id}:${pack.start}-${pack.end}` : id;

/**
 * Whether `path` can name a file of the build: segments of letters, digits,
 * `_`, `-` and `.`, none empty or starting with a dot. Every data source
 * refuses any other path before it touches a disk or a URL, so no path can be
 * read differently by the runtime (a `%`, `?`, `#`, `\` or dot segment that
 * a URL parser would decode or cut) than it was checked.
 */
export function isBuildPath(path: string): boolean {
  return path.length <= 256 && /^(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*\/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(path);
}

/** `_data/r/ab/abcdef…` for a valid id; null for anything else. */
export function dataPath(id: string): string | null {
  return id.length === ID_LENGTH && idAt(id, 0) ? `${DATA_PREFIX}/r/${id.slice(0, 2)}/${id}` : null;
}

/** Number of person/film index shards (each with the pack of its answers). */
export const SHARD_COUNT = 256;
/** Number of IMDb id index shards (each with the pack of its answers). */
export const ID_SHARD_COUNT = 128;
/**
 * Number of record index shards (`Manifest.records`): films',
 * people's and companies' records in the pack of their shard.
 */
export const RECORD_SHARD_COUNT = 64;

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
    else
      h = fnv(
        fnv(fnv(fnv(h, 0xf0 | (c >> 18)), 0x80 | ((c >> 12) & 0x3f)), 0x80 | ((c >> 6) & 0x3f)),
        0x80 | (c & 0x3f),
      );
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
