/**
 * The tests' general helpers (beside them in test/helpers/, each for one
 * concern: mail.ts, blobs.ts, random.ts; the suites sit with their tests:
 * api/behaviour.ts, api/conformance.ts, api/hostile.ts,
 * keys/key-store-suite.ts): the full archive's path, temp folders removed
 * after each test file, temp builds and clean copies, raw HTTP, npm start and
 * the edge function under Deno as processes, a sample server with a key, and
 * the robustness tests' key stores and key-watching log sink.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink } from 'node:fs/promises';
import http from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { build } from '../../build/build.ts';
import { generateKey, hashSecret, keyId, Keys, type NewKey } from '../../src/keys/keys.ts';
import { redactLine } from '../../src/shared/redact.ts';
import { createNodeServer, type ServerOptions } from '../../adapters/node.ts';
import { createApi } from '../../src/api/handler.ts';
import type { PortalOptions } from '../../src/portal/portal.ts';
import { SqliteKeyBackend } from '../../src/keys/sqlite.node.ts';
import { CACHE_FILE } from '../../build/source.ts';
import { tokenIn } from './mail.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
/**
 * The full archive, for every test that needs it: ARCHIVE_SOURCE when set,
 * else the copy `npm run data:fetch` caches (test/helpers/global-setup.ts makes sure
 * one of them exists before any test runs).
 */
export const FULL_SOURCE = fullSource(process.env);
/** ARCHIVE_SOURCE in `env` when set, else `cache`. */
export function fullSource(env: NodeJS.ProcessEnv, cache = CACHE_FILE): string {
  return env.ARCHIVE_SOURCE ? path.resolve(env.ARCHIVE_SOURCE) : cache;
}
/** The name most tests import {@link FULL_SOURCE} by. */
export const SHARED_SOURCE = FULL_SOURCE;
export const SAMPLE_SOURCE = path.join(ROOT, 'data/sample/oscars-sample.tsv');
export const DENO = path.join(ROOT, 'node_modules/.bin/deno');

const made: string[] = [];

/** A fresh folder in the system temp dir, removed after the test file (see {@link removeTempDirs}). */
export async function tempDir(tag: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `faa-${tag}-`));
  made.push(dir);
  return dir;
}

/** Removes every folder {@link tempDir} made; test/helpers/cleanup.ts runs it after each test file. */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** Hard-links (across devices: copies) a folder tree, symlinks kept as symlinks: node_modules in a second or two. */
async function linkTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true, recursive: true });
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => path.join(to, path.relative(from, path.join(e.parentPath, e.name))));
  for (const dir of [to, ...dirs]) await mkdir(dir, { recursive: true });
  for (const entry of entries) {
    const src = path.join(entry.parentPath, entry.name);
    const dest = path.join(to, path.relative(from, src));
    if (entry.isSymbolicLink()) await symlink(await readlink(src), dest);
    else if (entry.isFile()) await link(src, dest).catch(() => copyFile(src, dest));
  }
}

/**
 * The repository as a fresh clone of this working tree would have it (the
 * files git knows, committed or not; nothing git ignores, so no dist/, no
 * data/cache/, no keys) in a temp folder, with the installed node_modules:
 * symlinked, or hard-linked where a tool must see real files (Netlify's
 * function zipper keeps a symlink as a symlink), or none, for a test that
 * installs them as a user would.
 */
