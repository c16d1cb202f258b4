/**
 * Keys, sign-in tokens and sessions in PostgreSQL (`DATABASE_URL`), for
 * operators who run several servers on one set of keys. The schema is the
 * repository's `migrations/` (the SQLite files, read through `forPostgres`)
 * and the queries are src/keys/stores/sql.ts, both shared with SQLite and D1;
 * only the placeholders are numbered here.
 *
 * Schema: applied on open, in one transaction under an advisory lock, so
 * servers starting at once migrate once; a database whose schema is newer
 * than this code is refused with one line, and nothing is written to it.
 *
 * Writes: each is one transaction. PostgreSQL runs transactions side by side
 * (READ COMMITTED), where SQLite and D1 run them one at a time, so every
 * write first takes a transaction-scoped advisory lock on its address (on its
 * token, for a sign-in): writes for one address then run one at a time, and
 * the conditions sql.ts puts in its statements hold as they do on SQLite. A
 * write is acknowledged only once its COMMIT returned.
 *
 * Key checks: `postgresKeys` puts the key cache (src/keys/cache.ts) above the
 * store, so a key already checked is answered from memory for a second (at
 * most two) with no round trip, and a first check is one query. Every write
 * that changes a key sends, in its transaction, a NOTIFY naming the hashes
 * it changed; each server LISTENs on its own connection and drops those
 * answers the moment the change commits, so a key issued, rotated, ended or
 * revoked on one server is answered the same by the others at once (within
 * the cache's second should the listening connection be down; it reconnects
 * by itself and then forgets every answer it held). The writer purges the
 * shared cache itself and listeners do not, so a change is purged once; a
 * writer that cannot (the keys CLI without CACHE_PURGE_URL) says so, and the
 * one listener that claims it (a `meta` row only one can insert) purges.
 *
 * Faults: the pool is bounded (`poolMax` connections), and so is every wait
 * (`connectTimeoutMs` for a connection, `queryTimeoutMs` for a statement). A
 * database that cannot be reached makes every call reject with
 * `KeyStoreUnavailable` (the API and the portal answer 503) until it is back;
 * new connections are made as needed, so nothing has to be restarted.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { KeyCacheOptions } from '../../src/keys/cache.ts';
import {
  type EndingKey,
  type KeyBackend,
  type KeyEnd,
  type KeyInfo,
  type KeyListing,
  KeyStoreUnavailable,
  type NewKey,
  type NewToken,
  type StoppedKey,
  type TokenOutcome,
  type TokenQuota,
} from '../../src/keys/contract.ts';
import { Keys } from '../../src/keys/rules.ts';
import {
  activeKeyOf,
  endingKeyOf,
  keySql,
  type KeyRow,
  listing,
  type Query,
  stoppedKey,
} from '../../src/keys/stores/sql.ts';
import { KeyDatabaseError, migrationsAfter, SCHEMA_VERSION } from '../../src/keys/stores/sqlite-file.node.ts';

/** Default and bounds of the settings (POSTGRES_POOL_MAX, POSTGRES_CONNECT_TIMEOUT_MS, POSTGRES_QUERY_TIMEOUT_MS). */
/**
 * The connection wait is SQLite's lock wait (10 s): it also bounds a wait for
 * a free connection of the pool, which a burst of portal writes queues for.
 */
export const POSTGRES_DEFAULTS = { poolMax: 10, connectTimeoutMs: 10_000, queryTimeoutMs: 5_000 } as const;
/** The channel every server LISTENs on. */
export const CHANGES_CHANNEL = 'faa_key_changes';
/** The `meta` row holding how many of the migrations the database holds. */
const VERSION_ROW = 'schema-version';
/** The `meta` rows that say which server purges a change no writer purged. */
const CLAIM_PREFIX = 'purge-claim ';

/**
 * A notification: who changed which keys, the ids it stopped,
 * whether it purges them itself, and else the claim to purge them.
 */
interface Change {
  from: string;
  hashes: string[];
  stopped?: string[];
  purged?: boolean;
  claim?: string;
}

/** Longest pause between two attempts to bring the listening connection back. */
const RELISTEN_MAX_MS = 5_000;
/** Rows read at once by `list`. */
const LIST_PAGE = 1_000;

/** The database could not be reached when opening (exit 1 with this line). */
export class KeyDatabaseUnreachable extends KeyDatabaseError {}

