/**
 * API keys, sign-in tokens and portal sessions, for every runtime. Each is a
 * random secret with its own prefix (`faa_` key, `fat_` token, `fas_`
 * session), so a log line can be searched for them by shape; only a sha256 of
 * each is ever stored. `Keys` holds the rules (who may sign in how often, how
 * long a token and a session live, one active key per address) and leaves
 * the storing to a `KeyBackend` that decides nothing and whose every
 * operation is atomic: SQLite locally and when self-hosted
 * (src/server/sqlite-keys.node.ts), Netlify Blobs on Netlify
 * (src/keys-blobs.ts), Cloudflare D1 in a Worker (src/keys-d1.ts).
 *
 * The request path asks `verify(key)`, which answers synchronously whenever
 * the backend can (the SQLite store always can), so the API pays no promise
 * for its key check. Over a store that answers only asynchronously (Blobs,
 * D1), `Keys` is given a cache (src/keys-cache.ts): each key is read at most
 * once a second per isolate, and a key revoked or rotated anywhere is
 * refused within about a second.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { KeyCheck } from './api/gate.ts';
import { isPromise, type Maybe } from './api/maybe.ts';
import { KeyCache, type KeyCacheOptions } from './keys-cache.ts';
import { SESSION_TTL_MS, SIGN_INS_PER_WINDOW, SIGN_IN_WINDOW_MS, TOKEN_TTL_MS } from './limits.ts';
import { KEY_MESSAGES } from './messages.ts';
import { SECRET_PREFIXES } from './redact.ts';

export const KEY_PREFIX = SECRET_PREFIXES.key;
export const TOKEN_PREFIX = SECRET_PREFIXES.token;
export const SESSION_PREFIX = SECRET_PREFIXES.session;
/** Characters of a key kept as its id (prefix + 8 characters): shown by `keys list` and the portal, never enough to use it. */
export const KEY_ID_LENGTH = KEY_PREFIX.length + 8;
export const KEY_LENGTH = KEY_PREFIX.length + 32;
const KEY_SHAPE = /^faa_[A-Za-z0-9_-]{32}$/;
const TOKEN_SHAPE = /^fat_[A-Za-z0-9_-]{43}$/;
const SESSION_SHAPE = /^fas_[A-Za-z0-9_-]{43}$/;
/** How often sign-ins forget tokens that count no more and sessions that ended (where the store keeps them). */
const PURGE_EVERY_MS = 60_000;
/** How long `/health` reuses the key store's probe: health is polled, and a second is as fresh as a key check's cache. */
export const PROBE_TTL_MS = 1_000;


/** A key as its owner and the CLI see it: never the key. */
export interface KeyInfo {
  /** The key's first 12 characters. */
  id: string;
  /** ISO time it was issued. */
  createdAt: string;
}

/** One stored key, as `keys list` shows it. */
export interface KeyListing extends KeyInfo {
  email: string;
  /** ISO time it was revoked or rotated away; null while it works. */
  revokedAt: string | null;
}

/** A key about to be stored: its hash, never the key. */
export interface NewKey {
  hash: string;
  id: string;
  email: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
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
  /** Whether a key hash belongs to an active key; synchronous when known at once. */
  isActive(hash: string): Maybe<boolean>;
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
  /** The address's active key, or null. */
  activeKey(email: string): Promise<KeyInfo | null>;
  /** Stores `key` as the address's active key; false (nothing stored) when it already has one. */
  issue(key: NewKey): Promise<boolean>;
  /**
   * Replaces the address's active key by `key` (only if that is `expected`,
   * when given): the hash it revoked, or null (nothing changed) when there is
   * no such active key.
   */
  rotate(key: NewKey, now: number, expected?: string): Promise<string | null>;
  /** Revokes the address's active key (only if it is `expected`, when given): the hash it revoked, or null when there is none. */
  revoke(email: string, now: number, expected?: string): Promise<string | null>;
  /** The owner of a key hash and whether it is active, or null for a hash never issued. */
  owner(hash: string): Promise<{ email: string; active: boolean } | null>;
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
}

/** Sign-in, issue, rotate, revoke, list and verify keys over any backend. */
export class Keys implements KeyCheck {
  private readonly hashes = new HashMemo();
  readonly backend: KeyBackend;
  private readonly now: () => number;
  /** Answers about keys, for a backend that can only answer asynchronously; null reads the backend every time. */
  readonly cache: KeyCache | null;
  private readonly isActive: (hash: string) => Maybe<boolean>;
  private purgedAt = 0;
  /** The last probe's outcome and until when it holds; a probe in flight, shared. */
  private probed: { failed: unknown; until: number } | null = null;
  private probing: Promise<void> | null = null;

