/**
 * What a shared cache in front of the API may keep, decided once for every
 * runtime, and how a purge is retried. Only
 * answers to a good key are shared: a 200 or 304 and a lookup's 404, which
 * only a new revision can change. Each is tagged with its key's id (never the
 * key) and with the revision, so that a revoke or a rotate purges that key's
 * answers and a new build purges the old build's. The browser's policy
 * (Cache-Control) is left as it was. The decision is a small value
 * (`SharedPolicy`); each adapter names the headers its cache reads
 * (`SharedHeaders`) and brings its own purge (`Purge`): nothing here knows a
 * runtime, a header of one, or how its cache is purged.
 */
import type { ApiReply } from './reply.ts';
import type { Manifest } from '../shared/types.ts';
import { andThen, type Maybe } from '../shared/maybe.ts';
import { sha256Hex } from '../store/refs.ts';

/**
 * How long a shared cache keeps an answer: as long as its revision is served, since revokes and new builds purge it.
 */
export const SHARED_MAX_AGE = 31_536_000;

/**
 * What a shared cache may do with one reply, whatever Cache-Control lets
 * browsers do: keep it `maxAge` seconds under `tags`, or never keep it.
 */
export type SharedPolicy = { keep: true; maxAge: number; tags: string[] } | { keep: false };

/**
 * A runtime's way of telling its shared cache a policy: the
 * response headers that cache reads (each adapter names its own).
 */
export type SharedHeaders = (policy: SharedPolicy) => Record<string, string>;

/** The tag every shared answer of one key carries: from its id (`faa_` and 8 characters), never the key. */
export const keyTag = (id: string) => `key-${id}`;
/** The tag every shared answer carries: purging it takes back every keyed answer (a restart on another build). */
export const ALL_TAG = 'answers';

const REVISIONS = new WeakMap<Manifest, string>();

/**
 * The tag of the build a manifest describes: its digest, so any rebuild that
 * changes a stored answer changes it. Made once per manifest, then at once.
 * The digest is WebCrypto's: hashing the manifest's 18 KB in plain code cost
 * a fresh Worker isolate's first answer about 5 ms of CPU.
 */
export function revisionTag(manifest: Manifest): Maybe<string> {
  const tag = REVISIONS.get(manifest);
  if (tag) return tag;
  return sha256Hex(JSON.stringify(manifest)).then((hex) => {
    const made = `rev-${hex.slice(0, 16)}`;
    REVISIONS.set(manifest, made);
    return made;
  });
}

/**
 * A good key's answer (id `id`) from the build `manifest`: kept as long as
 * the revision is served, or for the `left` seconds its key still works (a
 * key in its grace period), tagged by key id, revision and ALL_TAG.
 */
export function keyedPolicy(id: string, manifest: Manifest, left: number): Maybe<SharedPolicy> {
  return andThen(revisionTag(manifest), (revision): SharedPolicy => ({
    keep: true,
    maxAge: Math.min(left, SHARED_MAX_AGE),
    tags: [keyTag(id), revision, ALL_TAG],
  }));
}

/**
 * What no shared cache keeps: the portal's pages and files and
 * `/health`, whatever a public file's Cache-Control allows browsers.
 */
export const NEVER_SHARED: SharedPolicy = { keep: false };

/** Whether a path's replies are never shared (NEVER_SHARED): the portal's pages, files and endpoints, and `/health`. */
export const neverShared = (pathname: string) => /^\/(portal|health)(\/|\.|$)/.test(pathname);

/**
 * `reply` (never modified: replies may be shared) with the headers
 * `headers` gives for `policy`; `reply` itself when it gives none.
 */
export function marked(reply: ApiReply, headers: SharedHeaders, policy: SharedPolicy): ApiReply {
  const added = headers(policy);
  return Object.keys(added).length === 0 ? reply : { ...reply, headers: { ...reply.headers, ...added } };
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
export function reasonOf(error: unknown): string {
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
export async function purgeTags(
  purge: Purge,
  tags: string[],
  what: string,
  warn: (line: string) => void = console.error,
): Promise<boolean> {
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
 * confirmed. `wait` (a platform's waitUntil) keeps the second
 * purge alive after the reply, else it is awaited.
 */
export async function purgeKeys(
  purge: Purge,
  ids: string[],
  warn?: (line: string) => void,
  wait?: (done: Promise<unknown>) => void,
): Promise<boolean> {
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

/**
 * A platform's purge where the platform may not offer one (its local
 * stand-in, as `npm run dev:cloudflare` and `dev:netlify` are): the call, or
 * without it a line saying which tags a deploy would purge (`where` names
 * what is missing); such a local run keeps no shared cache, so there is
 * nothing to take back.
 */
export function guardedPurge(
  call: () => ((tags: string[]) => Promise<unknown>) | undefined,
  where: string,
  log: (line: string) => void,
): Purge {
  return async (tags) => {
    const purge = call();
    if (purge) await purge(tags);
    else log(`cache purge skipped (no ${where} here): ${tags.join(' ')}`);
  };
}
