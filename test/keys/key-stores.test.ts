/**
 * The shared key-store suite against both backends: SQLite (two connections
 * to one file, as the server and the CLI have) and Netlify Blobs (two backend
 * instances on one local Blobs server, as two function instances have).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Keys } from '../../src/keys/rules.ts';
import { blobsKeyStore, KEY_STORE_NAME } from '../../adapters/_netlify/blobs-keys.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { startBlobs, type Blobs } from '../helpers/blobs.ts';
import { keyStoreSuite } from './key-store-suite.ts';
import { tempDir } from '../helpers/temp.ts';

let dir: string;
let blobs: Blobs;
const open: SqliteKeyBackend[] = [];
let stores = 0;

beforeAll(async () => {
  dir = await tempDir('key-stores');
  blobs = await startBlobs('key-stores');
});

afterAll(async () => {
  for (const backend of open) backend.close();
  await blobs.stop();
  await rm(dir, { recursive: true, force: true });
});

keyStoreSuite('SQLite', () => {
  const clock = { t: Date.now() };
  const file = path.join(dir, `keys-${++stores}.db`);
  const [one, two] = [new SqliteKeyBackend(file), new SqliteKeyBackend(file)];
  open.push(one, two);
  return {
    a: new Keys(one, () => clock.t),
    b: new Keys(two, () => clock.t),
    clock,
    settle: () => (one.follow(), two.follow()),
  };
});

keyStoreSuite('Netlify Blobs', () => {
  const clock = { t: Date.now() };
  const options = { ...blobs.access, name: `${KEY_STORE_NAME}-${++stores}` };
  return {
    a: new Keys(blobsKeyStore(options), () => clock.t),
    b: new Keys(blobsKeyStore(options), () => clock.t),
    clock,
    settle: () => {},
  };
});
