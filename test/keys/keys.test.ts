/**
 * Keys themselves, the SQLite store's own guarantees (hashes only on disk,
 * WAL, a database it cannot read left untouched, the old JSON file imported
 * once, a synchronous key check, old links and ended sessions forgotten as
 * Keys tells it), and the keys command on the same database as a running server.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../../src/keys/rules.ts';
import { generateKey, generateSession, generateToken, hashSecret } from '../../src/keys/secrets.ts';
import { RateLimiter } from '../../src/shared/rate-limit.ts';
import { createNodeServer } from '../../adapters/node.ts';
import { KeyDatabaseError, SCHEMA_VERSION } from '../../src/keys/stores/sqlite-file.node.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { LegacyKeysError } from '../../src/keys/stores/legacy.node.ts';
import { DatabaseSync } from 'node:sqlite';
import { rawRequest } from '../helpers/http.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';
import { QUICK } from '../helpers/quick.ts';

const run = promisify(execFile);
/** The README's key command, run as a user would (npm run --silent keys -- ...). */
const keysCommand = (db: string, ...args: string[]) =>
  run('npm', ['run', '--silent', 'keys', '--', ...args], { cwd: ROOT, env: { ...process.env, KEYS_DB: db } });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { code: number; stderr: string }) => e,
  );

describe('keys, tokens and sessions', () => {
  it('are random, URL-safe, distinct, and each has its own prefix', () => {
    const keys = Array.from({ length: 200 }, generateKey);
    for (const k of keys) expect(k).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    expect(new Set(keys).size).toBe(200);
    expect(encodeURIComponent(keys[0])).toBe(keys[0]);
    expect(generateToken()).toMatch(/^fat_[A-Za-z0-9_-]{43}$/);
    expect(generateSession()).toMatch(/^fas_[A-Za-z0-9_-]{43}$/);
  });

  it('hash to the sha256 hex that node:crypto gives', async () => {
    const { createHash } = await import('node:crypto');
    const key = generateKey();
    expect(hashSecret(key)).toBe(createHash('sha256').update(key).digest('hex'));
  });
});