/** A URL as it may be printed: no password. */
export function shownDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'an unparsable DATABASE_URL';
  }
}

/** Whether DATABASE_URL names PostgreSQL (`postgres://` or `postgresql://`). */
export const isPostgresUrl = (url: string | undefined): url is string => !!url && /^postgres(ql)?:\/\//i.test(url);

/**
 * A migration written for SQLite as PostgreSQL reads it: no STRICT or
 * WITHOUT ROWID, 64-bit integers (times are milliseconds), and the `rowid`
 * SQLite gives every table not marked WITHOUT ROWID made explicit, an
 * identity column, so `ORDER BY rowid` lists keys in issue order on both.
 */
export function forPostgres(sql: string): string {
  return sql
    .split(';')
    .map((statement) => {
      const create = /CREATE TABLE (\w+) \(/.exec(statement);
      let out = statement.replace(/\bINTEGER\b/g, 'BIGINT');
      if (create && !/WITHOUT ROWID/.test(statement))
        out = out.replace(create[0], `${create[0]}rowid BIGINT GENERATED ALWAYS AS IDENTITY, `);
      return out.replace(/\)\s*STRICT(\s*,\s*WITHOUT ROWID)?\s*$/, ')\n');
    })
    .join(';');
}

/** A query of sql.ts with its `?` numbered `$1`, `$2`, ... (no `?` appears in sql.ts but as a placeholder). */
export function numbered({ sql, params }: Query): { text: string; values: Query['params'] } {
  let n = 0;
  return { text: sql.replace(/\?/g, () => `$${++n}`), values: params };
}

export interface PostgresKeysOptions {
  /** Most connections held at once; default 10. */
  poolMax?: number;
  /** Longest wait for a connection (a new one, or a free one of the pool), ms; default 10000. */
  connectTimeoutMs?: number;
  /** Longest a statement may run (and be waited for), ms; default 5000. */
  queryTimeoutMs?: number;
  /** LISTEN for other servers' key changes (the server; default true). The CLI turns it off. */
  listen?: boolean;
  /**
   * Whether whoever opened this store purges the shared cache for the keys
   * its own writes stop (it has CACHE_PURGE_URL; default true). When not (the
   * keys CLI without it), its notifications say so, and one listening server,
   * chosen by a claim in the database, purges them instead.
   */
  purges?: boolean;
  /** Told when the database is lost (`error`) or back (`info`): the server logs it at that level. */
  log?: (line: string, level: 'error' | 'info') => void;
}

type Client = pg.PoolClient | pg.Client | pg.Pool;
const int8 = (value: string) => Number(value);

export class PostgresKeyBackend implements KeyBackend {
  readonly pool: pg.Pool;
  readonly url: string;
  /** This store's name in its notifications, so it can tell its own from other servers'. */
  private readonly self = randomUUID();
  private readonly config: pg.ClientConfig;
  private readonly log: (line: string, level: 'error' | 'info') => void;
  private listener: pg.Client | null = null;
  private changed: ((hashes: string[] | null) => void) | undefined;
  private unpurged: ((ids: string[]) => void) | undefined;
  private readonly purges: boolean;
  private claimsCleared = 0;
  private closed = false;
  private relistenTimer: ReturnType<typeof setTimeout> | undefined;
  /** Whether the last call reached the database: a change is logged once, not per request. */
  private reachable = true;

