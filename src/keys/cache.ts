/**
 * The key check's cache, above every store that answers a key check only
 * asynchronously (Netlify Blobs on the edge, D1 in a Worker): a store read per
 * key at most once per `ttlMs` per isolate, so a busy key costs the store one
 * read a second, not one per request, while a key revoked or rotated anywhere
 * is refused within `ttlMs` plus one read (about 1 s by default; at most 2 s,
 * the bound every runtime keeps). Answers held are given synchronously, so a
 * warm request pays no promise.
 *
 * Only settled answers are shared between requests, never a read in flight:
 * workerd ties a read to the request that began it, and another request
 * awaiting it fails ("Cannot perform I/O on behalf of a different request").
 * So a key no answer is held for is read by each request that asks meanwhile
 * (a cold isolate's first burst), and an answer past `ttlMs` is read again by
 * the first request to find it so, on its own, while the others keep using it
 * until that read lands, but never past `KEY_CACHE_MAX_TTL_MS` after it was
 * read: a busy key still costs one read per `ttlMs`. The cache holds at most
 * `max` answers, dropping the oldest first, so a flood of made-up keys costs
 * store reads, never memory. `Keys` drops a hash's answer the moment it
 * revokes or rotates that key itself, so that isolate refuses it at once; a
 * read that was already in flight then is not remembered.
 *
 * What is held is the key's stored end (null while current, the time it ends
 * for a key revoked or in its grace period, undefined for an unknown key),
 * never a yes or no: `Keys` compares it with its clock at every check, so a
 * key in its grace period is refused the moment its end passes, whatever the
 * cache holds.
 */
import { isPromise, type Maybe } from '../shared/maybe.ts';
import type { KeyEnd } from './contract.ts';

/** Default time an answer about a key is reused. */
export const KEY_CACHE_TTL_MS = 1_000;
/** Longest allowed: a revoked key is refused within 2 s on every runtime. */
export const KEY_CACHE_MAX_TTL_MS = 2_000;
/** Default number of answers held at once (each about 150 bytes). */
export const KEY_CACHE_MAX = 10_000;

export interface KeyCacheOptions {
  /** How long an answer is reused, ms; default 1000, at most 2000; 0 reads every time. */
  ttlMs?: number;
  /** Most answers held at once; default 10,000. */
  max?: number;
  /** Clock, for tests. */
  now?: () => number;
}

/** An answer held: the key's end, until when it is fresh, and whether a request is reading it again now. */
interface Held {
  end: KeyEnd;
  until: number;
  refreshing: boolean;
}

export class KeyCache {
  private readonly answers = new Map<string, Held>();
  /** Counts drops: a read begun before the latest drop may predate a revocation, so it is not remembered. */
  private drops = 0;
  readonly ttlMs: number;
  /** How long past `ttlMs` an answer stands in while one request reads it again: up to the 2 s bound. */
  private readonly staleMs: number;
  private readonly max: number;
  private readonly now: () => number;

  constructor(options: KeyCacheOptions = {}) {
    const { ttlMs = KEY_CACHE_TTL_MS, max = KEY_CACHE_MAX, now = Date.now } = options;
    if (!(ttlMs >= 0 && ttlMs <= KEY_CACHE_MAX_TTL_MS))
      throw new RangeError(`Expected \`ttlMs\` from 0 to ${KEY_CACHE_MAX_TTL_MS}, got ${ttlMs}`);
    if (!(Number.isInteger(max) && max >= 1))
      throw new RangeError(`Expected \`max\` to be a whole number of at least 1, got ${max}`);
    this.ttlMs = ttlMs;
    this.staleMs = KEY_CACHE_MAX_TTL_MS - ttlMs;
    this.max = max;
    this.now = now;
  }

  /** Answers held now (never more than `max`). */
  get size(): number {
    return this.answers.size;
  }

  /**
   * The stored end of `hash`: from memory while the answer is fresh
   * (or being read again), else from this request's own `read`.
   */
  keyEnd(hash: string, read: (hash: string) => Maybe<KeyEnd>): Maybe<KeyEnd> {
    const now = this.now();
    const held = this.answers.get(hash);
    if (held !== undefined) {
      if (held.until > now) return held.end;
      if (held.until + this.staleMs <= now) this.answers.delete(hash);
      else if (held.refreshing) return held.end;
      else held.refreshing = true; // this request reads it again; until then the others keep the answer
    }
    const stopped = () => {
      if (held && this.answers.get(hash) === held) held.refreshing = false;
    };
    let answer: Maybe<KeyEnd>;
    try {
      answer = read(hash);
    } catch (error) {
      stopped();
      throw error;
    }
    if (!isPromise(answer)) {
      this.remember(hash, answer);
      return answer;
    }
    const drops = this.drops;
    return answer.then(
      (end) => {
        // A drop (a revoke here) while this read was in flight: its answer may predate the revocation.
        if (this.drops === drops) this.remember(hash, end);
        else stopped();
        return end;
      },
      (error: unknown) => {
        stopped();
        throw error;
      },
    );
  }

  /** Forgets what is known about `hash` (it was just revoked or rotated through this isolate). */
  drop(hash: string): void {
    this.answers.delete(hash);
    this.drops++;
  }

  /** Forgets every answer (a store that may have missed changes, such as a listener that reconnected). */
  clear(): void {
    this.answers.clear();
    this.drops++;
  }

  private remember(hash: string, end: KeyEnd): void {
    if (this.ttlMs === 0) return;
    this.answers.delete(hash);
    // Map order is insertion order: the first entry is the oldest answer.
    while (this.answers.size >= this.max) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(hash, { end, until: this.now() + this.ttlMs, refreshing: false });
  }
}
