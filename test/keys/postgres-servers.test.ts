/**
 * Two `npm start` servers on one PostgreSQL database (DATABASE_URL), as an
 * operator runs them behind a load balancer or Varnish: both started at once
 * (the schema migrated once, under its advisory lock), a key issued through
 * one server's portal answered by the other, revoked through the other and
 * refused by the first within 2 s (its key cache dropped by the NOTIFY), the
 * same for a rotation's grace ended on the other server, and each change
 * purged from the shared cache by the server that made it alone. The keys CLI
 * on DATABASE_URL is seen by both servers too, and its change, which it could
 * not purge itself, is purged by one of them. The times are printed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysCli } from '../../cli/keys.ts';
import { KEY_SETTLE_MS, keyTag } from '../../src/http/cache.ts';
import { examplePath, ROUTES } from '../../src/shared/routes.ts';
import { keyThroughPortal } from '../helpers/keys.ts';
import { type MailApi, startMailApi } from '../helpers/mail.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type PgCluster, startPostgres } from '../helpers/postgres.ts';
import { type Started, startServer } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

const ROUTE = ROUTES.find((r) => r.id === 'ceremonyByYear')!;
/** The bound every runtime keeps for a key changed elsewhere. */
const SEEN_WITHIN_MS = 2_000;

let cluster: PgCluster;
let databaseUrl: string;
let mailApi: MailApi;
let purges: { server: string; tags: string[] }[];
let purgeHook: http.Server;
const servers: Started[] = [];
let a: Started;
let b: Started;

const status = async (server: Started, key: string) => (await fetch(`${server.base}${examplePath(ROUTE, key)}`)).status;
const post = async (server: Started, p: string, session: string, body?: object) =>
  (
    await fetch(`${server.base}${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body && JSON.stringify(body),
    })
  ).json() as Promise<Record<string, unknown>>;

/**
 * Milliseconds until `server` answers `key` with `want`, asked every 20 ms for at most 5 s; Infinity if it never does.
 */
async function msUntil(server: Started, key: string, want: number, since: number): Promise<number> {
  for (const until = Date.now() + 5_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    if ((await status(server, key)) === want) return Date.now() - since;
  }
  return Infinity;
}

/** The servers (a or b) that purged a key's answers, in the purges from the `from`th on. */
const purgedBy = (id: string, from = 0) => [
  ...new Set(
    purges
      .slice(from)
      .filter((p) => p.tags.includes(keyTag(id)))
      .map((p) => p.server),
  ),
];

beforeAll(async () => {
  cluster = await startPostgres('servers');
  databaseUrl = await cluster.database('servers');
  mailApi = await startMailApi();
  purges = [];
  // A stand-in for Varnish's purge hook: each server purges through its own path, so the test sees which one purged.
  purgeHook = http.createServer((req, res) => {
    purges.push({ server: req.url!.slice(1), tags: String(req.headers['xkey-purge'] ?? '').split(' ') });
    res.end();
  });
  await new Promise<void>((resolve) => purgeHook.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(purgeHook.address() as AddressInfo).port}`;
  const dist = await buildInto(SAMPLE_SOURCE, 'pg-servers-dist');
  const env = async (name: string) => ({
    DIST_DIR: dist,
    KEYS_DB: path.join(await tempDir(`pg-server-${name}`), 'keys.db'),
    DATABASE_URL: databaseUrl,
    MAIL_API_URL: mailApi.url,
    MAIL_API_TOKEN: 'test-token',
    NODE_ENV: 'production',
    CACHE_PURGE_URL: `${hook}/${name}`,
    LOG_REQUESTS: '0',
  });
  // Both at once: one migrates the empty database, the other waits for the advisory lock and finds it done.
  const started = await Promise.allSettled([startServer(await env('a')), startServer(await env('b'))]);
  for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  [a, b] = servers;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await mailApi?.stop();
  await new Promise((resolve) => (purgeHook ? purgeHook.close(resolve) : resolve(undefined)));
  await cluster?.remove();
});

