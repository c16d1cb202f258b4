/**
 * npm run bench:keys: the SQLite key store at a million keys. Times issue,
 * rotate and revoke (each one `BEGIN IMMEDIATE` transaction, fsync'd) and
 * the request path's `verify` (warm: the in-memory set), then measures API
 * latency on a running server while another process writes keys as fast as
 * it can. Then the same rows for the PostgreSQL store (BENCH_DATABASE_URL, or
 * a throwaway cluster on loopback when Debian's postgresql is installed):
 * its warm `verify` is the key cache's answer, given synchronously (no round
 * trip), and a first check is one query. A script, not a test: it prints tables.
 *
 *   node bench/keys.ts                 (driver)
 *   node bench/keys.ts writer <db> <ms> (child: writes keys for <ms>; <db> a file or a postgres:// URL)
 *
 * Environment: BENCH_KEYS (default 1000000), BENCH_OPS per operation (default 2000),
 * BENCH_DATABASE_URL (an empty PostgreSQL database to use; default: a throwaway cluster).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { build } from '../build/build.ts';
import { commandLine } from '../lib/command-line.ts';
import type { NewKey } from '../src/keys/contract.ts';
import { Keys } from '../src/keys/rules.ts';
import { generateKey, hashSecret, keyId } from '../src/keys/secrets.ts';
import { SqliteKeyBackend } from '../src/keys/stores/sqlite.node.ts';
import { isPostgresUrl, PostgresKeyBackend, postgresKeys } from '../adapters/_node/postgres-keys.ts';
import { isPromise } from '../src/shared/maybe.ts';
import { postgresBin, startPostgres } from '../lib/pg-cluster.ts';

const TOTAL = Number(process.env.BENCH_KEYS ?? 1_000_000);
const OPS = Number(process.env.BENCH_OPS ?? 2000);
const SAMPLE = path.resolve(import.meta.dirname, '../data/sample/oscars-sample.tsv');

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (x: number) => (x < 0.01 ? `${(x * 1000).toFixed(2)} µs` : `${x.toFixed(3)} ms`);
const row = (name: string, xs: number[]) =>
  `| ${name} | ${xs.length} | ${ms(pct(xs, 50))} | ${ms(pct(xs, 99))} | ${ms(xs.reduce((a, b) => Math.max(a, b), 0))} |`;

async function timed(count: number, op: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await op(i);
    times.push(performance.now() - t);
  }
  return times;
}

function seed(db: string): number {
  const backend = new SqliteKeyBackend(db, { view: false });
  const started = performance.now();
  for (let done = 0; done < TOTAL;) {
    const batch: NewKey[] = [];
    for (let i = 0; i < 100_000 && done < TOTAL; i++, done++) {
      const key = generateKey();
      batch.push({ hash: hashSecret(key), id: keyId(key), email: `seed${done}@example.org`, createdAt: done });
    }
    backend.insertMany(batch);
  }
  backend.close();
  return performance.now() - started;
}

/** Sequential GETs on one keep-alive connection: the latency of each. */
async function apiLatencies(port: number, key: string, count: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const t = performance.now();
      http
        .get({ host: '127.0.0.1', port, path: `/archive/year=1930/apikey=${key}`, agent }, (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve(performance.now() - t) : reject(new Error(`status ${res.statusCode}`)),
          );
        })
        .on('error', reject);
    });
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await one());
  agent.destroy();
  return times;
}

