/**
 * Fixed-window request counter per key, in memory, per instance. Memory is
 * bounded: at most `maxKeys` windows are kept; when full, expired windows go
 * first and then the oldest window (whose key then starts a fresh window:
 * a small, bounded slack under a flood of distinct keys, never unbounded growth).
 */
export interface RateLimitOptions {
  /** Requests allowed per key per window. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs?: number;
  /** Most windows kept at once. */
  maxKeys?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfter: number };

const PASS: RateDecision = { ok: true };

interface Window {
  start: number;
  count: number;
}

export class RateLimiter {
  readonly limit: number;
  readonly windowMs: number;
  readonly maxKeys: number;
  private readonly now: () => number;
  private readonly windows = new Map<string, Window>();

  constructor({ limit, windowMs = 60_000, maxKeys = 100_000, now = Date.now }: RateLimitOptions) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`Expected \`limit\` to be a whole number from 1 and up, got ${limit}`);
    this.limit = limit;
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
    this.now = now;
  }

  /** Number of keys currently tracked. */
  get size(): number {
    return this.windows.size;
  }

  /** Counts one request for `key` at `now` (default: the limiter's clock) and says whether it may pass. */
  hit(key: string, now = this.now()): RateDecision {
    let w = this.windows.get(key);
    if (w && now - w.start >= this.windowMs) {
      this.windows.delete(key); // re-inserted below, so the map stays ordered by window start
      w = undefined;
    }
    if (!w) {
      this.makeRoom(now);
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count < this.limit) {
      w.count++;
      return PASS;
    }
    return { ok: false, retryAfter: Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)) };
  }

  private makeRoom(now: number): void {
    if (this.windows.size < this.maxKeys) return;
    for (const [key, w] of this.windows) {
      if (this.windows.size < this.maxKeys) return;
      if (now - w.start >= this.windowMs || this.windows.size >= this.maxKeys) this.windows.delete(key);
    }
  }
}
