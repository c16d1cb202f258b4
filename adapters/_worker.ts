/**
 * The Worker's wiring (adapters/cloudflare.ts): its bindings, its settings
 * from the Worker's variables, its mailer, and what Workers Cache reads.
 * Its key store hashes with a sha256 of one function
 * (adapters/_cloudflare/sha256.ts), which a fresh isolate compiles faster.
 */
import { guardedPurge, purgeKeys, type SharedHeaders } from '../src/http/cache.ts';
import { type Api, createApi } from '../src/api/handler.ts';
import type { ArchiveReader } from '../src/store/archive.ts';
import { type D1DatabaseLike, d1Keys } from './_cloudflare/d1-keys.ts';
import { sha256Hex } from './_cloudflare/sha256.ts';
import { DEFAULT_ISSUE_LIMIT, DEFAULT_RATE_LIMIT_PER_MINUTE, settingOr } from '../src/shared/limits.ts';
import { chooseMailer, noTransport } from '../src/portal/mail.ts';
import type { DataSource } from '../src/store/answer.ts';

export interface Env {
  ASSETS: { fetch(request: Request): Promise<Response> };
  DB: D1DatabaseLike;
}
/** Workers Cache's purge, on a Worker's context (the same on every request's; absent under wrangler dev). */
export type WorkersCache = { purge(options: { tags: string[] }): Promise<unknown> } | undefined;

/**
 * What Workers Cache reads: its own targeted header and Cache-Tag; what is never
 * shared says no-store, or Cache-Control would let the cache keep a public file.
 */
const cloudflareHeaders: SharedHeaders = (p): Record<string, string> =>
  p.keep
    ? { 'cloudflare-cdn-cache-control': `public, max-age=${p.maxAge}`, 'cache-tag': p.tags.join(',') }
    : { 'cloudflare-cdn-cache-control': 'no-store' };

/**
 * The front door over the Worker's bindings and variables; `cache`
 * is the Workers Cache seen on a request, when there is one.
 */
export function apiFor(
  env: Env,
  cache: () => WorkersCache,
  archive?: ArchiveReader,
  log: (line: string) => void = (line) => console.log(line),
): Api {
  const vars = env as unknown as Record<string, string | undefined>;
  const setting = (name: string, fallback: number) => settingOr(console.error, name, vars[name], fallback, 1);
  const keys = d1Keys(env.DB, { hash: sha256Hex });
  let sendMail = noTransport;
  try {
    sendMail = chooseMailer(vars)?.send ?? noTransport;
  } catch (error) {
    // Thrown for MAIL_API_URL without its token, or for SMTP_URL
    console.error(`${(error as Error).message}; sign-in mail cannot be sent`);
  }
  const purge = guardedPurge(
    () => cache() && ((tags) => cache()!.purge({ tags })),
    'ctx.cache',
    (line) => console.error(line),
  );
  // Workers Cache (wrangler.jsonc) keeps answers to a good key, tagged; a revoke or rotate purges the key's tag.
  const portal = {
    keys,
    sendMail,
    purgeKeys: (ids: string[]) => purgeKeys(purge, ids, (line) => console.error(line)),
    publicBaseUrl: vars.PUBLIC_BASE_URL || undefined,
    issueLimitPerMinute: setting('PORTAL_ISSUE_LIMIT_PER_MINUTE', DEFAULT_ISSUE_LIMIT),
  };
  return createApi({
    archive,
    keys,
    rateLimitPerMinute: setting('RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE),
    log,
    sharedCache: cloudflareHeaders,
    portal,
  });
}

/** A D1 that holds every key as current and answers at once: the warm-up's. */
const everyKey: D1DatabaseLike = (() => {
  const statement = { bind: () => statement, first: async () => ({ revoked_at: null }) };
  return { prepare: () => statement } as unknown as D1DatabaseLike;
})();

/**
 * What the warm-up asks: a ranking made at run time (one class at one year,
 * by wins), so the ranking's code is compiled with the request path's; the
 * search's is compiled as the archive is prepared (`SearchIndex.ready`).
 */
export const WARM_UP_PATH = '/rankings/of=people/by=wins/class=Writing/from=1990/to=1990/limit=10';

/**
 * Asks WARM_UP_PATH through the request path as apiFor wires it, over the
 * files the Worker carries (`source`) and a D1 that holds every key, its
 * access line dropped, as the isolate starts (Cloudflare limits that apart
 * from a request's CPU): its code is compiled before a request needs it,
 * and a fresh isolate's first request costs what a later one does. Its API,
 * key cache and limiter are dropped; nothing is fetched or written; the
 * ranking's answer stays in `archive`'s answer cache as a request's would.
 * Settled once the isolate's start has run its microtasks, with the
 * status it was answered with (the pipeline answers every failure of its
 * own; it rejects only when the runtime refuses something at start).
 */
export function warmUp(archive: ArchiveReader, source: DataSource): Promise<number> {
  const env = { DB: everyKey, ASSETS: { fetch: () => Promise.reject(new Error('nothing is fetched')) } };
  const dropped = () => {}; // its access line is made (so that code is compiled too), then dropped
  const api = apiFor(env, () => undefined, archive, dropped);
  // Its reply, not a Response: workerd makes no Response with a body outside a request.
  const url = `${WARM_UP_PATH}/apikey=faa_${'w'.repeat(32)}`;
  return Promise.resolve(api.reply({ method: 'GET', url, header: () => null }, source)).then((reply) => reply.status);
}
