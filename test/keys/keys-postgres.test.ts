/**
 * The shared key-store suite on PostgreSQL: a throwaway cluster on loopback
 * for this file (test/helpers/postgres.ts), a fresh database for each test,
 * and two stores on it, each with its own pool, LISTEN connection and key
 * cache, as two servers have. A check after a write on the other store waits
 * for nothing but the notifications already sent (`caughtUp`): the cache
 * must have dropped what the other server changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CACHE_TTL_MS } from '../../src/keys/cache.ts';
import { isPromise } from '../../src/shared/maybe.ts';
import { PostgresKeyBackend, postgresKeys } from '../../adapters/_node/postgres-keys.ts';
import { type PgCluster, startPostgres } from '../helpers/postgres.ts';
import { keyStoreSuite } from './key-store-suite.ts';

let cluster: PgCluster;
const open: PostgresKeyBackend[] = [];
let databases = 0;

beforeAll(async () => {
  cluster = await startPostgres('key-store');
});

afterAll(async () => {
  await Promise.all(open.map((backend) => backend.close()));
  await cluster?.remove();
});

keyStoreSuite('PostgreSQL', async () => {
  // One test's stores at a time: the previous test's connections are closed first.
  await Promise.all(open.splice(0).map((backend) => backend.close()));
  const clock = { t: Date.now() };
  const url = await cluster.database(`keys_${++databases}`);
  const [one, two] = await Promise.all([PostgresKeyBackend.open(url), PostgresKeyBackend.open(url)]);
  open.push(one, two);
  const now = () => clock.t;
  return {
    a: postgresKeys(one, { now }),
    b: postgresKeys(two, { now }),
    clock,
    settle: () => Promise.all([one.caughtUp(), two.caughtUp()]).then(() => {}),
  };
});

describe('the PostgreSQL key check', () => {
  it('asks the database once for a key first checked, answers it from memory with no query for the cache’s second, then reads it again', async () => {
    const backend = await PostgresKeyBackend.open(await cluster.database('checks'));
    open.push(backend);
    const clock = { t: Date.now() };
    const keys = postgresKeys(backend, { now: () => clock.t });
    const key = await keys.issue('checks@example.org');
    // Every statement of the store goes through its pool: counted there, on the real driver.
    let queries = 0;
    const query = backend.pool.query.bind(backend.pool) as (...args: unknown[]) => unknown;
    backend.pool.query = ((...args: unknown[]) => (queries++, query(...args))) as typeof backend.pool.query;
    const first = keys.verify(key);
    expect(isPromise(first)).toBe(true);
    expect([await first, queries]).toEqual([true, 1]);
    for (let i = 0; i < 1_000; i++) expect(keys.verify(key)).toBe(true); // synchronous: no promise, no round trip
    clock.t += KEY_CACHE_TTL_MS - 1;
    expect([keys.verify(key), queries]).toEqual([true, 1]);
    clock.t += 1;
    const again = keys.verify(key);
    expect(isPromise(again)).toBe(true);
    expect([await again, queries]).toEqual([true, 2]);
  });
});
