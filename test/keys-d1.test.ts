/**
 * The Cloudflare D1 key store on a real local D1 (Miniflare, offline, in
 * memory), its schema applied from the repository's `migrations/` folder: the
 * shared behaviour and race suite through two bindings of one database (two
 * Worker isolates), the schema the same as the one the local SQLite store
 * makes, and the Worker's key check through the key cache.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../src/keys.ts';
import { D1KeyBackend, d1Keys, type D1DatabaseLike } from '../src/keys-d1.ts';
import { migrationStatements } from '../src/keys-sql.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { keyStoreSuite } from './_key-store-suite.ts';
import { tempDir } from './helpers.ts';

const MIGRATIONS = path.resolve(import.meta.dirname, '../migrations');

let mf: Miniflare;
let dir: string;
/** Two bindings of the one database, as two Worker isolates have. */
let isolates: D1DatabaseLike[];

/** A D1 binding of the one database (each call: another isolate's binding). */
const binding = async () => (await mf.getD1Database('KEYS')) as unknown as D1DatabaseLike;

beforeAll(async () => {
  dir = await tempDir('keys-d1');
  // In memory (no persist), no Request.cf download: offline, and nothing left on disk.
  mf = new Miniflare(convertV4MiniflareOptions({ modules: true, script: 'export default { fetch: () => new Response(null) }', d1Databases: ['KEYS'], cf: false }));
  const db = await binding();
  // As `wrangler d1 migrations apply` does: every file of the folder, in order, each as one batch.
  for (const file of readdirSync(MIGRATIONS).filter((f) => f.endsWith('.sql')).sort()) {
    await db.batch(migrationStatements(readFileSync(path.join(MIGRATIONS, file), 'utf8')).map((sql) => db.prepare(sql)));
  }
  isolates = [await binding(), await binding()];
});

afterAll(async () => {
  await mf?.dispose();
  await rm(dir, { recursive: true, force: true });
});

keyStoreSuite('Cloudflare D1', () => {
  const clock = { t: Date.now() };
  return { a: new Keys(new D1KeyBackend(isolates[0]), () => clock.t), b: new Keys(new D1KeyBackend(isolates[1]), () => clock.t), clock, settle: () => {} };
});

describe('the D1 schema', () => {
  it('is the one the local SQLite store makes: the same tables and indexes, from the same migration files', async () => {
    const local = new SqliteKeyBackend(path.join(dir, 'schema.db'), { view: false });
    const shape = `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' ORDER BY name`;
    try {
      const d1 = (await (await binding()).prepare(shape).all()).results;
      const sqlite = new DatabaseSync(local.file, { readOnly: true });
      expect(d1).toEqual(sqlite.prepare(shape).all().map((row) => ({ ...row })));
      expect(d1?.map((row) => row.name)).toEqual(expect.arrayContaining(['keys', 'keys_one_active', 'meta', 'sessions', 'tokens']));
      sqlite.close();
    } finally {
      local.close();
    }
  });
});
