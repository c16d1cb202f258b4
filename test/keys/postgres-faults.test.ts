/**
 * `npm start` on PostgreSQL when the database fails: unreachable at start
 * (one line, a non-zero exit), a schema newer than the code (one line,
 * nothing written), lost while serving (a key already checked keeps its
 * cached answer, an unchecked key, a portal write and `/health` answer 503),
 * back again (the server reconnects by itself, and follows other servers'
 * changes again), a server killed with SIGKILL during portal writes (every
 * write it acknowledged is in the database), and the database restarted under
 * load (never a 500, and every key answers again once it is back).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysCli } from '../../cli/keys.ts';
import { KEY_CACHE_TTL_MS } from '../../src/keys/cache.ts';
import { hashSecret } from '../../src/keys/secrets.ts';
import { PostgresKeyBackend } from '../../adapters/_node/postgres-keys.ts';
import { SCHEMA_VERSION } from '../../src/keys/stores/sqlite-file.node.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import { examplePath, ROUTES } from '../../src/shared/routes.ts';
import { freeLoopbackPort } from '../../lib/ports.ts';
import { type MailApi, startMailApi, tokenIn } from '../helpers/mail.ts';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type PgCluster, startPostgres } from '../helpers/postgres.ts';
import { type Started, startServer } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

const ROUTE = ROUTES.find((r) => r.id === 'ceremonyByYear')!;

let cluster: PgCluster;
let mailApi: MailApi;
let dist: string;
const servers: Started[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lookup = (server: Started, key: string) => fetch(`${server.base}${examplePath(ROUTE, key)}`);
const health = async (server: Started) => (await fetch(`${server.base}/health`)).status;

async function env(databaseUrl: string, extra: Record<string, string> = {}) {
  return {
    DIST_DIR: dist,
    KEYS_DB: path.join(await tempDir('pg-faults-server'), 'keys.db'),
    DATABASE_URL: databaseUrl,
    MAIL_API_URL: mailApi.url,
    MAIL_API_TOKEN: 'test-token',
    NODE_ENV: 'production',
    LOG_REQUESTS: '0',
    PORTAL_ISSUE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_PER_MINUTE: '100000',
    ...extra,
  };
}

async function start(databaseUrl: string, extra: Record<string, string> = {}): Promise<Started> {
  const server = await startServer(await env(databaseUrl, extra));
  servers.push(server);
  return server;
}

/** A key issued by the keys CLI on `databaseUrl`. */
async function cliKey(databaseUrl: string): Promise<string> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await keysCli(
    ['issue', `faults-${Math.random().toString(36).slice(2)}@example.org`],
    '/nonexistent/keys.db',
    (l) => out.push(l),
    (l) => err.push(l),
    { ...process.env, DATABASE_URL: databaseUrl, CACHE_PURGE_URL: '' },
  );
  if (code !== 0) throw new Error(err.join('\n'));
  return out[0];
}

