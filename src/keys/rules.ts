/**
 * The key rules, for every runtime: who may sign in how often, how long a
 * token and a session live, one active key per address, when a rotated key
 * stops. `Keys` decides them all, once, and leaves the storing to a
 * `KeyBackend` (src/keys/contract.ts) that decides nothing and whose every
 * operation is atomic: SQLite locally and when self-hosted
 * (src/keys/stores/sqlite.node.ts), PostgreSQL for several servers on one
 * set of keys (adapters/_node/postgres-keys.ts), Netlify Blobs on Netlify
 * (adapters/_netlify/blobs-keys.ts), Cloudflare D1 in a Worker
 * (adapters/_cloudflare/d1-keys.ts). The secrets are src/keys/secrets.ts,
 * the address rules src/keys/address.ts.
 *
 * The request path asks `verify(key)`, which answers synchronously whenever
 * the backend can (the SQLite store always can), so the API pays no promise
 * for its key check. Over a store that answers only asynchronously (Blobs,
 * D1, PostgreSQL), `Keys` is given a cache (src/keys/cache.ts): each key is read at most
 * once a second per isolate, and a key revoked or rotated anywhere is
 * refused within about a second.
 *
 * Rotation may leave the old key a grace period (`GRACE_PERIODS`: now, 1 h,
 * 24 h, 7 days): the store keeps its end (a `revoked_at` to come) and `Keys`
 * compares it with its clock at every check, so the old key stops at its end
 * without any write. An address has at most one current key and at most one
 * key in its grace period: rotating again ends the one in grace now, and a
 * revoke of the current key ends both.
 */
import { isPromise, type Maybe } from '../shared/maybe.ts';
import { SESSION_TTL_MS, SIGN_INS_PER_WINDOW, SIGN_IN_WINDOW_MS, TOKEN_TTL_MS } from '../shared/limits.ts';
import { KEY_MESSAGES } from '../shared/messages.ts';
import { addressOf, normalizeEmail } from './address.ts';
import { KeyCache, type KeyCacheOptions } from './cache.ts';
import {
  type EndingKey,
  type KeyBackend,
  type KeyCheck,
  type KeyEnd,
  KeyError,
  type KeyInfo,
  type KeyListing,
  type NewKey,
  type NewToken,
  type Rotation,
  type SessionInfo,
  type StoppedKey,
} from './contract.ts';
import {
  generateKey,
  generateSession,
  generateToken,
  HashMemo,
  hashSecret,
  isKeyShaped,
  isSessionShaped,
  isTokenShaped,
  keyId,
  type SecretHash,
} from './secrets.ts';

/** How often sign-ins forget tokens that count no more and sessions that ended (where the store keeps them). */
const PURGE_EVERY_MS = 60_000;
/**
 * How long `/health` reuses the key store's probe: health is polled, and a second is as fresh as a key check's cache.
 */
export const PROBE_TTL_MS = 1_000;

const HOUR_MS = 3_600_000;
/**
 * How long a rotated key may go on working, by the name the
 * portal and the CLI give it; `now` (and `0`) ends it at once.
 */
export const GRACE_PERIODS = { now: 0, '1h': HOUR_MS, '24h': 24 * HOUR_MS, '7d': 7 * 24 * HOUR_MS } as const;
export type GraceName = keyof typeof GRACE_PERIODS;
/** The grace period named (`now`, `0`, `1h`, `24h`, `7d`) in milliseconds, or null for any other value. */
export function graceOf(name: unknown): number | null {
  if (name === '0' || name === 0) return 0;
  return typeof name === 'string' && Object.hasOwn(GRACE_PERIODS, name) ? GRACE_PERIODS[name as GraceName] : null;
}

/** Whether a key whose stored end is `end` works at `now`: the current key, or one whose end is still to come. */
const worksAt = (end: KeyEnd, now: number) => end === null || (end !== undefined && end > now);