export async function cleanCopy(tag: string, modules: 'symlink' | 'hardlink' | 'none' = 'symlink'): Promise<string> {
  const dir = await tempDir(tag);
  const { stdout } = await promisify(execFile)('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, maxBuffer: 1 << 24 });
  for (const file of new Set(stdout.split('\0').filter(Boolean))) {
    if (!existsSync(path.join(ROOT, file))) continue; // deleted in the working tree, not yet committed
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await copyFile(path.join(ROOT, file), path.join(dir, file));
  }
  const modulesDir = path.join(ROOT, 'node_modules');
  if (modules === 'none') return dir;
  if (modules === 'symlink') await symlink(modulesDir, path.join(dir, 'node_modules'));
  else await linkTree(modulesDir, path.join(dir, 'node_modules'));
  return dir;
}

/** Builds `source` into a fresh temp folder with its own summary; returns the dist path. */
export async function buildInto(source: string, tag = 'dist'): Promise<string> {
  const dir = await tempDir(tag);
  const out = path.join(dir, 'dist');
  await build({ source, out, summary: path.join(dir, 'summary.json'), log: () => {} });
  return out;
}

/** A reply body as sent before `content-encoding` (br, gzip or none). */
export function decodedBody(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  return body;
}

/** Heap in use after a full collection: what is retained, whenever the collector last ran. */
export function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('Expected gc() to be exposed: vitest.config.ts runs test workers with --expose-gc');
  gc();
  return process.memoryUsage().heapUsed;
}

/** Every file under `dir`, relative path to sha256. */
export async function treeDigest(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.set(path.relative(dir, full), createHash('sha256').update(await readFile(full)).digest('hex'));
  }
  return out;
}

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** One HTTP request with the body as sent (no decompression), path sent verbatim. */
export function rawRequest(port: number, method: string, pathname: string, headers: Record<string, string> = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** One request sent as its raw bytes (the request line as written, no client parsing it); the status and body of the answer. */
export function rawRequestLine(port: number, line: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${line}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${line}`)));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      // A chunked body: its one chunk.
      resolve({ status, body: /^[0-9a-f]+\r\n/.test(body) ? body.split('\r\n')[1] : body });
    });
  });
}

/** Starts the edge function under Deno behind the CDN stand-in; resolves once it listens. */
export async function startEdge(dist: string, env: Record<string, string> = {}): Promise<{ port: number; child: ChildProcess; logs: string[]; stop(): Promise<void> }> {
  const child = spawn(DENO, ['run', '--allow-all', '--quiet', path.join(ROOT, 'cli/netlify-edge.ts'), dist, '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`deno did not start:\n${logs.join('\n')}`)), 60_000);
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line) logs.push(line);
        const m = /listening on (\d+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`deno exited ${code}:\n${logs.join('\n')}`)));
  });
  return {
    port,
    child,
    logs,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface Started {
  port: number;
  base: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then the exit (after the logger flushed). */
  stop(): Promise<void>;
}

/**
 * A free-looking port below Linux's ephemeral range (32768 and up), so the
 * client sockets of other tests running at once do not take it.
 */
export const randomPort = () => 20_000 + Math.floor(Math.random() * 12_000);

/**
 * `npm start` as a process, the way a developer or an operator runs it: the
 * real start script in `cwd` (default: this checkout; a `cleanCopy` for a
 * fresh clone) with `env` over the tests' own, but never ARCHIVE_SOURCE unless
 * given, so a fresh machine's default data is what it serves. Resolves once it
 * printed `ready`; rejects with its whole output if it exits first.
 */
export async function startServer(env: Record<string, string>, options: StartOptions = {}): Promise<Started> {
  // A port picked here may still be taken by another process: then try another, twice.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, options);
    } catch (error) {
      if (env.PORT || attempt === 3 || !String(error).includes('is in use')) throw error;
    }
  }
}

/** Where and what to start: `script` is `cli/start.ts` (npm start) unless given, `ready` what it prints once it answers. */
export interface StartOptions {
  cwd?: string;
  ready?: string;
  script?: string;
  /** Arguments after the script (`--production`). */
  args?: string[];
}

/** `npm run dev:netlify` as a process (cli/netlify-local.ts): the edge function under Deno and the portal function, in front of a local Blobs store. */
export const startNetlifyLocal = (env: Record<string, string>) => startServer(env, { script: 'cli/netlify-local.ts', ready: 'ready:' });

async function startOnce(env: Record<string, string>, options: StartOptions): Promise<Started> {
  const { cwd = ROOT, ready = 'key portal:', script = 'cli/start.ts', args = [] } = options;
  const port = Number(env.PORT ?? randomPort());
  const fullEnv: NodeJS.ProcessEnv = { ...process.env };
  delete fullEnv.ARCHIVE_SOURCE;
  Object.assign(fullEnv, { PORT: String(port) }, env);
  const child = spawn(process.execPath, [script, ...args], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not print ${JSON.stringify(ready)} within 90 s:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(ready)) {
        clearTimeout(timer);
        setTimeout(resolve, 50);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited ${code}:\n${output}`));
    });
  });
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Polls `check` until it returns true or `ms` pass. */
export async function eventually(check: () => Promise<boolean>, ms = 10_000, every = 100): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, every));
  }
  return check();
}

