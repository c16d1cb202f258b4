/**
 * npm run dev:netlify: the Netlify path on this machine, offline, answering
 * as a deploy does. In front, on PORT, a small Node server plays Netlify's
 * router: the portal function's paths (its own `config.path`) go to the real
 * function file, netlify/functions/portal.mts; everything else goes to
 * cli/lib/netlify-edge.ts under Deno, which runs the real edge function on the
 * paths netlify.toml declares and serves the rest of dist/ as the CDN would
 * (so `_data/` answers the API's 404). Keys, sign-in tokens and sessions live
 * in a local Netlify Blobs server (cli/lib/local-blobs.ts) whose files are kept
 * in NETLIFY_LOCAL_DIR, so keys survive a restart; sign-in mail goes to
 * MAIL_API_URL or over SMTP_URL, or to the console and NETLIFY_LOCAL_DIR/mail/.
 *
 * A request whose path does not parse as a URL is answered 400 here, as JSON,
 * and the server keeps running. The Deno child never outlives this process:
 * it is stopped on every exit, and it exits by itself when its stdin (a pipe
 * from this process) closes, so a crash or a SIGKILL here ends it too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { nodeMailer } from '../adapters/_node/mail.ts';
import { commandLine, type Refuse, refuser, settingOrRefuse } from '../lib/command-line.ts';
import { startLocalBlobs } from './lib/local-blobs.ts';
import { currentDist } from './lib/dist.ts';
import { DIST, ROOT } from './lib/paths.ts';

const USAGE = `usage: npm run dev:netlify

Runs the Netlify path on this machine, offline, as a deploy answers: the edge
function under Deno on the paths netlify.toml declares, the public files of
dist/ (never _data/), and the portal function at /portal, with keys in a local
Netlify Blobs server. Builds dist/ first when it is missing or stale, as
npm start does. Stop it with Ctrl-C.

Options:
  -h, --help         this text

Environment:
  PORT, HOST         where it listens (default 127.0.0.1:8888)
  NETLIFY_LOCAL_DIR  the Blobs store (keys) and the mail outbox (default data/netlify-local/)
  MAIL_API_URL       send sign-in mail through an HTTP e-mail API (with MAIL_API_TOKEN), or
  SMTP_URL           over SMTP; without either, mail is printed and written to NETLIFY_LOCAL_DIR/mail/
  MAIL_FROM, PUBLIC_BASE_URL, RATE_LIMIT_PER_MINUTE, KEY_CACHE_TTL_MS,
  PORTAL_ISSUE_LIMIT_PER_MINUTE, DIST_DIR, ARCHIVE_SOURCE   as on Netlify and for npm start`;

const DENO = path.join(ROOT, 'node_modules/.bin/deno');

const refuse: Refuse = refuser('dev:netlify');

/** The answer to a request whose path does not parse as a URL. */
const BAD_PATH = JSON.stringify({ error: 'Invalid path: it does not parse as a URL path' });

/** Where the portal function's mail goes, or a one-line refusal for a mail setting that cannot work. */
function mailSetting(outbox: string): string {
  try {
    return nodeMailer(process.env, outbox)!.describe;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    refuse(error.message);
  }
}

/**
 * The edge function under Deno behind the CDN stand-in, on a port of its own; resolves with that port once it listens.
 */
function startEdge(env: NodeJS.ProcessEnv): Promise<{ port: number; child: ChildProcess }> {
  // Its stdin is a pipe from this process, never written: when this process ends
  // however it ends, the pipe closes and the child exits (EDGE_EXIT_WITH_STDIN).
  const child = spawn(DENO, ['run', '--allow-all', '--quiet', path.join(ROOT, 'cli/lib/netlify-edge.ts'), DIST, '0'], {
    cwd: ROOT,
    env: { ...env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', EDGE_EXIT_WITH_STDIN: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // And on any exit this process sees (a refusal, an uncaught error), it is stopped at once.
  const stopChild = () => child.kill('SIGTERM');
  process.once('exit', stopChild);
  child.once('exit', () => process.off('exit', stopChild));
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const listening = /^listening on (\d+)$/.exec(line);
        if (listening) resolve({ port: Number(listening[1]), child });
        else console.log(line); // the edge function's access log
      }
    });
    child.once('exit', (code) => reject(new Error(`the edge function under Deno exited (${code}) before it listened`)));
  });
}