  private constructor(url: string, options: PostgresKeysOptions) {
    this.url = url;
    this.log = options.log ?? (() => {});
    this.purges = options.purges ?? true;
    const queryTimeoutMs = options.queryTimeoutMs ?? POSTGRES_DEFAULTS.queryTimeoutMs;
    this.config = {
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs ?? POSTGRES_DEFAULTS.connectTimeoutMs,
      statement_timeout: queryTimeoutMs,
      query_timeout: queryTimeoutMs + 1_000,
      keepAlive: true,
      application_name: 'film-awards-archive',
      // bigint (times in ms, counts) as numbers: every value this store keeps is below 2^53.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20 ? int8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    };
    this.pool = new pg.Pool({
      ...this.config,
      max: options.poolMax ?? POSTGRES_DEFAULTS.poolMax,
      idleTimeoutMillis: 30_000,
    });
    // An idle connection the server dropped: the pool forgets it; the next call makes a new one.
    this.pool.on('error', () => {});
  }

  /**
   * Connects, brings the schema up to this code's (under an advisory lock)
   * and, unless `listen` is false, starts following other servers' changes.
   * Rejects with one line (`KeyDatabaseError`) when the database cannot be
   * reached or holds a schema newer than this code.
   */
  static async open(url: string, options: PostgresKeysOptions = {}): Promise<PostgresKeyBackend> {
    const store = new PostgresKeyBackend(url, options);
    try {
      await store.migrate();
      if (options.listen !== false) await store.listen();
    } catch (error) {
      await store.close();
      if (error instanceof KeyDatabaseError) throw error;
      // Out of reach (try again) or refused (a password, a permission:
      // the operator fixes it), said in one line either way.
      if (isUnreachable(error))
        throw new KeyDatabaseUnreachable(`cannot reach the key database ${shownDatabaseUrl(url)}: ${reason(error)}`);
      throw new KeyDatabaseError(`cannot use the key database ${shownDatabaseUrl(url)}: ${reason(error)}`);
    }
    return store;
  }

  /**
   * Applies the migrations the database lacks, in one transaction under an advisory
   * lock: of servers starting at once, one migrates and the others find it done.
   */
  private async migrate(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('faa key schema', 0))");
      const version = await schemaVersion(client);
      if (version > SCHEMA_VERSION) {
        throw new KeyDatabaseError(
          `the key database ${shownDatabaseUrl(this.url)} holds key schema ${version}, newer than this code knows (${SCHEMA_VERSION}): run a newer version; nothing was written`,
        );
      }
      if (version === 0 && (await client.query("SELECT to_regclass('keys') IS NOT NULL AS taken")).rows[0].taken) {
        throw new KeyDatabaseError(
          `the key database ${shownDatabaseUrl(this.url)} holds a table named keys but no key schema: give the service a database (or schema) of its own; nothing was written`,
        );
      }
      for (const sql of migrationsAfter(version)) await client.query(forPostgres(sql));
      if (version < SCHEMA_VERSION) {
        await client.query(
          'INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value',
          [VERSION_ROW, String(SCHEMA_VERSION)],
        );
      }
    });
  }

  /**
   * Calls `listener` with the hashes another server changed (null: forget every answer, changes may have been missed).
   */
  onChanged(listener: (hashes: string[] | null) => void): void {
    this.changed = listener;
  }

  /**
   * The LISTEN connection: its own client, outside the pool; lost, it is brought back with growing pauses (up to 5 s).
   */
  private async listen(): Promise<void> {
    const client = new pg.Client(this.config);
    const lost = () => {
      if (this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => {});
      this.relisten(250);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => this.notified(message.payload));
    await client.connect();
    await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    this.listener = client;
  }

  private relisten(delay: number): void {
    if (this.closed) return;
    this.relistenTimer = setTimeout(() => {
      this.listen().then(
        () => {
          this.log('key database: following other servers’ key changes again', 'info');
          this.changed?.(null);
        },
        () => this.relisten(Math.min(delay * 2, RELISTEN_MAX_MS)),
      );
    }, delay);
    this.relistenTimer.unref();
  }

  /**
   * Calls `listener` with the ids of keys another process stopped without
   * purging them itself (the keys CLI without CACHE_PURGE_URL), when this
   * store won the claim to purge them: of all the servers told, one purges.
   */
  onUnpurged(listener: (ids: string[]) => void): void {
    this.unpurged = listener;
  }

  private notified(payload: string | undefined): void {
    let change: Change;
    try {
      change = JSON.parse(payload ?? '') as Change;
      if (!Array.isArray(change.hashes)) throw new TypeError('no hashes');
    } catch {
      this.changed?.(null); // not ours to read: forget everything rather than miss a change
      return;
    }
    if (change.from === this.self) return;
    this.changed?.(change.hashes);
    const listener = this.unpurged;
    if (!change.purged && change.stopped?.length && change.claim && listener) {
      this.claim(change.claim).then(
        (won) => won && listener(change.stopped!),
        (error: unknown) =>
          this.log(
            `key database: could not claim the shared cache's purge of ${change.stopped!.join(', ')} (${reason(error)})`,
            'error',
          ),
      );
    }
  }

  /**
   * Whether this store is the one to purge a change (a `meta` row only the
   * first can insert); claims over an hour old are cleared once an hour.
   */
  private async claim(id: string): Promise<boolean> {
    const now = Date.now();
    const won =
      (
        await this.pool.query('INSERT INTO meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
          `${CLAIM_PREFIX}${id}`,
          String(now),
        ])
      ).rowCount === 1;
    if (won && now - this.claimsCleared > 3_600_000) {
      this.claimsCleared = now;
      await this.pool.query('DELETE FROM meta WHERE name LIKE $1 AND CAST(value AS BIGINT) < $2', [
        `${CLAIM_PREFIX}%`,
        now - 3_600_000,
      ]);
    }
    return won;
  }

  /**
   * Takes in every notification sent before now: a round trip on the LISTEN
   * connection, which PostgreSQL answers only after the notifications
   * committed before it (tests, which then check without a pause).
   */
  async caughtUp(): Promise<void> {
    await this.listener?.query('SELECT 1');
  }

  /** Whether the LISTEN connection is up (tests, the start-up line). */
  get listening(): boolean {
    return this.listener !== null;
  }

  /**
   * Runs `work`, turning a database out of reach into `KeyStoreUnavailable` (said once in the log until it is back).
   */
  private async reach<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new KeyStoreUnavailable('the key database connection is closed');
    try {
      const out = await work();
      if (!this.reachable) {
        this.reachable = true;
        this.log('key database: reachable again', 'info');
      }
      return out;
    } catch (error) {
      if (!isUnreachable(error)) throw error;
      if (this.reachable) {
        this.reachable = false;
        this.log(
          `key database: cannot be reached (${reason(error)}); key checks not yet cached and portal writes answer 503 until it is back`,
          'error',
        );
      }
      throw new KeyStoreUnavailable(`the key database cannot be reached: ${reason(error)}`);
    }
  }

  private async rows<T>(query: Query, client: Client = this.pool): Promise<T[]> {
    return (await client.query(numbered(query))).rows as T[];
  }

  private async first<T>(query: Query): Promise<T | undefined> {
    return this.reach(async () => (await this.rows<T>(query))[0]);
  }

  /**
   * Runs `work` in one transaction on one pooled connection: COMMIT when
   * it resolves, ROLLBACK (and the connection dropped) when it throws.
   */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // The connection lost while it is out of the pool: the statement in flight
    // (or the next) fails and says so; the event must not end the process.
    const lost = () => {};
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const out = await work(client);
      await client.query('COMMIT');
      client.off('error', lost);
      client.release();
      return out;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.off('error', lost);
      // A connection that failed mid-transaction is not given back to the pool.
      client.release(true);
      throw error;
    }
  }

  /**
   * One write transaction: the advisory lock on `lockOn` (an address or a
   * token hash), `work`, a NOTIFY of the keys `changes` names from its
   * outcome (the hashes whose answers change; the ids it stopped, to purge),
   * COMMIT. Resolves only once COMMIT returned; a failure rolls back.
   */
  private write<T>(
    lockOn: string,
    work: (client: pg.PoolClient) => Promise<T>,
    changes?: (out: T) => { hashes: string[]; stopped?: StoppedKey[] },
  ): Promise<T> {
    return this.reach(() =>
      this.transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockOn]);
        const out = await work(client);
        const { hashes = [], stopped = [] } = changes?.(out) ?? {};
        if (hashes.length > 0) {
          const change: Change = {
            from: this.self,
            hashes,
            stopped: stopped.map((k) => k.id),
            purged: this.purges,
            claim: this.purges ? undefined : randomUUID(),
          };
          await client.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify(change)]);
        }
        return out;
      }),
    );
  }

  async keyEnd(hash: string): Promise<KeyEnd> {
    const row = await this.first<{ revoked_at: number | null }>(keySql.keyEnd(hash));
    return row === undefined ? undefined : row.revoked_at;
  }

  /** `/health`: one cheap read of the keys table; rejects while the database cannot answer. */
  async probe(): Promise<void> {
    await this.first(keySql.probe());
  }

  /** Number of current keys (`npm start` makes a development key only where there are none). */
  async activeCount(): Promise<number> {
    return (await this.first<{ n: number }>({
      sql: 'SELECT count(*) AS n FROM keys WHERE revoked_at IS NULL',
      params: [],
    }))!.n;
  }

  /** Number of keys stored, in any state. */
  async storedCount(): Promise<number> {
    return (await this.first<{ n: number }>({ sql: 'SELECT count(*) AS n FROM keys', params: [] }))!.n;
  }

  addToken(token: NewToken, quota: TokenQuota): Promise<TokenOutcome> {
    return this.write(token.email, async (client): Promise<TokenOutcome> => {
      if ((await client.query(numbered(keySql.addToken(token, quota)))).rowCount === 1) return { stored: true };
      return {
        stored: false,
        oldest: (await this.rows<{ oldest: number }>(keySql.oldestToken(token.email, quota.since), client))[0].oldest,
      };
    });
  }

  async dropToken(token: NewToken): Promise<void> {
    await this.first(keySql.dropToken(token.hash));
  }

  async purge(tokensBy: number, now: number): Promise<void> {
    await this.reach(async () => {
      for (const query of keySql.purge(tokensBy, now)) await this.rows(query);
    });
  }

  openSession(tokenHash: string, sessionHash: string, now: number, sessionExpiresAt: number): Promise<string | null> {
    const [store, use] = keySql.openSession(tokenHash, sessionHash, now, sessionExpiresAt);
    return this.write(tokenHash, async (client) => {
      await this.rows(store, client);
      return (await this.rows<{ email: string }>(use, client))[0]?.email ?? null;
    });
  }

  async sessionEmail(sessionHash: string, now: number): Promise<string | null> {
    return (await this.first<{ email: string }>(keySql.sessionEmail(sessionHash, now)))?.email ?? null;
  }

  async endSession(sessionHash: string): Promise<void> {
    await this.first(keySql.endSession(sessionHash));
  }

  activeKey(email: string): Promise<KeyInfo | null> {
    return activeKeyOf(this.first.bind(this), email);
  }

  endingKey(email: string, now: number): Promise<EndingKey | null> {
    return endingKeyOf(this.first.bind(this), email, now);
  }

  issue(key: NewKey): Promise<boolean> {
    return this.write(
      key.email,
      async (client) => (await client.query(numbered(keySql.issue(key)))).rowCount === 1,
      (issued) => ({ hashes: issued ? [key.hash] : [] }),
    );
  }

  /**
   * The four statements of sql.ts's rotate, in one transaction under
   * the address's lock: the SQL decides, this reads what they returned.
   */
  rotate(key: NewKey, now: number, endsAt: number, expected?: string): Promise<StoppedKey[]> {
    const [store, endGrace, revoke, activate] = keySql.rotate(key, now, endsAt, expected);
    return this.write(
      key.email,
      async (client) => {
        await this.rows(store, client);
        const ended = (await this.rows<StoppedKey>(endGrace, client)).map(stoppedKey);
        const old = (await this.rows<StoppedKey>(revoke, client))[0];
        const rotated = (await this.rows(activate, client)).length === 1;
        return old === undefined || !rotated ? [] : [stoppedKey(old), ...ended];
      },
      (stopped) => ({ hashes: stopped.length ? [key.hash, ...stopped.map((k) => k.hash)] : [], stopped }),
    );
  }

  revoke(email: string, now: number, expected?: string): Promise<StoppedKey[]> {
    const [endGrace, revoke] = keySql.revoke(email, now, expected);
    return this.write(
      email,
      async (client) => {
        const ended = (await this.rows<StoppedKey>(endGrace, client)).map(stoppedKey);
        return [...(await this.rows<StoppedKey>(revoke, client)).map(stoppedKey), ...ended];
      },
      (stopped) => ({ hashes: stopped.map((k) => k.hash), stopped }),
    );
  }

  endGrace(email: string, now: number, expected?: string): Promise<StoppedKey | null> {
    return this.write(
      email,
      async (client) => {
        const row = (await this.rows<StoppedKey>(keySql.endGrace(email, now, expected), client))[0];
        return row ? stoppedKey(row) : null;
      },
      (ended) => ({ hashes: ended ? [ended.hash] : [], stopped: ended ? [ended] : [] }),
    );
  }

  async owner(hash: string): Promise<{ email: string; end: number | null } | null> {
    const row = await this.first<{ email: string; revoked_at: number | null }>(keySql.owner(hash));
    return row ? { email: row.email, end: row.revoked_at } : null;
  }

  /** Every key in issue order, a page at a time (keyset on `rowid`), so a large table is never held at once. */
  async *list(): AsyncIterable<KeyListing> {
    for (let after = 0; ;) {
      const page = await this.reach(() =>
        this.rows<KeyRow & { rowid: number }>({
          sql: 'SELECT rowid, id, email, created_at, revoked_at FROM keys WHERE rowid > ? ORDER BY rowid LIMIT ?',
          params: [after, LIST_PAGE],
        }),
      );
      for (const row of page) yield listing(row);
      if (page.length < LIST_PAGE) return;
      after = page[page.length - 1].rowid;
    }
  }

  /**
   * Stores keys, tokens and sessions as given (a move from SQLite, the
   * benchmark), in one transaction, keys in the order given; a record whose
   * hash is already stored is left as it is. How many keys were stored.
   */
  insertMany(
    keys: (NewKey & { revokedAt: number | null })[],
    tokens: TokenRecord[] = [],
    sessions: SessionRecord[] = [],
  ): Promise<number> {
    return this.reach(() =>
      this.transaction(async (client) => {
        let stored = 0;
        for (let i = 0; i < keys.length; i += 5_000) stored += await insertKeys(client, keys.slice(i, i + 5_000));
        if (tokens.length) {
          await client.query(
            'INSERT INTO tokens (hash, email, created_at, expires_at, used_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) ON CONFLICT (hash) DO NOTHING',
            [
              tokens.map((t) => t.hash),
              tokens.map((t) => t.email),
              tokens.map((t) => t.createdAt),
              tokens.map((t) => t.expiresAt),
              tokens.map((t) => t.usedAt),
            ],
          );
        }
        if (sessions.length) {
          await client.query(
            'INSERT INTO sessions (hash, email, expires_at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) ON CONFLICT (hash) DO NOTHING',
            [sessions.map((r) => r.hash), sessions.map((r) => r.email), sessions.map((r) => r.expiresAt)],
          );
        }
        return stored;
      }),
    );
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relistenTimer);
    const listener = this.listener;
    this.listener = null;
    await Promise.all([listener?.end().catch(() => {}), this.pool.end().catch(() => {})]);
  }
}

