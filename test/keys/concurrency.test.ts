/**
 * Many writers at once against one store, SQLite and PostgreSQL (a
 * throwaway cluster), as the issue's "Done when" asks: a running `npm start`
 * (the real start script) takes 100 portal
 * operations at once (sign-ins read back from a real SMTP server, issues,
 * rotates, revokes) while 20 `npm run keys` processes write to the same
 * database. No answer is a 5xx; every acknowledged revoke is refused by the
 * API within 2 s; every key handed out works until it is rotated or revoked;
 * one active key per address; two rotates of one key at once leave one
 * working key and an owner who can rotate again.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtp, tokenIn, type Smtp } from '../helpers/mail.ts';
import { rawRequest } from '../helpers/http.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { type Started, startServer } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';
import { type PgCluster, startPostgres } from '../helpers/postgres.ts';

const run = promisify(execFile);
let smtp: Smtp;
let server: Started;
let db: string;
/** Where the server and the CLI keep keys: KEYS_DB alone (SQLite), or DATABASE_URL too (PostgreSQL). */
let keysEnv: Record<string, string>;
/** Addresses holding more than one active key, read from the database itself. */
let doubleActive: () => Promise<unknown[]>;
let dist: string;
let cluster: PgCluster | undefined;

beforeAll(async () => {
  smtp = await startSmtp();
  dist = await buildInto(SAMPLE_SOURCE, 'concurrency');
});
afterAll(async () => {
  await smtp?.stop();
  await cluster?.remove();
});

const DOUBLE_ACTIVE =
  'SELECT email, count(*) AS n FROM keys WHERE revoked_at IS NULL GROUP BY email HAVING count(*) > 1';

/** Starts npm start over the store `kind` names; the suite's writes then run against it. */
async function startOn(kind: 'SQLite' | 'PostgreSQL') {
  db = path.join(await tempDir('concurrency'), 'keys.db');
  if (kind === 'SQLite') {
    keysEnv = { KEYS_DB: db };
    doubleActive = async () => {
      const check = new DatabaseSync(db, { readOnly: true });
      try {
        return check.prepare(DOUBLE_ACTIVE).all();
      } finally {
        check.close();
      }
    };
  } else {
    cluster = await startPostgres('concurrency');
    const url = await cluster.database('concurrency');
    keysEnv = { KEYS_DB: db, DATABASE_URL: url };
    doubleActive = async () =>
      (await cluster!.tool('psql', ['-X', '-q', '-t', '-A', '-d', url, '-c', DOUBLE_ACTIVE])).stdout
        .split('\n')
        .filter(Boolean);
  }
  server = await startServer({
    DIST_DIR: dist,
    ...keysEnv,
    SMTP_URL: smtp.url,
    PORTAL_ISSUE_LIMIT_PER_MINUTE: '100000',
    LOG_REQUESTS: '0',
  });
}

