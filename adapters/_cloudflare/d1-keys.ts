/**
 * Keys, sign-in tokens and sessions in Cloudflare D1, for the Worker. D1 is
 * SQLite: the schema is the repository's `migrations/` (applied with
 * `wrangler d1 migrations apply`), the queries are src/keys/stores/sql.ts, both shared
 * with the local SQLite store. D1 has no interactive transactions, so every
 * write is one statement or one `batch()` (which D1 runs as one transaction)
 * whose statements decide in SQL, never in code between them.
 *
 * Runtime-agnostic: it takes the D1 binding, typed by the little it uses, so
 * nothing here needs the Workers types. A Worker checks keys through
 * `d1Keys(env.DB)`, which puts the key cache (src/keys/cache.ts) above the
 * store: D1 is read at most once per key per second per isolate.
 */
import type { KeyCacheOptions } from '../../src/keys/cache.ts';
import type {
  EndingKey,
  KeyBackend,
  KeyEnd,
  KeyInfo,
  KeyListing,
  NewKey,
  NewToken,
  StoppedKey,
  TokenOutcome,
  TokenQuota,
} from '../../src/keys/contract.ts';
import { Keys } from '../../src/keys/rules.ts';
import type { SecretHash } from '../../src/keys/secrets.ts';
import {
  activeKeyOf,
  endingKeyOf,
  keySql,
  type KeyRow,
  listing,
  type Query,
  type SqlValue,
  stoppedKey,
} from '../../src/keys/stores/sql.ts';

/** What this store uses of a D1 result. */
export interface D1ResultLike<T = Record<string, unknown>> {
  results?: T[];
  meta: { changes?: number };
}

/** What this store uses of a D1 prepared statement. */
export interface D1StatementLike {
  bind(...values: SqlValue[]): D1StatementLike;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
  run(): Promise<D1ResultLike>;
}

/** What this store uses of a D1 binding (`env.DB`). */
export interface D1DatabaseLike {
  prepare(sql: string): D1StatementLike;
  batch<T = Record<string, unknown>>(statements: D1StatementLike[]): Promise<D1ResultLike<T>[]>;
}

export class D1KeyBackend implements KeyBackend {
  private readonly db: D1DatabaseLike;

  constructor(db: D1DatabaseLike) {
    this.db = db;
  }

  private statement(query: Query): D1StatementLike {
    return this.db.prepare(query.sql).bind(...query.params);
  }

  private first<T>(query: Query): Promise<T | null> {
    return this.statement(query).first<T>();
  }

  /** Runs statements as one transaction; each one's rows. */
  private async batch<T>(queries: Query[]): Promise<D1ResultLike<T>[]> {
    return this.db.batch<T>(queries.map((query) => this.statement(query)));
  }

  async keyEnd(hash: string): Promise<KeyEnd> {
    const row = await this.first<{ revoked_at: number | null }>(keySql.keyEnd(hash));
    return row ? row.revoked_at : undefined;
  }

  /** `/health`: one cheap read of the keys table; rejects when D1 (or its schema) cannot answer. */
  async probe(): Promise<void> {
    await this.first(keySql.probe());
  }

  /**
   * The conditional INSERT decides; the oldest counted link is
   * read in the same batch, for Retry-After should it refuse.
   */
  async addToken(token: NewToken, quota: TokenQuota): Promise<TokenOutcome> {
    const [added, oldest] = await this.batch<{ oldest: number }>([
      keySql.addToken(token, quota),
      keySql.oldestToken(token.email, quota.since),
    ]);
    if (added.meta.changes === 1) return { stored: true };
    return { stored: false, oldest: Number(oldest.results?.[0]?.oldest) };
  }

  async dropToken(token: NewToken): Promise<void> {
    await this.statement(keySql.dropToken(token.hash)).run();
  }

  async purge(tokensBy: number, now: number): Promise<void> {
    await this.batch(keySql.purge(tokensBy, now));
  }

  async openSession(
    tokenHash: string,
    sessionHash: string,
    now: number,
    sessionExpiresAt: number,
  ): Promise<string | null> {
    const [, used] = await this.batch<{ email: string }>(
      keySql.openSession(tokenHash, sessionHash, now, sessionExpiresAt),
    );
    return used.results?.[0]?.email ?? null;
  }

  async sessionEmail(sessionHash: string, now: number): Promise<string | null> {
    return (await this.first<{ email: string }>(keySql.sessionEmail(sessionHash, now)))?.email ?? null;
  }

  async endSession(sessionHash: string): Promise<void> {
    await this.statement(keySql.endSession(sessionHash)).run();
  }

  activeKey(email: string): Promise<KeyInfo | null> {
    return activeKeyOf(this.first.bind(this), email);
  }

  endingKey(email: string, now: number): Promise<EndingKey | null> {
    return endingKeyOf(this.first.bind(this), email, now);
  }

  async issue(key: NewKey): Promise<boolean> {
    return (await this.statement(keySql.issue(key)).run()).meta.changes === 1;
  }

  async rotate(key: NewKey, now: number, endsAt: number, expected?: string): Promise<StoppedKey[]> {
    const [, ended, revoked, activated] = await this.batch<StoppedKey>(keySql.rotate(key, now, endsAt, expected));
    const old = revoked.results?.[0];
    if (old === undefined || activated.results?.length !== 1) return [];
    return [old, ...(ended.results ?? [])].map(stoppedKey);
  }

  async revoke(email: string, now: number, expected?: string): Promise<StoppedKey[]> {
    const [ended, revoked] = await this.batch<StoppedKey>(keySql.revoke(email, now, expected));
    return [...(revoked.results ?? []), ...(ended.results ?? [])].map(stoppedKey);
  }

  async endGrace(email: string, now: number, expected?: string): Promise<StoppedKey | null> {
    const ended = await this.first<StoppedKey>(keySql.endGrace(email, now, expected));
    return ended ? stoppedKey(ended) : null;
  }

  async owner(hash: string): Promise<{ email: string; end: number | null } | null> {
    const row = await this.first<{ email: string; revoked_at: number | null }>(keySql.owner(hash));
    return row ? { email: row.email, end: row.revoked_at } : null;
  }

  async *list(): AsyncIterable<KeyListing> {
    const { results = [] } = await this.statement(keySql.list()).all<KeyRow>();
    for (const row of results) yield listing(row);
  }
}

/**
 * A Worker's keys over its D1 binding, behind the key cache (default 1 s, at
 * most 2 s): `d1Keys(env.DB)`. Create it once per isolate (module level, or
 * memoised on the binding), so the cache outlives a request. `hash`: the
 * sha256 of secrets (default `hashSecret`; the Worker gives its own, adapters/_cloudflare/sha256.ts).
 */
export function d1Keys(db: D1DatabaseLike, options: KeyCacheOptions & { hash?: SecretHash } = {}): Keys {
  const { now = Date.now, hash, ...cache } = options;
  return new Keys(new D1KeyBackend(db), now, cache, hash);
}
