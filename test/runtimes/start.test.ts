/**
 * `npm start` as a new user meets it on a fresh clone: a build on first start
 * (the sample: no ARCHIVE_SOURCE, no data/cache/), a development key kept in a
 * file and never printed, example URLs that work (its own and the README's),
 * an access log without keys, sign-in mail on the console; in production
 * mode none of those: no development key, no outbox, a sign-in that says mail
 * is not set up (or mails through the transport it is given); and a key database
 * it cannot read, a numeric setting that is not a whole number, or a port
 * already taken, stops it with one line, the database left alone. Production
 * mode revokes a development key an earlier start left. And as a supervisor
 * runs it (docs/deploy.md's systemd unit): the npm process signalled, or
 * killed outright, takes the server with it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { startMailApi } from '../helpers/mail.ts';
import { eventually, rawRequest } from '../helpers/http.ts';
import { startServer } from '../helpers/processes.ts';
import { cleanCopy, tempDir } from '../helpers/temp.ts';
import { freeLoopbackPort } from '../../lib/ports.ts';

let clone: string;
/** The first test's settings, its dist/ built: later tests start without building again. */
let built: Record<string, string> | undefined;
beforeAll(async () => {
  clone = await cleanCopy('start-clone');
});

it('builds when dist is missing, makes a development key and prints three example URLs that work, never the key', async () => {
  const dir = await tempDir('start');
  const env = { DIST_DIR: path.join(dir, 'dist'), KEYS_DB: path.join(dir, 'keys.db') };
  const first = await startServer(env, { cwd: clone, ready: 'curl ' });
  try {
    await new Promise((r) => setTimeout(r, 100));
    const out = first.output();
    expect(out).toContain('building: dist/ is missing');
    expect(out).toContain('SMALL SAMPLE');
    expect(out).toContain('no MAIL_API_URL or SMTP_URL: mails are printed here');
    const key = readFileSync(path.join(dir, 'dev-key.txt'), 'utf8').trim();
    expect(key).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    expect(out).not.toContain(key);
    expect(out).toContain(`development key: ${key.slice(0, 12)}…`);
    const urls = [...out.matchAll(/curl "(http:\/\/127\.0\.0\.1:\d+(\/[^"]+))"/g)].map((m) => m[2]);
    expect(urls).toHaveLength(3);
    for (const u of urls) {
      expect(u).toMatch(/apikey=\$\(cat .*dev-key\.txt\)$/);
      expect((await rawRequest(first.port, 'GET', u.replace(/\$\(cat [^)]+\)/, key))).status).toBe(200);
    }
    // The README's Quick start examples answer on the same default data.
    const quickStart = readFileSync(path.join(clone, 'README.md'), 'utf8').split('\n## ')[1];
    const documented = [
      ...quickStart.matchAll(/curl "http:\/\/127\.0\.0\.1:8888(\/[^"]+)\/apikey=\$\(cat data\/dev-key\.txt\)"/g),
    ].map((m) => m[1]);
    expect(documented.length).toBeGreaterThanOrEqual(3);
    for (const u of documented)
      expect({ u, status: (await rawRequest(first.port, 'GET', `${u}/apikey=${key}`)).status }).toEqual({
        u,
        status: 200,
      });
  } finally {
    await first.stop();
  }
  // The access log (pino's JSON lines) has every request, never the whole key.
  const lines = first
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  const access = lines.map((l) => JSON.parse(l).msg as string).filter((m) => m.startsWith('GET '));
  expect(access.length).toBeGreaterThanOrEqual(6);
  for (const line of access) expect(line).toMatch(/^GET \/\S+apikey=faa_[A-Za-z0-9_-]{8}\.\.\. 200 \d+ms$/);

  built = env;
  const second = await startServer(env, { cwd: clone, ready: 'curl ' });
  try {
    expect(second.output()).not.toContain('building:');
    expect(second.output()).not.toContain('made a development key');
    // Without SMTP_URL a sign-in mail lands on the console and in data/mail/ (here: beside KEYS_DB).
    const response = await fetch(`${second.base}/portal/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":"dev@example.org"}',
    });
    expect(response.status).toBe(202);
    await new Promise((r) => setTimeout(r, 200));
    expect(second.output()).toMatch(
      /--- mail \(no MAIL_API_URL or SMTP_URL set; also in .*mail.*\) ---\nFrom: .*\nTo: dev@example\.org\n[\s\S]*\/portal#token=fat_/,
    );
    expect(existsSync(path.join(dir, 'mail'))).toBe(true);
    expect(readdirSync(path.join(dir, 'mail'))).toHaveLength(1);
  } finally {
    await second.stop();
  }
});

it('stops with one clear line, not a stack, when its port is taken', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as { port: number };
  try {
    const env = built ?? {
      DIST_DIR: path.join(await tempDir('start-port'), 'dist'),
      KEYS_DB: path.join(await tempDir('start-port'), 'keys.db'),
    };
    const refusal = startServer({ ...env, PORT: String(port) }, { cwd: clone });
    await expect(refusal).rejects.toThrow(
      new RegExp(
        `exited 1:[\\s\\S]*\\nnpm start: 127\\.0\\.0\\.1:${port} is in use: stop what holds it, or set PORT to another\\n$`,
      ),
    );
    await expect(refusal).rejects.not.toThrow('Unhandled');
  } finally {
    holder.close();
  }
});

it('stops with one clear line, and leaves the file alone, when KEYS_DB is not a key database', async () => {
  const dir = await tempDir('start-bad-db');
  const file = path.join(dir, 'keys.db');
  writeFileSync(file, 'not a database'.repeat(100));
  await expect(startServer({ DIST_DIR: path.join(dir, 'dist'), KEYS_DB: file }, { cwd: clone })).rejects.toThrow(
    /exited 1:[\s\S]*Cannot use the key database .*keys\.db: file is not a database/,
  );
  expect(readFileSync(file, 'utf8')).toBe('not a database'.repeat(100));
});

it('stops with one line and exit 2, before building anything, when CACHE_PURGE_URL is malformed', async () => {
  const dir = await tempDir('start-bad-purge-url');
  const env = {
    DIST_DIR: path.join(dir, 'dist'),
    KEYS_DB: path.join(dir, 'keys.db'),
    CACHE_PURGE_URL: 'http://purger:hunter22@',
  };
  const refusal = startServer(env, { cwd: clone });
  await expect(refusal).rejects.toThrow(/exited 2:\nnpm start: CACHE_PURGE_URL [^\n]*\n$/);
  await expect(refusal).rejects.not.toThrow('hunter22');
  expect(existsSync(path.join(dir, 'dist'))).toBe(false);
});

it('stops with one clear line, before building anything, when a numeric setting is not a whole number', async () => {
  const dir = await tempDir('start-bad-setting');
  for (const [name, value, range] of [
    ['RATE_LIMIT_PER_MINUTE', 'abc', 'from 1 and up'],
    ['PORTAL_ISSUE_LIMIT_PER_MINUTE', '0', 'from 1 and up'],
    ['PORT', '0', 'from 1 to 65535'],
  ]) {
    const env = { DIST_DIR: path.join(dir, 'dist'), KEYS_DB: path.join(dir, 'keys.db'), [name]: value };
    await expect(startServer(env, { cwd: clone })).rejects.toThrow(
      `exited 1:\nnpm start: Expected ${name} to be a whole number ${range}, got "${value}"\n`,
    );
  }
  expect(existsSync(path.join(dir, 'dist'))).toBe(false);
  expect(existsSync(path.join(dir, 'keys.db'))).toBe(false);
});

it('in production mode (NODE_ENV=production) makes no development key and prints no mail; sign-in says mail is not set up', async () => {
  const dir = await tempDir('start-production');
  const env = {
    DIST_DIR: built?.DIST_DIR ?? path.join(dir, 'dist'),
    KEYS_DB: path.join(dir, 'keys.db'),
    NODE_ENV: 'production',
  };
  const server = await startServer(env, { cwd: clone, ready: 'keys: ' });
  try {
    const out = server.output();
    expect(out).toContain('[production mode]');
    expect(out).toContain(
      'mail: none (production mode, no MAIL_API_URL or SMTP_URL): sign-in answers 503 until one is set',
    );
    expect(out).not.toContain('development key');
    expect(existsSync(path.join(dir, 'dev-key.txt'))).toBe(false);
    const response = await fetch(`${server.base}/portal/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":"owner@example.org"}',
    });
    expect(response.status).toBe(503);
    expect((await response.json()).error).toMatch(/^Sign-in by e-mail is not set up on this server/);
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).not.toContain('--- mail');
    expect(existsSync(path.join(dir, 'mail'))).toBe(false);
  } finally {
    await server.stop();
  }
});