describe('two servers on one PostgreSQL database', () => {
  it('both start at once on an empty database and say where keys live, without a password', () => {
    for (const server of [a, b])
      expect(server.output()).toMatch(/keys in PostgreSQL postgres:\/\/faa@127\.0\.0\.1:\d+\/servers/);
  });

  it('answers on B a key issued through A’s portal, and refuses it on A within 2 s of its revocation through B, purged by B alone', async () => {
    const issuedAt = Date.now();
    const { key, session } = await keyThroughPortal(a.base, mailApi);
    const issued = Date.now() - issuedAt;
    const onB = await msUntil(b, key, 200, Date.now());
    expect(onB).toBeLessThan(SEEN_WITHIN_MS);
    expect(await status(a, key)).toBe(200); // A now holds the answer in its key cache
    const revokedAt = Date.now();
    expect(await post(b, '/portal/keys/revoke', session)).toEqual({ revoked: true });
    const revokeReturned = Date.now() - revokedAt;
    const refusedOnA = await msUntil(a, key, 403, revokedAt);
    expect(refusedOnA).toBeLessThan(SEEN_WITHIN_MS);
    expect(await status(b, key)).toBe(403);
    console.log(
      `two servers: issued on A in ${issued} ms (portal sign-in, link, key), answered 200 by B ${onB} ms later; revoked on B in ${revokeReturned} ms, refused 403 by A ${refusedOnA} ms after the revoke began`,
    );
    await new Promise((r) => setTimeout(r, KEY_SETTLE_MS + 500)); // the writer's second purge round
    expect(purgedBy(key.slice(0, 12))).toEqual(['b']);
  });

  it('ends on A, within 2 s, the grace of a key rotated through A and ended through B', async () => {
    const { key: old, session } = await keyThroughPortal(a.base, mailApi);
    const rotated = await post(a, '/portal/keys/rotate', session, { grace: '1h' });
    const next = rotated.apiKey as string;
    expect([await status(b, old), await status(b, next), await status(a, old)]).toEqual([200, 200, 200]);
    await new Promise((r) => setTimeout(r, KEY_SETTLE_MS + 500)); // A's purges of the rotated key, both rounds
    expect(purgedBy(old.slice(0, 12))).toEqual(['a']);
    const before = purges.length;
    const endedAt = Date.now();
    expect(await post(b, '/portal/keys/end-grace', session)).toEqual({ ended: true });
    const refused = await msUntil(a, old, 403, endedAt);
    expect(refused).toBeLessThan(SEEN_WITHIN_MS);
    expect(await status(a, next)).toBe(200);
    console.log(`two servers: grace ended on B, old key refused by A ${refused} ms after`);
    await new Promise((r) => setTimeout(r, KEY_SETTLE_MS + 500));
    expect(purgedBy(old.slice(0, 12), before)).toEqual(['b']);
  });

  it('serves on both servers a key the keys CLI issued on DATABASE_URL, refuses it on both once the CLI revoked it, and has one server purge it', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const env = { ...process.env, DATABASE_URL: databaseUrl, CACHE_PURGE_URL: '' };
    expect(
      await keysCli(
        ['issue', `cli-${Date.now()}@example.org`],
        '/nonexistent/keys.db',
        (l) => out.push(l),
        (l) => err.push(l),
        env,
      ),
      err.join('\n'),
    ).toBe(0);
    const key = out[0];
    expect([await status(a, key), await status(b, key)]).toEqual([200, 200]);
    const revokedAt = Date.now();
    expect(
      await keysCli(
        ['revoke', key],
        '/nonexistent/keys.db',
        (l) => out.push(l),
        (l) => err.push(l),
        env,
      ),
      err.join('\n'),
    ).toBe(0);
    const [onA, onB] = await Promise.all([msUntil(a, key, 403, revokedAt), msUntil(b, key, 403, revokedAt)]);
    expect(Math.max(onA, onB)).toBeLessThan(SEEN_WITHIN_MS);
    console.log(`two servers: revoked by the keys CLI, refused by A ${onA} ms and B ${onB} ms after`);
    // The CLI had no CACHE_PURGE_URL: its notification asked the
    // servers, and the one that claimed it purged it, both rounds.
    await new Promise((r) => setTimeout(r, KEY_SETTLE_MS + 500));
    const by = purgedBy(key.slice(0, 12));
    expect(by).toHaveLength(1);
    expect(purges.filter((p) => p.tags.includes(keyTag(key.slice(0, 12)))).length).toBe(2);
  });
});
