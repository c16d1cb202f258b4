/**
 * `npm run keys -- migrate-to-postgres`: an SQLite key database with keys in
 * every state (current, in a grace period, revoked), a sign-in token and a
 * session, moved into an empty PostgreSQL database with one command; every
 * key then answers on PostgreSQL as it did on SQLite, listed in the same
 * order, the session still signed in, and the file left as it was. A
 * database that already holds keys, and a missing DATABASE_URL, are refused
 * with one line and nothing moved.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysCli } from '../../cli/keys.ts';
import type { KeyListing } from '../../src/keys/contract.ts';
import { GRACE_PERIODS, Keys } from '../../src/keys/rules.ts';
import { PostgresKeyBackend, postgresKeys } from '../../adapters/_node/postgres-keys.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { ROOT } from '../helpers/paths.ts';
import { type PgCluster, startPostgres } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/temp.ts';

let cluster: PgCluster;

beforeAll(async () => {
  cluster = await startPostgres('move');
});

afterAll(async () => {
  await cluster?.remove();
});

const listed = async (keys: Keys) => {
  const all: KeyListing[] = [];
  for await (const k of keys.list()) all.push(k);
  return all;
};

describe('npm run keys -- migrate-to-postgres', () => {
  it('moves every key, token and session of an SQLite key database, each answering as before, and leaves the file alone', async () => {
    const file = path.join(await tempDir('move'), 'keys.db');
    const sqlite = new SqliteKeyBackend(file, { view: false });
    const before = new Keys(sqlite);
    const current = await before.issue('current@example.org');
    const rotatedAway = await before.issue('graced@example.org');
    const afterRotation = (await before.rotate('graced@example.org', GRACE_PERIODS['24h'])).key;
    const revoked = await before.issue('revoked@example.org');
    await before.revoke('revoked@example.org');
    const { token } = await before.signIn('owner@example.org');
    const { session } = await before.openSession(token);
    await before.signIn('pending@example.org');
    const listedBefore = await listed(before);
    sqlite.close();
    const bytes = readFileSync(file);

    const url = await cluster.database('moved');
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['cli/keys.ts', 'migrate-to-postgres'], {
      cwd: ROOT,
      env: { ...process.env, KEYS_DB: file, DATABASE_URL: url },
    });
    expect(stdout.trim()).toMatch(
      new RegExp(
        `^moved 4 keys \\(2 current\\), 2 sign-in tokens and 1 sessions from ${file} to PostgreSQL postgres://faa@127\\.0\\.0\\.1:\\d+/moved; the SQLite file was left as it is$`,
      ),
    );
    expect(stderr).toBe('');
    expect(readFileSync(file).equals(bytes)).toBe(true);

    const backend = await PostgresKeyBackend.open(url, { listen: false });
    try {
      const after = postgresKeys(backend);
      expect(await Promise.all([current, rotatedAway, afterRotation, revoked].map((k) => after.verify(k)))).toEqual([
        true,
        true,
        true,
        false,
      ]);
      expect(await listed(after)).toEqual(listedBefore);
      expect(await after.sessionEmail(session)).toBe('owner@example.org');
      expect(await after.endingKey('graced@example.org')).toEqual({
        id: rotatedAway.slice(0, 12),
        endsAt: listedBefore.find((k) => k.id === rotatedAway.slice(0, 12))!.revokedAt,
      });
      // The moved keys go on as any: the rules hold on them (one current key per address, rotation).
      expect((await after.rotate('current@example.org')).stopped).toEqual([current.slice(0, 12)]);
    } finally {
      await backend.close();
    }

    const out: string[] = [];
    const err: string[] = [];
    expect(
      await keysCli(
        ['migrate-to-postgres'],
        file,
        (l) => out.push(l),
        (l) => err.push(l),
        { ...process.env, DATABASE_URL: url },
      ),
    ).toBe(1);
    expect(err).toEqual([
      expect.stringMatching(
        /^keys: the PostgreSQL key database postgres:\/\/faa@127\.0\.0\.1:\d+\/moved already holds keys; moved nothing \(give it an empty database\)$/,
      ),
    ]);
    expect(out).toEqual([]);
  });

  it('restores from pg_dump with pg_restore into an empty database, every key answering as before', async () => {
    const url = await cluster.database('dumped');
    const store = await PostgresKeyBackend.open(url, { listen: false });
    const keys = postgresKeys(store);
    const kept = await keys.issue('kept@example.org');
    const graced = await keys.issue('graced@example.org');
    const next = (await keys.rotate('graced@example.org', GRACE_PERIODS['1h'])).key;
    const gone = await keys.issue('gone@example.org');
    await keys.revoke('gone@example.org');
    const listedBefore = await listed(keys);
    await store.close();
    const dump = path.join(await tempDir('dump'), 'keys.dump');
    await cluster.tool('pg_dump', ['-Fc', '-d', url, '-f', dump]);
    const restored = await cluster.database('restored');
    await cluster.tool('pg_restore', ['--no-owner', '-d', restored, dump]);
    const back = await PostgresKeyBackend.open(restored, { listen: false });
    try {
      const again = postgresKeys(back);
      expect(await Promise.all([kept, graced, next, gone].map((k) => again.verify(k)))).toEqual([
        true,
        true,
        true,
        false,
      ]);
      expect(await listed(again)).toEqual(listedBefore);
      // New keys follow the restored ones in issue order (the identity column restored with them).
      await again.issue('after@example.org');
      expect((await listed(again)).at(-1)?.email).toBe('after@example.org');
    } finally {
      await back.close();
    }
  });

  it('needs DATABASE_URL, and an SQLite file to move', async () => {
    const err: string[] = [];
    const file = path.join(await tempDir('move-none'), 'keys.db');
    expect(
      await keysCli(
        ['migrate-to-postgres'],
        file,
        () => {},
        (l) => err.push(l),
        { ...process.env, DATABASE_URL: '' },
      ),
    ).toBe(2);
    const url = await cluster.database('empty');
    expect(
      await keysCli(
        ['migrate-to-postgres'],
        file,
        () => {},
        (l) => err.push(l),
        { ...process.env, DATABASE_URL: url },
      ),
    ).toBe(1);
    expect(err).toEqual([
      expect.stringMatching(/needs DATABASE_URL/),
      `keys: there is no SQLite key database at ${file} (KEYS_DB) to move; nothing was done`,
    ]);
  });
});
