/**
 * Keys, sign-in tokens and sessions in one SQLite file (`node:sqlite`), for
 * `npm start`, the keys CLI and self-hosting. Several processes may use the
 * file at once: WAL, every write one `BEGIN IMMEDIATE` transaction, and a
 * partial unique index that keeps one active key per address whatever runs
 * concurrently. Only sha256 hashes of keys, tokens and sessions are stored.
 * The schema is the repository's `migrations/` and the queries are
 * src/keys/stores/sql.ts: both shared with Cloudflare D1 (`d1.ts`), so no
 * write decides in code between its statements here either. Which file may
 * be opened, and how its failures are said (busy, read-only, unreadable), is
 * `sqlite-file.node.ts`.
 *
 * The server's key check never waits on the file: the store keeps the
 * working keys in memory (`sqlite-view.ts`), changes them in the same
 * synchronous step that commits its own writes, and picks up other
 * processes' writes (the CLI) by checking `PRAGMA data_version` every
 * `pollMs` (250 ms), reading only rows whose change number (`seq`) is newer
 * than the last one seen.
 *
 * Busy is not damage: a lock another process holds is waited for (up to
 * `LOCK_WAIT_MS`) without blocking the event loop. Damage found once running
 * (SQLITE_CORRUPT, in a request or in the polling timer) never stops the
 * process: the store is marked damaged, says so once (`onDamage`), and every
 * later use of it throws, so key-dependent requests fail rather than answer
 * from a store that can no longer follow revocations.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
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
} from '../contract.ts';
import { endingInfo, keyInfo, keySql, type KeyRow, listing, type Query, stoppedKey } from './sql.ts';
import { WorkingKeys } from './sqlite-view.ts';
import { importLegacyJson, LEGACY_IMPORT, type LegacyImport, LegacyKeysError } from './legacy.node.ts';
import {
  checkReadable,
  classified,
  createPrivate,
  isBusy,
  isDamage,
  isReadOnly,
  KeyDatabaseError,
  LOCK_WAIT_MS,
  migrationsAfter,
  notWritable,
  readOnly,
  resultCode,
  SCHEMA_VERSION,
  unreadable,
} from './sqlite-file.node.ts';

/** How often the server looks for other processes' writes. */
export const POLL_MS = 250;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const iso = (ms: number) => new Date(ms).toISOString();

export interface SqliteKeysOptions {
  /**
   * Keep the active key hashes in memory and follow other processes' writes
   * (the server; default true). The CLI turns it off and asks the file.
   */
  view?: boolean;
  /** How often to look for other processes' writes, ms; default 250. */
  pollMs?: number;
  /** A JSON key file of earlier versions (`data/keys.json`), imported once. */
  legacyJson?: string;
  /** Longest wait for the write lock, ms; default 10 s. */
  lockWaitMs?: number;
  /** Told once, when damage is found after the store opened (the server logs it as an error). */
  onDamage?: (message: string) => void;
}

export class SqliteKeyBackend implements KeyBackend {
  readonly db: DatabaseSync;
  /** What was imported from a legacy JSON file when this store opened, if anything. */
  readonly imported: LegacyImport | null = null;
  /** The working keys in memory; null when no view is kept (the CLI asks the file). */
  private readonly working: WorkingKeys | null;
  private lastSeq = 0;
  private dataVersion = -1;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly lockWaitMs: number;
  readonly file: string;
  /** What damage was found once running; from then on every use throws. */
  private damaged: KeyDatabaseError | null = null;
  private readonly onDamage: ((message: string) => void) | undefined;
  /** Told the ids of keys another process stopped (or gave an end), as `follow` finds them. */
  private stopped: ((ids: string[]) => void) | undefined;