/** Each example of the README: the request path (key placeholder `KEY`) and the answer printed under it. */
export function readmeExamples(readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')) {
  return [...readme.matchAll(/^ {4}GET (\/\S+)\n {4}(.+)$/gm)].map(([, request, answer]) => ({ request, answer }));
}

// The robustness tests' plumbing (fuzz, flood, faults): a sample dist/ in a temp folder, keys put
// straight into an SQLite key store, a Node server on loopback, log lines checked for whole keys.

/** A whole key anywhere in a text: what no log line may hold. */
export const WHOLE_KEY = /faa_[A-Za-z0-9_-]{32}/;

export interface Sandbox {
  dir: string;
  dist: string;
  /** The SQLite key database the server opens. */
  keysDb: string;
  remove(): Promise<void>;
}

/** Builds the sample into a fresh temp folder (never the project's dist/). */
export async function sampleSandbox(tag: string): Promise<Sandbox> {
  const dist = await buildInto(SAMPLE_SOURCE, tag);
  const dir = path.dirname(dist);
  return { dir, dist, keysDb: path.join(dir, 'keys.db'), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A stored key: a revoked one has `revokedAt`. */
export type KeyRecord = NewKey & { revokedAt?: number | null };

/** `count` fresh keys with their records, one address each (fast: no store involved). */
export function makeKeys(count: number, tag = 'k'): { keys: string[]; records: KeyRecord[] } {
  const keys: string[] = [];
  const records: KeyRecord[] = [];
  while (keys.length < count) {
    const key = generateKey();
    keys.push(key);
    records.push({ id: keyId(key), hash: hashSecret(key), email: `${tag}${keys.length}@example.org`, createdAt: 0 });
  }
  return { keys, records };
}

/** Puts records straight into a key store: an open backend, or a database file (opened and closed). */
export function storeKeys(target: SqliteKeyBackend | string, records: KeyRecord[]): void {
  const backend = typeof target === 'string' ? new SqliteKeyBackend(target, { view: false }) : target;
  backend.insertMany(records);
  if (typeof target === 'string') backend.close();
}

/** An in-memory SQLite key store holding `records`. */
export function memoryKeys(records: KeyRecord[]): SqliteKeyBackend {
  const backend = new SqliteKeyBackend(':memory:');
  storeKeys(backend, records);
  return backend;
}

/** A key of the right shape that was never issued. */
export const unissuedKey = () => generateKey();

/**
 * A log sink as the servers have one: lines are redacted where they are
 * written, then checked; any that still holds a whole key is remembered (as
 * written, so floods need no big array).
 */
export function keyWatchingLog(keep = 200) {
  const lines: string[] = [];
  const leaks: string[] = [];
  let count = 0;
  return {
    lines,
    leaks,
    get count() {
      return count;
    },
    log(raw: string) {
      const line = redactLine(raw);
      count++;
      if (WHOLE_KEY.test(line)) leaks.push(line);
      if (lines.length < keep) lines.push(line);
    },
  };
}

export interface Running {
  port: number;
  server: ReturnType<typeof createNodeServer>;
  close(): Promise<void>;
}

/** createNodeServer listening on 127.0.0.1, an ephemeral port. */
export async function listen(options: ServerOptions): Promise<Running> {
  const server = createNodeServer(options);
  await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.server.closeAllConnections();
        server.server.close(() => resolve());
      }),
  };
}