const statuses: number[] = [];
async function portal(
  p: string,
  session?: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, string> }> {
  const headers: Record<string, string> = {};
  if (session) headers.authorization = `Bearer ${session}`;
  if (body) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.base}${p}`, {
    method: 'POST',
    headers,
    body: body ? JSON.stringify(body) : undefined,
  });
  statuses.push(response.status);
  return { status: response.status, json: await response.json() };
}

/** Sign-in as a person does it: ask, read the real mail, open the link. */
async function signIn(email: string): Promise<string> {
  const before = smtp.count(email);
  expect((await portal('/portal/sign-in', undefined, { email })).status).toBe(202);
  const opened = await portal('/portal/session', undefined, {
    token: tokenIn(await smtp.mailTo(email, before, 20_000)),
  });
  expect(opened.status).toBe(200);
  return opened.json.session;
}

const api = async (key: string) => (await rawRequest(server.port, 'GET', `/archive/year=1930/apikey=${key}`)).status;
/** Whether the API answers `status` for this key within `ms`, asked every 50 ms. */
async function answersWithin(key: string, status: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await api(key)) === status) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
const refusedWithin = (key: string, ms: number) => answersWithin(key, 403, ms);
const cli = (...args: string[]) =>
  run('npm', ['run', '--silent', 'keys', '--', ...args], { cwd: ROOT, env: { ...process.env, ...keysEnv } });

interface Account {
  email: string;
  session: string;
  key: string | null;
}
async function accounts(tag: string, count: number, withKey: boolean): Promise<Account[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const email = `${tag}${i}@example.org`;
      const session = await signIn(email);
      const key = withKey ? (await portal('/portal/keys', session)).json.apiKey : null;
      return { email, session, key };
    }),
  );
}

describe.each(['SQLite', 'PostgreSQL'] as const)('on %s', (kind) => {
  beforeAll(() => startOn(kind));
  afterAll(async () => {
    await server?.stop();
    statuses.length = 0;
  });
  it(
    'keeps every acknowledged write under 100 portal operations and 20 CLI processes at once',
    { timeout: 240_000 },
    manyWriters,
  );
});

async function manyWriters() {
  const [rotating, revoking, issuing, twice] = [
    await accounts('rot', 20, true),
    await accounts('rev', 20, true),
    await accounts('iss', 20, false),
    await accounts('two', 5, true),
  ];
  const cliRotate = await Promise.all(
    Array.from({ length: 5 }, async (_, i) => (await cli('issue', `clirot${i}@example.org`)).stdout.trim()),
  );
  const cliRevoke = await Promise.all(
    Array.from({ length: 5 }, async (_, i) => (await cli('issue', `clirev${i}@example.org`)).stdout.trim()),
  );
  statuses.length = 0;

  const newcomers: { email: string; key?: string }[] = Array.from({ length: 20 }, (_, i) => ({
    email: `new${i}@example.org`,
  }));
  const results = {
    rotated: new Map<string, string>(),
    /** For each acknowledged revoke, from its answer on: refused within 2 s? */
    revoked: [] as Promise<boolean>[],
    issued: new Map<string, string[]>(),
    twice: new Map<string, string[]>(),
  };
  const portalOps: Promise<unknown>[] = [
    ...newcomers.map(async (n) => {
      // 20 sign-ins (with their mail) and issues
      n.key = (await portal('/portal/keys', await signIn(n.email))).json.apiKey;
    }),
    ...rotating.map(async (a) =>
      results.rotated.set(a.email, (await portal('/portal/keys/rotate', a.session)).json.apiKey),
    ),
    ...revoking.map(async (a) => {
      if ((await portal('/portal/keys/revoke', a.session)).status === 200)
        results.revoked.push(refusedWithin(a.key!, 2000));
    }),
    ...[...issuing, ...issuing.slice(0, 10)].map(async (a) => {
      const out = await portal('/portal/keys', a.session);
      if (out.status === 201) results.issued.set(a.email, [...(results.issued.get(a.email) ?? []), out.json.apiKey]);
    }),
    ...[...twice, ...twice].map(async (a) => {
      const out = await portal('/portal/keys/rotate', a.session);
      if (out.status === 200) results.twice.set(a.email, [...(results.twice.get(a.email) ?? []), out.json.apiKey]);
    }),
  ];
  expect(portalOps).toHaveLength(100);
  const cliOps = [
    ...Array.from({ length: 10 }, (_, i) =>
      cli('issue', `cli${i}@example.org`).then((r) => ({
        op: 'issue',
        email: `cli${i}@example.org`,
        key: r.stdout.trim(),
      })),
    ),
    ...cliRotate.map((key) => cli('rotate', key).then((r) => ({ op: 'rotate', old: key, key: r.stdout.trim() }))),
    ...cliRevoke.map((key) =>
      cli('revoke', key).then(
        () => (results.revoked.push(refusedWithin(key, 2000)), { op: 'revoke', old: key, key: '' }),
      ),
    ),
  ];
  expect(cliOps).toHaveLength(20);
  const [, cliDone] = await Promise.all([Promise.all(portalOps), Promise.all(cliOps)]);

  expect(statuses.filter((s) => s >= 500)).toEqual([]);
  expect(statuses).toHaveLength(100 + 40); // the newcomers' sign-in and session are two requests each

  // Every acknowledged revoke is refused by the API within 2 s of its answer.
  expect(await Promise.all(results.revoked)).toEqual(new Array(25).fill(true));
  // Every key handed out works until it is rotated or revoked; the rotated-away ones do not.
  for (const n of newcomers) expect(await api(n.key!)).toBe(200);
  for (const a of rotating) expect([await api(a.key!), await api(results.rotated.get(a.email)!)]).toEqual([403, 200]);
  for (const a of issuing) {
    const got = results.issued.get(a.email)!;
    expect(got).toHaveLength(1); // of two issues at once for one address, one 201
    expect(await api(got[0])).toBe(200);
  }
  // The CLI is another process: the server sees its writes within a second (README), not on the very next request.
  for (const c of cliDone.filter((c) => c.op !== 'revoke') as { key: string; old?: string }[]) {
    expect(await answersWithin(c.key, 200, 1000)).toBe(true);
    if (c.old) expect(await answersWithin(c.old, 403, 1000)).toBe(true);
  }
  // Two rotates at once: one working key, held by the owner, who can rotate again.
  for (const a of twice) {
    const handed = results.twice.get(a.email)!;
    const working = [];
    for (const k of [a.key!, ...handed]) if ((await api(k)) === 200) working.push(k);
    expect(working).toHaveLength(1);
    expect(handed).toContain(working[0]);
    const again = (await portal('/portal/keys/rotate', a.session)).json.apiKey;
    expect([await api(working[0]), await api(again)]).toEqual([403, 200]);
  }
  // One active key per address, in the database itself.
  expect(await doubleActive()).toEqual([]);
}
