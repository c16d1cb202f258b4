/**
 * What the key rules (`Keys`, src/keys/rules.ts) promise their callers and
 * ask of a store: the gate's check (`KeyCheck`), the records a store keeps
 * (never a secret: hashes and ids), the store's operations (`KeyBackend`),
 * what the portal and the CLI are answered, and the error they are refused
 * with (`KeyError`). Types and one error class: nothing here runs.
 */
import type { Maybe } from '../shared/maybe.ts';

/**
 * A key's stored end: null while it is the current key, the time
 * (ms) it ends or ended, undefined for a hash never issued.
 */
export type KeyEnd = number | null | undefined;

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

/**
 * A key a rotate, revoke or end of grace stopped (or, for a rotate's old
 * key, gave an end): its hash and its id, for the shared cache's purge.
 */
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
  /**
   * Ends at `now` the address's key whose end is after `now` (only if it
   * is `expected`, when given): that key, or null when there is none.
   */
  endGrace(email: string, now: number, expected?: string): Promise<StoppedKey | null>;
  /** The owner of a key hash and its stored end (null while current), or null for a hash never issued. */
  owner(hash: string): Promise<{ email: string; end: number | null } | null>;
  /** Every key ever issued, oldest first. */
  list(): AsyncIterable<KeyListing>;
}

/** A freshly signed-in session: what `POST /portal/session` answers. */
export interface SessionInfo {
  session: string;
  email: string;
  key: KeyInfo | null;
  /** The key in its grace period after a rotation, until it stops working; null when there is none. */
  ending: EndingKey | null;
}

/** What the rules refuse with: the HTTP status the portal answers, and the message the portal and the CLI show. */
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

/**
 * A store that cannot be reached now (a database server down or cut off):
 * nothing was decided and, for a write, nothing was acknowledged. The front
 * door answers 503 for it, the portal its own 503; the store reconnects by
 * itself.
 */
export class KeyStoreUnavailable extends Error {}