/** A grace period as given: a whole number of milliseconds from 0 to the longest choice (7 days). */
function checkedGrace(graceMs: number): number {
  if (!(Number.isInteger(graceMs) && graceMs >= 0 && graceMs <= GRACE_PERIODS['7d']))
    throw new RangeError(`Expected a grace period from 0 to ${GRACE_PERIODS['7d']} ms, got ${graceMs}`);
  return graceMs;
}

/** Sign-in, issue, rotate, revoke, list and verify keys over any backend. */
export class Keys implements KeyCheck {
  private readonly hash: SecretHash;
  private readonly hashes: HashMemo;
  readonly backend: KeyBackend;
  private readonly now: () => number;
  /** Answers about keys, for a backend that can only answer asynchronously; null reads the backend every time. */
  readonly cache: KeyCache | null;
  private readonly keyEnd: (hash: string) => Maybe<KeyEnd>;
  private purgedAt = 0;
  /**
   * The last probe's outcome and until when it holds (an outcome,
   * never a probe in flight: workerd ties that to its request).
   */
  private probed: { failed: unknown; until: number } | null = null;

  /**
   * `cache`: keep answers about keys for `cache.ttlMs` (Blobs, D1);
   * without it every check asks the backend (SQLite: its memory).
   * `hash`: the sha256 of keys, tokens and sessions (default `hashSecret`;
   * a runtime may give its own, the same hex).
   */
  constructor(
    backend: KeyBackend,
    now: () => number = Date.now,
    cache?: KeyCacheOptions,
    hash: SecretHash = hashSecret,
  ) {
    this.hash = hash;
    this.hashes = new HashMemo(undefined, hash);
    this.backend = backend;
    this.now = now;
    this.cache = cache ? new KeyCache({ now, ...cache }) : null;
    const read = (hash: string) => backend.keyEnd(hash);
    this.keyEnd = this.cache ? (hash) => this.cache!.keyEnd(hash, read) : read;
  }

  /** The request path's check: a key of the right shape that is current, or in its grace period. */
  verify(key: string): Maybe<boolean> {
    const until = this.until(key);
    return isPromise(until) ? until.then((u) => u !== false) : until !== false;
  }

  /**
   * Until when a key works: false when it does not (unknown, revoked, its
   * grace period over), Infinity for a current key, else the time (ms) its
   * grace period ends, so that no answer given for it is kept past then.
   */
  until(key: string): Maybe<number | false> {
    // A remembered hash was a key's (an unshaped text is active under
    // no hash); anything else is hashed only when shaped like a key.
    const hash = this.hashes.peek(key) ?? (isKeyShaped(key) ? this.hashes.get(key) : undefined);
    if (hash === undefined) return false;
    const end = this.keyEnd(hash);
    return isPromise(end) ? end.then((e) => this.untilOf(e)) : this.untilOf(end);
  }

  private untilOf(end: KeyEnd): number | false {
    if (end === null) return Infinity;
    return worksAt(end, this.now()) ? end! : false;
  }

  /**
   * Whether the store can answer key checks now (`/health`): its probe's
   * outcome, reused for `PROBE_TTL_MS`; until there is one, each request
   * probes for itself. Throws or rejects with the store's error when it cannot.
   */
  probe(): Maybe<void> {
    const probe = this.backend.probe;
    if (!probe) return;
    const now = this.now();
    if (this.probed && this.probed.until > now) {
      if (this.probed.failed !== undefined) throw this.probed.failed;
      return;
    }
    const settle = (failed: unknown) => {
      this.probed = { failed, until: this.now() + PROBE_TTL_MS };
      if (failed !== undefined) throw failed;
    };
    let answer: Maybe<void>;
    try {
      answer = probe.call(this.backend);
    } catch (error) {
      return settle(error ?? new Error('the key store failed'));
    }
    if (!isPromise(answer)) return settle(undefined);
    return answer.then(
      () => settle(undefined),
      (error: unknown) => settle(error ?? new Error('the key store failed')),
    );
  }

  /**
   * The ids of the keys a store write stopped (or gave an end), for the
   * shared cache's purge; their cached answers are dropped, so this isolate
   * sees the new ends at once. Empty: nothing changed.
   */
  private retired(stopped: StoppedKey[] | StoppedKey | null): string[] {
    const changed = stopped === null ? [] : Array.isArray(stopped) ? stopped : [stopped];
    for (const { hash } of changed) this.cache?.drop(hash);
    return changed.map((k) => k.id);
  }

