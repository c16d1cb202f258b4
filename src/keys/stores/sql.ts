/**
 * The key stores' SQL, written once for the two SQLite stores: the local file
 * (src/keys/stores/sqlite.node.ts, `node:sqlite`) and Cloudflare D1
 * (adapters/_cloudflare/d1-keys.ts), and for PostgreSQL
 * (adapters/_node/postgres-keys.ts, which numbers the placeholders `$1`, `$2`, ...). All run the schema of the
 * repository's `migrations/` folder (PostgreSQL through `forPostgres`).
 * Every write here is one statement, or a few statements sent as one
 * transaction in which no code decides between them: D1 has no interactive
 * transactions, so a condition lives in the SQL (a conditional INSERT, an
 * UPDATE ... RETURNING, a partial unique index that keeps one active key per
 * address), never in a read followed by a write.
 *
 * Each query is a function of its values, so the order of the `?`
 * placeholders is written in one place too.
 */
import type { EndingKey, KeyInfo, NewKey, NewToken, TokenQuota } from '../contract.ts';

export type SqlValue = string | number | null;
/** One statement and the values of its placeholders, in order. */
export interface Query {
  sql: string;
  params: SqlValue[];
}

const q = (sql: string, ...params: SqlValue[]): Query => ({ sql, params });

/**
 * The next change number of `keys`, in SQL, so that a statement takes
 * it without a read before it (the local store follows changes by it).
 */
const NEXT_SEQ = '(SELECT coalesce(max(seq), 0) + 1 FROM keys)';
/**
 * No key is expected: the cast names the parameter's type, which
 * PostgreSQL cannot infer from `IS NULL` alone (SQLite ignores it).
 */
const EXPECTED_NONE = 'CAST(? AS TEXT) IS NULL';
/** The address's active key, when it is the expected one (or any, when none is expected). */
const ACTIVE_AS_EXPECTED = `email = ? AND revoked_at IS NULL AND (${EXPECTED_NONE} OR hash = ?)`;

export interface KeyRow {
  id: string;
  email: string;
  created_at: number;
  revoked_at: number | null;
}

