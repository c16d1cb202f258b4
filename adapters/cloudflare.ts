/**
 * The API as a Cloudflare Worker: the build's files from the static-assets
 * binding (ASSETS), keys in D1 (DB) behind a per-isolate cache of about a
 * second, the portal's mail over an HTTP e-mail API (a Worker cannot speak
 * SMTP). Bindings are declared in wrangler.jsonc; settings are the Worker's
 * variables: RATE_LIMIT_PER_MINUTE, PORTAL_ISSUE_LIMIT_PER_MINUTE,
 * MAIL_API_URL, MAIL_API_TOKEN (a secret), MAIL_FROM, PUBLIC_BASE_URL.
 */
import type { Api } from '../src/api/handler.ts';
import { ArchiveReader } from '../src/store/archive.ts';
import { FetchedFiles } from './_fetch.ts';
import { apiFor, type Env, warmUp, type WorkersCache } from './_worker.ts';

let workersCache: WorkersCache;

async function handle(
  api: Api,
  files: FetchedFiles,
  request: Request,
  env: Env,
  ctx?: { cache?: WorkersCache },
): Promise<Response> {
  try {
    workersCache ??= ctx?.cache;
  } catch {
    // a context whose cache cannot be read: the purge is skipped, with a line
  }
  // Static assets are kept by their content as the deploy uploaded them
  // (deploy:cloudflare checks dist/ first): answers stream through.
  const source = files.through((path) => env.ASSETS.fetch(new Request(new URL(`/${path}`, request.url))), {
    streams: true,
  });
  return api.handle(request, source, request.headers.get('cf-connecting-ip') ?? undefined);
}

/**
 * The Worker, reading `bundled` (build files' texts by path,
 * adapters/_cloudflare/worker-bundle.node.ts) from its own code, the rest
 * from ASSETS. What it carries is parsed, and its search readied, as the
 * isolate starts (`ArchiveReader.prepare`), and one ranking is asked
 * through the request path (`warmUp`): Cloudflare limits that apart from a
 * request's CPU, so a fresh isolate's first request does not pay for
 * parsing or compiling. Its API is made on the first request: bindings and
 * variables are the same for every request an isolate serves.
 */
export function worker(bundled: Record<string, string> = {}) {
  const files = new FetchedFiles({ bundled });
  const archive = new ArchiveReader();
  archive.prepare(files.carried());
  warmUp(archive, files.carried()).catch((error: unknown) =>
    console.error(`the Worker's warm-up failed (${String(error)}): its first request compiles the request path`),
  );
  let api: Api | undefined;
  return {
    fetch: (request: Request, env: Env, ctx?: { cache?: WorkersCache }) =>
      handle((api ??= apiFor(env, () => workersCache, archive)), files, request, env, ctx),
  };
}
export default /* @__PURE__ */ worker();
