/**
 * API keys, sign-in tokens and portal sessions, for every runtime. Each is a
 * random secret with its own prefix (`faa_` key, `fat_` token, `fas_`
 * session), so a log line can be searched for them by shape; only a sha256 of
 * each is ever stored. `Keys` holds the rules (who may sign in how often, how
 * long a token and a session live, one active key per address) and leaves
 * the storing to a `KeyBackend` that decides nothing and whose every
 * operation is atomic: SQLite locally and when self-hosted
 * (src/keys/sqlite.node.ts), Netlify Blobs on Netlify
 * (src/keys/blobs.ts), Cloudflare D1 in a Worker (src/keys/d1.ts).
 *
 * The request path asks `verify(key)`, which answers synchronously whenever
 * the backend can (the SQLite store always can), so the API pays no promise
 * for its key check. Over a store that answers only asynchronously (Blobs,
 * D1), `Keys` is given a cache (src/keys/cache.ts): each key is read at most
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
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { isPromise, type Maybe } from '../shared/maybe.ts';
import { KeyCache, type KeyCacheOptions, type KeyEnd } from './cache.ts';
import { SESSION_TTL_MS, SIGN_INS_PER_WINDOW, SIGN_IN_WINDOW_MS, TOKEN_TTL_MS } from '../shared/limits.ts';
import { KEY_MESSAGES } from '../shared/messages.ts';
import { KEY_ID_LENGTH, SECRET_PREFIXES } from '../shared/redact.ts';

/** What the gate needs of a key store: is this key good? Synchronous when the store holds the answer in memory. */
export interface KeyCheck {
  verify(key: string): Maybe<boolean>;
  /**
   * Until when a key works: false when it does not, Infinity when no end is
   * set, else the time (ms) it stops (a rotated key in its grace period), so
   * that no answer for it is kept past then. Optional: without it a good key
   * is taken to have no end.
   */
  until?(key: string): Maybe<number | false>;
  /**
   * Whether the store can answer key checks now, for `/health`: returns (or
   * resolves) when it can, throws (or rejects) when it cannot (unreadable,
   * damaged, unreachable). Cheap: one read of a record that cannot exist at
   * most, and a store may reuse its answer for a second.
   */
  probe?(): Maybe<void>;
}

export type { KeyEnd } from './cache.ts';

export const KEY_PREFIX = SECRET_PREFIXES.key;
export const TOKEN_PREFIX = SECRET_PREFIXES.token;
export const SESSION_PREFIX = SECRET_PREFIXES.session;
/** A key's id (KEY_ID_LENGTH characters, shown by `keys list` and the portal) is never enough to use it. */
export { KEY_ID_LENGTH };
export const KEY_LENGTH = KEY_PREFIX.length + 32;
const KEY_SHAPE = /^faa_[A-Za-z0-9_-]{32}$/;
const TOKEN_SHAPE = /^fat_[A-Za-z0-9_-]{43}$/;
const SESSION_SHAPE = /^fas_[A-Za-z0-9_-]{43}$/;
/** How often sign-ins forget tokens that count no more and sessions that ended (where the store keeps them). */
const PURGE_EVERY_MS = 60_000;
/** How long `/health` reuses the key store's probe: health is polled, and a second is as fresh as a key check's cache. */
export const PROBE_TTL_MS = 1_000;

const HOUR_MS = 3_600_000;
/** How long a rotated key may go on working, by the name the portal and the CLI give it; `now` (and `0`) ends it at once. */
export const GRACE_PERIODS = { now: 0, '1h': HOUR_MS, '24h': 24 * HOUR_MS, '7d': 7 * 24 * HOUR_MS } as const;
export type GraceName = keyof typeof GRACE_PERIODS;
/** The grace period named (`now`, `0`, `1h`, `24h`, `7d`) in milliseconds, or null for any other value. */
export function graceOf(name: unknown): number | null {
  if (name === '0' || name === 0) return 0;
  return typeof name === 'string' && Object.hasOwn(GRACE_PERIODS, name) ? GRACE_PERIODS[name as GraceName] : null;
}

/** A key as its owner and the CLI see it: never the key. */
export interface KeyInfo {
  /** The key's first 12 characters. */
  id: string;
  /** ISO time it was issued. */
  createdAt: string;
}

/** An address's key in its grace period, as its owner sees it: its id and when it stops working. */
export interface EndingKey {
  id: string;
  /** ISO time it stops working. */
  endsAt: string;
}

