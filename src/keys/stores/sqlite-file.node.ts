/**
 * The SQLite key database as a file: which file may be opened (a key
 * database of this code's schema or older, undamaged, or none yet), the
 * schema's migrations (the repository's `migrations/`, shared with D1), a new
 * file made private before SQLite opens it, and every failure of the file
 * said as the user should hear it: busy (`KeyDatabaseBusy`, another process
 * holds the lock: try again), read-only (`KeyDatabaseReadOnly`), or
 * unreadable (`KeyDatabaseError`: not a key database, a newer schema, damaged).
 * Nothing here writes to a file it refuses.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';

/** The schema's migrations, shared with Cloudflare D1: `migrations/NNNN_name.sql`, applied in order. */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const MIGRATIONS = readdirSync(MIGRATIONS_DIR)
  .filter((name) => /^\d{4}_[\w-]+\.sql$/.test(name))
  .sort();
/** The file's `PRAGMA user_version`: how many of the migrations it holds (1: `0001_keys.sql`). */
export const SCHEMA_VERSION = MIGRATIONS.length;
/** Longest wait for the write lock before an operation gives up (the client then gets a 5xx). */
export const LOCK_WAIT_MS = 10_000;

const TABLES = ['keys', 'meta', 'sessions', 'tokens'];
/** The key database cannot be used; the message says why and what to do. */
export class KeyDatabaseError extends Error {}
/** Another process held the key database's lock for longer than this one waits: nothing is wrong with it, try again. */
export class KeyDatabaseBusy extends KeyDatabaseError {}
/** The key database (or its folder) may not be written: a read-only file system or permissions. */
export class KeyDatabaseReadOnly extends KeyDatabaseError {}

/** SQLite's primary result code of an error (SQLITE_BUSY 5, SQLITE_READONLY 8, SQLITE_CORRUPT 11, ...). */
export const resultCode = (error: unknown) => ((error as { errcode?: number } | null)?.errcode ?? 0) & 0xff;
export const isBusy = (error: unknown) => resultCode(error) === 5 || resultCode(error) === 6;
/** SQLITE_CORRUPT or SQLITE_NOTADB: the file's content is damaged. */
export const isDamage = (error: unknown) => resultCode(error) === 11 || resultCode(error) === 26;
export const isReadOnly = (error: unknown) => resultCode(error) === 8;

export function unreadable(file: string, reason: string): KeyDatabaseError {
  return new KeyDatabaseError(
    `Cannot use the key database ${file}: ${reason}. Expected an SQLite key database written by this service (schema ${SCHEMA_VERSION}); ` +
      'the file was left as it is. Restore it from a backup, or move it away to start with an empty one.',
  );
}

const busy = (file: string, waitedMs: number) =>
  new KeyDatabaseBusy(
    `another process holds the key database; try again (${file} was waited for ${waitedMs / 1000} s; nothing is wrong with it)`,
  );

/** Why `file` (or its folder, where SQLite keeps its -wal and -shm files) may not be written, or null. */
export function notWritable(file: string): string | null {
  for (const target of [file, path.dirname(path.resolve(file))]) {
    try {
      if (existsSync(target)) accessSync(target, constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return `${code === 'EROFS' ? 'a read-only file system' : `no permission to write ${target === file ? 'it' : 'its folder'}`} (${code})`;
    }
  }
  return null;
}

export function readOnly(file: string, why: string): KeyDatabaseReadOnly {
  return new KeyDatabaseReadOnly(
    `the key database ${file} is read-only: ${why}. Nothing was written; the server and the keys command need to write it: make it and its folder writable, or set KEYS_DB to a writable place.`,
  );
}

/** A failure of the file as the user should hear it: busy, read-only, or (anything else) unreadable. */
export function classified(file: string, error: unknown, waitedMs = LOCK_WAIT_MS): KeyDatabaseError {
  if (error instanceof KeyDatabaseError) return error;
  if (isBusy(error)) return busy(file, waitedMs);
  if (isReadOnly(error) || resultCode(error) === 14) {
    const why = notWritable(file);
    if (why || isReadOnly(error)) return readOnly(file, why ?? (error as Error).message);
  }
  return unreadable(file, (error as Error).message);
}

/**
 * The first problems `PRAGMA quick_check` finds (every table and index
 * page), and whether the one-active-key index holds every active key.
 */
function damageIn(db: DatabaseSync): string | null {
  const problems = (db.prepare('PRAGMA quick_check(3)').all() as { quick_check: string }[]).map((r) => r.quick_check);
  // One line: its first findings (a row may hold several lines).
  if (problems.join() !== 'ok')
    return problems
      .join('\n')
      .split('\n')
      .filter((p) => p && !p.startsWith('***'))
      .slice(0, 3)
      .join('; ');
  // One statement, so one snapshot: counted in two, a key another process issues between them looks like damage.
  const { active, indexed } = db
    .prepare(
      'SELECT (SELECT count(*) FROM keys NOT INDEXED WHERE revoked_at IS NULL) AS active, (SELECT count(*) FROM keys INDEXED BY keys_one_active WHERE revoked_at IS NULL) AS indexed',
    )
    .get() as { active: number; indexed: number };
  return active === indexed ? null : `the one-active-key index holds ${indexed} of the ${active} active keys`;
}

/**
 * Makes `file` empty and 0600 if it does not exist yet, so SQLite, which
 * creates files 0644 and gives the -wal and -shm the database's mode, keeps
 * addresses and hashes from other users. The one descriptor opened outside
 * SQLite is of a file this call just created (O_EXCL): no connection of this
 * process can hold a lock on it yet, so closing it drops none. An existing
 * file is left as it is.
 */
export function createPrivate(file: string): void {
  try {
    closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Refuses, without writing, a file that is not a key database this code can read, or one that is damaged. */
export function checkReadable(file: string): void {
  if (file === ':memory:' || !existsSync(file) || statSync(file).size === 0) return;
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file, { readOnly: true, timeout: LOCK_WAIT_MS });
    const version = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((t) => t.name);
    if (version > SCHEMA_VERSION)
      throw unreadable(
        file,
        `its schema version ${version} is newer than this code knows (${SCHEMA_VERSION}); run a newer version`,
      );
    if (version === 0 && tables.length > 0)
      throw unreadable(file, `it holds tables (${tables.join(', ')}) but no key schema`);
    if (version === SCHEMA_VERSION && TABLES.some((t) => !tables.includes(t)))
      throw unreadable(file, 'tables of the key schema are missing');
    const damage = version === SCHEMA_VERSION ? damageIn(db) : null;
    if (damage) throw unreadable(file, `it is damaged (PRAGMA quick_check: ${damage})`);
  } catch (error) {
    throw classified(file, error);
  } finally {
    db?.close();
  }
}

/** The SQL of each migration a file at schema `version` does not hold yet, in order. */
export function migrationsAfter(version: number): string[] {
  return MIGRATIONS.slice(version).map((name) => readFileSync(path.join(MIGRATIONS_DIR, name), 'utf8'));
}
