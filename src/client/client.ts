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
import type { Archive, Ceremony, CategoryMatch, CategoryName, CategoryYearMatch, FilmMatch, PersonMatch, SearchResult } from '../shared/types.ts';

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
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** The request path with the key replaced by `…`. */
  readonly path: string;
  /** Seconds the API asked to wait, on a 429. */
  readonly retryAfter?: number;

  /** `message` is the API's `error` message, or what went wrong. */
  constructor(status: number, message: string, path: string, retryAfter?: number) {
    super(message);
    this.status = status;
    this.path = path;
    this.retryAfter = retryAfter;
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
  /** Every nomination of the film with this IMDb title id (`tt0120338`), across all ceremonies. */
  titleById(id: string): Promise<PersonMatch[]>;
  /** Every nomination of the person (`nm0000658`) or company (`co0028775`) with this IMDb name id, across all ceremonies. */
  nameById(id: string): Promise<PersonMatch[]>;
  /** Films, people, companies and categories close to `text` (any case, marks, punctuation, typos, word order, joined or split words, an award as people name it), best first, at most 10; each with the `path` that answers it, and its IMDb `id` and `filmYear` where it has them. */
  search(text: string): Promise<SearchResult[]>;
  /** Every full category name, in order of first appearance, with its years and its award. */
  categories(): Promise<CategoryName[]>;
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

/** What one attempt at a request came to: an answer to return, or a wait before the next attempt. */
type Attempt<T> = { value: T } | { waitMs: number };

/** The client's state and its request loop; `createClient` wraps it in the six lookups. */
class Requester {
  private readonly doFetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly maxRetries: number;
  private readonly base: string;
  private readonly cache = new Map<string, Cached>();
  private readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.options = options;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.sleep = options.sleep ?? defaultSleep;
    this.now = options.now ?? Date.now;
    this.maxRetries = options.maxRetries ?? 3;
    this.base = options.baseUrl.replace(/\/+$/, '');
  }

  clear(): void {
    this.cache.clear();
  }

  /** Anything that might echo the key (a fetch error naming the URL, say) loses it. */
  private redact(text: string): string {
    const key = this.options.apiKey;
    return key ? text.split(key).join('…').split(encodeURIComponent(key)).join('…') : text;
  }

  private remember(path: string, entry: Cached): Cached {
    this.cache.delete(path);
    this.cache.set(path, entry);
    while (this.cache.size > (this.options.maxCacheEntries ?? 100)) this.cache.delete(this.cache.keys().next().value!);
    return entry;
  }

  /** The answer at `/segments…/apikey=<key>`: from the cache while fresh, revalidated after, retried as the API asks. */
  async get<T>(segments: string[]): Promise<T> {
    const path = `/${segments.join('/')}`;
    const cached = this.cache.get(path);
    if (cached && cached.freshUntil > this.now()) return JSON.parse(this.remember(path, cached).text) as T;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt<T>(path, attempt);
      if ('value' in outcome) return outcome.value;
      await this.sleep(outcome.waitMs);
    }
  }

  private async attempt<T>(path: string, attempt: number): Promise<Attempt<T>> {
    const shown = `${path}/apikey=…`;
    const cached = this.cache.get(path);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    let response: Response;
    try {
      response = await this.doFetch(`${this.base}${path}/apikey=${encodeURIComponent(this.options.apiKey)}`, { headers });
    } catch (error) {
      if (attempt < this.maxRetries) return { waitMs: this.backoff(attempt) };
      throw new ApiError(0, this.redact(`Request failed: ${(error as Error)?.message ?? String(error)}`), shown);
    }
    if (response.status === 304 && cached) {
      await response.body?.cancel();
      const fresh = { ...cached, etag: response.headers.get('etag') ?? cached.etag, freshUntil: this.freshUntil(response) };
      return { value: JSON.parse(this.remember(path, fresh).text) as T };
    }
    if (response.ok) return { value: await this.accept<T>(path, response, shown) };
    return this.refused(response, attempt, shown);
  }

  private backoff(attempt: number): number {
    return (this.options.backoffMs ?? 500) * 2 ** attempt;
  }

  private freshUntil(response: Response): number {
    return this.now() + maxAge(response.headers.get('cache-control')) * 1000;
  }

  /** A 2xx: its JSON, kept with its ETag unless the API said not to store it. */
  private async accept<T>(path: string, response: Response, shown: string): Promise<T> {
    const text = await response.text();
    let value: T;
    try {
      value = JSON.parse(text) as T;
    } catch {
      throw new ApiError(response.status, 'The answer was not JSON', shown);
    }
    if (!/no-store/i.test(response.headers.get('cache-control') ?? '')) {
      this.remember(path, { text, etag: response.headers.get('etag'), freshUntil: this.freshUntil(response) });
    }
    return value;
  }

  /** A 429 is waited out (Retry-After), a 5xx backed off; both a bounded number of times. Anything else is thrown. */
  private async refused(response: Response, attempt: number, shown: string): Promise<{ waitMs: number }> {
    const message = await this.errorMessage(response);
    if (response.status === 429) {
      const seconds = parseRetryAfter(response.headers.get('retry-after'), this.now()) ?? 1;
      if (attempt < this.maxRetries && seconds <= (this.options.maxRetryAfterSeconds ?? 120)) return { waitMs: seconds * 1000 };
      throw new ApiError(429, message, shown, seconds);
    }
    if (response.status >= 500 && attempt < this.maxRetries) return { waitMs: this.backoff(attempt) };
    throw new ApiError(response.status, message, shown);
  }

  private async errorMessage(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    try {
      const body = JSON.parse(text) as { error?: unknown };
      if (typeof body?.error === 'string') return this.redact(body.error);
    } catch {
      // not JSON: fall through to the status
    }
    return `HTTP ${response.status}`;
  }
}

const seg = (name: string, value: string | number) => `${name}=${encodeURIComponent(String(value))}`;

export function createClient(options: ClientOptions): Client {
  const api = new Requester(options);
  return {
    archive: () => api.get<Archive>(['archive']),
    ceremony: (year) => api.get<Ceremony>(['archive', seg('year', year)]),
    person: (name) => api.get<PersonMatch[]>(['person', seg('name', name)]),
    film: (name, year) => api.get<FilmMatch[]>(['movie', seg('name', name), seg('year', year)]),
    category: (name) => api.get<CategoryMatch[]>(['award', seg('name', name)]),
    categoryAt: (name, year) => api.get<CategoryYearMatch[]>(['award', seg('name', name), seg('year', year)]),
    titleById: (id) => api.get<PersonMatch[]>(['title', seg('id', id)]),
    nameById: (id) => api.get<PersonMatch[]>(['name', seg('id', id)]),
    search: (text) => api.get<SearchResult[]>(['search', seg('name', text)]),
    categories: () => api.get<CategoryName[]>(['categories']),
    clearCache: () => api.clear(),
  };
}

/** The shapes the lookups answer with, for code that names them (`Nomination`, `PersonMatch`, …). */
export type * from '../shared/types.ts';
