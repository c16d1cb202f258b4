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

/**
 * A runtime's purge: takes back everything carrying any of `tags`; rejects
 * when the cache did not confirm. `signal` ends an attempt that takes too long
 * (a purge that cannot be cut off is left behind: `purgeTags` waits no longer).
 */
export type Purge = (tags: string[], signal?: AbortSignal) => Promise<void>;

/** Attempts and the pause before each retry, ms. */
const RETRY_PAUSES = [0, 200, 600];
/** Longest one purge attempt may take, ms: a hanging endpoint never holds a revoke (or the CLI) long. */
export const PURGE_ATTEMPT_MS = 2_000;
/** Longest all of a purge's attempts and pauses together may take, ms. */
export const PURGE_TOTAL_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `work`, or a rejection as soon as `signal` aborts, whichever comes first. */
function bounded<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let stop: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  work.catch(() => {}); // an attempt given up on may still fail later: nobody waits for it
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', stop!));
}

/** Why an attempt failed, in a few words: a timeout says so; a network error gives its code. */
function reasonOf(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${PURGE_ATTEMPT_MS / 1000} s`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e?.message} (${cause})` : (e?.message ?? String(error));
}

/**
 * Purges `tags`, retrying a failure, each attempt within PURGE_ATTEMPT_MS and
 * all within PURGE_TOTAL_MS; never rejects: each failure is a line for `warn`
 * naming `what` (a key's id, never the key), and the revoke it follows
 * stands. Resolves true when the cache confirmed, false when it gave up.
 */
export async function purgeTags(purge: Purge, tags: string[], what: string, warn: (line: string) => void = console.error): Promise<boolean> {
  const deadline = Date.now() + PURGE_TOTAL_MS;
  let last: unknown;
  for (const [attempt, pause] of RETRY_PAUSES.entries()) {
    if (pause) await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
    const left = deadline - Date.now();
    if (left <= 0) break;
    const signal = AbortSignal.timeout(Math.min(PURGE_ATTEMPT_MS, left));
    try {
      await bounded(purge(tags, signal), signal);
      return true;
    } catch (error) {
      last = error;
      warn(`cache purge for ${what} failed (attempt ${attempt + 1} of ${RETRY_PAUSES.length}): ${reasonOf(error)}`);
    }
  }
  warn(`cache purge for ${what} gave up: its cached answers stay until purged by hand (${reasonOf(last)})`);
  return false;
}

/**
 * How long after a revoke an instance may still accept the key from its key
 * cache (about a second everywhere): an answer made in that window could be
 * stored again, so a key's tag is purged a second time after it.
 */
export const KEY_SETTLE_MS = 1_200;

/**
 * Takes back the shared answers of keys revoked or rotated away, by id: one
 * purge of all their tags at once and, once it is confirmed, another after
 * KEY_SETTLE_MS. Never rejects; resolves true when every purge it awaited was
 * confirmed. `wait` (the Worker's and Netlify's waitUntil) keeps the second
 * purge alive after the reply, else it is awaited.
 */
export async function purgeKeys(purge: Purge, ids: string[], warn?: (line: string) => void, wait?: (done: Promise<unknown>) => void): Promise<boolean> {
  if (ids.length === 0) return true;
  const tags = ids.map(keyTag);
  const what = ids.map((id) => `key ${id}…`).join(', ');
  // Gave up: the cache is unreachable, and a second round would only make the caller wait as long again.
  if (!(await purgeTags(purge, tags, what, warn))) return false;
  const again = sleep(KEY_SETTLE_MS).then(() => purgeTags(purge, tags, what, warn));
  if (wait) {
    wait(again);
    return true;
  }
  return again;
}

/** Query parameters whose value is a secret by its name. */
const SECRET_PARAM = /token|key|secret|pass|auth|sig|session|credential|code/i;

/**
 * A purge URL as it may be printed: no user or password (`***` stands for
 * them), and the value of every query parameter named like a secret or
 * shaped like one (16 characters or more) as `***`.
 */
export function shownUrl(url: URL): string {
  const who = url.username || url.password ? '***@' : '';
  const query = [...url.searchParams].map(([name, value]) => `${name}=${SECRET_PARAM.test(name) || value.length >= 16 ? '***' : encodeURIComponent(value)}`);
  return `${url.protocol}//${who}${url.host}${url.pathname}${query.length ? `?${query.join('&')}` : ''}`;
}

/**
 * CACHE_PURGE_URL checked: an absolute http or https URL with a host, as
 * given; a RangeError in one line otherwise (naming no password).
 */
export function purgeUrlSetting(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // said below
  }
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
    const shown = url ? ` (${shownUrl(url)})` : '';
    throw new RangeError(`CACHE_PURGE_URL must be an http or https URL with a host, such as http://127.0.0.1:6081/; got an unusable value${shown}`);
  }
  return value;
}

/**
 * The own server's purge hook (CACHE_PURGE_URL): `PURGE` with the tags in an
 * `xkey-purge` header, as deploy/varnish/default.vcl takes it (from
 * localhost only); any 2xx confirms. A user and password in the URL are sent
 * as Basic authentication (fetch refuses them in a URL) and never printed; a
 * redirect is not followed (it could send the credentials and the purge to
 * another host) and counts as a failure.
 */
export function purgeHook(url: string): Purge {
  const target = new URL(purgeUrlSetting(url));
  const shown = shownUrl(target);
  const headers: Record<string, string> = {};
  if (target.username || target.password) {
    const user = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.authorization = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(user)))}`;
    target.username = target.password = '';
  }
  return async (tags, signal) => {
    let reply: Response;
    try {
      reply = await fetch(target, { method: 'PURGE', headers: { ...headers, 'xkey-purge': tags.join(' ') }, redirect: 'manual', signal });
    } catch (error) {
      throw new Error(`${shown}: ${reasonOf(error)}`);
    }
    await reply.body?.cancel();
    if (reply.status >= 300 && reply.status < 400) throw new Error(`${shown} answered ${reply.status}, a redirect (not followed)`);
    if (!reply.ok) throw new Error(`${shown} answered ${reply.status}`);
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