/** A signed-in portal session for a fresh address, through the mailed link. */
async function session(server: Started): Promise<string> {
  const email = `owner-${Math.random().toString(36).slice(2)}@example.org`;
  const asked = await fetch(`${server.base}/portal/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  expect(asked.status).toBe(202);
  const token = tokenIn({ text: mailApi.to(email)[0].body.text ?? '' });
  const opened = await fetch(`${server.base}/portal/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return ((await opened.json()) as { session: string }).session;
}

/** How the keys stand in the database, read by a store of its own. */
async function owners(databaseUrl: string, keys: string[]) {
  const store = await PostgresKeyBackend.open(databaseUrl, { listen: false });
  try {
    return await Promise.all(keys.map((k) => store.owner(hashSecret(k))));
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  [cluster, mailApi, dist] = await Promise.all([
    startPostgres('faults'),
    startMailApi(),
    buildInto(SAMPLE_SOURCE, 'pg-faults-dist'),
  ]);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await mailApi?.stop();
  await cluster?.remove();
});

describe('npm start on PostgreSQL, when the database fails', () => {
  it('stops with one line and a non-zero exit when the database cannot be reached, naming no password', async () => {
    const nobody = `postgres://faa:s3cret-pass@127.0.0.1:${await freeLoopbackPort()}/keys`;
    const failed = await startServer(await env(nobody)).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(failed).toMatch(/cli\/start\.ts exited 1:/);
    const lines = failed!.split('\n').filter((l) => l.includes('key database'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^npm start: cannot reach the key database postgres:\/\/faa:\*\*\*@127\.0\.0\.1:\d+\/keys: .*ECONNREFUSED/,
    );
    expect(failed).not.toContain('s3cret');
  });

  it('refuses, with one line and nothing written, a database whose key schema is newer than the code', async () => {
    const url = await cluster.database('newer');
    await (await PostgresKeyBackend.open(url, { listen: false })).close();
    await cluster.tool('psql', [
      '-X',
      '-q',
      '-d',
      url,
      '-c',
      `UPDATE meta SET value = '${SCHEMA_VERSION + 7}' WHERE name = 'schema-version'`,
    ]);
    const failed = await startServer(await env(url)).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(failed).toMatch(/exited 1:/);
    expect(failed!.split('\n').filter((l) => l.includes('key schema'))).toEqual([
      expect.stringMatching(
        new RegExp(
          `^npm start: the key database postgres://faa@127\\.0\\.0\\.1:\\d+/newer holds key schema ${SCHEMA_VERSION + 7}, newer than this code knows \\(${SCHEMA_VERSION}\\): run a newer version; nothing was written$`,
        ),
      ),
    ]);
    const { stdout } = await cluster.tool('psql', [
      '-X',
      '-q',
      '-t',
      '-A',
      '-d',
      url,
      '-c',
      "SELECT value FROM meta WHERE name = 'schema-version'",
    ]);
    expect(stdout.trim()).toBe(String(SCHEMA_VERSION + 7));
  });

  it('keeps a checked key’s cached answer, answers 503 for the rest while the database is lost, and comes back by itself', async () => {
    const url = await cluster.database('lost');
    const server = await start(url);
    try {
      await lostAndBack(server, url);
    } finally {
      await cluster.start().catch(() => {}); // running already when the test got that far
    }
  });

  async function lostAndBack(server: Started, url: string) {
    const [checked, unchecked, later] = [await cliKey(url), await cliKey(url), await cliKey(url)];
    expect(await health(server)).toBe(200);
    const readAt = Date.now();
    expect((await lookup(server, checked)).status).toBe(200);
    await cluster.stop('immediate');
    const lostAt = Date.now();
    // The answer read just before is kept for the key cache's second: this check is only meaningful inside it.
    const kept = await lookup(server, checked);
    expect(Date.now() - readAt, 'the machine took the whole cache time to stop the database').toBeLessThan(
      KEY_CACHE_TTL_MS,
    );
    expect(kept.status).toBe(200);
    const refused = await lookup(server, unchecked);
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([
      503,
      MESSAGES.keysUnavailable,
    ]);
    const signIn = await fetch(`${server.base}/portal/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'lost@example.org' }),
    });
    expect(signIn.status).toBe(503);
    // /health reuses its probe's outcome for a second (PROBE_TTL_MS): it says 503 once that is past.
    let unhealthy = 0;
    for (let i = 0; i < 100 && unhealthy === 0; i++, await sleep(50))
      if ((await health(server)) === 503) unhealthy = Date.now() - lostAt;
    expect(unhealthy).toBeGreaterThan(0);
    // Past the cache's time the checked key is asked of the database again, and answers 503 too.
    let expired = 0;
    for (let i = 0; i < 100 && expired === 0; i++, await sleep(50))
      if ((await lookup(server, checked)).status === 503) expired = Date.now() - readAt;
    expect(expired).toBeGreaterThanOrEqual(KEY_CACHE_TTL_MS);
    console.log(
      `database lost ${lostAt - readAt} ms after a key was checked: that key answered 200 until ${expired} ms after its check, then 503`,
    );

    await cluster.start();
    const backAt = Date.now();
    let healthy = 0;
    for (let i = 0; i < 200 && healthy === 0; i++, await sleep(50))
      if ((await health(server)) === 200) healthy = Date.now() - backAt;
    expect(healthy).toBeGreaterThan(0);
    expect([(await lookup(server, unchecked)).status, (await lookup(server, later)).status]).toEqual([200, 200]);
    expect(
      (
        await fetch(`${server.base}/portal/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'back@example.org' }),
        })
      ).status,
    ).toBe(202);
    // Following other servers' changes again: the listening connection came back on its own.
    for (let i = 0; i < 200 && !server.output().includes('following other servers’ key changes again'); i++)
      await sleep(50);
    expect(server.output()).toContain('following other servers’ key changes again');
    expect(server.output().match(/key database: cannot be reached/g)).toHaveLength(1);
    console.log(`database back: /health answered 200 again ${healthy} ms after it restarted`);
  }

  it('keeps every portal write a server acknowledged before it was killed with SIGKILL', async () => {
    const url = await cluster.database('killed');
    const server = await start(url);
    const sessions = await Promise.all(Array.from({ length: 16 }, () => session(server)));
    const acknowledged: string[] = [];
    const writes = sessions.map(async (s) => {
      const reply = await fetch(`${server.base}/portal/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s}` },
      }).catch(() => null);
      if (reply?.status === 201) acknowledged.push(((await reply.json()) as { apiKey: string }).apiKey);
    });
    // Killed once half are acknowledged: the rest are in flight, or not yet begun.
    for (let i = 0; i < 1_000 && acknowledged.length < sessions.length / 2; i++) await sleep(2);
    server.child.kill('SIGKILL');
    await Promise.all(writes);
    expect(acknowledged.length).toBeGreaterThan(0);
    const stored = await owners(url, acknowledged);
    expect(stored.map((o) => o?.end)).toEqual(acknowledged.map(() => null));
    console.log(
      `SIGKILL during ${sessions.length} portal writes: ${acknowledged.length} acknowledged, all ${stored.filter(Boolean).length} found current in the database`,
    );
  });

  it('answers only 200 or 503 while the database restarts under load, every key again once it is back, and keeps every sign-in it acknowledged', async () => {
    const url = await cluster.database('restart');
    const server = await start(url);
    const keys = await Promise.all(Array.from({ length: 40 }, () => cliKey(url)));
    const seen = new Map<number, number>();
    let running = true;
    const load = Array.from({ length: 4 }, async (_, worker) => {
      for (let i = worker; running; i += 4) {
        const status = (await lookup(server, keys[i % keys.length])).status;
        seen.set(status, (seen.get(status) ?? 0) + 1);
      }
    });
    // Portal writes meanwhile: a sign-in is acknowledged (202) only once its token
    // is committed, so each acknowledged link must open a session afterwards.
    const signIns = new Map<number, number>();
    const acknowledged: string[] = [];
    let backAt = 0;
    let ackedAfter = 0;
    const portal = (async () => {
      for (let i = 0; running && i < 400; i++, await sleep(10)) {
        const email = `restart-${i}-${Math.random().toString(36).slice(2, 8)}@example.org`;
        const status = (
          await fetch(`${server.base}/portal/sign-in`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email }),
          })
        ).status;
        signIns.set(status, (signIns.get(status) ?? 0) + 1);
        if (status === 202) acknowledged.push(email);
        if (status === 202 && backAt > 0) ackedAfter++;
      }
    })();
    await sleep(300);
    try {
      await cluster.stop('fast');
      await sleep(1_500);
    } finally {
      await cluster.start();
    }
    for (let i = 0; i < 200 && (await health(server)) !== 200; i++) await sleep(50);
    backAt = Date.now();
    // Until a sign-in is acknowledged again once /health says the database is back (bounded: 5 s).
    for (let i = 0; i < 100 && ackedAfter === 0; i++) await sleep(50);
    running = false;
    await Promise.all([...load, portal]);
    expect([...seen.keys()].sort()).toEqual([200, 503]);
    expect([...signIns.keys()].sort()).toEqual([202, 503]);
    expect(ackedAfter).toBeGreaterThan(0);
    const opened = await Promise.all(
      acknowledged.map(async (email) => {
        const token = tokenIn({ text: mailApi.to(email)[0].body.text ?? '' });
        return (
          await fetch(`${server.base}/portal/session`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ token }),
          })
        ).status;
      }),
    );
    expect(opened).toEqual(acknowledged.map(() => 200));
    const after = await Promise.all(keys.map(async (k) => (await lookup(server, k)).status));
    expect(after).toEqual(keys.map(() => 200));
    console.log(
      `database restarted under load: ${seen.get(200)} lookups answered 200 and ${seen.get(503)} 503, none other; ${acknowledged.length} sign-ins acknowledged (${signIns.get(503)} answered 503), every acknowledged link opened a session afterwards`,
    );
  });
});