/** One stored key, as `keys list` shows it. */
export interface KeyListing extends KeyInfo {
  email: string;
  /** ISO time it was revoked or rotated away, or (in its grace period) will be; null while it is the current key. */
  revokedAt: string | null;
  /** Given by `Keys.list` from its clock: `current`, `ending` (in its grace period, until `revokedAt`) or `revoked`. */
  state?: 'current' | 'ending' | 'revoked';
}

/** A key about to be stored: its hash, never the key. */
export interface NewKey {
  hash: string;
  id: string;
  email: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** A key a rotate, revoke or end of grace stopped (or, for a rotate's old key, gave an end): its hash and its id, for the shared cache's purge. */
export interface StoppedKey {
  hash: string;
  id: string;
}

/** A rotation's outcome: the new key, and the ids of the keys it stopped or gave an end (the old key's first). */
export interface Rotation {
  key: string;
  stopped: string[];
}

/** A sign-in token about to be stored: its hash, never the token; times in milliseconds since the epoch. */
export interface NewToken {
  hash: string;
  email: string;
  createdAt: number;
  expiresAt: number;
}

/** How many tokens an address may already hold: fewer than `max` created after `since`. */
export interface TokenQuota {
  since: number;
  max: number;
}

/** A token stored, or refused because its address had `max` since `since`, the first of them at `oldest`. */
export type TokenOutcome = { stored: true } | { stored: false; oldest: number };

/**
 * Where keys, tokens and sessions live. A store only stores: every rule (how
 * long a token or session lives, how many links an address may ask for, when
 * old records go) is decided by `Keys` and handed down as plain numbers. Every
 * method is one atomic step: two calls at once, from this process or another,
 * never see each other half done, so the conditions below hold under any
 * concurrency.
 */
export interface KeyBackend {
  /**
   * A key hash's stored end: null for the address's current key, the time it
   * was or will be revoked (`Keys` decides with its clock whether it still
   * works), undefined for a hash never issued; synchronous when known at once.
   */
  keyEnd(hash: string): Maybe<KeyEnd>;
  /**
   * A cheap read that fails when key checks would (the store unreadable,
   * damaged or unreachable), for `/health`: throws or rejects then, returns
   * otherwise. Optional: a store without one is taken as always answering.
   */
  probe?(): Maybe<void>;
  /** Stores `token` unless its address already has `quota.max` tokens created after `quota.since`. */
  addToken(token: NewToken, quota: TokenQuota): Promise<TokenOutcome>;
  /** Removes a token whose mail was never sent: it neither works nor counts against the quota. */
  dropToken(token: NewToken): Promise<void>;
  /**
   * Uses up a token if it is unused and expires after `now` (of two uses at
   * once, one wins) and stores a session for its address, until `sessionExpiresAt`;
   * the address, or null.
   */
  openSession(tokenHash: string, sessionHash: string, now: number, sessionExpiresAt: number): Promise<string | null>;
  /** Optional housekeeping: forgets tokens created at or before `tokensBy` and sessions expired by `now`. */
  purge?(tokensBy: number, now: number): Promise<void>;
  /** The address of a live session, or null. */
  sessionEmail(sessionHash: string, now: number): Promise<string | null>;
  /** Ends a session (sign-out): its hash is deleted, so it answers as unknown from then on. */
  endSession(sessionHash: string): Promise<void>;
  /** The address's active (current) key, or null. */
  activeKey(email: string): Promise<KeyInfo | null>;
  /** The address's key in its grace period (its end after `now`), or null. */
  endingKey(email: string, now: number): Promise<EndingKey | null>;
  /** Stores `key` as the address's active key; false (nothing stored) when it already has one. */
  issue(key: NewKey): Promise<boolean>;
  /**
   * Replaces the address's active key by `key` (only if that is `expected`,
   * when given), in one atomic step: the old key's end becomes `endsAt`
   * (`now`, or later for a grace period) and a key whose end is after `now`
   * (in its grace period) ends at `now`. The keys whose end changed, the
   * old active key's first; empty (nothing changed) when there is no such
   * active key.
   */
  rotate(key: NewKey, now: number, endsAt: number, expected?: string): Promise<StoppedKey[]>;
  /**
   * Revokes the address's active key (only if it is `expected`, when given)
   * and ends, in the same step, a key whose end is after `now`: the keys
   * ended, the active key's first; empty when there is no such active key.
   */
  revoke(email: string, now: number, expected?: string): Promise<StoppedKey[]>;
  /** Ends at `now` the address's key whose end is after `now` (only if it is `expected`, when given): that key, or null when there is none. */
  endGrace(email: string, now: number, expected?: string): Promise<StoppedKey | null>;
  /** The owner of a key hash and its stored end (null while current), or null for a hash never issued. */
  owner(hash: string): Promise<{ email: string; end: number | null } | null>;
  /** Every key ever issued, oldest first. */
  list(): AsyncIterable<KeyListing>;
}

export class KeyError extends Error {
  readonly status: 400 | 401 | 403 | 409 | 429;
  /** Seconds to wait, for 429. */
  readonly retryAfter?: number;

  constructor(status: 400 | 401 | 403 | 409 | 429, message: string, retryAfter?: number) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}


function randomSecret(prefix: string, bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  let binary = '';
  for (const b of raw) binary += String.fromCharCode(b);
  return prefix + btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** A new API key: 192 random bits, URL-safe. */
export const generateKey = () => randomSecret(KEY_PREFIX, 24);
/** A new sign-in token or session: 256 random bits each. */
export const generateToken = () => randomSecret(TOKEN_PREFIX, 32);
export const generateSession = () => randomSecret(SESSION_PREFIX, 32);

export const keyId = (key: string) => key.slice(0, KEY_ID_LENGTH);
export const isKeyShaped = (key: string) => key.length === KEY_LENGTH && KEY_SHAPE.test(key);

const encoder = new TextEncoder();
/** Lower-case hex sha256 of a secret, synchronous, the same under Node and Deno. */
export const hashSecret = (secret: string): string => bytesToHex(sha256(encoder.encode(secret)));

/** Unicode control (Cc), format (Cf), line and paragraph separators (Zl, Zp): never part of an address. */
const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const CONTROL_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\\]/gu;

/** A text with every control or format character (and the backslash) written as `\u{…}`: safe to print to a terminal. */
export const printable = (text: string) => text.replace(CONTROL_ALL, (c) => (c === '\\' ? '\\\\' : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`));

const EMAIL = /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && EMAIL.test(value);
}

/** Addresses are compared without case: `Ada@Example.org` and `ada@example.org` share one key. */
export const normalizeEmail = (email: string) => email.trim().normalize('NFC').toLowerCase();

/**
 * An address as it is counted, stored and mailed to: trimmed, NFC, lower-cased
 * (domain and local part alike); a 400 for one holding a control or format
 * character (NUL, ESC, U+202E: each would make a new address for the same
 * mailbox, or reach a terminal) or one that is not an address.
 */
export function addressOf(input: string): string {
  if (typeof input === 'string' && CONTROL.test(input)) throw new KeyError(400, KEY_MESSAGES.controlInEmail);
  const address = typeof input === 'string' ? normalizeEmail(input) : input;
  if (!isEmail(address)) throw new KeyError(400, KEY_MESSAGES.badEmail);
  return address;
}

/** Remembers the hashes of keys asked about recently: hashing costs more than the rest of the check. */
class HashMemo {
  private readonly memo = new Map<string, string>();
  private readonly max: number;

  constructor(max = 20_000) {
    this.max = max;
  }
  /** The hash of a key asked about recently, without hashing anything. */
  peek(key: string): string | undefined {
    return this.memo.get(key);
  }
  get(key: string): string {
    let hash = this.memo.get(key);
    if (hash === undefined) {
      hash = hashSecret(key);
      if (this.memo.size >= this.max) this.memo.clear(); // a flood of new keys costs one rehash each, never memory
      this.memo.set(key, hash);
    }
    return hash;
  }
}

/** A freshly signed-in session: what `POST /portal/session` answers. */
export interface SessionInfo {
  session: string;
  email: string;
  key: KeyInfo | null;
  /** The key in its grace period after a rotation, until it stops working; null when there is none. */
  ending: EndingKey | null;
}

/** Whether a key whose stored end is `end` works at `now`: the current key, or one whose end is still to come. */
const worksAt = (end: KeyEnd, now: number) => end === null || (end !== undefined && end > now);

/** A grace period as given: a whole number of milliseconds from 0 to the longest choice (7 days). */
function checkedGrace(graceMs: number): number {
  if (!(Number.isInteger(graceMs) && graceMs >= 0 && graceMs <= GRACE_PERIODS['7d'])) throw new RangeError(`Expected a grace period from 0 to ${GRACE_PERIODS['7d']} ms, got ${graceMs}`);
  return graceMs;
}

/** Sign-in, issue, rotate, revoke, list and verify keys over any backend. */
export class Keys implements KeyCheck {
  private readonly hashes = new HashMemo();
  readonly backend: KeyBackend;
  private readonly now: () => number;
  /** Answers about keys, for a backend that can only answer asynchronously; null reads the backend every time. */
  readonly cache: KeyCache | null;
  private readonly keyEnd: (hash: string) => Maybe<KeyEnd>;
  private purgedAt = 0;
  /** The last probe's outcome and until when it holds (an outcome, never a probe in flight: workerd ties that to its request). */
  private probed: { failed: unknown; until: number } | null = null;

  /** `cache`: keep answers about keys for `cache.ttlMs` (Blobs, D1); without it every check asks the backend (SQLite: its memory). */
  constructor(backend: KeyBackend, now: () => number = Date.now, cache?: KeyCacheOptions) {
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
    // A remembered hash was a key's (an unshaped text is active under no hash); anything else is hashed only when shaped like a key.
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
  async signIn(email: string, deliver?: (address: string, token: string) => Promise<void>): Promise<{ email: string; token: string }> {
    const address = addressOf(email);
    const token = generateToken();
    const now = this.now();
    const record: NewToken = { hash: hashSecret(token), email: address, createdAt: now, expiresAt: now + TOKEN_TTL_MS };
    const outcome = await this.backend.addToken(record, { since: now - SIGN_IN_WINDOW_MS, max: SIGN_INS_PER_WINDOW });
    await this.purge(now);
    // The address may ask again once the oldest link it holds leaves the window.
    if (!outcome.stored) throw new KeyError(429, KEY_MESSAGES.tooManyLinks, Math.max(1, Math.ceil((outcome.oldest + SIGN_IN_WINDOW_MS - now) / 1000)));
    try {
      await deliver?.(address, token);
    } catch (error) {
      await this.backend.dropToken(record);
      throw error;
    }
    return { email: address, token };
  }

  /** At most once a minute: tokens past both the sign-in window and their lifetime, and ended sessions, are forgotten. */
  private async purge(now: number): Promise<void> {
    if (!this.backend.purge || now - this.purgedAt <= PURGE_EVERY_MS) return;
    this.purgedAt = now;
    await this.backend.purge(now - Math.max(SIGN_IN_WINDOW_MS, TOKEN_TTL_MS), now);
  }

  /** Uses up a sign-in token: a session for its address, with the address's key state. */
  async openSession(token: string): Promise<SessionInfo> {
    if (typeof token !== 'string' || !TOKEN_SHAPE.test(token)) throw new KeyError(401, KEY_MESSAGES.badToken);
    const session = generateSession();
    const now = this.now();
    const email = await this.backend.openSession(hashSecret(token), hashSecret(session), now, now + SESSION_TTL_MS);
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
    if (typeof session !== 'string' || !SESSION_SHAPE.test(session)) throw new KeyError(401, KEY_MESSAGES.badSession);
    const email = await this.backend.sessionEmail(hashSecret(session), this.now());
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
    await this.backend.endSession(hashSecret(session!));
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

  /** Revokes the address's active key, and its key in its grace period with it: the ids stopped; 409 when it has no active key. */
  async revoke(email: string): Promise<string[]> {
    const stopped = this.retired(await this.backend.revoke(normalizeEmail(email), this.now()));
    if (stopped.length === 0) throw new KeyError(409, KEY_MESSAGES.noKey);
    return stopped;
  }

  /** Stops now the address's key in its grace period (the portal's "Stop the old key now"): its id; 409 when it has none. */
  async endGrace(email: string): Promise<string[]> {
    const stopped = this.retired(await this.backend.endGrace(normalizeEmail(email), this.now()));
    if (stopped.length === 0) throw new KeyError(409, KEY_MESSAGES.noEnding);
    return stopped;
  }

  /** Rotates the key given (the CLI), leaving it `graceMs` to live: 403 unless it is the current key; of two at once, one wins. */
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
    const done = owner.end === null ? await this.backend.revoke(owner.email, now, hash) : await this.backend.endGrace(owner.email, now, hash);
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
    return { key, record: { hash: hashSecret(key), id: keyId(key), email, createdAt: this.now() } };
  }
}
