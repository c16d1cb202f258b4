/**
 * The benchmark's servers, one per process so each can be measured (RSS) and
 * killed on its own: `tsx bench/server.ts <ours|ceiling|naive>`. Prints
 * `listening <port>` once it accepts connections on 127.0.0.1.
 *
 * Environment: PORT (default 0), DIST and KEYS_DB (ours, naive),
 * RATE_LIMIT_PER_MINUTE and LOG_REQUESTS as for npm start (ours),
 * CAPTURE_FILE (ceiling), ARCHIVE_SOURCE (naive).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { importArchive } from '../build/import.ts';
import { MESSAGES } from '../src/messages.ts';
import { acceptedEncodings } from '../src/api/reply.ts';
import { matchRoute } from '../src/api/request.ts';
import { Keys } from '../src/keys.ts';
import { MAX_NAME_LENGTH } from '../src/routes.ts';
import { createNodeServer } from '../src/server/server.node.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { expected, type Expected } from '../test/oracle.ts';

/** One captured answer of our server, replayed by the ceiling server. */
export interface Captured {
  status: number;
  encoding: string | null;
  /** Base64 of the body bytes. */
  body: string;
}

/** Ceiling lookup key: the URL and the Accept-Encoding header as sent. */
export const captureKey = (url: string, acceptEncoding: string | undefined) => `${url}\u0000${acceptEncoding ?? ''}`;

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`bench/server.ts needs ${name}`);
  return value;
};

/** Bytes and status only: what this machine's Node can do at best. */
function ceiling(): http.Server {
  const captured = JSON.parse(readFileSync(env('CAPTURE_FILE'), 'utf8')) as Record<string, Captured>;
  const answers = new Map<string, { status: number; headers: Record<string, string | number>; body: Buffer }>();
  for (const [key, c] of Object.entries(captured)) {
    const body = Buffer.from(c.body, 'base64');
    const headers: Record<string, string | number> = { 'content-length': body.length };
    if (c.encoding) headers['content-encoding'] = c.encoding;
    answers.set(key, { status: c.status, headers, body });
  }
  return http.createServer((req, res) => {
    const a = answers.get(captureKey(req.url ?? '/', req.headers['accept-encoding']));
    if (!a) {
      res.writeHead(599, { 'content-length': 0 });
      res.end();
      return;
    }
    res.writeHead(a.status, a.headers);
    res.end(a.body);
  });
}

/**
 * The spec's rules the obvious way (test/oracle.ts, the tests' oracle): the
 * archive in memory, scanned and serialised on every request, compressed on the fly like Express's
 * `compression` middleware would (brotli quality 4, gzip level 6).
 */
function naive(): http.Server {
  const { archive } = importArchive(readFileSync(env('ARCHIVE_SOURCE'), 'utf8'));
  const keys = new Keys(new SqliteKeyBackend(env('KEYS_DB')));
  const send = (req: http.IncomingMessage, res: http.ServerResponse, status: number, value: unknown, cache = 'no-store') => {
    let body: Buffer = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
    const headers: Record<string, string | number> = {
      'access-control-allow-origin': '*',
      'content-type': 'application/json; charset=utf-8',
      'cache-control': cache,
    };
    const accepted = acceptedEncodings(req.headers['accept-encoding']);
    if (status === 200 && body.length >= 1024 && accepted.has('br')) {
      body = zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
      headers['content-encoding'] = 'br';
    } else if (status === 200 && body.length >= 1024 && accepted.has('gzip')) {
      body = zlib.gzipSync(body);
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = body.length;
    res.writeHead(status, headers);
    res.end(body);
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const m = matchRoute(new URL(req.url ?? '/', 'http://localhost').pathname);
    if (m === null || m === 'root') return send(req, res, 404, { error: MESSAGES.notFound });
    let key: string | null = null;
    const values: Record<string, string> = {};
    try {
      key = m.key === null ? null : decodeURIComponent(m.key);
      for (const p of m.route.params) values[p] = decodeURIComponent(m.raw[p]!);
    } catch {
      if (!key) return send(req, res, 403, { error: MESSAGES.forbidden });
      return send(req, res, 400, { error: MESSAGES.badEncoding });
    }
    if (!key || !(await keys.verify(key))) return send(req, res, 403, { error: MESSAGES.forbidden });
    const { name, year } = values;
    if (name !== undefined && (name.length === 0 || [...name].length > MAX_NAME_LENGTH)) return send(req, res, 400, { error: MESSAGES.badName });
    const y = Number(year);
    const answers: Record<typeof m.route.id, () => Expected> = {
      allCeremonies: () => expected.allCeremonies(archive),
      ceremonyByYear: () => expected.ceremonyByYear(archive, y),
      personByName: () => expected.personByName(archive, name),
      filmByNameAndYear: () => expected.filmByNameAndYear(archive, name, y),
      categoryByName: () => expected.categoryByName(archive, name),
      categoryByNameAndYear: () => expected.categoryByNameAndYear(archive, name, y),
    };
    const answer = answers[m.route.id]();
    send(req, res, answer.status, answer.text, answer.status === 200 ? 'private, max-age=86400' : 'no-store');
  };
  return http.createServer((req, res) => {
    handle(req, res).catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
}

/** npm start's server, without cli/start.ts's build step (it would build into the project's dist/). */
function ours(): http.Server {
  const quiet = process.env.LOG_REQUESTS === '0';
  const { server } = createNodeServer({
    dist: env('DIST'),
    keysDb: env('KEYS_DB'),
    rateLimitPerMinute: process.env.RATE_LIMIT_PER_MINUTE ? Number(process.env.RATE_LIMIT_PER_MINUTE) : undefined,
    log: quiet ? undefined : (line) => console.log(line),
  });
  server.keepAliveTimeout = 65_000;
  return server;
}

if (process.argv[1] && import.meta.filename === (await import('node:fs')).realpathSync(process.argv[1])) {
  const mode = process.argv[2];
  const make = { ours, ceiling, naive }[mode as 'ours' | 'ceiling' | 'naive'];
  if (!make) throw new Error(`usage: tsx bench/server.ts <ours|ceiling|naive>, got ${mode}`);
  const server = make();
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(`listening ${typeof address === 'object' && address ? address.port : ''}`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
