/**
 * The Node server's DataSource: files under dist/, kept in memory (bounded,
 * the first read first out: a hit does not reorder the cache) and checked
 * against the disk at most once per `revalidateMs`, so a deleted, replaced or
 * corrupted file is noticed while the server runs and a restored one is
 * picked up again.
 */
import { stat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DataSource } from '../api/archive.ts';
import type { Maybe } from '../api/maybe.ts';
import { ByteLru } from '../lru.ts';

/** Resolves `relative` under `root`, or null when it would leave it (`..`, absolute, NUL). */
export function resolveWithin(root: string, relative: string): string | null {
  if (relative.includes('\0') || relative.includes('\\') || path.isAbsolute(relative)) return null;
  const full = path.resolve(root, relative);
  const rel = path.relative(root, full);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return full;
}

interface Entry {
  bytes: Uint8Array;
  mtimeMs: number;
  size: number;
  ino: number;
  checkedAt: number;
}

export interface DiskDataOptions {
  /** How long a cached file is trusted before the disk is asked again; default 1000 ms. */
  revalidateMs?: number;
  /** Most bytes kept in memory; default 256 MiB. */
  maxBytes?: number;
}

export class DiskData implements DataSource {
  private readonly cache: ByteLru<Entry>;
  private readonly revalidateMs: number;
  /** Reads under way, by path: as many as requests waiting on distinct files, no more. */
  private readonly loading = new Map<string, Promise<Uint8Array | null>>();

  constructor(
    readonly root: string,
    options: DiskDataOptions = {},
  ) {
    this.revalidateMs = options.revalidateMs ?? 1000;
    this.cache = new ByteLru(options.maxBytes ?? 256 * 1024 * 1024);
  }

  /** Bytes held in memory now. */
  get cachedBytes(): number {
    return this.cache.bytes;
  }

  /**
   * From memory, at once, while the last check of the disk is recent enough;
   * otherwise after asking the disk, once for all the requests that want the
   * file meanwhile (they get the same bytes, so they are also hashed once).
   */
  read(relative: string): Maybe<Uint8Array | null> {
    const hit = this.cache.peek(relative);
    if (hit && Date.now() - hit.checkedAt < this.revalidateMs) return hit.bytes;
    let loading = this.loading.get(relative);
    if (!loading) {
      loading = this.load(relative, hit).finally(() => this.loading.delete(relative));
      this.loading.set(relative, loading);
    }
    return loading;
  }

  private async load(relative: string, hit: Entry | undefined): Promise<Uint8Array | null> {
    const now = Date.now();
    const full = resolveWithin(this.root, relative);
    if (!full) return null;
    const info = await stat(full).catch(() => null);
    if (!info?.isFile()) {
      this.cache.delete(relative);
      return null;
    }
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size && hit.ino === info.ino) {
      hit.checkedAt = now;
      return hit.bytes;
    }
    const bytes = await readFile(full).catch(() => null);
    if (!bytes) {
      this.cache.delete(relative);
      return null;
    }
    // Kept as a Buffer: Node writes it to the socket without conversion.
    this.cache.set(relative, { bytes, mtimeMs: info.mtimeMs, size: bytes.length, ino: info.ino, checkedAt: now });
    return bytes;
  }
}