describe('the SQLite key store', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('sqlite-keys');
  });

  it('stores only hashes, in WAL mode, and answers the key check synchronously', async () => {
    const file = path.join(dir, 'hashes.db');
    const backend = new SqliteKeyBackend(file);
    const keys = new Keys(backend);
    const key = await keys.issue('Someone@Example.org');
    const { token } = await keys.signIn('someone@example.org');
    const { session } = await keys.openSession(token);
    expect(keys.verify(key)).toBe(true); // a boolean, not a promise
    expect(keys.verify(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(keys.verify('')).toBe(false);
    backend.close();
    const bytes =
      (await readFile(file)).toString('latin1') +
      (await readFile(`${file}-wal`).catch(() => Buffer.alloc(0))).toString('latin1');
    for (const secret of [key, token, session]) expect(bytes).not.toContain(secret.slice(4, 20));
    const db = new DatabaseSync(file, { readOnly: true });
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    db.close();
  });

  it('opens a database an earlier version wrote (schema 1, made before the schema moved to migrations/), applies the later migrations, and serves its keys', async () => {
    const file = path.join(dir, 'schema-1.db');
    const old = new DatabaseSync(file);
    // What earlier versions ran on a new file, verbatim: a frozen fixture, not the migration file.
    old.exec(`PRAGMA journal_mode = WAL;
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE keys (hash TEXT NOT NULL UNIQUE, id TEXT NOT NULL, email TEXT NOT NULL, created_at INTEGER NOT NULL, revoked_at INTEGER, seq INTEGER NOT NULL) STRICT;
CREATE UNIQUE INDEX keys_one_active ON keys (email) WHERE revoked_at IS NULL;
CREATE INDEX keys_seq ON keys (seq);
CREATE TABLE tokens (hash TEXT PRIMARY KEY, email TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER) STRICT, WITHOUT ROWID;
CREATE INDEX tokens_email ON tokens (email, created_at);
CREATE INDEX tokens_created ON tokens (created_at);
CREATE TABLE sessions (hash TEXT PRIMARY KEY, email TEXT NOT NULL, expires_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
CREATE INDEX sessions_expiry ON sessions (expires_at);
PRAGMA user_version = 1;`);
    const key = generateKey();
    old
      .prepare('INSERT INTO keys (hash, id, email, created_at, seq) VALUES (?, ?, ?, ?, 1)')
      .run(hashSecret(key), key.slice(0, 12), 'old@example.org', Date.now());
    old.close();
    const backend = new SqliteKeyBackend(file);
    const keys = new Keys(backend);
    expect(keys.verify(key)).toBe(true);
    const next = await keys.rotate('old@example.org').then((r) => r.key);
    expect([keys.verify(key), keys.verify(next)]).toEqual([false, true]);
    // later migrations (0002: an index) applied
    expect(backend.db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    backend.close();
  });

  it('refuses two active keys for one address even when written around the store', async () => {
    const file = path.join(dir, 'unique.db');
    const backend = new SqliteKeyBackend(file);
    await new Keys(backend).issue('one@example.org');
    expect(() =>
      backend.db
        .prepare("INSERT INTO keys (hash, id, email, created_at, seq) VALUES ('x', 'faa_x', 'one@example.org', 0, 99)")
        .run(),
    ).toThrow(/UNIQUE/);
    backend.close();
  });

  it('forgets, at a later sign-in, the links past both the sign-in window and their lifetime and the sessions that ended, and nothing younger', async () => {
    const backend = new SqliteKeyBackend(':memory:');
    let clock = Date.UTC(2026, 0, 1);
    const keys = new Keys(backend, () => clock);
    const minute = 60_000;
    const start = clock;
    await keys.openSession((await keys.signIn('a@example.org')).token);
    const stored = () => ({
      tokens: (backend.db.prepare('SELECT email FROM tokens ORDER BY created_at').all() as { email: string }[]).map(
        (r) => r.email,
      ),
      sessions: Number((backend.db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n),
    });
    clock = start + 50 * minute;
    await keys.signIn('b@example.org');
    // a's link is 50 minutes old, past the 10-minute window and its 15-minute life; a's hour-long session still runs.
    expect(stored()).toEqual({ tokens: ['b@example.org'], sessions: 1 });
    clock = start + 61 * minute;
    await keys.signIn('c@example.org');
    // b's link is 11 minutes old: past the window but not yet its life, so it stays; a's session has ended.
    expect(stored()).toEqual({ tokens: ['b@example.org', 'c@example.org'], sessions: 0 });
    backend.close();
  });

  it('stops with one clear message, and leaves the file as it was, when the database cannot be read', async () => {
    const cases: [string, Buffer | (() => void), RegExp][] = [
      ['text.db', Buffer.from('these are not the keys you are looking for\n'.repeat(200)), /not a database/],
      [
        'newer.db',
        () => {
          const db = new DatabaseSync(path.join(dir, 'newer.db'));
          db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}; CREATE TABLE keys (x);`);
          db.close();
        },
        new RegExp(`schema version ${SCHEMA_VERSION + 1} is newer`),
      ],
      [
        'other.db',
        () => {
          const db = new DatabaseSync(path.join(dir, 'other.db'));
          db.exec('CREATE TABLE invoices (id INTEGER);');
          db.close();
        },
        /holds tables \(invoices\) but no key schema/,
      ],
    ];
    for (const [name, make, reason] of cases) {
      const file = path.join(dir, name);
      if (typeof make === 'function') make();
      else await writeFile(file, make);
      const before = await readFile(file);
      let error: unknown;
      try {
        new SqliteKeyBackend(file).close();
      } catch (e) {
        error = e;
      }
      expect(error, name).toBeInstanceOf(KeyDatabaseError);
      expect((error as Error).message).toMatch(reason);
      expect((error as Error).message).toMatch(/left as it is/);
      expect((await readFile(file)).equals(before), name).toBe(true);
    }
  });

  it('stops when a database is damaged inside, without writing to it', async () => {
    const file = path.join(dir, 'damaged.db');
    const backend = new SqliteKeyBackend(file);
    backend.insertMany(
      Array.from({ length: 3000 }, (_, i) => ({
        hash: hashSecret(`k${i}`),
        id: `faa_${String(i).padStart(8, '0')}`,
        email: `u${i}@example.org`,
        createdAt: i,
      })),
    );
    backend.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    backend.close();
    const bytes = await readFile(file);
    bytes.fill(0x5a, 8192, 8192 * 6); // pages 3 to 7: the middle of the keys table
    await writeFile(file, bytes);
    expect(() => new SqliteKeyBackend(file)).toThrow(KeyDatabaseError);
    expect((await readFile(file)).equals(bytes)).toBe(true);
  });

  it('imports an old keys.json once, keeping its keys working and one active key per address', async () => {
    const sub = await tempDir('legacy');
    const [a, b, c] = [generateKey(), generateKey(), generateKey()];
    const record = (key: string, email: string, created: string, revoked?: string) => ({
      id: key.slice(0, 12),
      hash: hashSecret(key),
      email,
      created,
      ...(revoked ? { revoked } : {}),
    });
    const json = path.join(sub, 'keys.json');
    await writeFile(
      json,
      JSON.stringify({
        keys: [
          record(a, 'old@example.org', '2025-01-01T00:00:00Z'),
          record(b, 'old@example.org', '2025-06-01T00:00:00Z'),
          record(c, 'gone@example.org', '2025-01-01T00:00:00Z', '2025-02-01T00:00:00Z'),
        ],
      }),
    );
    const first = new SqliteKeyBackend(path.join(sub, 'keys.db'), { legacyJson: json });
    expect(first.imported).toMatchObject({ keys: 3, revoked: 1 });
    const keys = new Keys(first);
    expect([keys.verify(a), keys.verify(b), keys.verify(c)]).toEqual([false, true, false]);
    await keys.rotate('old@example.org').then((r) => r.key);
    first.close();
    const again = new SqliteKeyBackend(path.join(sub, 'keys.db'), { legacyJson: json });
    expect(again.imported).toBeNull();
    expect(new Keys(again).verify(b)).toBe(false); // the rotation stands: nothing was imported twice
    again.close();
  });

  it('refuses an old keys.json with a typo instead of reading it as empty', async () => {
    const sub = await tempDir('legacy-typo');
    const json = path.join(sub, 'keys.json');
    await writeFile(json, '{"keys": [{"id": "faa_abcdefgh",}]}');
    expect(() => new SqliteKeyBackend(path.join(sub, 'keys.db'), { legacyJson: json })).toThrow(LegacyKeysError);
    expect(() => new SqliteKeyBackend(path.join(sub, 'keys.db'), { legacyJson: json })).toThrow(
      /not valid JSON.*left as it is/,
    );
  });
});

describe('the rate limiter', () => {
  it('lets the limit through per window and tells how long to wait', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ limit: 60, now: () => now });
    for (let i = 0; i < 60; i++) expect(limiter.hit('k').ok).toBe(true);
    now += 15_500;
    expect(limiter.hit('k')).toEqual({ ok: false, retryAfter: 45 });
    now += 44_499;
    expect(limiter.hit('k')).toEqual({ ok: false, retryAfter: 1 });
    now += 1;
    expect(limiter.hit('k').ok).toBe(true);
  });

  it('keeps its memory bounded however many keys arrive', () => {
    const limiter = new RateLimiter({ limit: 2, maxKeys: 1000 });
    for (let i = 0; i < 50_000; i++) limiter.hit(`key-${i}`);
    expect(limiter.size).toBeLessThanOrEqual(1000);
  });

  it('refuses a limit that is not a whole number from 1 up', () => {
    expect(() => new RateLimiter({ limit: 0 })).toThrow('Expected `limit` to be a whole number from 1 and up, got 0');
  });
});

// The keys command as a process: not in npm run test:quick, which starts none.
describe.skipIf(QUICK)('the keys command and a running server', () => {
  let db: string;
  let port: number;
  let close: () => Promise<void>;
  const logs: string[] = [];
  /** The status within `ms`, polled every 50 ms, and how long it took. */
  const becomes = async (key: string, status: number, ms: number) => {
    const started = Date.now();
    while (Date.now() - started < ms) {
      if ((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${key}`)).status === status)
        return Date.now() - started;
      await new Promise((r) => setTimeout(r, 50));
    }
    return Infinity;
  };

  beforeAll(async () => {
    const dist = await buildInto(SAMPLE_SOURCE, 'keys');
    db = path.join(await tempDir('keys-db'), 'keys.db');
    const backend = new SqliteKeyBackend(db);
    // The lines as the front door makes them: no sink redacts anything.
    const { server } = createNodeServer({ dist, keys: new Keys(backend), log: (l) => logs.push(l) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    close = () => new Promise((resolve) => server.close(() => (backend.close(), resolve())));
  });
  afterAll(() => close());

  it('prints a new key alone on stdout, and the running server sees each change within a second', async () => {
    const { stdout } = await keysCommand(db, 'issue', 'cli@example.org');
    const key = stdout.trim();
    expect(stdout).toBe(`${key}\n`);
    expect(key).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    // A key asked for before the server saw it is refused from the core's one-second reply memo: up to 1.25 s.
    expect(await becomes(key, 200, 2000)).toBeLessThan(1500);

    const rotated = (await keysCommand(db, 'rotate', key)).stdout.trim();
    expect(rotated).not.toBe(key);
    expect(await becomes(key, 403, 1000)).toBeLessThan(1000);
    expect((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${rotated}`)).status).toBe(200);

    const revoked = await keysCommand(db, 'revoke', rotated);
    expect(revoked.stderr.trim()).toBe('revoked');
    expect(await becomes(rotated, 403, 1000)).toBeLessThan(1000);

    const list = (await keysCommand(db, 'list')).stdout;
    expect(list).toContain('cli@example.org');
    expect(list).toContain(key.slice(0, 12));
    expect(list).not.toContain(key);
    expect(list).not.toContain(rotated);
    expect(logs.join('\n')).not.toContain(key.slice(12));
  });

  it('rotates with a grace period: both keys answer, list shows the old one ending, and revoke or end-grace stops it within a second', async () => {
    const key = (await keysCommand(db, 'issue', 'grace-cli@example.org')).stdout.trim();
    expect(await becomes(key, 200, 2000)).toBeLessThan(1500);
    const rotated = await keysCommand(db, 'rotate', key, '--grace', '1h');
    const next = rotated.stdout.trim();
    expect(rotated.stdout).toBe(`${next}\n`);
    expect(rotated.stderr).toMatch(/the old key works until \d{4}-\d\d-\d\dT/);
    expect(await becomes(next, 200, 2000)).toBeLessThan(1500);
    expect((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${key}`)).status).toBe(200);
    const listed = (await keysCommand(db, 'list')).stdout
      .split('\n')
      .filter((l) => l.includes('grace-cli@example.org'));
    expect(listed.map((l) => l.split('\t')[3].replace(/ .*/, ''))).toEqual(['ending', 'current']);
    expect((await keysCommand(db, 'revoke', key)).stderr.trim()).toBe('revoked'); // the old key alone
    expect(await becomes(key, 403, 1000)).toBeLessThan(1000);
    expect((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${next}`)).status).toBe(200);

    const third = (await keysCommand(db, 'rotate', next, '--grace', '24h')).stdout.trim();
    expect(await becomes(third, 200, 2000)).toBeLessThan(1500);
    expect((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${next}`)).status).toBe(200);
    expect((await keysCommand(db, 'end-grace', 'grace-cli@example.org')).stderr.trim()).toBe('the old key stopped');
    expect(await becomes(next, 403, 1000)).toBeLessThan(1000);
    expect((await failure(keysCommand(db, 'end-grace', 'grace-cli@example.org')))?.code).toBe(1);

    const help = (await keysCommand(db, '--help')).stdout;
    expect(help).toMatch(/--grace <time> +how long the old key goes on working: now, 1h, 24h, 7d/);
    const badGrace = await failure(keysCommand(db, 'rotate', third, '--grace', '2h'));
    expect([badGrace?.code, badGrace?.stderr.split('\n')[0]]).toEqual([
      2,
      'keys: --grace takes now, 1h, 24h, 7d (or 0), not "2h"',
    ]);
    expect((await rawRequest(port, 'GET', `/archive/year=1929/apikey=${third}`)).status).toBe(200);
  });

  it('explains its usage, refuses a bad e-mail or a dead key with exit code 1, and a database it cannot read too', async () => {
    const usage = await failure(keysCommand(db, 'frobnicate'));
    expect(usage?.code).toBe(2);
    expect(usage?.stderr).toContain('usage: npm run --silent keys --');
    expect(usage?.stderr.split('\n')[0]).toBe('keys: unknown command "frobnicate"');
    expect((await failure(keysCommand(db, 'rotate')))?.stderr.split('\n')[0]).toBe('keys: rotate needs a key');
    const bad = await failure(keysCommand(db, 'issue', 'nope'));
    expect(bad?.code).toBe(1);
    expect(bad?.stderr.trim()).toBe('keys: Invalid email: expected an address like name@example.org');
    const dead = await failure(keysCommand(db, 'revoke', generateKey()));
    expect(dead?.stderr.trim()).toBe('keys: Forbidden - Invalid API Key');
    const junk = path.join(path.dirname(db), 'junk.db');
    await writeFile(junk, 'x'.repeat(5000));
    const unreadable = await failure(keysCommand(junk, 'list'));
    expect(unreadable?.code).toBe(1);
    expect(unreadable?.stderr).toMatch(/^keys: Cannot use the key database .*junk\.db: file is not a database/);
    expect(await readFile(junk, 'utf8')).toBe('x'.repeat(5000));
  });

  it('prints stored addresses escaped, so one holding ESC c cannot reset the terminal, and refuses such an address', async () => {
    // Written around the rules, as a database from before they refused control characters may hold them.
    const stored = new SqliteKeyBackend(db, { view: false });
    stored.insertMany([
      {
        hash: hashSecret(generateKey()),
        id: 'faa_Esc12345',
        email: 'reset\u001bc\u202eevil\\@example.org',
        createdAt: 0,
      },
    ]);
    stored.close();
    const list = (await keysCommand(db, 'list')).stdout;
    expect(list).toContain('faa_Esc12345…\treset\\u{001B}c\\u{202E}evil\\\\@example.org\t');
    // eslint-disable-next-line no-control-regex -- the control characters are what it must not find
    expect(list).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    const refused = await failure(keysCommand(db, 'issue', 'bell\u0007@example.org'));
    expect(refused?.code).toBe(1);
    expect(refused?.stderr.trim()).toBe(
      'keys: Invalid email: control and format characters (such as NUL, ESC, DEL, U+0085 or U+202E) are not allowed in an address',
    );
  });
});
