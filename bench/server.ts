/**
 * The benchmark's two reference servers, one per process so each can be
 * pinned, measured (RSS) and killed on its own: `node bench/server.ts
 * <ceiling|naive>`. Prints `listening <port>` once it accepts connections on
 * 127.0.0.1. (Ours is not here: bench.ts runs it exactly as `npm start` does.)
 *
 * Environment: PORT (default 0), CAPTURE_FILE (ceiling), ARCHIVE_SOURCE and
 * KEYS_DB (naive).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { importArchive } from '../build/archive/import.ts';
import { MESSAGES } from '../src/shared/messages.ts';
import { preferredEncoding } from '../adapters/_node/encoding.ts';
import { matchRoute } from '../src/http/request.ts';
import { Keys } from '../src/keys/rules.ts';
import { ID_FORMS, MAX_NAME_LENGTH } from '../src/shared/routes.ts';
import { SqliteKeyBackend } from '../src/keys/stores/sqlite.node.ts';
import { naiveAnswer } from './naive.ts';

/** One captured answer of our server, replayed by the ceiling server. */
export interface Captured {
  status: number;
  /** Every header ours sent, but those Node adds to any answer (date, connection, keep-alive). */
  headers: Record<string, string>;
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

/** Ours's exact answers (status, headers, bytes) replayed from memory: what this machine's Node can do at best. */
function ceiling(): http.Server {
  const captured = JSON.parse(readFileSync(env('CAPTURE_FILE'), 'utf8')) as Record<string, Captured>;
  const answers = new Map<string, { status: number; headers: Record<string, string>; body: Buffer }>();
  for (const [key, c] of Object.entries(captured))
    answers.set(key, { status: c.status, headers: c.headers, body: Buffer.from(c.body, 'base64') });
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
 * The spec's rules the obvious way (bench/naive.ts): the
 * archive in memory, scanned and serialised on every request, compressed on the fly like Express's
 * `compression` middleware would (brotli quality 4, gzip level 6).
 */
function naive(): http.Server {
  const text = readFileSync(env('ARCHIVE_SOURCE'), 'utf8');
  const data = importArchive(text);
  const keys = new Keys(new SqliteKeyBackend(env('KEYS_DB')));
  const send = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    status: number,
    value: unknown,
    cache = 'no-store',
  ) => {
    let body: Buffer = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
    const headers: Record<string, string | number> = {
      'access-control-allow-origin': '*',
      'content-type': 'application/json; charset=utf-8',
      'cache-control': cache,
    };
    const accepted = preferredEncoding(req.headers['accept-encoding']);
    if (status === 200 && body.length >= 1024 && accepted === 'br') {
      body = zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
      headers['content-encoding'] = 'br';
    } else if (status === 200 && body.length >= 1024 && accepted === 'gzip') {
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
    const { name, year, id } = values;
    if (name !== undefined && (name.length === 0 || [...name].length > MAX_NAME_LENGTH))
      return send(req, res, 400, { error: MESSAGES.badName });
    if (m.route.id === 'titleById' && !ID_FORMS.titleById.test(id))
      return send(req, res, 400, { error: MESSAGES.badTitleId });
    if (m.route.id === 'nameById' && !ID_FORMS.nameById.test(id))
      return send(req, res, 400, { error: MESSAGES.badNameId });
    // The spec's six lookups and the id lookups: search and the
    // category list are beyond the spec, so this server has none.
    const answer = naiveAnswer(data, m.route.id, { name, year: year === undefined ? undefined : Number(year), id }) ?? {
      status: 404,
      text: JSON.stringify({ error: MESSAGES.notFound }),
    };
    send(req, res, answer.status, answer.text, answer.status === 200 ? 'private, max-age=86400' : 'no-store');
  };
  return http.createServer((req, res) => {
    handle(req, res).catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
}

if (process.argv[1] && import.meta.filename === (await import('node:fs')).realpathSync(process.argv[1])) {
  const mode = process.argv[2];
  const make = { ceiling, naive }[mode as 'ceiling' | 'naive'];
  if (!make) throw new Error(`usage: node bench/server.ts <ceiling|naive>, got ${mode}`);
  const server = make();
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(`listening ${typeof address === 'object' && address ? address.port : ''}`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