  constructor(file: string, options: SqliteKeysOptions = {}) {
    this.file = file;
    this.lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
    this.onDamage = options.onDamage;
    checkReadable(file);
    if (file !== ':memory:') {
      const why = notWritable(file);
      if (why) throw readOnly(file, why);
      mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
      createPrivate(file);
    }
    let db: DatabaseSync | undefined;
    try {
      this.db = db = new DatabaseSync(file, { timeout: this.lockWaitMs });
      // A 64 MiB page cache keeps the hot index pages of a million keys in memory, so a write seldom reads.
      this.db.exec('PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536;');
      // Only a new file needs the write lock here: an existing key database opens while another process writes.
      if ((this.db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode !== 'wal')
        this.db.exec('PRAGMA journal_mode = WAL');
      if (this.schemaVersion() < SCHEMA_VERSION) this.blockingWrite(() => this.migrate());
      // The server never blocks its event loop on another process's lock: writes wait asynchronously (see `write`).
      this.db.exec('PRAGMA busy_timeout = 0');
    } catch (error) {
      if (db?.isOpen) db.close();
      throw classified(file, error, this.lockWaitMs);
    }
    try {
      if (options.legacyJson) this.imported = this.importLegacy(options.legacyJson);
      this.working = options.view === false ? null : this.loadWorking();
    } catch (error) {
      this.db.close();
      throw error instanceof LegacyKeysError ? error : classified(file, error, this.lockWaitMs);
    }
    const pollMs = options.pollMs ?? POLL_MS;
    if (this.working && pollMs > 0 && file !== ':memory:') {
      this.timer = setInterval(() => this.follow(), pollMs);
      this.timer.unref();
    }
  }

  /**
   * Applies the migrations the file does not hold yet, inside the
   * caller's write transaction, and records how many it holds.
   */
  private migrate(): void {
    const version = this.schemaVersion();
    if (version >= SCHEMA_VERSION) return; // another process migrated it while this one waited for the lock
    for (const sql of migrationsAfter(version)) this.db.exec(sql);
    this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  }

  private schemaVersion(): number {
    return Number((this.db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
  }

  /**
   * What a failed operation means for the file, thrown as such: busy,
   * read-only, or damage (then the store is marked damaged, said once, and
   * refuses every later use until a restart checks the file again).
   */
  private failure(error: unknown): KeyDatabaseError {
    if (this.damaged) return this.damaged;
    if (!isDamage(error))
      return error instanceof KeyDatabaseError || isBusy(error) || isReadOnly(error)
        ? classified(this.file, error, this.lockWaitMs)
        : (error as KeyDatabaseError);
    return this.markDamaged((error as Error).message);
  }

  /** Marks the store damaged (said once): from then on every use throws, until a restart checks the file again. */
  private markDamaged(what: string): KeyDatabaseError {
    if (this.damaged) return this.damaged;
    this.damaged = unreadable(this.file, `it was found damaged while running (${what})`);
    clearInterval(this.timer);
    this.onDamage?.(
      `key database damaged: ${this.damaged.message} Key checks and the portal answer errors until it is restored and the server restarted.`,
    );
    return this.damaged;
  }

  /**
   * Working keys, read once at start (about a second per million
   * keys): the current ones, and those whose end is still to come.
   */
  private loadWorking(): WorkingKeys {
    const working = new WorkingKeys();
    const rows = this.db
      .prepare(
        'SELECT hash, revoked_at FROM keys WHERE revoked_at IS NULL UNION ALL SELECT hash, revoked_at FROM keys WHERE revoked_at > ?',
      )
      .iterate(Date.now()) as Iterable<{
      hash: string;
      revoked_at: number | null;
    }>;
    for (const row of rows) working.set(row.hash, row.revoked_at === null ? null : Number(row.revoked_at));
    this.lastSeq = this.maxSeq();
    this.dataVersion = this.readDataVersion();
    return working;
  }

  private readDataVersion(): number {
    return Number((this.db.prepare('PRAGMA data_version').get() as { data_version: number }).data_version);
  }

  private maxSeq(): number {
    return Number((this.db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM keys').get() as { seq: number }).seq);
  }

  /**
   * Calls `listener` with the ids of the keys another process (the keys CLI)
   * stopped or gave an end, once `follow` sees it: each key this view held as
   * working whose end moved earlier, so the server can purge its shared
   * answers whoever revoked it. This process's own writes are not reported:
   * their callers purge what the rules return.
   */
  onStopped(listener: (ids: string[]) => void): void {
    this.stopped = listener;
  }

  /**
   * Applies other processes' key changes to the in-memory set. `data_version`
   * changes only for their commits; rows carry the number of their last change.
   */
  follow(): void {
    if (!this.working) return;
    try {
      this.working.forgetEnded();
      const version = this.readDataVersion();
      if (version === this.dataVersion) return;
      const rows = this.db
        .prepare('SELECT hash, id, revoked_at, seq FROM keys WHERE seq > ? ORDER BY seq')
        .all(this.lastSeq) as {
        hash: string;
        id: string;
        revoked_at: number | null;
        seq: number;
      }[];
      const stopped: string[] = [];
      for (const row of rows) {
        if (this.working.change(row.hash, row.revoked_at === null ? null : Number(row.revoked_at)))
          stopped.push(row.id);
        this.lastSeq = Math.max(this.lastSeq, Number(row.seq));
      }
      this.dataVersion = version;
      if (stopped.length > 0) this.stopped?.(stopped);
    } catch (error) {
      // Busy: the next tick tries again. Anything else is never thrown from the timer, where it would end the process.
      if (!isBusy(error)) this.failure(error);
    }
  }

  /** Runs `work` in a transaction, waiting as long as SQLite's busy timeout allows (opening, the import). */
  private blockingWrite<T>(work: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    return this.commit(work);
  }

  /**
   * Runs `work` in the transaction just begun: committed when it
   * returns, rolled back (and the error thrown on) when it throws.
   */
  private commit<T>(work: () => T): T {
    try {
      const out = work();
      this.db.exec('COMMIT');
      return out;
    } catch (error) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /**
   * Runs `work` in one `BEGIN IMMEDIATE` transaction. While another process
   * holds the write lock it waits asynchronously (1 to 50 ms between tries, up
   * to `lockWaitMs`), so the event loop keeps answering; `work` itself runs
   * synchronously, so nothing in this process interleaves with it.
   */
  private async write<T>(work: () => T): Promise<T> {
    if (this.damaged) throw this.damaged;
    const deadline = Date.now() + this.lockWaitMs;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        this.db.exec('BEGIN IMMEDIATE');
      } catch (error) {
        if (!isBusy(error) || Date.now() > deadline) throw this.failure(error);
        await sleep(delay * (0.5 + Math.random()));
        continue;
      }
      try {
        return this.commit(work);
      } catch (error) {
        throw this.failure(error);
      }
    }
  }

  /** Reads, retried asynchronously on the rare busy answer WAL readers can get. */
  private async read<T>(work: () => T): Promise<T> {
    if (this.damaged) throw this.damaged;
    const deadline = Date.now() + this.lockWaitMs;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        return work();
      } catch (error) {
        if (!isBusy(error) || Date.now() > deadline) throw this.failure(error);
        await sleep(delay);
      }
    }
  }

  /** One statement's first row, or undefined. */
  private get<T>(query: Query): T | undefined {
    return this.db.prepare(query.sql).get(...(query.params as SQLInputValue[])) as T | undefined;
  }

  /** One statement run: how many rows it changed. */
  private run(query: Query): number {
    return Number(this.db.prepare(query.sql).run(...(query.params as SQLInputValue[])).changes);
  }

  keyEnd(hash: string): KeyEnd {
    // A damaged store can no longer follow revocations: no key is vouched for from it.
    if (this.damaged) throw this.damaged;
    if (this.working) return this.working.end(hash);
    const row = this.get<{ revoked_at: number | null }>(keySql.keyEnd(hash));
    return row === undefined ? undefined : row.revoked_at === null ? null : Number(row.revoked_at);
  }

  /**
   * `/health`: throws when key checks cannot be trusted. The in-memory set
   * would go on answering from a file overwritten under it (its pages
   * cached), so the file itself is looked at, through SQLite and never
   * through a descriptor of our own: POSIX locks belong to the process, and
   * closing any descriptor of the file would drop every lock this process
   * holds on it, so the next outside client to close it (`sqlite3
   * ".backup"`) would take itself for the last user and delete our -wal and
   * -shm. A fresh read-only connection reads the header and the keys table
   * from the file (SQLite shares its descriptors and locks between its
   * connections, and keeps them until the last one closes): not a database
   * any more, or SQLITE_CORRUPT, is damage, marked as such. A file that
   * cannot be opened any more (gone, no permission) throws without marking
   * anything: putting it back heals it. Busy is not a failure.
   */
  probe(): void {
    if (this.damaged) throw this.damaged;
    if (this.file === ':memory:') {
      this.get(keySql.probe());
      return;
    }
    let fresh: DatabaseSync | undefined;
    try {
      fresh = new DatabaseSync(this.file, { readOnly: true, timeout: 0 });
      fresh.prepare(keySql.probe().sql).get();
    } catch (error) {
      if (isBusy(error)) return;
      if (isDamage(error))
        throw this.markDamaged(
          resultCode(error) === 26 ? 'it is not an SQLite database any more' : (error as Error).message,
        );
      throw unreadable(this.file, `it cannot be opened any more (${(error as Error).message})`);
    } finally {
      if (fresh?.isOpen) fresh.close();
    }
  }

  /** Number of active keys (the in-memory count when kept). */
  activeCount(): number {
    if (this.working) return this.working.currentCount;
    return Number(
      (this.db.prepare('SELECT count(*) AS n FROM keys WHERE revoked_at IS NULL').get() as { n: number }).n,
    );
  }

  /** One conditional INSERT decides; only a refusal reads the oldest counted link, for Retry-After. */
  addToken(token: NewToken, quota: TokenQuota): Promise<TokenOutcome> {
    return this.write((): TokenOutcome => {
      if (this.run(keySql.addToken(token, quota)) === 1) return { stored: true };
      return {
        stored: false,
        oldest: Number(this.get<{ oldest: number }>(keySql.oldestToken(token.email, quota.since))!.oldest),
      };
    });
  }

  async dropToken(token: NewToken): Promise<void> {
    await this.write(() => this.run(keySql.dropToken(token.hash)));
  }

  async purge(tokensBy: number, now: number): Promise<void> {
    await this.write(() => keySql.purge(tokensBy, now).forEach((query) => this.run(query)));
  }

  openSession(tokenHash: string, sessionHash: string, now: number, sessionExpiresAt: number): Promise<string | null> {
    const [store, use] = keySql.openSession(tokenHash, sessionHash, now, sessionExpiresAt);
    return this.write(() => {
      this.run(store);
      return this.get<{ email: string }>(use)?.email ?? null;
    });
  }

  sessionEmail(sessionHash: string, now: number): Promise<string | null> {
    return this.read(() => this.get<{ email: string }>(keySql.sessionEmail(sessionHash, now))?.email ?? null);
  }

  endSession(sessionHash: string): Promise<void> {
    return this.write(() => void this.run(keySql.endSession(sessionHash)));
  }

  activeKey(email: string): Promise<KeyInfo | null> {
    return this.read(() => {
      const row = this.get<Pick<KeyRow, 'id' | 'created_at'>>(keySql.activeKey(email));
      return row ? keyInfo(row) : null;
    });
  }

  private currentHash(email: string): string | null {
    const row = this.db.prepare('SELECT hash FROM keys WHERE email = ? AND revoked_at IS NULL').get(email) as
      { hash: string } | undefined;
    return row?.hash ?? null;
  }

  endingKey(email: string, now: number): Promise<EndingKey | null> {
    return this.read(() => {
      const row = this.get<{ id: string; revoked_at: number }>(keySql.endingKey(email, now));
      return row ? endingInfo(row) : null;
    });
  }

  async issue(key: NewKey): Promise<boolean> {
    const issued = (await this.write(() => this.run(keySql.issue(key)))) === 1;
    if (issued) this.working?.set(key.hash, null);
    return issued;
  }

  /** Every row a statement returned. */
  private all<T>(query: Query): T[] {
    return this.db.prepare(query.sql).all(...(query.params as SQLInputValue[])) as T[];
  }

  /**
   * The same four statements as D1's batch, in one transaction: the SQL decides, this only reads what they returned.
   */
  async rotate(key: NewKey, now: number, endsAt: number, expected?: string): Promise<StoppedKey[]> {
    const [store, endGrace, revoke, activate] = keySql.rotate(key, now, endsAt, expected);
    const { old, ended, rotated } = await this.write(() => {
      this.run(store);
      const ended = this.all<StoppedKey>(endGrace).map(stoppedKey);
      const old = this.get<StoppedKey>(revoke);
      return { old, ended, rotated: this.get(activate) !== undefined };
    });
    if (old === undefined || !rotated) return [];
    // Same synchronous step as the commit's answer: the next request already sees it.
    for (const { hash } of ended) this.working?.set(hash, now);
    this.working?.set(old.hash, endsAt);
    this.working?.set(key.hash, null);
    return [stoppedKey(old), ...ended];
  }

  async revoke(email: string, now: number, expected?: string): Promise<StoppedKey[]> {
    const [endGrace, revoke] = keySql.revoke(email, now, expected);
    const stopped = await this.write(() => {
      const ended = this.all<StoppedKey>(endGrace).map(stoppedKey);
      return [...this.all<StoppedKey>(revoke).map(stoppedKey), ...ended];
    });
    for (const { hash } of stopped) this.working?.set(hash, now);
    return stopped;
  }

  async endGrace(email: string, now: number, expected?: string): Promise<StoppedKey | null> {
    const ended = await this.write(() => this.get<StoppedKey>(keySql.endGrace(email, now, expected)) ?? null);
    if (ended !== null) this.working?.set(ended.hash, now);
    return ended && stoppedKey(ended);
  }

  owner(hash: string): Promise<{ email: string; end: number | null } | null> {
    return this.read(() => {
      const row = this.get<{ email: string; revoked_at: number | null }>(keySql.owner(hash));
      return row ? { email: row.email, end: row.revoked_at === null ? null : Number(row.revoked_at) } : null;
    });
  }

  async *list(): AsyncIterable<KeyListing> {
    if (this.damaged) throw this.damaged;
    const { sql, params } = keySql.list();
    for (const r of this.db.prepare(sql).iterate(...(params as SQLInputValue[])) as Iterable<KeyRow>) yield listing(r);
  }

  /**
   * Stores many keys in one transaction (the legacy import, tests and the
   * benchmark); a key whose address already has an active one is stored revoked.
   */
  insertMany(keys: (NewKey & { revokedAt?: number | null })[], now = Date.now()): { stored: number; revoked: number } {
    const { stored, revoked, live } = this.blockingWrite(() => this.insertKeys(keys, now));
    for (const hash of live) this.working?.set(hash, null);
    return { stored, revoked };
  }

  /** insertMany's inserts, inside a write transaction the caller holds; the hashes it stored active. */
  private insertKeys(keys: Iterable<NewKey & { revokedAt?: number | null }>, now: number) {
    const insert = this.db.prepare(
      'INSERT INTO keys (hash, id, email, created_at, revoked_at, seq) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING',
    );
    let stored = 0;
    let revoked = 0;
    const live: string[] = [];
    let seq = this.maxSeq();
    for (const k of keys) {
      const active = k.revokedAt == null && this.currentHash(k.email) === null;
      if (k.revokedAt == null && !active) revoked++;
      const added = Number(
        insert.run(k.hash, k.id, k.email, k.createdAt, active ? null : (k.revokedAt ?? now), ++seq).changes,
      );
      stored += added;
      if (added && active) live.push(k.hash);
    }
    return { stored, revoked, live };
  }

  private importLegacy(file: string): LegacyImport | null {
    if (!existsSync(file)) return null;
    const done = this.db.prepare('SELECT value FROM meta WHERE name = ?').get(LEGACY_IMPORT) as
      { value: string } | undefined;
    if (done) return null;
    const bytes = readFileSync(file);
    const records = importLegacyJson(file, bytes);
    return this.blockingWrite(() => {
      // Another process may have imported it while this one read the file.
      if (this.db.prepare('SELECT value FROM meta WHERE name = ?').get(LEGACY_IMPORT)) return null;
      const now = Date.now();
      // Newest first, so the newest active key of an address stays active if an old bug left two.
      const { revoked } = this.insertKeys(
        [...records].sort((a, b) => b.createdAt - a.createdAt),
        now,
      );
      const summary: LegacyImport = { file, keys: records.length, revoked, at: iso(now) };
      this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)').run(LEGACY_IMPORT, JSON.stringify(summary));
      return summary;
    });
  }

  close(): void {
    clearInterval(this.timer);
    if (this.db.isOpen) this.db.close();
  }
}
