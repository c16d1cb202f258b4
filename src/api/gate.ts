/**
 * Who may ask, and how often: the key first (403), then the per-key rate
 * (429), both synchronous when the key store can answer at once.
 */
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../shared/limits.ts';
import { RateLimiter } from '../shared/rate-limit.ts';
import { isPromise, type Maybe } from '../shared/maybe.ts';
import { type ApiReply, REPLIES, tooMany } from '../http/reply.ts';
import type { KeyCheck } from '../keys/contract.ts';

export interface GateOptions {
  keys: KeyCheck;
  /** Requests per key per minute; default 60 (section 8). */
  perMinute?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export class Gate {
  readonly limiter: RateLimiter;
  private readonly keys: KeyCheck;

  constructor(options: GateOptions) {
    this.keys = options.keys;
    this.limiter = new RateLimiter({ limit: options.perMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE, now: options.now });
  }

  /**
   * When the request, made at `now`, may go on: until when its key works
   * (Infinity: no end; a time: its grace period's end, which caps how long
   * the answer may be kept); otherwise the reply that refuses it.
   */
  check(key: string | null, now: number): Maybe<ApiReply | number> {
    if (!key) return REPLIES.forbidden;
    const until = this.keys.until ? this.keys.until(key) : this.keys.verify(key);
    return isPromise(until) ? until.then((u) => this.rate(key, u, now)) : this.rate(key, until, now);
  }

  /** The rate, counted only for a good key: a refused key never opens a window. */
  private rate(key: string, until: number | boolean, now: number): ApiReply | number {
    if (until === false) return REPLIES.forbidden;
    const decision = this.limiter.hit(key, now);
    if (!decision.ok) return tooMany(this.limiter.limit, decision.retryAfter);
    return until === true ? Infinity : until;
  }
}
