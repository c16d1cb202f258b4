/**
 * Key files are private: they hold e-mail addresses and key hashes. The SQLite
 * key database and its -wal and -shm are made 0600, folders made for them
 * 0700, the development key 0600, and the local Blobs store `dev:netlify`
 * keeps keys in 0700, whatever the umask lets other files be.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalBlobs } from '../../cli/lib/local-blobs.ts';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { startServer } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

/** A file's or folder's permission bits, as `ls -l` shows them in octal. */
const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('key files', () => {
  it('are made 0600 in folders made 0700 by the SQLite key store, -wal and -shm included', async () => {
    const dir = await tempDir('modes-sqlite');
    const file = path.join(dir, 'new/deeper/keys.db');
    const backend = new SqliteKeyBackend(file);
    try {
      await new Keys(backend).issue('modes@example.org');
      for (const suffix of ['', '-wal', '-shm']) expect([suffix, mode(file + suffix)]).toEqual([suffix, '600']);
      expect(mode(path.join(dir, 'new'))).toBe('700');
      expect(mode(path.join(dir, 'new/deeper'))).toBe('700');
    } finally {
      backend.close();
    }
  });

  it('are made 0600 by npm start: the database and the development key', async () => {
    const dist = await buildInto(SAMPLE_SOURCE, 'modes-dist');
    const dir = path.join(await tempDir('modes-start'), 'data');
    const server = await startServer({ DIST_DIR: dist, KEYS_DB: path.join(dir, 'keys.db'), LOG_REQUESTS: '0' });
    try {
      expect(mode(dir)).toBe('700');
      for (const name of ['keys.db', 'keys.db-wal', 'keys.db-shm', 'dev-key.txt'])
        expect([name, mode(path.join(dir, name))]).toEqual([name, '600']);
    } finally {
      await server.stop();
    }
  });

  it('are kept by the local Blobs server of dev:netlify in a folder made 0700', async () => {
    const dir = path.join(await tempDir('modes-blobs'), 'netlify-local/blobs');
    const blobs = await startLocalBlobs(dir);
    try {
      expect(existsSync(dir)).toBe(true);
      expect(mode(dir)).toBe('700');
      expect(mode(path.dirname(dir))).toBe('700');
    } finally {
      await blobs.stop();
    }
  });
});
