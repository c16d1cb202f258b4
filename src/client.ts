/**
 * A small typed client for the API, for any runtime with `fetch` (Node 18+,
 * Deno, browsers, workers). It behaves the way the reference page asks
 * clients to: answers are kept in memory with their ETag and reused while
 * fresh, then revalidated with If-None-Match (a 304 costs no body); a 429 is
 * waited out for Retry-After seconds; a 500 is retried with exponential
 * back-off, a bounded number of times. The key never appears in an error.
 *
 *   const api = createClient({ baseUrl: 'https://…', apiKey: process.env.FAA_KEY! });
 *   const wins = (await api.person('Emma Stone')).filter((m) => m.nomination.won);
 */
import type { Archive, Ceremony, CategoryMatch, CategoryYearMatch, FilmMatch, PersonMatch } from './types.ts';

export interface ClientOptions {
  /** Where the API is served, e.g. `https://awards.example.org` (a path prefix is kept). */
  baseUrl: string;
  /** Your key; it goes in the `apikey=` path segment and nowhere else. */
  apiKey: string;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
  /** Retries after a 429 or a 5xx before giving up; default 3. */
  maxRetries?: number;
  /** First back-off after a 5xx, doubled on each retry; default 500 ms. */
  backoffMs?: number;
  /** Longest Retry-After the client waits out; a longer one is thrown as the 429. Default 120 s. */
  maxRetryAfterSeconds?: number;
  /** Answers kept in memory, least recently used dropped first; default 100. */
  maxCacheEntries?: number;
  /** How to wait, for tests; default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Clock for cache freshness, for tests; default Date.now. */
  now?: () => number;
}

/** A non-2xx answer the client did not retry (or ran out of retries for), or a network failure (status 0). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** HTTP status; 0 when no answer arrived. */
    readonly status: number,
    /** The API's `error` message, or what went wrong. */
    message: string,
    /** The request path with the key replaced by `…`. */
    readonly path: string,
    /** Seconds the API asked to wait, on a 429. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

interface Cached {
  text: string;
  etag: string | null;
  /** Until when (client clock, ms) the answer is used without asking. */
  freshUntil: number;
}

export interface Client {
  /** Every ceremony year and its categories (large: prefer a narrower lookup when you can). */
  archive(): Promise<Archive>;
  /** The categories of the ceremony held in `year`. */
  ceremony(year: number | string): Promise<Ceremony>;
  /** Every nomination naming this person, company or film (exact, case-sensitive). */
  person(name: string): Promise<PersonMatch[]>;
  /** Every nomination naming this film (or person) at the ceremony held in `year`. */
  film(name: string, year: number | string): Promise<FilmMatch[]>;
  /** Every category whose name contains `name` (case-sensitive), across all ceremonies. */
  category(name: string): Promise<CategoryMatch[]>;
  /** Every category whose name contains `name` (case-sensitive), at the ceremony held in `year`. */
  categoryAt(name: string, year: number | string): Promise<CategoryYearMatch[]>;
  /** Forgets every cached answer. */
  clearCache(): void;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Seconds from `Cache-Control: max-age=N`; 0 when the answer must not be reused without asking. */
function maxAge(cacheControl: string | null): number {
  if (!cacheControl || /no-cache|no-store/i.test(cacheControl)) return 0;
  const m = /max-age=(\d+)/i.exec(cacheControl);
  return m ? Number(m[1]) : 0;
}

export function createClient(options: ClientOptions): Client {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const maxRetries = options.maxRetries ?? 3;
  const backoffMs = options.backoffMs ?? 500;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 120;
  const maxEntries = options.maxCacheEntries ?? 100;
  const base = options.baseUrl.replace(/\/+$/, '');
  const key = options.apiKey;
  const cache = new Map<string, Cached>();

  /** Anything that might echo the key (a fetch error naming the URL, say) loses it. */
  const redact = (text: string) =>
    key ? text.split(key).join('…').split(encodeURIComponent(key)).join('…') : text;

  function remember(path: string, entry: Cached) {
    cache.delete(path);
    cache.set(path, entry);
    while (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
  }

  async function get<T>(segments: string[]): Promise<T> {
    const path = `/${segments.join('/')}`;
    const shown = `${path}/apikey=…`;
    const url = `${base}${path}/apikey=${encodeURIComponent(key)}`;
    let cached = cache.get(path);
    if (cached && cached.freshUntil > now()) {
      remember(path, cached);
      return JSON.parse(cached.text) as T;
    }

    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (cached?.etag) headers['if-none-match'] = cached.etag;
      let response: Response;
      try {
        response = await doFetch(url, { headers });
      } catch (error) {
        if (attempt < maxRetries) {
          await sleep(backoffMs * 2 ** attempt);
          continue;
        }
        throw new ApiError(0, redact(`Request failed: ${(error as Error)?.message ?? String(error)}`), shown);
      }

      if (response.status === 304 && cached) {
        await response.body?.cancel();
        cached = { ...cached, etag: response.headers.get('etag') ?? cached.etag, freshUntil: now() + maxAge(response.headers.get('cache-control')) * 1000 };
        remember(path, cached);
        return JSON.parse(cached.text) as T;
      }
      if (response.ok) {
        const text = await response.text();
        let value: T;
        try {
          value = JSON.parse(text) as T;
        } catch {
          throw new ApiError(response.status, 'The answer was not JSON', shown);
        }
        const cacheControl = response.headers.get('cache-control');
        if (!/no-store/i.test(cacheControl ?? '')) {
          remember(path, { text, etag: response.headers.get('etag'), freshUntil: now() + maxAge(cacheControl) * 1000 });
        }
        return value;
      }

      const message = await errorMessage(response);
      if (response.status === 429) {
        const seconds = parseRetryAfter(response.headers.get('retry-after'), now()) ?? 1;
        if (attempt < maxRetries && seconds <= maxRetryAfter) {
          await sleep(seconds * 1000);
          continue;
        }
        throw new ApiError(429, message, shown, seconds);
      }
      if (response.status >= 500 && attempt < maxRetries) {
        await sleep(backoffMs * 2 ** attempt);
        continue;
      }
      throw new ApiError(response.status, message, shown);
    }
  }

  async function errorMessage(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    try {
      const body = JSON.parse(text) as { error?: unknown };
      if (typeof body?.error === 'string') return redact(body.error);
    } catch {
      // not JSON: fall through to the status
    }
    return `HTTP ${response.status}`;
  }

  const seg = (name: string, value: string | number) => `${name}=${encodeURIComponent(String(value))}`;

  return {
    archive: () => get<Archive>(['archive']),
    ceremony: (year) => get<Ceremony>(['archive', seg('year', year)]),
    person: (name) => get<PersonMatch[]>(['person', seg('name', name)]),
    film: (name, year) => get<FilmMatch[]>(['movie', seg('name', name), seg('year', year)]),
    category: (name) => get<CategoryMatch[]>(['award', seg('name', name)]),
    categoryAt: (name, year) => get<CategoryYearMatch[]>(['award', seg('name', name), seg('year', year)]),
    clearCache: () => cache.clear(),
  };
}
