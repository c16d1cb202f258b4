/**
 * The API as a Cloudflare Worker: the build's files from the static-assets
 * binding (ASSETS), keys in D1 (DB) behind a per-isolate cache of about a
 * second, the portal's mail over an HTTP e-mail API (a Worker cannot speak
 * SMTP). Bindings are declared in wrangler.jsonc; settings are the Worker's
 * variables: RATE_LIMIT_PER_MINUTE, PORTAL_ISSUE_LIMIT_PER_MINUTE,
 * MAIL_API_URL, MAIL_API_TOKEN (a secret), MAIL_FROM, PUBLIC_BASE_URL.
 */
import { guardedPurge, purgeKeys, type SharedHeaders } from '../src/http/cache.ts';
import { type Api, createApi } from '../src/api/handler.ts';
import { FetchedFiles } from './_fetch.ts';
import { type D1DatabaseLike, d1Keys } from './_cloudflare/d1-keys.ts';
import { DEFAULT_ISSUE_LIMIT, DEFAULT_RATE_LIMIT_PER_MINUTE, settingOr } from '../src/shared/limits.ts';
import { chooseMailer, noTransport } from '../src/portal/mail.ts';

interface Env {
  ASSETS: { fetch(request: Request): Promise<Response> };
  DB: D1DatabaseLike;
}
/** Workers Cache's purge, on a Worker's context (the same on every request's; absent under wrangler dev). */
type WorkersCache = { purge(options: { tags: string[] }): Promise<unknown> } | undefined;

/** What Workers Cache reads: its own targeted header and Cache-Tag; what is never shared says no-store, or Cache-Control would let the cache keep a public file. */
const cloudflareHeaders: SharedHeaders = (p): Record<string, string> => (p.keep ? { 'cloudflare-cdn-cache-control': `public, max-age=${p.maxAge}`, 'cache-tag': p.tags.join(',') } : { 'cloudflare-cdn-cache-control': 'no-store' });
let workersCache: WorkersCache;
const purge = guardedPurge(() => workersCache && ((tags) => workersCache!.purge({ tags })), 'ctx.cache', (line) => console.error(line));
/** One per isolate, made on its first request: bindings and variables are the same for every request an isolate serves. */
let api: Api | undefined;

function apiFor(env: Env): Api {
  const vars = env as unknown as Record<string, string | undefined>;
  const setting = (name: string, fallback: number) => settingOr(console.error, name, vars[name], fallback, 1);
  const keys = d1Keys(env.DB);
  let sendMail = noTransport;
  try {
    sendMail = chooseMailer(vars)?.send ?? noTransport;
  } catch (error) {
    console.error(`${(error as Error).message}; sign-in mail cannot be sent`); // MAIL_API_URL without its token, or SMTP_URL
  }
  // Workers Cache (wrangler.jsonc) keeps answers to a good key, tagged; a revoke or rotate purges the key's tag.
  const portal = { keys, sendMail, purgeKeys: (ids: string[]) => purgeKeys(purge, ids, (line) => console.error(line)), publicBaseUrl: vars.PUBLIC_BASE_URL || undefined, issueLimitPerMinute: setting('PORTAL_ISSUE_LIMIT_PER_MINUTE', DEFAULT_ISSUE_LIMIT) };
  return createApi({ keys, rateLimitPerMinute: setting('RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE), log: (line) => console.log(line), sharedCache: cloudflareHeaders, portal });
}

async function handle(files: FetchedFiles, request: Request, env: Env, ctx?: { cache?: WorkersCache }): Promise<Response> {
  api ??= apiFor(env);
  try {
    workersCache ??= ctx?.cache;
  } catch {} // a context whose cache cannot be read: the purge is skipped, with a line
  // Static assets are kept by their content as the deploy uploaded them (deploy:cloudflare checks dist/ first): answers stream through.
  const source = files.through((path) => env.ASSETS.fetch(new Request(new URL(`/${path}`, request.url))), { streams: true });
  return api.handle(request, source, request.headers.get('cf-connecting-ip') ?? undefined);
}

/** The Worker, reading `bundled` (build files' texts by path, adapters/_cloudflare/worker-bundle.node.ts) from its own code, the rest from ASSETS. */
export function worker(bundled: Record<string, string> = {}) {
  const files = new FetchedFiles({ bundled });
  return { fetch: (request: Request, env: Env, ctx?: { cache?: WorkersCache }) => handle(files, request, env, ctx) };
}
export default /* @__PURE__ */ worker();