  /**
   * A new single-use sign-in token for `email`; 429 past the per-address
   * limit. With `deliver` (the mailer), a token it fails to hand over is
   * removed again and the error thrown: only links actually sent count.
   */
  async signIn(
    email: string,
    deliver?: (address: string, token: string) => Promise<void>,
  ): Promise<{ email: string; token: string }> {
    const address = addressOf(email);
    const token = generateToken();
    const now = this.now();
    const record: NewToken = { hash: this.hash(token), email: address, createdAt: now, expiresAt: now + TOKEN_TTL_MS };
    const outcome = await this.backend.addToken(record, { since: now - SIGN_IN_WINDOW_MS, max: SIGN_INS_PER_WINDOW });
    await this.purge(now);
    // The address may ask again once the oldest link it holds leaves the window.
    if (!outcome.stored)
      throw new KeyError(
        429,
        KEY_MESSAGES.tooManyLinks,
        Math.max(1, Math.ceil((outcome.oldest + SIGN_IN_WINDOW_MS - now) / 1000)),
      );
    try {
      await deliver?.(address, token);
    } catch (error) {
      await this.backend.dropToken(record);
      throw error;
    }
    return { email: address, token };
  }

  /**
   * At most once a minute: tokens past both the sign-in window and their lifetime, and ended sessions, are forgotten.
   */
  private async purge(now: number): Promise<void> {
    if (!this.backend.purge || now - this.purgedAt <= PURGE_EVERY_MS) return;
    this.purgedAt = now;
    await this.backend.purge(now - Math.max(SIGN_IN_WINDOW_MS, TOKEN_TTL_MS), now);
  }

  /** Uses up a sign-in token: a session for its address, with the address's key state. */
  async openSession(token: string): Promise<SessionInfo> {
    if (!isTokenShaped(token)) throw new KeyError(401, KEY_MESSAGES.badToken);
    const session = generateSession();
    const now = this.now();
    const email = await this.backend.openSession(this.hash(token), this.hash(session), now, now + SESSION_TTL_MS);
    if (email === null) throw new KeyError(401, KEY_MESSAGES.badToken);
    return { session, email, ...(await this.keyState(email, now)) };
  }

  /** An address's current key and its key in its grace period. */
  private async keyState(email: string, now: number): Promise<Pick<SessionInfo, 'key' | 'ending'>> {
    const [key, ending] = await Promise.all([this.backend.activeKey(email), this.backend.endingKey(email, now)]);
    return { key, ending };
  }

  /** The address a session belongs to; 401 for a missing, unknown or expired session. */
  async sessionEmail(session: string | null | undefined): Promise<string> {
    if (!isSessionShaped(session)) throw new KeyError(401, KEY_MESSAGES.badSession);
    const email = await this.backend.sessionEmail(this.hash(session), this.now());
    if (email === null) throw new KeyError(401, KEY_MESSAGES.badSession);
    return email;
  }

  /** What a live session shows after a reload: its address and that address's key state; 401 as sessionEmail. */
  async account(session: string | null | undefined): Promise<Omit<SessionInfo, 'session'>> {
    const email = await this.sessionEmail(session);
    return { email, ...(await this.keyState(email, this.now())) };
  }

  /** Signs a live session out: deleted from the store, so it answers 401 from then on; 401 when it is not live. */
  async signOut(session: string | null | undefined): Promise<void> {
    await this.sessionEmail(session);
    await this.backend.endSession(this.hash(session!));
  }

  /** A key for an address that has none; 409 when it has one. */
  async issue(email: string): Promise<string> {
    const { key, record } = this.newKey(addressOf(email));
    if (!(await this.backend.issue(record))) throw new KeyError(409, KEY_MESSAGES.hasKey);
    return key;
  }

