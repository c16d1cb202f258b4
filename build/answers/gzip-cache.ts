/**
 * The packs' gzip, remembered by content: a pack's gzipped bytes kept in a
 * folder (the build's: node_modules/.cache/build-gzip/) under the SHA-256 of
 * the bytes gzipped, zlib's version and the level, so that a rebuild of the
 * same source inflates nothing it gzipped before (about 1 s of the thread
 * pool's CPU, on a machine of two cores). Every pack is still made, from the
 * source, each build: only its compression is looked up. An entry is used only
 * when its gzip trailer (CRC-32 and length) matches the bytes, else gzipped
 * again; a cache that cannot be read or written costs only that time.
 */
import { hash } from 'node:crypto';
import { readFileSync, utimesSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { writeWhole } from '../../lib/write-whole.ts';

/** Entries no build used for this long are removed (pruneGzipCache). */
export const GZIP_CACHE_DAYS = 7;

/** Whether `gz` ends as the gzip of `input` does: its trailer's CRC-32 and length (RFC 1952). */
function trailerMatches(gz: Uint8Array, input: Uint8Array): boolean {
  if (gz.length < 18) return false;
  const trailer = new DataView(gz.buffer, gz.byteOffset + gz.length - 8, 8);
  return trailer.getUint32(0, true) === zlib.crc32(input) && trailer.getUint32(4, true) === input.length % 2 ** 32;
}

/**
 * An entry's bytes, marked as used now (kept by pruneGzipCache for another
 * GZIP_CACHE_DAYS, by the stage cache among its latest); null when there is
 * none. Read at once: a rebuild reads some 600, small and in the page cache,
 * and each read through the thread pool (open, stat, read, close) cost this
 * thread more than the read.
 */
export function readHeld(file: string): Buffer | null {
  try {
    const held = readFileSync(file);
    const now = new Date();
    utimesSync(file, now, now);
    return held;
  } catch {
    return null;
  }
}

/** Folders made (or being made) by this thread: each once, not once an entry. */
const folders = new Map<string, Promise<unknown>>();
function made(folder: string): Promise<unknown> {
  let making = folders.get(folder);
  if (!making) {
    folders.set(folder, (making = mkdir(folder, { recursive: true })));
    making.catch(() => folders.delete(folder));
  }
  return making;
}

/** Writes `file` whole or not at all: a reader never sees half of it. */
async function keep(file: string, bytes: Uint8Array): Promise<void> {
  const folder = path.dirname(file);
  await made(folder);
  await writeWhole(file, bytes, { folder: 'made' }).catch((error: unknown) => {
    folders.delete(folder); // perhaps removed since (the next entry makes it again)
    throw error;
  });
}

/**
 * `input` gzipped by `gzip` at `level`, or as a build before gzipped the same
 * bytes, kept in `folder`; without a folder, gzipped.
 */
export async function cachedGzip(
  input: Buffer,
  level: number,
  gzip: (input: Buffer) => Promise<Uint8Array>,
  folder?: string,
): Promise<Uint8Array> {
  if (!folder) return gzip(input);
  const file = path.join(folder, `${hash('sha256', input)}-z${process.versions.zlib}-${level}.gz`);
  const held = readHeld(file);
  if (held && trailerMatches(held, input)) return held;
  const gzipped = await gzip(input);
  await keep(file, gzipped).catch(() => {});
  return gzipped;
}

/** Removes the entries no build used for GZIP_CACHE_DAYS (and leftovers of writes cut short). */
export async function pruneGzipCache(folder: string, now = Date.now()): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const file = path.join(folder, name);
      const stats = await stat(file).catch(() => null);
      if (stats && now - stats.mtimeMs > GZIP_CACHE_DAYS * 86_400_000) await rm(file, { force: true });
    }),
  );
}
