/**
 * npm run dev:cloudflare: the Cloudflare Worker on this machine, offline, as a
 * deploy answers: adapters/cloudflare.ts under `wrangler dev` (workerd), dist/
 * as its static assets, keys in a local D1 whose migrations (migrations/) are
 * applied first. Settings are passed from the environment to the Worker
 * through an env file of wrangler's (`--env-file`), written with mode 0600
 * into a private temp folder (0700) removed when it exits: never on
 * wrangler's command line, which any local user can read with `ps`.
 *
 * In front, on PORT, a small Node server hands every request to wrangler dev
 * (on a loopback port of its own) as it came, except one whose path does not
 * parse as a URL (`//x:y@%zz/`, `%zz`, `*`) or that is no HTTP request at
 * all: those are answered 400 as JSON here, as dev:netlify answers them,
 * where wrangler would answer `invalid URI` in plain text or a 500. (Until
 * wrangler listens, requests are answered 502.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { commandLine, type Refuse, refuser, settingOrRefuse } from '../lib/command-line.ts';
import { freeLoopbackPort } from '../lib/ports.ts';
import { startMailOutbox } from './lib/mail-outbox.ts';
import { currentDist } from './lib/dist.ts';
import { DIST, ROOT } from './lib/paths.ts';
import { runWrangler, workerConfig, wrangler } from './lib/wrangler.ts';

const USAGE = `usage: npm run dev:cloudflare

Runs the API as the Cloudflare Worker on this machine, offline: the Worker
(adapters/cloudflare.ts) under wrangler dev (workerd), dist/ as its static
assets, keys in a local D1 database (the migrations in migrations/ applied
first). Builds dist/ first when it is missing or stale, as npm start does.
The Worker carries that build's index files in its code, as a deploy does:
start it again after rebuilding dist/. Stop it with Ctrl-C.

Options:
  -h, --help   this text

Environment:
  PORT, HOST             where it listens (default 127.0.0.1:8787)
  CLOUDFLARE_LOCAL_DIR   the local D1 (keys) and the mail outbox (default data/cloudflare-local/)
  MAIL_API_URL, MAIL_API_TOKEN, MAIL_FROM   the HTTP e-mail API the Worker mails sign-in links
                         through; without MAIL_API_URL, mail is printed and written to
                         CLOUDFLARE_LOCAL_DIR/mail/
  PUBLIC_BASE_URL, RATE_LIMIT_PER_MINUTE, PORTAL_ISSUE_LIMIT_PER_MINUTE   passed to the Worker
  ARCHIVE_SOURCE, DIST_DIR   the source to build from and the build served, as for npm start`;

/** The environment the Worker is given, through an env file (see `envFile`). */
const PASSED = [
  'MAIL_API_URL',
  'MAIL_API_TOKEN',
  'MAIL_FROM',
  'PUBLIC_BASE_URL',
  'RATE_LIMIT_PER_MINUTE',
  'PORTAL_ISSUE_LIMIT_PER_MINUTE',
];

const refuse: Refuse = refuser('dev:cloudflare');

/** The answer to a request whose path does not parse as a URL. */
const BAD_PATH = JSON.stringify({ error: 'Invalid path: it does not parse as a URL path' });
const BAD_REQUEST = JSON.stringify({ error: 'Bad Request: not an HTTP request this server can read' });

/** Whether a request target names a URL: a path (`/...`) or an absolute `http(s)://` URL, either parsing as one. */
function parses(target: string | undefined, base: string): boolean {
  if (!target) return false;
  try {
    if (target.startsWith('/')) return new URL(target, base).protocol === 'http:';
    return /^https?:\/\//i.test(target) && URL.canParse(target);
  } catch {
    return false;
  }
}

/**
 * The front server: every request to wrangler dev on `upstream` as it came
 * (its Host header included), the answer back as it comes; a path that does
 * not parse, or bytes that are no HTTP request, answered 400 as JSON.
 */
