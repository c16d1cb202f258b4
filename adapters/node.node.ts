/**
 * The API on Node's own http server (npm start, self-hosting): the build's
 * files from the disk, keys in SQLite, the portal's mail by SMTP or an HTTP
 * e-mail API (chosen by the caller), wired to the front door.
 */
import http from 'node:http';
import path from 'node:path';
import { ALL_TAG, purgeHook, purgeKey, purgeTags, revisionTag, VARNISH_CACHE } from '../src/api/cache.ts';
import { createApi } from '../src/api/handler.ts';
import { isPromise } from '../src/api/maybe.ts';
import { Keys } from '../src/keys.ts';
import type { PortalOptions } from '../src/portal.ts';
import { DiskData } from '../src/server/disk-data.node.ts';
import { NodeRequest, writeReply } from '../src/server/http.node.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';

/** Longest time to receive a whole request, headers and body. */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface ServerOptions {
  /** The built output folder. */
  dist: string;
  /** The SQLite key database (KEYS_DB), opened unless `keys` is given. */
  keysDb?: string;
  /** Use these keys instead of opening `keysDb` (npm start shares one instance with the code that issues keys). */
  keys?: Keys;
  /** Longest time to receive a request's headers and body, ms; default 10 s. */
  requestTimeoutMs?: number;
  /** How long a portal request's body may take, ms; default 10 s. */
  bodyTimeoutMs?: number;
  rateLimitPerMinute?: number;
  /** How often cached files are checked against the disk, ms. */
  revalidateMs?: number;
  /** The log sink: lines come free of secrets. */
  log?: (line: string, time?: number) => void;
  /** The key portal's mailer and settings, over this server's keys; without it `/portal/...` is 404. */
  portal?: Omit<PortalOptions, 'keys' | 'log' | 'now'>;
  /**
   * The shared cache's purge hook (CACHE_PURGE_URL, deploy/varnish/default.vcl):
   * with it, answers to a good key say a shared cache may keep them, and a
   * portal revoke or rotate, a new build and a start purge them through it.
   */
  cachePurgeUrl?: string;
}

export function createNodeServer(options: ServerOptions) {
  const data = new DiskData(path.resolve(options.dist), { revalidateMs: options.revalidateMs });
  if (!options.keys && !options.keysDb) throw new TypeError('Expected `keys` or `keysDb` (the SQLite key database)');
  const keys = options.keys ?? new Keys(new SqliteKeyBackend(options.keysDb!));
  const purge = options.cachePurgeUrl ? purgeHook(options.cachePurgeUrl) : undefined;
  const log = (line: string) => (options.log ?? console.error)(line);
  // A purge's second round (after the key caches settle) runs after the portal's reply: the process outlives it.
  const portal = options.portal && { ...options.portal, keys, ...(purge ? { purgeKey: (id: string) => purgeKey(purge, id, log, () => {}) } : {}) };
  const api = createApi({ data, keys, portal, compression: true, rateLimitPerMinute: options.rateLimitPerMinute, log: options.log, ...(purge ? { sharedCache: VARNISH_CACHE } : {}) });
  // A slowly sent request (headers or body) is cut off: checked every second, not Node's default 30 s.
  const timeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = http.createServer({ requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: 1000 }, (req, res) => {
    const out = api.reply(new NodeRequest(req, options.bodyTimeoutMs));
    if (isPromise(out)) out.then((reply) => writeReply(req, res, reply));
    else writeReply(req, res, out);
  });
  server.keepAliveTimeout = 65_000;
  if (purge) watchRevision(server, api, data, purge, log);
  return { server, api, data, keys };
}

/**
 * A cache in front keeps answers until purged, and a hit never reaches this
 * server: so the served build is checked every second, and the answers of a
 * build no longer served are purged (all of them on start, which may follow
 * a rebuild; the old revision's when the disk changes under a running server,
 * twice, for answers made while it changed).
 */
function watchRevision(server: http.Server, api: ReturnType<typeof createApi>, data: DiskData, purge: (tags: string[]) => Promise<void>, log: (line: string) => void) {
  let served: string | undefined;
  let again: string | undefined;
  const check = async () => {
    let tag: string;
    try {
      tag = revisionTag(await api.archive.manifest(data));
    } catch {
      return; // no readable build: nothing new is answered from it either
    }
    if (again) void purgeTags(purge, [again], `revision ${again}`, log);
    again = undefined;
    if (served === tag) return;
    const old = served;
    served = tag;
    again = old;
    void purgeTags(purge, [old ?? ALL_TAG], old ? `revision ${old}` : 'a start', log);
  };
  void check();
  const timer = setInterval(() => void check(), 1_000);
  timer.unref();
  server.once('close', () => clearInterval(timer));
}
