/**
 * The Netlify edge function: a thin adapter around the core. Archive files
 * live in the publish folder under `_data/`, which this function also owns
 * (a direct request for them gets the core's 404); the function reaches them
 * with `context.next()` on a new request, which continues to the static file
 * without running this function again. Keys come from the Blobs store. Its
 * paths are declared in netlify.toml (`[[edge_functions]]`), not inline, so
 * that an offline build routes it too.
 */
import type { Context } from '@netlify/edge-functions';
import type { DataSource } from '../../src/api/answer.ts';
import { createApi } from '../../src/api/handler.ts';
import { EDGE_CACHE_TTL_MS, edgeKeyStore } from '../../src/keys-blobs.ts';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, wholeNumberSetting } from '../../src/limits.ts';
import { ByteLru } from '../../src/lru.ts';
import { redactLine } from '../../src/redact.ts';
import { MANIFEST_PATH } from '../../src/refs.ts';

declare const Netlify: { env: { get(name: string): string | undefined } } | undefined;
const env = (name: string) => (typeof Netlify === 'undefined' ? undefined : Netlify.env.get(name));

/** Content-addressed files never change within a deploy; the manifest is re-read after this long. */
const MANIFEST_TTL_MS = 60_000;
const MAX_CACHED_BYTES = 64 * 1024 * 1024;

const cache = new ByteLru<{ size: number; bytes: Uint8Array; until: number }>(MAX_CACHED_BYTES);

/** A file of the publish folder, through the CDN; kept in the isolate's cache. */
async function fetchStatic(path: string, request: Request, context: Context): Promise<Uint8Array | null> {
  const response = await context.next(new Request(new URL(`/${path}`, request.url)));
  if (!response.ok) {
    await response.body?.cancel();
    cache.delete(path);
    return null;
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  cache.set(path, { size: bytes.length, bytes, until: path === MANIFEST_PATH ? Date.now() + MANIFEST_TTL_MS : Infinity });
  return bytes;
}

/** The isolate's cached bytes at once when there, the CDN otherwise. */
function staticData(request: Request, context: Context): DataSource {
  return {
    read(path) {
      const hit = cache.peek(path);
      if (hit && hit.until > Date.now()) return hit.bytes;
      return fetchStatic(path, request, context);
    },
  };
}

/** A setting from the environment; one that is not a whole number in range is logged and the default used (an edge function cannot refuse to start). */
function setting(name: string, fallback: number, min: number, max?: number): number {
  try {
    return wholeNumberSetting(name, env(name), fallback, min, max);
  } catch (error) {
    console.error(`${(error as Error).message}; using ${fallback}`);
    return fallback;
  }
}

const api = createApi({
  keys: edgeKeyStore({ ttlMs: setting('KEY_CACHE_TTL_MS', EDGE_CACHE_TTL_MS, 0, 60_000) }),
  rateLimitPerMinute: setting('RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE, 1),
  log: (line) => console.log(redactLine(line)), // secrets leave only where lines are written
});

export default async function handler(request: Request, context: Context): Promise<Response> {
  // Browsers asking for `/` get the static reference page; JSON clients get the core's description.
  if ((request.headers.get('accept') ?? '').includes('text/html') && new URL(request.url).pathname === '/') return context.next();
  return api.handle(request, staticData(request, context));
}