  /**
   * A new key in place of the address's active one, which goes on working for
   * `graceMs` (0: stops at once; see `GRACE_PERIODS`); a key still in its grace
   * period from an earlier rotation stops now. 409 when it has no key.
   * Every rule that stops a key resolves to the ids of all it stopped, so the
   * caller purges each from a shared cache (the old key's answers, kept
   * before, would outlive its grace; an earlier key's grace ends here).
   */
  async rotate(email: string, graceMs = 0): Promise<Rotation> {
    const { key, record } = this.newKey(normalizeEmail(email));
    const now = this.now();
    const stopped = this.retired(await this.backend.rotate(record, now, now + checkedGrace(graceMs)));
    if (stopped.length === 0) throw new KeyError(409, KEY_MESSAGES.noKey);
    return { key, stopped };
  }

  /**
   * Revokes the address's active key, and its key in its grace
   * period with it: the ids stopped; 409 when it has no active key.
   */
  async revoke(email: string): Promise<string[]> {
    const stopped = this.retired(await this.backend.revoke(normalizeEmail(email), this.now()));
    if (stopped.length === 0) throw new KeyError(409, KEY_MESSAGES.noKey);
    return stopped;
  }

  /**
   * Stops now the address's key in its grace period (the portal's
   * "Stop the old key now"): its id; 409 when it has none.
   */
  async endGrace(email: string): Promise<string[]> {
    const stopped = this.retired(await this.backend.endGrace(normalizeEmail(email), this.now()));
    if (stopped.length === 0) throw new KeyError(409, KEY_MESSAGES.noEnding);
    return stopped;
  }

  /**
   * Rotates the key given (the CLI), leaving it `graceMs` to live:
   * 403 unless it is the current key; of two at once, one wins.
   */
  async rotateKey(current: string, graceMs = 0): Promise<Rotation> {
    const hash = this.hashes.get(current);
    const owner = isKeyShaped(current) ? await this.backend.owner(hash) : null;
    if (!owner || owner.end !== null) throw new KeyError(403, KEY_MESSAGES.forbidden);
    const { key, record } = this.newKey(owner.email);
    const now = this.now();
    const stopped = this.retired(await this.backend.rotate(record, now, now + checkedGrace(graceMs), hash));
    if (stopped.length === 0) throw new KeyError(403, KEY_MESSAGES.forbidden);
    return { key, stopped };
  }

  /**
   * Revokes the key given (the CLI): the current key (and its address's key in
   * grace with it), or a key in its grace period (ended now); 403 for any other.
   * Resolves to the ids of the keys it stopped, for the shared cache's purge.
   */
  async revokeKey(current: string): Promise<string[]> {
    const hash = this.hashes.get(current);
    const owner = isKeyShaped(current) ? await this.backend.owner(hash) : null;
    const now = this.now();
    if (!owner || !worksAt(owner.end, now)) throw new KeyError(403, KEY_MESSAGES.forbidden);
    const done =
      owner.end === null
        ? await this.backend.revoke(owner.email, now, hash)
        : await this.backend.endGrace(owner.email, now, hash);
    const stopped = this.retired(done);
    if (stopped.length === 0) throw new KeyError(403, KEY_MESSAGES.forbidden);
    return stopped;
  }

  /** The address's active key, without the key. */
  activeKey(email: string): Promise<KeyInfo | null> {
    return this.backend.activeKey(normalizeEmail(email));
  }

  /** The address's key in its grace period, or null. */
  endingKey(email: string): Promise<EndingKey | null> {
    return this.backend.endingKey(normalizeEmail(email), this.now());
  }

  /** Every key, oldest first, each with its state now: current, ending (in its grace period) or revoked. */
  async *list(): AsyncIterable<KeyListing> {
    for await (const listed of this.backend.list()) {
      const end = listed.revokedAt === null ? null : Date.parse(listed.revokedAt);
      yield { ...listed, state: end === null ? 'current' : end > this.now() ? 'ending' : 'revoked' };
    }
  }

  private newKey(email: string): { key: string; record: NewKey } {
    const key = generateKey();
    return { key, record: { hash: this.hash(key), id: keyId(key), email, createdAt: this.now() } };
  }
}