it('in production mode refuses the development key an earlier start left in the database, and says so once', async () => {
  const dir = await tempDir('start-production-dev-key');
  const env = { DIST_DIR: built?.DIST_DIR ?? path.join(dir, 'dist'), KEYS_DB: path.join(dir, 'keys.db') };
  const development = await startServer(env, { cwd: clone, ready: 'curl ' });
  const devKey = readFileSync(path.join(dir, 'dev-key.txt'), 'utf8').trim();
  let other: string;
  try {
    expect((await rawRequest(development.port, 'GET', `/archive/year=1929/apikey=${devKey}`)).status).toBe(200);
    other = execFileSync(process.execPath, ['cli/keys.ts', 'issue', 'owner@example.org'], {
      cwd: clone,
      env: { ...process.env, KEYS_DB: env.KEYS_DB },
    })
      .toString()
      .trim();
  } finally {
    await development.stop();
  }
  const production = await startServer({ ...env, NODE_ENV: 'production' }, { cwd: clone, ready: 'keys: ' });
  try {
    expect(production.output()).toContain(
      `production mode: revoked the development key ${devKey.slice(0, 12)}… (dev@localhost.localdomain) an earlier development start made; it is refused from now on`,
    );
    expect(production.output()).not.toContain(devKey);
    expect((await rawRequest(production.port, 'GET', `/archive/year=1929/apikey=${devKey}`)).status).toBe(403);
    expect((await rawRequest(production.port, 'GET', `/archive/year=1929/apikey=${other}`)).status).toBe(200);
  } finally {
    await production.stop();
  }
  const again = await startServer({ ...env, NODE_ENV: 'production' }, { cwd: clone, ready: 'keys: ' });
  try {
    expect(again.output()).not.toContain('development key');
    expect((await rawRequest(again.port, 'GET', `/archive/year=1929/apikey=${devKey}`)).status).toBe(403);
  } finally {
    await again.stop();
  }
});

