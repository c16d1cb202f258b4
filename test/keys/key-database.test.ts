/**
 * The SQLite key database when something around it goes wrong, on real
 * processes: busy (a second process holds the write lock: waited for, then
 * called busy, never damaged; `keys` exits 75, the portal answers 503 with
 * Retry-After), read-only (called read-only), damaged before start (PRAGMA
 * quick_check refuses it: npm start and `keys` stop with one line) and damaged
 * while serving (logged as an error; key checks and the portal refuse; the
 * process keeps serving, its polling timer included).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { rawRequest } from '../helpers/http.ts';
import { makeKeys, storeKeys } from '../helpers/keys.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { startServer } from '../helpers/processes.ts';
import { portalFront } from '../helpers/servers.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

const run = promisify(execFile);
let dist: string;
beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'keydb');
});

/**
 * How a command is run: as it is, or with `readOnly` mounted read-only for it
 * alone (a bind mount in a mount namespace of its own). Root writes whatever
 * the permissions say, so for root that is how a database it may not write
 * is made, without needing another user to reach the checkout.
 */
const command = (file: string, args: string[], readOnly?: string): [string, string[]] =>
  readOnly
    ? [
        'unshare',
        [
          '-m',
          'sh',
          '-c',
          'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"',
          readOnly,
          file,
          ...args,
        ],
      ]
    : [file, args];

/**
 * `keys` as a process (node, the same script npm runs), with
 * `readOnly` mounted read-only when given; its exit code and output.
 */
async function keysCommand(
  db: string,
  args: string[],
  readOnly?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(...command(process.execPath, ['cli/keys.ts', ...args], readOnly), {
    cwd: ROOT,
    env: { ...process.env, KEYS_DB: db },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

/** npm start over `db` until it exits (it is expected to refuse): its exit code and stderr. */
function startRefused(db: string, readOnly?: string): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DIST_DIR: dist,
    KEYS_DB: db,
    PORT: String(20_000 + Math.floor(Math.random() * 12_000)),
  };
  delete env.ARCHIVE_SOURCE;
  const child = spawn(...command(process.execPath, ['cli/start.ts'], readOnly), {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  return new Promise((resolve) => child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stderr }))));
}