function front(upstream: number, base: string): http.Server {
  const agent = new http.Agent({ keepAlive: true });
  const json = (res: http.ServerResponse, status: number, body: string, head: boolean) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(head ? undefined : body);
  };
  const server = http.createServer((req, res) => {
    const head = req.method === 'HEAD';
    if (!parses(req.url, base)) return json(res, 400, BAD_PATH, head);
    // The client's own address, as Cloudflare's edge sets it (whatever
    // the client sent): the portal's per-client limit reads it.
    const headers = { ...req.headers, 'cf-connecting-ip': req.socket.remoteAddress ?? 'unknown' };
    const out = http.request(
      { host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.statusMessage, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (res.headersSent) return void res.destroy();
      json(res, 502, JSON.stringify({ error: 'Bad Gateway: the Worker under wrangler dev is not answering' }), head);
    });
    req.pipe(out);
  });
  server.on('clientError', (_error, socket) => {
    if (!socket.writable) return void socket.destroy();
    socket.end(
      `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(BAD_REQUEST)}\r\nconnection: close\r\n\r\n${BAD_REQUEST}`,
    );
  });
  return server;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      refuse(
        `${host}:${port} ${error.code === 'EADDRINUSE' ? 'is in use: stop what holds it, or set PORT to another' : `cannot be opened (${error.code ?? error.message})`}`,
      ),
    );
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * One `NAME=value` line as wrangler reads its env files (dotenv, then
 * dotenv-expand): quoted with a quote the value lacks (single and backtick
 * quotes are literal), every `$` escaped so that nothing is expanded.
 */
function envLine(name: string, value: string): string {
  if (/[\r\n]/.test(value)) refuse(`${name} holds a line break, which the Worker's env file cannot carry`);
  const quote = ["'", '`', '"'].find((q) => !value.includes(q));
  if (!quote) refuse(`${name} holds all three quote characters (' \` "), which the Worker's env file cannot carry`);
  return `${name}=${quote}${value.replaceAll('$', '\\$')}${quote}`;
}

/**
 * The Worker's settings and secrets in a file only this user can read, in a
 * folder of its own; `remove` deletes both (at exit, however it came).
 */
function envFile(vars: Record<string, string>): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'faa-worker-env-'));
  const file = path.join(dir, 'worker.env');
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    writeFileSync(
      file,
      Object.entries(vars)
        .map(([name, value]) => `${envLine(name, value)}\n`)
        .join(''),
      { mode: 0o600 },
    );
  } catch (error) {
    remove();
    throw error;
  }
  process.once('exit', remove);
  return { file, remove };
}

async function main() {
  commandLine({ name: 'dev:cloudflare', usage: USAGE, options: {} });
  const port = settingOrRefuse(refuse, 'PORT', 8787, 1, 65_535);
  const state = path.resolve(process.env.CLOUDFLARE_LOCAL_DIR || path.join(ROOT, 'data/cloudflare-local'));
  await currentDist(refuse);
  const config = workerConfig(DIST, state);
  // CI=1: wrangler applies the migrations without asking to confirm.
  if (
    (await runWrangler(['d1', 'migrations', 'apply', 'DB', '--local', '--config', config, '--persist-to', state], {
      CI: '1',
    })) !== 0
  ) {
    refuse('the D1 migrations could not be applied (above)');
  }
  const vars = Object.fromEntries(PASSED.filter((name) => process.env[name]).map((name) => [name, process.env[name]!]));
  const outbox = vars.MAIL_API_URL ? null : await startMailOutbox(path.join(state, 'mail'));
  if (outbox) Object.assign(vars, { MAIL_API_URL: outbox.url, MAIL_API_TOKEN: outbox.token });
  const host = process.env.HOST ?? '127.0.0.1';
  const base = `http://${host}:${port}`;
  // The front server first: a port already taken stops here, in one line, before wrangler starts.
  const inner = await freeLoopbackPort();
  const server = front(inner, base);
  await listen(server, port, host);
  console.log(
    `key portal: http://${host}:${port}/portal  (keys in the local D1 under ${state}; mail: ${outbox?.describe ?? vars.MAIL_API_URL})`,
  );
  // Secrets (MAIL_API_TOKEN, credentials in a URL) never go on argv: only the env file's path does.
  const secrets = envFile(vars);
  // wrangler's devtools port too: its default (9229, when it looks free) is taken
  // by whichever of two dev:cloudflare at once binds it first, and the other dies.
  const inspector = await freeLoopbackPort();
  const child = wrangler([
    'dev',
    '--config',
    config,
    '--port',
    String(inner),
    '--inspector-port',
    String(inspector),
    '--ip',
    '127.0.0.1',
    '--persist-to',
    state,
    '--show-interactive-dev-session=false',
    '--env-file',
    secrets.file,
  ]);
  const stopChild = () => child.kill('SIGTERM');
  // Every exit this process sees (a refusal, an uncaught error, a signal) stops wrangler too.
  process.once('exit', stopChild);
  process.on('SIGINT', stopChild);
  process.on('SIGTERM', stopChild);
  child.once('exit', (code) => {
    secrets.remove();
    outbox?.close();
    server.closeAllConnections();
    server.close();
    process.exit(code ?? 0);
  });
}

await main();
