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
const ID = /^[0-9a-f]{20}$/;

export type Encoding = 'identity' | 'gzip' | 'br';

export interface ParsedRef {
  id: string;
  gzip?: string;
  br?: string;
}

export function parseRef(ref: FileRef): ParsedRef | null {
  const [id, gzip, br, ...rest] = ref.split('/');
  if (!ID.test(id) || rest.length > 0) return null;
  if (gzip === undefined && br === undefined) return { id };
  if (!ID.test(gzip ?? '') || !ID.test(br ?? '')) return null;
  return { id, gzip, br };
}

/** `_data/r/ab/abcdef…` for a valid id; null for anything else. */
export function dataPath(id: string): string | null {
  return ID.test(id) ? `${DATA_PREFIX}/r/${id.slice(0, 2)}/${id}` : null;
}

/** Number of person/film index shards. */
export const SHARD_COUNT = 64;

/** FNV-1a over the UTF-8 bytes: which shard holds a name. Same in build and runtime. */
export function shardOf(name: string, count = SHARD_COUNT): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(name)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
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
