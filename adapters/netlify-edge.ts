/**
 * The API as a Netlify edge function (Deno): the build's files through the
 * CDN (`context.next()` on a request for the file, which goes to the static
 * file without running this function again), keys from the site's Blobs
 * store behind a short per-isolate cache. Its paths are declared in
 * netlify.toml; netlify/edge-functions/api.ts is the entry Netlify finds.
 */
import type { Context } from '@netlify/edge-functions';
import type { SharedHeaders } from '../src/http/cache.ts';
import { createApi } from '../src/api/handler.ts';
import { FetchedFiles } from './_fetch.ts';
import { EDGE_CACHE_TTL_MS, edgeKeyStore } from './_netlify/blobs-keys.ts';
import { KEY_CACHE_MAX_TTL_MS } from '../src/keys/cache.ts';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, settingOr } from '../src/shared/limits.ts';

declare const Netlify: { env: { get(name: string): string | undefined } } | undefined;
const env = (name: string) => (typeof Netlify === 'undefined' ? undefined : Netlify.env.get(name));
const setting = (name: string, fallback: number, min: number, max?: number) =>
  settingOr(console.error, name, env(name), fallback, min, max);

/**
 * What Netlify's CDN reads: its own targeted header and Netlify-Cache-Tag; with `cache =
 * "manual"` (netlify.toml) it keeps only what says so, so what is never shared needs no header.
 */
const netlifyHeaders: SharedHeaders = (p): Record<string, string> =>
  p.keep ? { 'netlify-cdn-cache-control': `public, max-age=${p.maxAge}`, 'netlify-cache-tag': p.tags.join(',') } : {};
const files = new FetchedFiles();
const api = createApi({
  keys: edgeKeyStore({ ttlMs: setting('KEY_CACHE_TTL_MS', EDGE_CACHE_TTL_MS, 0, KEY_CACHE_MAX_TTL_MS) }),
  rateLimitPerMinute: setting('RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE, 1),
  log: (line) => console.log(line),
  // With `cache = "manual"` (netlify.toml) the CDN keeps answers
  // to a good key, tagged; the portal function purges a key's tag.
  sharedCache: netlifyHeaders,
});

export default function handler(request: Request, context: Context): Promise<Response> {
  const source = files.through((path) => context.next(new Request(new URL(`/${path}`, request.url))));
  return api.handle(request, source, context.ip);
}