export const keySql = {
  /** A key's stored end (`revoked_at`: null while current), or no row for a hash never issued. */
  keyEnd: (hash: string) => q('SELECT revoked_at FROM keys WHERE hash = ?', hash),
  /** `/health`'s probe: reads the keys table's first page, so a missing table or an unreadable database fails it. */
  probe: () => q('SELECT 1 AS live FROM keys LIMIT 1'),

  /**
   * Stores a token unless its address holds `quota.max` created after `quota.since`: one conditional INSERT decides.
   */
  addToken: (token: NewToken, quota: TokenQuota) =>
    q(
      'INSERT INTO tokens (hash, email, created_at, expires_at) SELECT ?, ?, ?, ? WHERE (SELECT count(*) FROM tokens WHERE email = ? AND created_at > ?) < ?',
      token.hash,
      token.email,
      token.createdAt,
      token.expiresAt,
      token.email,
      quota.since,
      quota.max,
    ),
  /** The first counted link of an address (`oldest`), for Retry-After once `addToken` refused. */
  oldestToken: (email: string, since: number) =>
    q('SELECT min(created_at) AS oldest FROM tokens WHERE email = ? AND created_at > ?', email, since),
  dropToken: (hash: string) => q('DELETE FROM tokens WHERE hash = ?', hash),
  purge: (tokensBy: number, now: number) => [
    q('DELETE FROM tokens WHERE created_at <= ?', tokensBy),
    q('DELETE FROM sessions WHERE expires_at <= ?', now),
  ],

  /**
   * Stores the session from the token's row on the same condition the UPDATE
   * then uses the token up on; the UPDATE returns the address (the second
   * statement's row) only to the one use that won.
   */
  openSession: (tokenHash: string, sessionHash: string, now: number, sessionExpiresAt: number) => [
    q(
      'INSERT INTO sessions (hash, email, expires_at) SELECT ?, email, ? FROM tokens WHERE hash = ? AND used_at IS NULL AND expires_at > ?',
      sessionHash,
      sessionExpiresAt,
      tokenHash,
      now,
    ),
    q(
      'UPDATE tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ? RETURNING email',
      now,
      tokenHash,
      now,
    ),
  ],
  sessionEmail: (hash: string, now: number) =>
    q('SELECT email FROM sessions WHERE hash = ? AND expires_at > ?', hash, now),
  endSession: (hash: string) => q('DELETE FROM sessions WHERE hash = ?', hash),

  activeKey: (email: string) => q('SELECT id, created_at FROM keys WHERE email = ? AND revoked_at IS NULL', email),
  /** The address's key in its grace period (its end after `now`), if any. */
  endingKey: (email: string, now: number) =>
    q(
      'SELECT id, revoked_at FROM keys WHERE email = ? AND revoked_at > ? ORDER BY revoked_at DESC LIMIT 1',
      email,
      now,
    ),
  /**
   * Stores `key` active unless its address has an active key
   * (the partial unique index refuses it): one change, or none.
   */
  issue: (key: NewKey) =>
    q(
      `INSERT INTO keys (hash, id, email, created_at, seq) VALUES (?, ?, ?, ?, ${NEXT_SEQ}) ON CONFLICT DO NOTHING`,
      key.hash,
      key.id,
      key.email,
      key.createdAt,
    ),
  /**
   * Revokes the address's active key (if it is `expected`, when given) and,
   * in the same transaction, ends now the key in its grace period: the first
   * statement ends the grace key only while such an active key exists (its row
   * returned), the second revokes the active key (its row returned; none: nothing changed).
   */
  revoke: (email: string, now: number, expected?: string) => [
    q(
      `UPDATE keys SET revoked_at = ?, seq = ${NEXT_SEQ} WHERE email = ? AND revoked_at > ? AND EXISTS (SELECT 1 FROM keys WHERE ${ACTIVE_AS_EXPECTED}) RETURNING hash, id`,
      now,
      email,
      now,
      email,
      expected ?? null,
      expected ?? null,
    ),
    q(
      `UPDATE keys SET revoked_at = ?, seq = ${NEXT_SEQ} WHERE ${ACTIVE_AS_EXPECTED} RETURNING hash, id`,
      now,
      email,
      expected ?? null,
      expected ?? null,
    ),
  ],
  /** Ends now the address's key in its grace period (if it is `expected`, when given): the key ended, or no row. */
  endGrace: (email: string, now: number, expected?: string) =>
    q(
      `UPDATE keys SET revoked_at = ?, seq = ${NEXT_SEQ} WHERE email = ? AND revoked_at > ? AND (${EXPECTED_NONE} OR hash = ?) RETURNING hash, id`,
      now,
      email,
      now,
      expected ?? null,
      expected ?? null,
    ),

  /**
   * Replaces the address's active key (if it is `expected`, when given) by
   * `key`, in four statements run as one transaction with no code between
   * them: the new key is stored revoked only while such an active key exists;
   * a key still in its grace period (an end after `now`) is ended now, and the
   * old active key given its end `endsAt` (`now`: refused at once; later: its
   * grace period), only if the new one was stored (the rows are returned: the
   * keys ended); the new one is made active only once the address has no
   * active key (its row is returned: the rotation happened). When there is no
   * such key, none of the four changes anything. So an address has at most one
   * current key and at most one in its grace period.
   */
  rotate: (key: NewKey, now: number, endsAt: number, expected?: string) => {
    const old = expected ?? null;
    return [
      q(
        `INSERT INTO keys (hash, id, email, created_at, revoked_at, seq) SELECT ?, ?, ?, ?, ?, ${NEXT_SEQ} WHERE EXISTS (SELECT 1 FROM keys WHERE ${ACTIVE_AS_EXPECTED})`,
        key.hash,
        key.id,
        key.email,
        key.createdAt,
        now,
        key.email,
        old,
        old,
      ),
      q(
        `UPDATE keys SET revoked_at = ?, seq = ${NEXT_SEQ} WHERE email = ? AND revoked_at > ? AND EXISTS (SELECT 1 FROM keys WHERE hash = ?) RETURNING hash, id`,
        now,
        key.email,
        now,
        key.hash,
      ),
      q(
        `UPDATE keys SET revoked_at = ?, seq = ${NEXT_SEQ} WHERE ${ACTIVE_AS_EXPECTED} AND EXISTS (SELECT 1 FROM keys WHERE hash = ?) RETURNING hash, id`,
        endsAt,
        key.email,
        old,
        old,
        key.hash,
      ),
      q(
        `UPDATE keys SET revoked_at = NULL, seq = ${NEXT_SEQ} WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM keys WHERE email = ? AND revoked_at IS NULL) RETURNING hash, id`,
        key.hash,
        key.email,
      ),
    ];
  },
  owner: (hash: string) => q('SELECT email, revoked_at FROM keys WHERE hash = ?', hash),
  /** Every key, oldest first (rows are never deleted, so rowid is issue order). */
  list: () => q('SELECT id, email, created_at, revoked_at FROM keys ORDER BY rowid'),
} as const;

const iso = (ms: number | bigint) => new Date(Number(ms)).toISOString();

/** `KeyRow` as `keys list` shows it (`revokedAt`: its stored end, past or to come). */
export const listing = (r: KeyRow) => ({
  id: r.id,
  email: r.email,
  createdAt: iso(r.created_at),
  revokedAt: r.revoked_at === null ? null : iso(r.revoked_at),
});

/** The row of `keySql.endingKey` as the portal shows it. */
export const endingInfo = (r: { id: string; revoked_at: number }) => ({ id: r.id, endsAt: iso(r.revoked_at) });

/** The row of `keySql.activeKey` as the portal shows it. */
export const keyInfo = (r: Pick<KeyRow, 'id' | 'created_at'>) => ({ id: r.id, createdAt: iso(r.created_at) });

/** A row of `RETURNING hash, id` as a plain record (node:sqlite gives objects without a prototype). */
export const stoppedKey = (r: { hash: string; id: string }) => ({ hash: r.hash, id: r.id });

/** How an asynchronous store reads a query's first row, none being null or undefined (D1's and PostgreSQL's `first`). */
export type FirstRow = <T>(query: Query) => Promise<T | null | undefined>;

/** The address's active key as the portal shows it, read through `first`: one body for the D1 and PostgreSQL stores. */
export async function activeKeyOf(first: FirstRow, email: string): Promise<KeyInfo | null> {
  const row = await first<Pick<KeyRow, 'id' | 'created_at'>>(keySql.activeKey(email));
  return row ? keyInfo(row) : null;
}

/** The address's key in its grace period at `now` as the portal shows it, read through `first`. */
export async function endingKeyOf(first: FirstRow, email: string, now: number): Promise<EndingKey | null> {
  const row = await first<{ id: string; revoked_at: number }>(keySql.endingKey(email, now));
  return row ? endingInfo(row) : null;
}
