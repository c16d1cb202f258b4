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

export type Encoding = 'identity' | 'gzip' | 'br';

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
 * Where one encoding of an answer is stored: a file of its own (`file` is then
 * the answer's own id) or bytes `start` to `end` of a pack file. `file` is the
 * id (content hash) of the whole file, which is checked before any slice of
 * it is used. A pack of answers as sent (identity) is stored gzipped, its
 * ranges those of the inflated bytes; a pack of compressed copies as is.
 */
export interface Place {
  file: string;
  /** Null for a file of its own; [start, end) within the pack otherwise. */
  range: [number, number] | null;
}

/**
 * Whether the file a place names is a gzipped pack, to inflate before its range is cut: a pack
 * of answers as sent (identity) is; a pack of compressed copies, or a file of its own, is not.
 */
export const isGzippedPack = (encoding: Encoding, place: Place): boolean => encoding === 'identity' && place.range !== null;

export interface ParsedRef {
  /** The id of each encoding's own bytes (what its ETag is made from). */
  id: string;
  gzip?: string;
  br?: string;
  /** Where each encoding's bytes are. */
  at: { identity: Place } & Partial<Record<'gzip' | 'br', Place>>;
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

/** One encoding's part of a ref: `<id>` or `<id>@<pack id>:<start>-<end>`; null for anything else. */
function parsePart(part: string): { id: string; place: Place } | null {
  if (!idAt(part, 0)) return null;
  const id = part.slice(0, ID_LENGTH);
  if (part.length === ID_LENGTH) return { id, place: { file: id, range: null } };
  const packEnd = 2 * ID_LENGTH + 1;
  if (part[ID_LENGTH] !== '@' || !idAt(part, ID_LENGTH + 1) || part[packEnd] !== ':') return null;
  const dash = part.indexOf('-', packEnd);
  const start = numberAt(part, packEnd + 1, dash);
  const end = dash === -1 ? -1 : numberAt(part, dash + 1, part.length);
  if (start < 0 || end < start) return null;
  return { id, place: { file: part.slice(ID_LENGTH + 1, packEnd), range: [start, end] } };
}

/**
 * A ref is one part (identity) or three (identity, gzip, brotli) joined by
 * `/`, each `<id>` or `<id>@<pack id>:<start>-<end>`; read without a pattern.
 * Null for anything else.
 */
export function parseRef(ref: FileRef): ParsedRef | null {
  const parts = ref.split('/');
  if (parts.length !== 1 && parts.length !== 3) return null;
  const identity = parsePart(parts[0]);
  if (!identity) return null;
  const parsed: ParsedRef = { id: identity.id, at: { identity: identity.place } };
  if (parts.length === 1) return parsed;
  const gzip = parsePart(parts[1]);
  const br = parsePart(parts[2]);
  if (!gzip || !br) return null;
  parsed.gzip = gzip.id;
  parsed.br = br.id;
  parsed.at.gzip = gzip.place;
  parsed.at.br = br.place;
  return parsed;
}

/** The part of a ref naming where `id` is: its own file, or a range of a pack. */
export const refPart = (id: string, pack?: { id: string; start: number; end: number }): string =>
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
