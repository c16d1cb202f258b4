/**
 * The Node server: Node's `http` around the same core the edge function uses,
 * plus the public files of dist/ (everything outside `_data/`), so it exposes
 * exactly the surface a Netlify deploy does.
 */
import http from 'node:http';
import path from 'node:path';
import { createApi } from '../api/handler.ts';
import { isPromise } from '../api/maybe.ts';
import { CORS, type ApiReply } from '../api/reply.ts';
import type { ApiRequest } from '../api/request.ts';
import { Keys } from '../keys.ts';
import { DATA_PREFIX } from '../refs.ts';
import { DiskData } from './disk-data.node.ts';
import { toApiRequest, writeReply } from './http.node.ts';
import { SqliteKeyBackend } from './sqlite-keys.node.ts';
import type { NodePortal } from './portal.node.ts';

const TYPES: Record<string, string> = {
  '.json': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

/** Longest time to receive a whole request, headers and body. */
export const REQUEST_TIMEOUT_MS = 10_000;
/**
 * Longest path a public file can have: dist/'s own are far shorter. A longer
 * one is a 404 at once, never a question to the disk, where its asynchronous
 * stat() would keep each hostile 15 KB path alive long enough to reach the old
 * generation: a flood of them grew the heap by hundreds of MiB.
 */
const MAX_PUBLIC_PATH = 1024;

export interface ServerOptions {
  /** The built output folder. */
  dist: string;
  /** The SQLite key database (KEYS_DB), opened unless `keys` is given. */
  keysDb?: string;
  /** Use these keys instead of opening `keysDb` (cli/start.ts and tests share one instance with the code that issues keys). */
  keys?: Keys;
  /** Longest time to receive a request's headers and body, ms; default 10 s. */
  requestTimeoutMs?: number;
  rateLimitPerMinute?: number;
  /** How often cached files are checked against the disk, ms. */
  revalidateMs?: number;
  log?: (line: string, time?: number) => void;
  /** The key portal's POST endpoints, over this server's keys (`nodePortal` from portal.node.ts). */
  portal?: (keys: Keys) => NodePortal;
}

/**
 * Serves dist/'s public files: never `_data/`, never outside dist/. The core
 * asks only for GET and HEAD of paths that are not API routes, and drops the
 * body of a HEAD itself.
 */
export function publicFiles(data: DiskData) {
  return async (request: ApiRequest): Promise<ApiReply | null> => {
    if (request.url.length > MAX_PUBLIC_PATH) return null;
    let pathname: string;
    try {
      // The core asks only for paths that are not API routes, so no lookup pays for a stat() here.
      pathname = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    } catch {
      return null;
    }
    let relative = pathname.slice(1);
    if (relative === '' || relative.endsWith('/')) relative += 'index.html';
    const first = relative.split('/')[0];
    if (first === DATA_PREFIX || first.startsWith('.') || relative.split('/').includes('..')) return null;
    if (!path.extname(relative)) relative += '.html'; // /portal -> portal.html, as Netlify's pretty URLs do
    const type = TYPES[path.extname(relative)];
    if (!type) return null;
    if (relative === 'index.html' && !(request.header('accept') ?? '').includes('text/html')) return null;
    const body = await data.read(relative);
    if (!body) return null;
    return {
      status: 200,
      headers: {
        ...CORS,
        'content-type': type,
        'cache-control': 'public, max-age=300',
        'content-length': String(body.length),
      },
      body,
    };
  };
}

export function createNodeServer(options: ServerOptions) {
  const data = new DiskData(path.resolve(options.dist), { revalidateMs: options.revalidateMs });
  if (!options.keys && !options.keysDb) throw new TypeError('Expected `keys` or `keysDb` (the SQLite key database)');
  const keys = options.keys ?? new Keys(new SqliteKeyBackend(options.keysDb!));
  const portal = options.portal?.(keys);
  const api = createApi({
    data,
    keys,
    compression: true,
    rateLimitPerMinute: options.rateLimitPerMinute,
    log: options.log,
    publicFile: publicFiles(data),
  });
  // A slowly sent request (headers or body) is cut off: checked every second, not Node's default 30 s.
  const timeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = http.createServer({ requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: 1000 }, (req, res) => {
    if (portal?.(req, res)) return;
    const out = api.reply(toApiRequest(req));
    if (isPromise(out)) out.then((reply) => writeReply(res, reply));
    else writeReply(res, out);
  });
  server.keepAliveTimeout = 65_000;
  return { server, api, data, keys };
}