function child(args: string[], env: Record<string, string> = {}) {
  return spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function driver() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'faa-bench-keys-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const db = path.join(tmp, 'keys.db');
  console.log(`seeding ${TOTAL.toLocaleString('en')} keys ...`);
  const seedMs = seed(db);
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let t = performance.now();
  const backend = new SqliteKeyBackend(db);
  const loadMs = performance.now() - t;
  gc();
  const rssView = process.memoryUsage().heapUsed - heapBefore;
  const keys = new Keys(backend);

  const emails = Array.from({ length: OPS }, (_, i) => `bench${i}@example.org`);
  const issued: string[] = [];
  const issue = await timed(OPS, async (i) => issued.push(await keys.issue(emails[i])));
  const rotate = await timed(OPS, (i) => keys.rotate(emails[i]));
  const revoke = await timed(OPS, (i) => keys.revoke(emails[i]));
  const live: string[] = [];
  for (let i = 0; i < 1000; i++) live.push(await keys.issue(`verify${i}@example.org`));
  for (let i = 0; i < 200_000; i++) keys.verify(live[i % 1000]); // warm
  const verify: number[] = [];
  for (let i = 0; i < 200_000; i++) {
    const k = live[i % 1000];
    const s = performance.now();
    keys.verify(k);
    verify.push(performance.now() - s);
  }
  t = performance.now();
  let yes = 0;
  for (let i = 0; i < 5_000_000; i++) if (keys.verify(live[i % 1000]) === true) yes++;
  const verifyMeanUs = ((performance.now() - t) / 5_000_000) * 1000;
  const unknown = Array.from({ length: 20_000 }, generateKey);
  const verifyCold = await timed(20_000, (i) => keys.verify(unknown[i]));
  backend.close();

  console.log(
    `\n${TOTAL.toLocaleString('en')} keys: seeded in ${(seedMs / 1000).toFixed(1)} s; the server's in-memory set loads in ${(loadMs / 1000).toFixed(2)} s, ${(rssView / 2 ** 20).toFixed(0)} MB of heap`,
  );
  console.log('\n| operation | n | p50 | p99 | max |\n|---|---:|---:|---:|---:|');
  for (const line of [
    row('issue', issue),
    row('rotate', rotate),
    row('revoke', revoke),
    row('verify (warm)', verify),
    row('verify (unknown key, hashed)', verifyCold),
  ])
    console.log(line);
  console.log(`\nverify, mean of 5,000,000 warm calls: ${verifyMeanUs.toFixed(3)} µs (${yes} true)`);

  // API latency on a running server (its own process) with and without a writer process.
  const dist = path.join(tmp, 'dist');
  await build({ source: SAMPLE, out: dist, summary: path.join(tmp, 'summary.json'), log: () => {} });
  await serverLatency(dist, { KEYS_DB: db }, db, live[0]);
  await postgres(tmp, dist);
}

/**
 * API latency on a server as npm start runs it (cli/start.ts)
 * over `keysEnv`, with and without a writer process on `target`.
 */