/** A sign-in token and a session as stored (a move from SQLite). */
export interface TokenRecord {
  hash: string;
  email: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}
export interface SessionRecord {
  hash: string;
  email: string;
  expiresAt: number;
}

/**
 * One page of keys in the order given (their rowid follows it), each
 * with a change number after the last one stored: how many were new.
 */
async function insertKeys(client: pg.PoolClient, page: (NewKey & { revokedAt: number | null })[]): Promise<number> {
  const out = await client.query(
    `INSERT INTO keys (hash, id, email, created_at, revoked_at, seq)
     SELECT h, i, e, c, r, (SELECT coalesce(max(seq), 0) FROM keys) + n
     FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS k(h, i, e, c, r, n) ORDER BY n
     ON CONFLICT (hash) DO NOTHING`,
    [
      page.map((k) => k.hash),
      page.map((k) => k.id),
      page.map((k) => k.email),
      page.map((k) => k.createdAt),
      page.map((k) => k.revokedAt),
    ],
  );
  return out.rowCount ?? 0;
}

/** How many migrations the database holds: its `meta` row, 0 before the first. */
async function schemaVersion(client: Client): Promise<number> {
  const { rows } = await client.query("SELECT to_regclass('meta') IS NOT NULL AS present");
  if (!rows[0].present) return 0;
  const row = (await client.query('SELECT value FROM meta WHERE name = $1', [VERSION_ROW])).rows[0] as
    { value: string } | undefined;
  return row ? Number(row.value) : 0;
}

/** A connection-level failure: refused, reset, timed out, the server shutting down or not accepting connections yet. */
function isUnreachable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  if (typeof code === 'string' && (/^(08|57P0[1-3])/.test(code) || /^E[A-Z]+$/.test(code))) return true;
  return /timeout|terminated|Connection ended|not queryable|Client was closed|closed unexpectedly/i.test(message ?? '');
}

function reason(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return message || code || String(error);
}

/**
 * A server's keys over PostgreSQL, behind the key cache (default 1 s, at
 * most 2 s), each answer dropped the moment another server's change to that
 * key commits.
 */
export function postgresKeys(backend: PostgresKeyBackend, options: KeyCacheOptions = {}): Keys {
  const { now = Date.now, ...cache } = options;
  const keys = new Keys(backend, now, cache);
  backend.onChanged((hashes) => {
    if (hashes === null) keys.cache?.clear();
    else for (const hash of hashes) keys.cache?.drop(hash);
  });
  return keys;
}
