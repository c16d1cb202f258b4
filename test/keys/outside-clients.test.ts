/**
 * The key database while other SQLite clients use the same file as npm start
 * serves: the `sqlite3 … ".backup"` docs/keys.md recommends, a second reader
 * opening and closing it, the keys CLI, the portal, `/health` polled. POSIX
 * locks belong to a process, and closing any descriptor of a file drops all
 * of that process's locks on it; a server that opened the file outside SQLite
 * (for `/health`) lost them, and the next client to close the file took it for
 * the last user and deleted the server's -wal and -shm: later writes then went
 * where the server never looked. Here every acknowledged write is kept, a CLI
 * revoke is refused within a second, and a restart opens the file clean.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/keys/secrets.ts';
import { eventually, rawRequest } from '../helpers/http.ts';
import { keyThroughPortal } from '../helpers/keys.ts';
import { startMailApi } from '../helpers/mail.ts';
import { ROOT, SAMPLE_SOURCE } from '../helpers/paths.ts';
import { startServer, type Started } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

const run = promisify(execFile);
let dist: string;
beforeAll(async () => {
  dist = await buildInto(SAMPLE_SOURCE, 'outside-clients');
});

/** `keys` as a process (the script npm runs); its exit code and stdout. */
async function keysCommand(db: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ['cli/keys.ts', ...args], { cwd: ROOT, env: { ...process.env, KEYS_DB: db } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

/** The status of a lookup with `key`. */
const ask = async (server: Started, key: string) =>
  (await rawRequest(server.port, 'GET', `/archive/year=1929/apikey=${key}`)).status;

/** Whether the server refuses `key` (403) within a second of now: polled, never timed. */
const refusedWithinASecond = (server: Started, key: string) =>
  eventually(async () => (await ask(server, key)) === 403, 1_000, 25);

/** docs/keys.md's backup command, as written there (`sqlite3 data/keys.db ".backup keys-backup.db"`). */
function backupRecipe(): string {
  const doc = readFileSync(path.join(ROOT, 'docs/keys.md'), 'utf8');
  const found = /`(sqlite3 data\/keys\.db "\.backup [^"`]+")`/.exec(doc);
  if (!found) throw new Error('docs/keys.md gives no `sqlite3 data/keys.db ".backup …"` command');
  return found[1];
}

/** `PRAGMA integrity_check` of a file, as another process sees it. */
async function integrity(file: string): Promise<string> {
  return (await run('sqlite3', [file, 'PRAGMA integrity_check'])).stdout.trim();
}

/**
 * A second process that opens the file, reads the keys and closes
 * it, again and again, until stopped; how many rounds it made.
 */
function openerLoop(db: string): { child: ChildProcess; stop(): Promise<number> } {
  const script = `const { DatabaseSync } = require('node:sqlite'); let n = 0, go = true; process.stdin.on('data', () => (go = false));
    const round = () => { if (!go) { console.log(n); process.exit(0); } const d = new DatabaseSync(process.argv[1], { readOnly: true, timeout: 5000 }); d.prepare('SELECT count(*) FROM keys').get(); d.close(); n++; setTimeout(round, 2); };
    round();`;
  const child = spawn(process.execPath, ['-e', script, db], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, stop: async () => (child.stdin!.write('stop\n'), await exited, Number(out.trim())) };
}

describe('a key database other SQLite clients use while npm start serves', () => {
  it("keeps the server's view after /health and docs/keys.md's backup: a CLI revoke is refused, a CLI key works", async () => {
    // The recipe runs as written, in a folder whose data/keys.db is the server's.
    const dir = await tempDir('backup-recipe');
    await mkdir(path.join(dir, 'data'));
    const db = path.join(dir, 'data/keys.db');
    const server = await startServer({ DIST_DIR: dist, KEYS_DB: db, LOG_REQUESTS: '0' });
    try {
      const issued = await keysCommand(db, ['issue', 'backup@example.org']);
      expect(issued.code).toBe(0);
      const key = issued.stdout.trim();
      expect(await eventually(async () => (await ask(server, key)) === 200, 1_000, 25)).toBe(true);
      expect((await rawRequest(server.port, 'GET', '/health')).status).toBe(200);
      await run('sh', ['-c', backupRecipe()], { cwd: dir });
      expect(await integrity(path.join(dir, 'keys-backup.db'))).toBe('ok');
      const backup = new DatabaseSync(path.join(dir, 'keys-backup.db'), { readOnly: true });
      expect(backup.prepare('SELECT revoked_at FROM keys WHERE hash = ?').get(hashSecret(key))).toEqual({
        revoked_at: null,
      });
      backup.close();

      expect((await keysCommand(db, ['revoke', key])).code).toBe(0);
      expect(await refusedWithinASecond(server, key)).toBe(true);
      const next = (await keysCommand(db, ['issue', 'backup-2@example.org'])).stdout.trim();
      expect(await eventually(async () => (await ask(server, next)) === 200, 1_000, 25)).toBe(true);
    } finally {
      await server.stop();
    }
    expect(await integrity(db)).toBe('ok');
  });

  it('keeps every acknowledged portal and CLI write while /health, sqlite3 .backup and a second reader use the file, and restarts clean', async () => {
    const dir = await tempDir('outside-clients');
    const db = path.join(dir, 'keys.db');
    const mail = await startMailApi();
    const env = {
      DIST_DIR: dist,
      KEYS_DB: db,
      LOG_REQUESTS: '0',
      MAIL_API_URL: mail.url,
      MAIL_API_TOKEN: 'token-for-tests',
      PORTAL_ISSUE_LIMIT_PER_MINUTE: '1000',
    };
    let server = await startServer(env);
    let writing = true;
    const health: number[] = [];
    let backups = 0;
    const backupErrors: string[] = [];
    const reader = openerLoop(db);
    /** Live keys acknowledged (201 from the portal, exit 0 from the CLI), and keys revoked by the CLI. */
    const live: string[] = [];
    const revoked: string[] = [];
    const lateRevokes: string[] = [];
    try {
      const pollHealth = async () => {
        while (writing) {
          health.push((await rawRequest(server.port, 'GET', '/health')).status);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      const backUp = async () => {
        while (writing) {
          // A failed backup is noted, not thrown: the writes go on, and the checks below say what else went wrong.
          await run('sqlite3', [db, `.backup ${path.join(dir, `b${backups % 2}.db`)}`]).then(
            () => backups++,
            (error: { stderr: string }) => backupErrors.push(error.stderr.trim()),
          );
        }
      };
      const portalWrites = async () => {
        for (let i = 0; i < 6; i++) live.push((await keyThroughPortal(server.base, mail)).key);
      };
      const cliWrites = async () => {
        for (let i = 0; i < 6; i++) {
          const issued = await keysCommand(db, ['issue', `cli-${i}@example.org`]);
          expect(issued.code).toBe(0);
          const key = issued.stdout.trim();
          if (i % 2 === 0) {
            live.push(key);
            continue;
          }
          expect((await keysCommand(db, ['revoke', key])).code).toBe(0);
          revoked.push(key);
          if (!(await refusedWithinASecond(server, key))) lateRevokes.push(key);
        }
      };
      const writes = Promise.all([portalWrites(), cliWrites()]).finally(() => (writing = false));
      await Promise.all([writes, pollHealth(), backUp()]);
      expect(lateRevokes).toEqual([]);
      expect(backupErrors).toEqual([]);
      expect(backups).toBeGreaterThan(0);
      expect(health.length).toBeGreaterThan(0);
      expect(health.filter((s) => s !== 200)).toEqual([]);
      for (const key of live)
        expect(await eventually(async () => (await ask(server, key)) === 200, 1_000, 25)).toBe(true);
    } finally {
      const rounds = await reader.stop();
      expect(rounds).toBeGreaterThan(0);
      await server.stop();
      await mail.stop();
    }

    // Stopped: the file alone is the truth. It is whole, and holds every acknowledged write.
    expect(await integrity(db)).toBe('ok');
    const file = new DatabaseSync(db, { readOnly: true });
    const state = (key: string) =>
      file.prepare('SELECT revoked_at IS NULL AS current FROM keys WHERE hash = ?').get(hashSecret(key));
    for (const key of live) expect(state(key)).toEqual({ current: 1 });
    for (const key of revoked) expect(state(key)).toEqual({ current: 0 });
    file.close();

    server = await startServer(env);
    try {
      for (const key of live) expect(await ask(server, key)).toBe(200);
      for (const key of revoked) expect(await ask(server, key)).toBe(403);
      expect((await rawRequest(server.port, 'GET', '/health')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
