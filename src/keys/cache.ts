/**
 * The key check's cache, above every store that answers a key check only
 * asynchronously (Netlify Blobs on the edge, D1 in a Worker): a store read per
 * key at most once per `ttlMs` per isolate, so a busy key costs the store one
 * read a second, not one per request, while a key revoked or rotated anywhere
 * is refused within `ttlMs` plus one read (about 1 s by default; at most 2 s,
 * the bound every runtime keeps). Answers held are given synchronously, so a
 * warm request pays no promise.
 *
 * Many checks of one uncached key at once share one read (in flight). The
 * cache holds at most `max` answers, dropping the oldest first, so a flood of
 * made-up keys costs store reads, never memory. `Keys` drops a hash's answer
 * the moment it revokes or rotates that key itself, so that isolate refuses it
 * at once; a read that was already in flight then is not remembered.
 *
 * What is held is the key's stored end (null while current, the time it ends
 * for a key revoked or in its grace period, undefined for an unknown key),
 * never a yes or no: `Keys` compares it with its clock at every check, so a
 * key in its grace period is refused the moment its end passes, whatever the
 * cache holds.
 */
import { isPromise, type Maybe } from '../shared/maybe.ts';

/** A key's stored end: null while it is the current key, the time (ms) it ends or ended, undefined for a hash never issued. */
export type KeyEnd = number | null | undefined;

/** Default time an answer about a key is reused. */
export const KEY_CACHE_TTL_MS = 1_000;
/** Longest allowed: a revoked key is refused within 2 s on every runtime. */
export const KEY_CACHE_MAX_TTL_MS = 2_000;
/** Default number of answers held at once (each about 150 bytes). */
export const KEY_CACHE_MAX = 10_000;

export interface KeyCacheOptions {
  /** How long an answer is reused, ms; default 1000, at most 2000; 0 reads every time (in-flight reads are still shared). */
  ttlMs?: number;
  /** Most answers held at once; default 10,000. */
  max?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export class KeyCache {
  private readonly answers = new Map<string, { end: KeyEnd; until: number }>();
  private readonly pending = new Map<string, Promise<KeyEnd>>();
  readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(options: KeyCacheOptions = {}) {
    const { ttlMs = KEY_CACHE_TTL_MS, max = KEY_CACHE_MAX, now = Date.now } = options;
    if (!(ttlMs >= 0 && ttlMs <= KEY_CACHE_MAX_TTL_MS)) throw new RangeError(`Expected \`ttlMs\` from 0 to ${KEY_CACHE_MAX_TTL_MS}, got ${ttlMs}`);
    if (!(Number.isInteger(max) && max >= 1)) throw new RangeError(`Expected \`max\` to be a whole number of at least 1, got ${max}`);
    this.ttlMs = ttlMs;
    this.max = max;
    this.now = now;
  }

  /** Answers held now (never more than `max`). */
  get size(): number {
    return this.answers.size;
  }

  /** The stored end of `hash`: from memory while the answer is fresh, else from `read`, one read at a time per hash. */
  keyEnd(hash: string, read: (hash: string) => Maybe<KeyEnd>): Maybe<KeyEnd> {
    const held = this.answers.get(hash);
    if (held !== undefined) {
      if (held.until > this.now()) return held.end;
      this.answers.delete(hash);
    }
    const inFlight = this.pending.get(hash);
    if (inFlight) return inFlight;
    const answer = read(hash);
    if (!isPromise(answer)) {
      this.remember(hash, answer);
      return answer;
    }
    const shared: Promise<KeyEnd> = answer.then(
      (end) => {
        // Dropped (revoked here) while in flight: this answer may predate the revocation.
        if (this.pending.get(hash) === shared) this.remember(hash, end);
        return end;
      },
    ).finally(() => {
      if (this.pending.get(hash) === shared) this.pending.delete(hash);
    });
    this.pending.set(hash, shared);
    return shared;
  }

  /** Forgets what is known about `hash` (it was just revoked or rotated through this isolate). */
  drop(hash: string): void {
    this.answers.delete(hash);
    this.pending.delete(hash);
  }

  private remember(hash: string, end: KeyEnd): void {
    if (this.ttlMs === 0) return;
    this.answers.delete(hash);
    // Map order is insertion order: the first entry is the oldest answer.
    while (this.answers.size >= this.max) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(hash, { end, until: this.now() + this.ttlMs });
  }
}