/** A second process that opens `db` and holds its write lock (BEGIN IMMEDIATE) until stopped. */
async function holdLock(db: string): Promise<{ child: ChildProcess; release(): Promise<void> }> {
  const script = `const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(process.argv[1]); db.exec('BEGIN IMMEDIATE'); console.log('locked'); process.stdin.on('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script, db], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return {
    child,
    release: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.stdin!.write('go\n'))),
  };
}

/** A key database with `count` keys and a few sign-in tokens, checkpointed so every page is in the main file. */
async function filledDb(tag: string, count = 3000): Promise<{ file: string; keys: string[] }> {
  const file = path.join(await tempDir(tag), 'keys.db');
  const { keys, records } = makeKeys(count, tag);
  storeKeys(file, records);
  const backend = new SqliteKeyBackend(file, { view: false });
  const store = new Keys(backend);
  for (let i = 0; i < 200; i++) await store.signIn(`t${i}@example.org`);
  backend.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  backend.close();
  return { file, keys };
}

/** The root page number of a table or index. */
function rootPage(file: string, name: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  const { rootpage } = db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(name) as {
    rootpage: number;
  };
  db.close();
  return Number(rootpage);
}

/** Writes `bytes` over page `page` (numbered from 1) of the file, as a failing disk or a stray write would. */
function overwritePage(file: string, page: number, bytes: Buffer): void {
  const content = readFileSync(file);
  const size = content.readUInt16BE(16) === 1 ? 65536 : content.readUInt16BE(16);
  bytes.copy(content, (page - 1) * size, 0, Math.min(bytes.length, size));
  writeFileSync(file, content);
}

const garbage = Buffer.alloc(4096, 0x5a);
/** A well-formed empty leaf page of an index: the index then holds nothing, and says nothing is wrong with its page. */
const emptyIndexPage = () => {
  const page = Buffer.alloc(4096);
  page[0] = 0x0a;
  page.writeUInt16BE(4096, 5);
  return page;
};

describe('a key database another process holds locked', () => {
  it('is waited for and then called busy: keys exits 75 and npm start too, while keys list still reads it', async () => {
    const { file } = await filledDb('busy', 10);
    // A database with no key yet: npm start's first start must write a development key into it.
    const { file: fresh } = await filledDb('busy-fresh', 0);
    const holder = await holdLock(file);
    const freshHolder = await holdLock(fresh);
    try {
      const [issue, start, list] = await Promise.all([
        keysCommand(file, ['issue', 'busy@example.org']),
        startRefused(fresh),
        keysCommand(file, ['list']),
      ]);
      expect(issue.code).toBe(75);
      expect(issue.stderr).toMatch(
        /^keys: another process holds the key database; try again \(.*keys\.db was waited for 10 s; nothing is wrong with it\)\n$/,
      );
      expect(start.code).toBe(75); // its first start wants a development key, which it cannot write
      expect(start.stderr).toContain('npm start: another process holds the key database; try again');
      for (const out of [issue.stderr, start.stderr]) expect(out).not.toMatch(/damaged|backup|move it away/);
      expect(list.code).toBe(0);
      expect(list.stdout.split('\n').filter(Boolean)).toHaveLength(10);
    } finally {
      await Promise.all([holder.release(), freshHolder.release()]);
    }
    expect((await keysCommand(file, ['issue', 'busy@example.org'])).code).toBe(0);
  });

  it('makes the portal answer 503 with Retry-After, and sign-in works again once the lock is let go', async () => {
    const { file } = await filledDb('busy-portal', 10);
    const backend = new SqliteKeyBackend(file, { lockWaitMs: 500 });
    const portal = portalFront({
      keys: new Keys(backend),
      sendMail: async () => {},
      publicBaseUrl: 'https://api.example.org',
      issueLimitPerMinute: 100,
    });
    const signIn = () =>
      portal.handle(
        new Request('https://api.example.org/portal/sign-in', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"email":"owner@example.org"}',
        }),
        '203.0.113.9',
      );
    const holder = await holdLock(file);
    try {
      const refused = await signIn();
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toEqual({ error: 'Key service unavailable: try again in a minute' });
    } finally {
      await holder.release();
    }
    expect((await signIn()).status).toBe(202);
    backend.close();
  });
});

describe('a key database the server may not write', () => {
  it('is called read-only, by npm start and by keys, and left as it was', async () => {
    const { file } = await filledDb('read-only', 10);
    const dir = path.dirname(file);
    // Root writes whatever the permissions say: for root the folder
    // is mounted read-only instead (EROFS rather than EACCES).
    const readOnly = process.getuid?.() === 0 ? dir : undefined;
    for (const entry of readdirSync(dir)) chmodSync(path.join(dir, entry), 0o444);
    chmodSync(dir, 0o555);
    const before = readFileSync(file);
    try {
      const [issue, start] = await Promise.all([
        keysCommand(file, ['issue', 'ro@example.org'], readOnly),
        startRefused(file, readOnly),
      ]);
      const said =
        /the key database .*keys\.db is read-only: (a read-only file system|no permission to write (it|its folder)) \(E\w+\)\. Nothing was written/;
      expect(issue.code).toBe(1);
      expect(issue.stderr).toMatch(said);
      expect(start.code).toBe(1);
      expect(start.stderr).toMatch(said);
      for (const out of [issue.stderr, start.stderr]) expect(out).not.toMatch(/damaged|backup|locked/);
      expect(readFileSync(file).equals(before)).toBe(true);
    } finally {
      chmodSync(dir, 0o755);
    }
  });
});

describe('a key database damaged before the server starts', () => {
  it('is refused by npm start and keys when garbage fills a page of its tokens, and left as it was', async () => {
    const { file } = await filledDb('damaged-tokens');
    overwritePage(file, rootPage(file, 'tokens'), garbage);
    const before = readFileSync(file);
    const [start, list] = await Promise.all([startRefused(file), keysCommand(file, ['list'])]);
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(
      /^npm start: Cannot use the key database .*keys\.db: it is damaged \(PRAGMA quick_check: .+\)\. .*Restore it from a backup/m,
    );
    expect(list.code).toBe(1);
    expect(list.stderr).toMatch(/^keys: Cannot use the key database .*: it is damaged \(PRAGMA quick_check/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('is refused when the index that keeps one active key per address was emptied', async () => {
    const { file } = await filledDb('damaged-index', 20);
    overwritePage(file, rootPage(file, 'keys_one_active'), emptyIndexPage());
    const start = await startRefused(file);
    expect(start.code).toBe(1);
    expect(start.stderr).toMatch(/it is damaged \(PRAGMA quick_check: .*\)/);
  });
});

describe('a key database damaged while npm start serves', () => {
  it('is logged as an error; key checks answer 500 and the portal 503; the process, its polling timer included, keeps serving', async () => {
    const { file, keys } = await filledDb('damaged-later');
    const server = await startServer({ DIST_DIR: dist, KEYS_DB: file });
    try {
      const ask = () => rawRequest(server.port, 'GET', `/archive/year=1929/apikey=${keys[0]}`);
      expect((await ask()).status).toBe(200);
      // Damage lands on the change index the server's 250 ms poll reads; a write elsewhere makes it look.
      overwritePage(file, rootPage(file, 'keys_seq'), garbage);
      const writer = new DatabaseSync(file);
      writer.exec("INSERT INTO meta (name, value) VALUES ('poke', 'x')");
      writer.close();
      await new Promise((r) => setTimeout(r, 1500));
      expect(server.child.exitCode).toBeNull();
      expect((await ask()).status).toBe(500);
      const signIn = await fetch(`${server.base}/portal/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":"a@example.org"}',
      });
      expect(signIn.status).toBe(503);
      expect(signIn.headers.get('retry-after')).not.toBeNull();
      expect((await rawRequest(server.port, 'GET', '/openapi.json')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 200));
      const errors = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.level === 'error');
      expect(errors.map((e) => e.msg)).toEqual([
        expect.stringMatching(
          /^key database damaged: Cannot use the key database .*keys\.db: it was found damaged while running \(/,
        ),
      ]);
    } finally {
      await server.stop();
    }
    expect(statSync(file).size).toBeGreaterThan(0);
  });
});