type PortalFunction = (request: Request, context: { ip: string }) => Promise<Response>;

/**
 * The portal function as Netlify calls it: a fetch Request (its URL on this
 * server's own base, never the Host header), and the client's address.
 */
async function toFunction(
  fn: PortalFunction,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  base: string,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
  const response = await fn(new Request(new URL(req.url ?? '/', base), { method: req.method, headers, body }), {
    ip: req.socket.remoteAddress ?? '',
  });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Everything else to the edge stand-in, as it came. */
function toEdge(edgePort: number, req: http.IncomingMessage, res: http.ServerResponse): void {
  const upstream = http.request(
    { host: '127.0.0.1', port: edgePort, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end('the edge function is not answering\n');
  });
  req.pipe(upstream);
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      refuse(
        `${host}:${port} ${error.code === 'EADDRINUSE' ? 'is in use: stop what holds it, or set PORT to another' : `cannot be opened (${error.code ?? error.message})`}`,
      ),
    );
    server.listen(port, host, resolve);
  });
}

async function main(): Promise<void> {
  commandLine({ name: 'dev:netlify', usage: USAGE, options: {} });
  const port = settingOrRefuse(refuse, 'PORT', 8888, 1, 65_535);
  const host = process.env.HOST ?? '127.0.0.1';
  const base = `http://${host}:${port}`;
  const localDir = path.resolve(process.env.NETLIFY_LOCAL_DIR || path.join(ROOT, 'data/netlify-local'));
  const outbox = path.join(localDir, 'mail');
  // The portal function picks its mailer the same way; a mail setting
  // that cannot work stops here, before any build, with one line.
  const mail = mailSetting(outbox);
  await currentDist(refuse);

  const blobs = await startLocalBlobs(path.join(localDir, 'blobs'));
  // What Netlify gives both functions: Blobs access and the site's settings, from the environment, before they load.
  Object.assign(process.env, {
    NETLIFY_BLOBS_CONTEXT: blobs.context,
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || base,
  });
  process.env.PORTAL_DEV_OUTBOX = outbox;
  const portal = await import('../netlify/functions/portal.mts');
  const portalPaths = [portal.config.path].flat().map((p) => new RegExp(`^${p.replaceAll('*', '.*')}$`));
  const edge = await startEdge(process.env).catch((error: Error) => refuse(error.message));

  const server = http.createServer((req, res) => {
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', base).pathname;
    } catch {
      // `//x:y@%zz/` and the like: no URL, so neither function can be
      // asked; the client hears why, and the server keeps serving.
      res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BAD_PATH) });
      res.end(req.method === 'HEAD' ? undefined : BAD_PATH);
      return;
    }
    if (!portalPaths.some((p) => p.test(pathname))) return toEdge(edge.port, req, res);
    toFunction(portal.default, req, res, base).catch((error: Error) => {
      console.error(`portal function: ${error.message}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  });
  await listen(server, port, host);
  console.log(
    `Netlify path, locally, on ${base}: the edge function under Deno on netlify.toml's paths, the portal function at ${base}/portal`,
  );
  console.log(`keys in a local Netlify Blobs store (${path.join(localDir, 'blobs')}); mail: ${mail}`);
  console.log(`  curl ${base}/health`);
  console.log('ready: sign in at /portal for a key');

  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    edge.child.kill('SIGTERM');
    server.closeAllConnections();
    server.close(async () => {
      await blobs.stop();
      process.exit(0);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  edge.child.once('exit', (code) => stopping || refuse(`the edge function under Deno stopped (${code})`));
}

await main();
