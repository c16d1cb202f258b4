/**
 * `npm run keys -- migrate-to-postgres`: moves an SQLite key database (KEYS_DB)
 * into the empty PostgreSQL database DATABASE_URL names, in one command.
 * Keys (in issue order, each with its end), sign-in tokens and sessions are
 * read in one SQLite read transaction and written in one PostgreSQL
 * transaction: all or nothing, and the SQLite file is left as it is. A
 * PostgreSQL database that already holds keys is refused, so nothing is merged
 * by accident. Stop the server first (or run it read-only): writes made to the
 * file after the move are not moved.
 */
import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { NewKey } from '../../src/keys/contract.ts';
import {
  PostgresKeyBackend,
  type SessionRecord,
  shownDatabaseUrl,
  type TokenRecord,
} from '../../adapters/_node/postgres-keys.ts';
import { checkReadable, KeyDatabaseError } from '../../src/keys/stores/sqlite-file.node.ts';

type Print = (line: string) => void;

interface Moved {
  keys: (NewKey & { revokedAt: number | null })[];
  tokens: TokenRecord[];
  sessions: SessionRecord[];
}

/** Everything the SQLite file holds, read in one transaction (one snapshot even while another process writes). */
function readSqlite(file: string): Moved {
  checkReadable(file);
  const db = new DatabaseSync(file, { readOnly: true, timeout: 10_000 });
  try {
    db.exec('BEGIN');
    const n = (v: unknown) => (v === null ? null : Number(v));
    const keys = (
      db.prepare('SELECT hash, id, email, created_at, revoked_at FROM keys ORDER BY rowid').all() as Record<
        string,
        unknown
      >[]
    ).map((r) => ({
      hash: String(r.hash),
      id: String(r.id),
      email: String(r.email),
      createdAt: Number(r.created_at),
      revokedAt: n(r.revoked_at),
    }));
    const tokens = (
      db.prepare('SELECT hash, email, created_at, expires_at, used_at FROM tokens').all() as Record<string, unknown>[]
    ).map((r) => ({
      hash: String(r.hash),
      email: String(r.email),
      createdAt: Number(r.created_at),
      expiresAt: Number(r.expires_at),
      usedAt: n(r.used_at),
    }));
    const sessions = (
      db.prepare('SELECT hash, email, expires_at FROM sessions').all() as Record<string, unknown>[]
    ).map((r) => ({ hash: String(r.hash), email: String(r.email), expiresAt: Number(r.expires_at) }));
    db.exec('COMMIT');
    return { keys, tokens, sessions };
  } finally {
    db.close();
  }
}

/** The exit code: 0 moved, 1 refused (the line says why), 2 no DATABASE_URL. */
export async function migrateToPostgres(
  file: string,
  databaseUrl: string | undefined,
  out: Print,
  err: Print,
): Promise<number> {
  if (!databaseUrl) {
    err('keys: migrate-to-postgres needs DATABASE_URL, the PostgreSQL database to move the keys into (postgres://...)');
    return 2;
  }
  if (!existsSync(file)) {
    err(`keys: there is no SQLite key database at ${file} (KEYS_DB) to move; nothing was done`);
    return 1;
  }
  const moved = readSqlite(file);
  const target = await PostgresKeyBackend.open(databaseUrl, { listen: false });
  try {
    const held = await target.storedCount();
    if (held > 0)
      throw new KeyDatabaseError(
        `the PostgreSQL key database ${shownDatabaseUrl(databaseUrl)} already holds keys; moved nothing (give it an empty database)`,
      );
    const stored = await target.insertMany(moved.keys, moved.tokens, moved.sessions);
    const current = moved.keys.filter((k) => k.revokedAt === null).length;
    out(
      `moved ${stored} keys (${current} current), ${moved.tokens.length} sign-in tokens and ${moved.sessions.length} sessions from ${file} to PostgreSQL ${shownDatabaseUrl(databaseUrl)}; the SQLite file was left as it is`,
    );
    return 0;
  } finally {
    await target.close();
  }
}
