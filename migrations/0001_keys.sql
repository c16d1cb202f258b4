-- Keys, sign-in tokens and portal sessions: only sha256 hashes of secrets.
-- Applied to Cloudflare D1 by `wrangler d1 migrations apply`, and by the
-- SQLite store (src/keys/stores/sqlite.node.ts) to a new local file.
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE keys (
  hash TEXT NOT NULL UNIQUE,
  id TEXT NOT NULL,
  email TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  seq INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX keys_one_active ON keys (email) WHERE revoked_at IS NULL;
CREATE INDEX keys_seq ON keys (seq);
CREATE TABLE tokens (
  hash TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX tokens_email ON tokens (email, created_at);
CREATE INDEX tokens_created ON tokens (created_at);
CREATE TABLE sessions (hash TEXT PRIMARY KEY, email TEXT NOT NULL, expires_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_expiry ON sessions (expires_at);