async function serverLatency(dist: string, keysEnv: Record<string, string>, target: string, apiKey: string) {
  const port = 20_000 + Math.floor(Math.random() * 12_000);
  const { ARCHIVE_SOURCE: _source, ...env } = process.env;
  const server = spawn(process.execPath, [path.join(import.meta.dirname, '../cli/start.ts')], {
    env: {
      ...env,
      ...keysEnv,
      DIST_DIR: dist,
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '100000000',
      LOG_REQUESTS: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) =>
    server.stdout!.on('data', (c: Buffer) => String(c).includes('key portal:') && resolve()),
  );
  await apiLatencies(port, apiKey, 2000); // warm
  const quiet = await apiLatencies(port, apiKey, 5000);
  const writer = child([import.meta.filename, 'writer', target, '600000']);
  let writes = '';
  writer.stdout!.on('data', (c) => (writes += c));
  await new Promise((r) => setTimeout(r, 500));
  const busy = await apiLatencies(port, apiKey, 5000);
  writer.kill('SIGTERM');
  await new Promise((r) => writer.once('exit', r));
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  console.log(
    `\nAPI latency, /archive/year=1930 on one keep-alive connection, server in its own process (${writes.trim() || 'writer stopped'}):`,
  );
  console.log('\n| API requests | n | p50 | p99 | max |\n|---|---:|---:|---:|---:|');
  console.log(row('no writer', quiet));
  console.log(row('while another process issues, rotates and revokes', busy));
}

/**
 * The PostgreSQL store's rows: the same operations over BENCH_DATABASE_URL
 * or a throwaway cluster; skipped, with a line, without either.
 */
async function postgres(tmp: string, dist: string) {
  const given = process.env.BENCH_DATABASE_URL;
  if (!given && !postgresBin()) {
    console.log('\nPostgreSQL: skipped (set BENCH_DATABASE_URL, or install postgresql for a throwaway cluster)');
    return;
  }
  // fsync on, as a production server runs and as the SQLite rows above are (synchronous = FULL).
  const cluster = given ? null : await startPostgres('bench', { fsync: true });
  try {
    const url = given ?? (await cluster!.database('bench'));
    console.log(
      `\nPostgreSQL (${given ? 'BENCH_DATABASE_URL' : `a throwaway cluster, ${path.basename(path.dirname(postgresBin()!))}`}): seeding ${TOTAL.toLocaleString('en')} keys ...`,
    );
    const backend = await PostgresKeyBackend.open(url);
    let t = performance.now();
    for (let done = 0; done < TOTAL;) {
      const batch: (NewKey & { revokedAt: null })[] = [];
      for (let i = 0; i < 50_000 && done < TOTAL; i++, done++) {
        const key = generateKey();
        batch.push({
          hash: hashSecret(key),
          id: keyId(key),
          email: `seed${done}@example.org`,
          createdAt: done,
          revokedAt: null,
        });
      }
      await backend.insertMany(batch);
    }
    const seedMs = performance.now() - t;
    const keys = postgresKeys(backend);
    const emails = Array.from({ length: OPS }, (_, i) => `bench${i}@example.org`);
    const issue = await timed(OPS, (i) => keys.issue(emails[i]));
    const rotate = await timed(OPS, (i) => keys.rotate(emails[i]));
    const revoke = await timed(OPS, (i) => keys.revoke(emails[i]));
    const live: string[] = [];
    for (let i = 0; i < 1000; i++) live.push(await keys.issue(`verify${i}@example.org`));
    // A first check reads the key's row (one query); each answer
    // is then the cache's for a second, without a round trip.
    const first = await timed(1000, (i) => keys.verify(live[i]));
    let synchronous = 0;
    const verify: number[] = [];
    t = performance.now();
    for (let i = 0; i < 200_000 && performance.now() - t < 800; i++) {
      const s = performance.now();
      if (!isPromise(keys.verify(live[i % 1000]))) synchronous++;
      verify.push(performance.now() - s);
    }
    const unknown = Array.from({ length: 2_000 }, generateKey);
    const verifyCold = await timed(2_000, (i) => keys.verify(unknown[i]));
    await backend.close();
    console.log(`\n${TOTAL.toLocaleString('en')} keys seeded in ${(seedMs / 1000).toFixed(1)} s`);
    console.log('\n| operation (PostgreSQL) | n | p50 | p99 | max |\n|---|---:|---:|---:|---:|');
    for (const line of [
      row('issue', issue),
      row('rotate', rotate),
      row('revoke', revoke),
      row('verify (first check: one query)', first),
      row('verify (warm: the key cache)', verify),
      row('verify (unknown key: one query)', verifyCold),
    ])
      console.log(line);
    console.log(
      `\nwarm verify answered synchronously, with no database round trip: ${synchronous} of ${verify.length} (the others: each key's one read a second, once its cached answer is a second old)`,
    );
    await serverLatency(dist, { DATABASE_URL: url, KEYS_DB: path.join(tmp, 'pg-dev-keys.db') }, url, live[0]);
  } finally {
    await cluster?.remove();
  }
}

/** The writer child: issue, rotate, revoke in a loop until killed or `ms` pass; prints writes per second. */
async function writer(db: string, ms: number) {
  const keys = isPostgresUrl(db)
    ? new Keys(await PostgresKeyBackend.open(db, { listen: false }))
    : new Keys(new SqliteKeyBackend(db, { view: false }));
  const started = Date.now();
  let writes = 0;
  let stop = false;
  process.on('SIGTERM', () => (stop = true));
  for (let i = 0; !stop && Date.now() - started < ms; i++) {
    const email = `writer${i}@example.org`;
    await keys.issue(email);
    await keys.rotate(email);
    await keys.revoke(email);
    writes += 3;
    if (i % 50 === 0) await new Promise((r) => setImmediate(r));
  }
  process.stdout.write(
    `writer: ${writes} writes, ${Math.round(writes / ((Date.now() - started) / 1000))} per second\n`,
  );
  process.exit(0);
}

const USAGE = `usage: npm run bench:keys

The SQLite key store with a million keys: issue, rotate, revoke and verify
times, then API latency on a running server while another process writes keys;
then the same for the PostgreSQL store (BENCH_DATABASE_URL, or a throwaway
cluster when postgresql is installed). Prints tables. (\`node bench/keys.ts
writer <db> <ms>\` is the writer it starts.)

Environment: BENCH_KEYS (1000000), BENCH_OPS per operation (2000),
BENCH_DATABASE_URL (an empty PostgreSQL database; default a throwaway cluster).

  -h, --help   this text`;

// The driver takes no argument; the writer it starts takes three. Anything else is refused as an unexpected argument.
const { positionals } = commandLine({ name: 'bench:keys', usage: USAGE, options: {}, positionals: 3 });
if (positionals[0] === 'writer') await writer(positionals[1], Number(positionals[2]));
else if (positionals.length > 0) commandLine({ name: 'bench:keys', usage: USAGE, options: {} });
else await driver();
