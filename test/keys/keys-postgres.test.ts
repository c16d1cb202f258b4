/**
 * The shared key-store suite on PostgreSQL: a throwaway cluster on loopback
 * for this file (test/helpers/postgres.ts), a fresh database for each test,
 * and two stores on it, each with its own pool, LISTEN connection and key
 * cache, as two servers have. A check after a write on the other store waits
 * for nothing but the notifications already sent (`caughtUp`): the cache
 * must have dropped what the other server changed.
 */
import { afterAll, beforeAll } from 'vitest';
import { PostgresKeyBackend, postgresKeys } from '../../src/keys/stores/postgres.node.ts';
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
  return { a: postgresKeys(one, { now }), b: postgresKeys(two, { now }), clock, settle: () => Promise.all([one.caughtUp(), two.caughtUp()]).then(() => {}) };
});