/**
 * A real Node server over a dist/ built from the sample into a temporary
 * folder, with one issued key: for the reference page, contract and client
 * tests. Never touches the project's dist/.
 */
export interface LocalServer {
  baseUrl: string;
  key: string;
  dist: string;
  close(): Promise<void>;
}

export async function startLocalServer(options: { rateLimitPerMinute?: number } = {}): Promise<LocalServer> {
  const dist = await buildInto(SAMPLE_SOURCE, 'local');
  const dir = path.dirname(dist);
  const backend = new SqliteKeyBackend(path.join(dir, 'keys.db'));
  const keys = new Keys(backend);
  const key = await keys.issue('contract@example.org');
  const { server } = createNodeServer({ dist, keys, rateLimitPerMinute: options.rateLimitPerMinute });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    key,
    dist,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      backend.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The key portal behind the front door, as a fetch runtime serves it: Request and client address in, Response out. */
export function portalFront(options: PortalOptions) {
  const api = createApi({ keys: options.keys, portal: options, log: options.log, now: options.now });
  return { handle: (request: Request, clientIp: string) => api.handle(request, undefined, clientIp), limiter: api.portalLimiter! };
}

/** A free TCP port on 127.0.0.1 (wrangler dev takes a port, not 0). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `npm run dev:cloudflare` over `dist`: the Worker under wrangler dev
 * (workerd), a local D1 in a folder of its own; resolves once `/health`
 * answers 200. `env` is passed on (MAIL_API_URL, settings).
 */
export async function startWorker(dist: string, env: Record<string, string> = {}): Promise<{ port: number; logs: string[]; stop(): Promise<void> }> {
  const port = await freePort();
  const state = await tempDir('worker-state');
  const child = spawn(process.execPath, [path.join(ROOT, 'cli/cloudflare-dev.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env, DIST_DIR: dist, PORT: String(port), CLOUDFLARE_LOCAL_DIR: state, NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      process.kill(-child.pid!, 'SIGTERM'); // wrangler and the workerd it started
    });
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dev:cloudflare exited ${child.exitCode}:\n${logs.join('\n')}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
    if (ok) return { port, logs, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`dev:cloudflare did not answer:\n${logs.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A key had as a person has one: sign in at the portal, open the mailed link, ask for a key; the session is kept for rotate and revoke. */
export async function keyThroughPortal(base: string, mailApi: { to(address: string): { body: { text?: string } }[] }): Promise<{ key: string; session: string }> {
  const email = `portal-${Math.random().toString(36).slice(2)}@example.org`;
  const post = async (p: string, body?: object, session?: string) => {
    const headers: Record<string, string> = { ...(body ? { 'content-type': 'application/json' } : {}), ...(session ? { authorization: `Bearer ${session}` } : {}) };
    const response = await fetch(`${base}${p}`, { method: 'POST', headers, body: body ? JSON.stringify(body) : undefined });
    return { status: response.status, json: (await response.json()) as Record<string, string> };
  };
  const asked = await post('/portal/sign-in', { email });
  if (asked.status !== 202) throw new Error(`sign-in answered ${asked.status} ${JSON.stringify(asked.json)}`);
  const mail = mailApi.to(email)[0];
  if (!mail) throw new Error(`no sign-in mail reached ${email}`);
  const token = tokenIn({ text: mail.body.text ?? '' });
  const { session } = (await post('/portal/session', { token })).json;
  const issued = await post('/portal/keys', undefined, session);
  if (issued.status !== 201) throw new Error(`issue answered ${issued.status} ${JSON.stringify(issued.json)}`);
  return { key: issued.json.apiKey, session };
}