  /** `cache`: keep answers about keys for `cache.ttlMs` (Blobs, D1); without it every check asks the backend (SQLite: its memory). */
  constructor(backend: KeyBackend, now: () => number = Date.now, cache?: KeyCacheOptions) {
    this.backend = backend;
    this.now = now;
    this.cache = cache ? new KeyCache({ now, ...cache }) : null;
    const read = (hash: string) => backend.isActive(hash);
    this.isActive = this.cache ? (hash) => this.cache!.isActive(hash, read) : read;
  }

  /** The request path's check: a key of the right shape whose hash is active. */
  verify(key: string): Maybe<boolean> {
    // A remembered hash was a key's (an unshaped text is active under no hash); anything else is hashed only when shaped like a key.
    const hash = this.hashes.peek(key) ?? (isKeyShaped(key) ? this.hashes.get(key) : undefined);
    return hash !== undefined && this.isActive(hash);
  }

  /**
   * Whether the store can answer key checks now (`/health`): its probe's
   * outcome, reused for `PROBE_TTL_MS`, one probe at a time; throws or
   * rejects with the store's error when it cannot.
   */
  probe(): Maybe<void> {
    const probe = this.backend.probe;
    if (!probe) return;
    const now = this.now();
    if (this.probed && this.probed.until > now) {
      if (this.probed.failed !== undefined) throw this.probed.failed;
      return;
    }
    if (this.probing) return this.probing;
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
    const shared = answer.then(
      () => settle(undefined),
      (error: unknown) => settle(error ?? new Error('the key store failed')),
    ).finally(() => {
      if (this.probing === shared) this.probing = null;
    });
    this.probing = shared;
    return shared;
  }

  /** A revocation's answer: whether a key was revoked; its cached answer is dropped, so this isolate refuses it at once. */
  private retired(hash: string | null): boolean {
    if (hash !== null) this.cache?.drop(hash);
    return hash !== null;
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
    return { session, email, key: await this.backend.activeKey(email) };
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
    return { email, key: await this.backend.activeKey(email) };
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

  /** A new key in place of the address's active one, which stops working; 409 when it has none. */
  async rotate(email: string): Promise<string> {
    const { key, record } = this.newKey(normalizeEmail(email));
    if (!this.retired(await this.backend.rotate(record, this.now()))) throw new KeyError(409, KEY_MESSAGES.noKey);
    return key;
  }

  /** Revokes the address's active key; 409 when it has none. */
  async revoke(email: string): Promise<void> {
    if (!this.retired(await this.backend.revoke(normalizeEmail(email), this.now()))) throw new KeyError(409, KEY_MESSAGES.noKey);
  }

  /** Rotates the key given (the CLI): 403 unless it is active; of two at once, one wins. */
  async rotateKey(current: string): Promise<string> {
    const hash = this.hashes.get(current);
    const owner = isKeyShaped(current) ? await this.backend.owner(hash) : null;
    if (!owner?.active) throw new KeyError(403, KEY_MESSAGES.forbidden);
    const { key, record } = this.newKey(owner.email);
    if (!this.retired(await this.backend.rotate(record, this.now(), hash))) throw new KeyError(403, KEY_MESSAGES.forbidden);
    return key;
  }

  /** Revokes the key given (the CLI): 403 unless it is active. */
  async revokeKey(current: string): Promise<void> {
    const hash = this.hashes.get(current);
    const owner = isKeyShaped(current) ? await this.backend.owner(hash) : null;
    if (!owner?.active || !this.retired(await this.backend.revoke(owner.email, this.now(), hash))) throw new KeyError(403, KEY_MESSAGES.forbidden);
  }

  /** The address's active key, without the key. */
  activeKey(email: string): Promise<KeyInfo | null> {
    return this.backend.activeKey(normalizeEmail(email));
  }

  list(): AsyncIterable<KeyListing> {
    return this.backend.list();
  }

  private newKey(email: string): { key: string; record: NewKey } {
    const key = generateKey();
    return { key, record: { hash: hashSecret(key), id: keyId(key), email, createdAt: this.now() } };
  }
}
