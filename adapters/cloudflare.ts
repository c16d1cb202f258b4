/**
 * The API as a Cloudflare Worker: the build's files from the static-assets
 * binding (ASSETS), keys in D1 (DB) behind a per-isolate cache of about a
 * second, the portal's mail over an HTTP e-mail API (a Worker cannot speak
 * SMTP). Bindings are declared in wrangler.jsonc; settings are the Worker's
 * variables: RATE_LIMIT_PER_MINUTE, PORTAL_ISSUE_LIMIT_PER_MINUTE,
 * MAIL_API_URL, MAIL_API_TOKEN (a secret), MAIL_FROM, PUBLIC_BASE_URL.
 */
import { CLOUDFLARE_CACHE, neverShared, purgeKeys, type WorkerCacheContext, workersPurge } from '../src/http/cache.ts';
import { type Api, createApi } from '../src/api/handler.ts';
import { FetchedFiles } from './_fetch.ts';
import { type D1DatabaseLike, d1Keys } from '../src/keys/stores/d1.ts';
import { DEFAULT_ISSUE_LIMIT, DEFAULT_RATE_LIMIT_PER_MINUTE, settingOr } from '../src/shared/limits.ts';
import { chooseMailer, noTransport } from '../src/portal/mail.ts';

interface Env {
  ASSETS: { fetch(request: Request): Promise<Response> };
  DB: D1DatabaseLike;
}

const cache = workersPurge((line) => console.error(line));
const files = new FetchedFiles();
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
  return createApi({
    keys,
    rateLimitPerMinute: setting('RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE),
    log: (line) => console.log(line),
    // Workers Cache (wrangler.jsonc) keeps answers to a good key, tagged; a revoke or rotate purges the key's tag.
    sharedCache: CLOUDFLARE_CACHE,
    portal: { keys, sendMail, purgeKeys: (ids) => purgeKeys(cache.purge, ids, (line) => console.error(line)), publicBaseUrl: vars.PUBLIC_BASE_URL || undefined, issueLimitPerMinute: setting('PORTAL_ISSUE_LIMIT_PER_MINUTE', DEFAULT_ISSUE_LIMIT) },
  });
}

export default {
  async fetch(request: Request, env: Env, ctx?: WorkerCacheContext): Promise<Response> {
    api ??= apiFor(env);
    cache.seen(ctx);
    // Static assets are kept by their content as the deploy uploaded them (deploy:cloudflare checks dist/ first): answers stream through.
    const source = files.through((path) => env.ASSETS.fetch(new Request(new URL(`/${path}`, request.url))), { streams: true });
    const response = await api.handle(request, source, request.headers.get('cf-connecting-ip') ?? undefined);
    if (neverShared(new URL(request.url).pathname)) response.headers.set('cloudflare-cdn-cache-control', 'no-store');
    return response;
  },
};
