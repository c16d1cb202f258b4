/**
 * The API on Node's own http server (npm start, self-hosting): the build's
 * files from the disk, keys in SQLite, the portal's mail by SMTP or an HTTP
 * e-mail API (chosen by the caller), wired to the front door; answers
 * compressed here when the client accepts it (./_node/encoding.ts).
 */
import http from 'node:http';
import path from 'node:path';
import { createApi } from '../src/api/handler.ts';
import { andThen, isPromise } from '../src/shared/maybe.ts';
import { Keys } from '../src/keys/rules.ts';
import { DiskData } from './_node/disk-data.ts';
import { NodeRequest, type ServerOptions, writeReply } from './_node/http.ts';
import { Encoder } from './_node/encoding.ts';
import { SqliteKeyBackend } from '../src/keys/stores/sqlite.node.ts';
import { hookCache, watchRevision } from './_node/cache-watch.ts';

/** Longest time to receive a whole request, headers and body. */
export const REQUEST_TIMEOUT_MS = 10_000;

export type { ServerOptions };

export function createNodeServer(options: ServerOptions) {
  const data = new DiskData(path.resolve(options.dist), { revalidateMs: options.revalidateMs });
  if (!options.keys && !options.keysDb) throw new TypeError('Expected `keys` or `keysDb` (the SQLite key database)');
  const keys = options.keys ?? new Keys(new SqliteKeyBackend(options.keysDb!));
  const cache = options.cachePurgeUrl ? hookCache(options.cachePurgeUrl, options.log?.warn, keys.backend) : undefined;
  const portal = options.portal && { ...options.portal, keys, purgeKeys: cache?.purgeKeys };
  const [api, encoder] = [
    createApi({
      data,
      keys,
      portal,
      rateLimitPerMinute: options.rateLimitPerMinute,
      log: options.log,
      sharedCache: cache?.sharedCache,
    }),
    new Encoder(),
  ];
  // A slowly sent request (headers or body) is cut off: checked every second, not Node's default 30 s.
  const timeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = http.createServer(
    { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: 1000 },
    (req, res) => {
      const out = andThen(api.reply(new NodeRequest(req, options)), (reply) =>
        encoder.encode(reply, req.headers['accept-encoding']),
      );
      if (isPromise(out)) out.then((reply) => writeReply(req, res, reply));
      else writeReply(req, res, out);
    },
  );
  server.keepAliveTimeout = 65_000;
  if (cache) watchRevision(server, (source) => api.archive.manifest(source), data, cache.purge, cache.log);
  return { server, api, data, keys };
}
