/**
 * The Node server's DataSource: files under dist/, kept in memory (bounded,
 * the first read first out: a hit does not reorder the cache) and trusted for
 * at most `revalidateMs` after the disk was last asked, so a deleted, replaced
 * or corrupted file is noticed while the server runs and a restored one is
 * picked up again. Time is kept in epochs that a timer ends (running only
 * while some file is trusted), so a read from memory reads no clock.
 */
import { stat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DataSource } from '../../src/store/answer.ts';
import type { Maybe } from '../../src/shared/maybe.ts';
import { ByteLru } from '../../src/shared/lru.ts';
import { isBuildPath } from '../../src/store/refs.ts';

/** Resolves `relative` under `root`, or null when it is not a build path (isBuildPath) or would leave `root`. */
export function resolveWithin(root: string, relative: string): string | null {
  if (!isBuildPath(relative)) return null;
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
  /** The epoch in which the disk last vouched for these bytes. */
  epoch: number;
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
  /** Ends `revalidateMs` after the first check of the disk in it. */
  private epoch = 0;
  private epochTimer: ReturnType<typeof setTimeout> | null = null;
  readonly root: string;

  constructor(root: string, options: DiskDataOptions = {}) {
    this.root = root;
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
    if (hit && hit.epoch === this.epoch) return hit.bytes;
    let loading = this.loading.get(relative);
    if (!loading) {
      loading = this.load(relative, hit).finally(() => this.loading.delete(relative));
      this.loading.set(relative, loading);
    }
    return loading;
  }

  /**
   * The epoch an entry the disk vouched for when asked in `asked`
   * belongs to: -1 (stale at once) when that epoch has ended meanwhile.
   */
  private vouchedIn(asked: number): number {
    return asked === this.epoch ? this.vouch() : -1;
  }

  /**
   * The current epoch, for an entry the disk has just vouched for; it ends `revalidateMs` from its first such entry.
   */
  private vouch(): number {
    if (!this.epochTimer) {
      this.epochTimer = setTimeout(() => {
        this.epoch++;
        this.epochTimer = null;
      }, this.revalidateMs);
      this.epochTimer.unref();
    }
    return this.epoch;
  }

  private async load(relative: string, hit: Entry | undefined): Promise<Uint8Array | null> {
    const epoch = this.epoch; // the disk is asked now: what it says holds for this epoch at most
    const full = resolveWithin(this.root, relative);
    if (!full) return null;
    const info = await stat(full).catch(() => null);
    if (!info?.isFile()) {
      this.cache.delete(relative);
      return null;
    }
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size && hit.ino === info.ino) {
      hit.epoch = this.vouchedIn(epoch);
      return hit.bytes;
    }
    const bytes = await readFile(full).catch(() => null);
    if (!bytes) {
      this.cache.delete(relative);
      return null;
    }
    // Kept as a Buffer: Node writes it to the socket without conversion.
    this.cache.set(relative, {
      bytes,
      mtimeMs: info.mtimeMs,
      size: bytes.length,
      ino: info.ino,
      epoch: this.vouchedIn(epoch),
    });
    return bytes;
  }
}
