/**
 * What a shared cache (Netlify's CDN, Workers Cache, Varnish) may keep, and
 * how it is taken back. Only answers to a good key are shared: a 200 or 304
 * and a lookup's 404, which only a new revision can change. Each is tagged
 * with its key's id (never the key) and with the revision, so that a revoke
 * or a rotate purges that key's answers and a new build purges the old
 * build's. The browser's policy (Cache-Control) is left as it was; the
 * runtime names the header its cache reads. Nothing here knows a runtime.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { ApiReply } from './reply.ts';
import type { Manifest } from '../shared/types.ts';

/** How long a shared cache keeps an answer: as long as its revision is served, since revokes and new builds purge it. */
export const SHARED_MAX_AGE = 31_536_000;

/** Which response headers a runtime's shared cache reads. */
export interface SharedCache {
  /** The targeted cache-control header (RFC 9213): `Netlify-CDN-Cache-Control`, `Cloudflare-CDN-Cache-Control`, `CDN-Cache-Control`. */
  control: string;
  /** The tag header: `Netlify-Cache-Tag`, `Cache-Tag`, `xkey` (Varnish's xkey vmod); tags separated by `separator`. */
  tags: string;
  /** Between tags: `,` for Netlify and Cloudflare, a space for xkey. */
  separator: string;
}

export const NETLIFY_CACHE: SharedCache = { control: 'netlify-cdn-cache-control', tags: 'netlify-cache-tag', separator: ',' };
export const CLOUDFLARE_CACHE: SharedCache = { control: 'cloudflare-cdn-cache-control', tags: 'cache-tag', separator: ',' };
export const VARNISH_CACHE: SharedCache = { control: 'cdn-cache-control', tags: 'xkey', separator: ' ' };

/** The tag every shared answer of one key carries: from its id (`faa_` and 8 characters), never the key. */
export const keyTag = (id: string) => `key-${id}`;
/** The tag every shared answer carries: purging it takes back every keyed answer (a restart on another build). */
export const ALL_TAG = 'answers';

const REVISIONS = new WeakMap<Manifest, string>();

/** The tag of the build a manifest describes: its digest, so any rebuild that changes a stored answer changes it. */
export function revisionTag(manifest: Manifest): string {
  let tag = REVISIONS.get(manifest);
  if (!tag) REVISIONS.set(manifest, (tag = `rev-${bytesToHex(sha256(new TextEncoder().encode(JSON.stringify(manifest)))).slice(0, 16)}`));
  return tag;
}

/** `reply` (never modified: replies may be shared) with the headers that let `cache` keep it, tagged by key id and revision. */
export function shared(reply: ApiReply, cache: SharedCache, id: string, revision: string): ApiReply {
  const headers = { ...reply.headers, [cache.control]: `public, max-age=${SHARED_MAX_AGE}`, [cache.tags]: [keyTag(id), revision, ALL_TAG].join(cache.separator) };
  return { ...reply, headers };
}

/** A runtime's purge: takes back everything carrying any of `tags`; rejects when the cache did not confirm. */
export type Purge = (tags: string[]) => Promise<void>;

/** Attempts and the pause before each retry, ms. */
const RETRY_PAUSES = [0, 200, 600];

/**
 * Purges `tags`, retrying a failure; never rejects: a purge that kept failing
 * is logged with `what` (a key's id, never the key) and the revoke it follows
 * stands. Resolves true when the cache confirmed.
 */
export async function purgeTags(purge: Purge, tags: string[], what: string, log: (line: string) => void = console.error): Promise<boolean> {
  let last: unknown;
  for (const [attempt, pause] of RETRY_PAUSES.entries()) {
    if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
    try {
      await purge(tags);
      return true;
    } catch (error) {
      last = error;
      log(`cache purge for ${what} failed (attempt ${attempt + 1} of ${RETRY_PAUSES.length}): ${(error as Error)?.message ?? String(error)}`);
    }
  }
  log(`cache purge for ${what} gave up: its cached answers stay until purged by hand (${(last as Error)?.message ?? String(last)})`);
  return false;
}

/**
 * How long after a revoke an instance may still accept the key from its key
 * cache (about a second everywhere): an answer made in that window could be
 * stored again, so a key's tag is purged a second time after it.
 */
export const KEY_SETTLE_MS = 1_200;

/**
 * Takes back a revoked or rotated-away key's shared answers: a purge at once
 * and another after KEY_SETTLE_MS. Never rejects; `wait` (the Worker's and
 * Netlify's waitUntil) keeps the second purge alive after the reply, else it
 * is awaited.
 */
export async function purgeKey(purge: Purge, id: string, log?: (line: string) => void, wait?: (done: Promise<unknown>) => void): Promise<void> {
  const tags = [keyTag(id)];
  await purgeTags(purge, tags, `key ${id}…`, log);
  const again = new Promise((resolve) => setTimeout(resolve, KEY_SETTLE_MS)).then(() => purgeTags(purge, tags, `key ${id}…`, log));
  if (wait) wait(again);
  else await again;
}

/** Longest a purge request to the hook may take, ms. */
const HOOK_TIMEOUT_MS = 2_000;

/**
 * The own server's purge hook (CACHE_PURGE_URL): `PURGE` with the tags in an
 * `xkey-purge` header, as deploy/varnish/default.vcl takes it (from
 * localhost only); any 2xx confirms.
 */
export function purgeHook(url: string): Purge {
  return async (tags) => {
    const reply = await fetch(url, { method: 'PURGE', headers: { 'xkey-purge': tags.join(' ') }, signal: AbortSignal.timeout(HOOK_TIMEOUT_MS) });
    await reply.body?.cancel();
    if (!reply.ok) throw new Error(`${url} answered ${reply.status}`);
  };
}

/**
 * A platform purge where the platform may not offer one (Workers Cache's
 * `ctx.cache` under `wrangler dev`, Netlify's CDN under `dev:netlify`): the
 * call, or without it a line saying which tags a deploy would purge; such a
 * local run keeps no shared cache, so there is nothing to take back.
 */
export function guardedPurge(call: () => ((tags: string[]) => Promise<unknown>) | undefined, where: string, log: (line: string) => void): Purge {
  return async (tags) => {
    const purge = call();
    if (purge) await purge(tags);
    else log(`cache purge skipped (no ${where} here): ${tags.join(' ')}`);
  };
}

/** What Workers Cache offers on a Worker's context: `ctx.cache`, scoped to the Worker (the same on every request's context); absent under `wrangler dev`. */
export interface WorkerCacheContext {
  cache?: { purge(options: { tags: string[] }): Promise<unknown> };
}

/** A Worker's purge: `seen(ctx)` on each request keeps its `ctx.cache`; without one the purge is skipped with a line. */
export function workersPurge(log: (line: string) => void) {
  let cache: WorkerCacheContext['cache'];
  return {
    seen(ctx: WorkerCacheContext | undefined) {
      try {
        cache ??= ctx?.cache;
      } catch {
        // a context whose cache cannot be read: the purge is skipped
      }
    },
    purge: guardedPurge(() => cache && ((tags) => cache!.purge({ tags })), 'ctx.cache', log),
  };
}

/** The portal's pages and files and `/health`, which no shared cache keeps, whatever a public file's Cache-Control allows browsers. */
export const neverShared = (pathname: string) => /^\/(portal|health)(\/|\.|$)/.test(pathname);