it('in production mode mails sign-in links through MAIL_API_URL', async () => {
  const dir = await tempDir('start-production-mail');
  const mail = await startMailApi();
  const env = {
    DIST_DIR: built?.DIST_DIR ?? path.join(dir, 'dist'),
    KEYS_DB: path.join(dir, 'keys.db'),
    MAIL_API_URL: mail.url,
    MAIL_API_TOKEN: 'token-for-tests',
  };
  const server = await startServer(env, { cwd: clone, ready: 'keys: ', args: ['--production'] });
  try {
    expect(server.output()).toContain('[production mode]');
    const response = await fetch(`${server.base}/portal/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":"owner@example.org"}',
    });
    expect(response.status).toBe(202);
    expect(mail.to('owner@example.org')).toHaveLength(1);
    expect(mail.to('owner@example.org')[0].body.text).toMatch(/\/portal#token=fat_/);
    expect(server.output()).not.toContain('fat_');
  } finally {
    await server.stop();
    await mail.stop();
  }
});

/** The systemd unit docs/deploy.md gives (an indented block from `[Unit]`), as section -> key -> values. */
function documentedUnit(): Map<string, Map<string, string[]>> {
  const doc = readFileSync(path.join(clone, 'docs/deploy.md'), 'utf8');
  const block = /\n {4}\[Unit\]\n((?: {4}.*\n|\n)+)/.exec(doc);
  if (!block) throw new Error('docs/deploy.md gives no systemd unit (an indented block starting [Unit])');
  const unit = new Map<string, Map<string, string[]>>();
  let section = unit.set('Unit', new Map()).get('Unit')!;
  for (const line of block[1].split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) section = unit.set(header[1], new Map()).get(header[1])!;
    else {
      const [key, ...rest] = line.split('=');
      section.set(key, [...(section.get(key) ?? []), rest.join('=')]);
    }
  }
  return unit;
}

/** The pids of `pid`'s children, and theirs. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)])
      .toString()
      .split('\n')
      .filter((l) => l.trim())
      .map(Number);
  } catch {
    // ps exits 1 when there is none.
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return (
      execFileSync('ps', ['-o', 'stat=', '-p', String(pid)])
        .toString()
        .trim()[0] !== 'Z'
    );
  } catch {
    return false;
  }
};

it("docs/deploy.md's systemd unit runs npm start as package.json has it, signals npm alone, and gives the stop its time", () => {
  const unit = documentedUnit();
  const service = unit.get('Service')!;
  const scripts = JSON.parse(readFileSync(path.join(clone, 'package.json'), 'utf8')).scripts;
  expect(service.get('ExecStart')).toHaveLength(1);
  const [program, ...args] = service.get('ExecStart')![0].split(/\s+/);
  expect([path.isAbsolute(program), path.basename(program), args]).toEqual([true, 'npm', ['start']]);
  expect(scripts.start).toMatch(/^(exec )?node cli\/start\.ts$/);
  expect(path.isAbsolute(service.get('WorkingDirectory')![0])).toBe(true);
  expect(service.get('Environment')).toContain('NODE_ENV=production');
  // Only npm is signalled (KillMode=mixed): npm start itself must take the server down, as any supervisor needs.
  expect(service.get('KillMode')).toEqual(['mixed']);
  expect(service.get('KillSignal') ?? ['SIGTERM']).toEqual(['SIGTERM']);
  expect(Number(service.get('TimeoutStopSec')![0])).toBeGreaterThanOrEqual(5);
  expect(unit.get('Install')!.get('WantedBy')).toEqual(['multi-user.target']);
});

it.each(['SIGTERM', 'SIGINT', 'SIGKILL'] as const)(
  'stops, server and all, when the npm start process a supervisor holds gets %s',
  async (signal) => {
    const [program, ...args] = documentedUnit().get('Service')!.get('ExecStart')![0].split(/\s+/);
    const dir = await tempDir('start-signal');
    const port = await freeLoopbackPort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DIST_DIR: built?.DIST_DIR ?? path.join(dir, 'dist'),
      KEYS_DB: path.join(dir, 'keys.db'),
      PORT: String(port),
      LOG_REQUESTS: '0',
    };
    delete env.ARCHIVE_SOURCE;
    // As systemd or a container runtime starts it: npm is the process it holds and signals.
    const npm = spawn(program, args, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npm.stdout!.on('data', (c: Buffer) => (output += c));
    npm.stderr!.on('data', (c: Buffer) => (output += c));
    const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    let started: number[] = [];
    try {
      expect(await eventually(async () => output.includes('key portal:'), 90_000, 100)).toBe(true);
      expect((await rawRequest(port, 'GET', '/health')).status).toBe(200);
      started = descendants(npm.pid!);
      expect(started.length).toBeGreaterThan(0);
      npm.kill(signal);
      // npm waits for its script to end: an npm still there after 10 s is the failure, said below.
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      expect({ npmExited: npm.exitCode !== null || npm.signalCode !== null }).toEqual({ npmExited: true });
      const closed = async () =>
        rawRequest(port, 'GET', '/health').then(
          () => false,
          () => true,
        );
      expect(await eventually(closed, 10_000, 100)).toBe(true);
      expect(await eventually(async () => started.every((pid) => !alive(pid)), 10_000, 100)).toBe(true);
    } finally {
      for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL');
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    }
  },
);
