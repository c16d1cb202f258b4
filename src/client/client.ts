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
import type {
  Archive,
  Ceremony,
  CategoryMatch,
  CategoryName,
  CategoryYearMatch,
  FilmMatch,
  PersonMatch,
  SearchResult,
} from '../shared/types.ts';
import type { Category, DatasetList, Nomination } from '../shared/types.ts';
import { SEARCH_DATASET_FILE, searchOver, storedOfDataset } from '../shared/search.ts';
import { DATASET_FILE_NAME, ID_FORMS, MAX_NAME_LENGTH, MAX_SEARCH_LENGTH, recordPath } from '../shared/routes.ts';
import { MESSAGES } from '../shared/messages.ts';
import type {
  AwardRecord,
  AwardSummary,
  CeremonyRecord,
  FilmRecord,
  PeopleRecord,
  Ranking,
  RankingAsk,
  RankingQuery,
} from '../shared/types.ts';

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
  /**
   * Every nomination of the person (`nm0000658`) or company
   * (`co0028775`) with this IMDb name id, across all ceremonies.
   */
  nameById(id: string): Promise<PersonMatch[]>;
  /**
   * Films, people, companies and categories close to `text` (any case, marks, punctuation, typos,
   * word order, joined or split words, an award as people name it), best first, at most 10; each
   * with the `path` that answers it, and its IMDb `id` and `filmYear` where it has them.
   */
  search(text: string): Promise<SearchResult[]>;
  /** Every full category name, in order of first appearance, with its years and its award. */
  categories(): Promise<CategoryName[]>;
  /** The dataset's files (SQLite, NDJSON, a CSV per table), each with its size, sha256, revision and licence. */
  dataset(): Promise<DatasetList>;
  /** One file of the dataset, checked against the sha256 the list gives. */
  datasetFile(name: string): Promise<Uint8Array>;
  /**
   * Everything the archive knows of the film with this IMDb title id (`tt0120338`):
   * titles, film year, ceremonies, totals, ranks, every nomination with every id.
   */
  filmRecord(id: string): Promise<FilmRecord>;
  /** The same for the person (`nm0000658`) or company (`co0007143`) with this IMDb id. */
  peopleRecord(id: string): Promise<PeopleRecord>;
  /**
   * The ceremony held in `year` (1930: both): number, film year, every
   * category with its award and class, every nomination with every id.
   */
  ceremonyRecord(year: number | string): Promise<CeremonyRecord>;
  /** Every award (the source's canonical category), with its names over the years and the path of its record. */
  awards(): Promise<AwardSummary[]>;
  /** One award across all its names (`best-picture`: every Best Picture nominee since 1929). */
  awardRecord(id: string): Promise<AwardRecord>;
  /** The films, people or companies with the most nominations or wins, within a class or an award, over a span of held years (`{ of: 'people', by: 'wins', class: 'Acting', from: 2000 }`); ties share a rank. */
  rankings(query?: RankingQuery): Promise<Ranking>;
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

  /** Forgets the answer kept for `segments`, so the next `get` asks the service. */
  forget(segments: string[]): void {
    this.cache.delete(`/${segments.join('/')}`);
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

  /**
   * The answer at `/segments…/apikey=<key>`: from the cache while fresh, revalidated after, retried as the API asks.
   */
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
      response = await this.doFetch(`${this.base}${path}/apikey=${encodeURIComponent(this.options.apiKey)}`, {
        headers,
      });
    } catch (error) {
      if (attempt < this.maxRetries) return { waitMs: this.backoff(attempt) };
      throw new ApiError(0, this.redact(`Request failed: ${(error as Error)?.message ?? String(error)}`), shown);
    }
    if (response.status === 304 && cached) {
      await response.body?.cancel();
      const fresh = {
        ...cached,
        etag: response.headers.get('etag') ?? cached.etag,
        freshUntil: this.freshUntil(response),
      };
      return { value: JSON.parse(this.remember(path, fresh).text) as T };
    }
    if (response.ok) return { value: await this.accept<T>(path, response, shown) };
    return this.refused(response, attempt, shown);
  }

  /** A file's bytes and ETag, or null for a 304 to `etag`; retried as `get` is, never cached. */
  async file(
    segments: string[],
    etag: string | null = null,
  ): Promise<{ bytes: Uint8Array; etag: string | null } | null> {
    const path = `/${segments.join('/')}`;
    const shown = `${path}/apikey=…`;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.doFetch(`${this.base}${path}/apikey=${encodeURIComponent(this.options.apiKey)}`, {
          headers: etag ? { 'if-none-match': etag } : {},
        });
      } catch (error) {
        if (attempt >= this.maxRetries)
          throw new ApiError(0, this.redact(`Request failed: ${(error as Error)?.message ?? String(error)}`), shown);
        await this.sleep(this.backoff(attempt));
        continue;
      }
      if (response.status === 304) {
        await response.body?.cancel();
        return null;
      }
      if (response.ok)
        return { bytes: new Uint8Array(await response.arrayBuffer()), etag: response.headers.get('etag') };
      await this.sleep((await this.refused(response, attempt, shown)).waitMs);
    }
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
      if (attempt < this.maxRetries && seconds <= (this.options.maxRetryAfterSeconds ?? 120))
        return { waitMs: seconds * 1000 };
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

/**
 * Each lookup's path segments before the key's: the online client
 * asks them, and both clients name them in an error's `path`.
 */
const PATHS = {
  archive: () => ['archive'],
  ceremony: (year: number | string) => ['archive', seg('year', year)],
  person: (name: string) => ['person', seg('name', name)],
  film: (name: string, year: number | string) => ['movie', seg('name', name), seg('year', year)],
  category: (name: string) => ['award', seg('name', name)],
  categoryAt: (name: string, year: number | string) => ['award', seg('name', name), seg('year', year)],
  titleById: (id: string) => ['title', seg('id', id)],
  nameById: (id: string) => ['name', seg('id', id)],
  search: (text: string) => ['search', seg('name', text)],
  categories: () => ['categories'],
  dataset: () => ['dataset'],
  datasetFile: (name: string) => ['dataset', seg('file', name)],
  filmRecord: (id: string) => ['film', seg('id', id)],
  peopleRecord: (id: string) => ['people', seg('id', id)],
  ceremonyRecord: (year: number | string) => ['ceremony', seg('year', year)],
  awards: () => ['awards'],
  awardRecord: (id: string) => ['awards', seg('id', id)],
  rankings: (query: RankingQuery = {}) => [
    'rankings',
    ...Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [seg(k, v)])),
  ],
};

/** A path as an ApiError shows it: the key masked. */
const shown = (segments: string[]) => `/${segments.join('/')}/apikey=…`;

export function createClient(options: ClientOptions): Client {
  const api = new Requester(options);
  return {
    archive: () => api.get<Archive>(PATHS.archive()),
    ceremony: (year) => api.get<Ceremony>(PATHS.ceremony(year)),
    person: (name) => api.get<PersonMatch[]>(PATHS.person(name)),
    film: (name, year) => api.get<FilmMatch[]>(PATHS.film(name, year)),
    category: (name) => api.get<CategoryMatch[]>(PATHS.category(name)),
    categoryAt: (name, year) => api.get<CategoryYearMatch[]>(PATHS.categoryAt(name, year)),
    titleById: (id) => api.get<PersonMatch[]>(PATHS.titleById(id)),
    nameById: (id) => api.get<PersonMatch[]>(PATHS.nameById(id)),
    search: (text) => api.get<SearchResult[]>(PATHS.search(text)),
    categories: () => api.get<CategoryName[]>(PATHS.categories()),
    dataset: () => api.get<DatasetList>(PATHS.dataset()),
    datasetFile: (name) => checkedFile(api, name, null).then((f) => f!.bytes),
    filmRecord: (id) => api.get<FilmRecord>(PATHS.filmRecord(id)),
    peopleRecord: (id) => api.get<PeopleRecord>(PATHS.peopleRecord(id)),
    ceremonyRecord: (year) => api.get<CeremonyRecord>(PATHS.ceremonyRecord(year)),
    awards: () => api.get<AwardSummary[]>(PATHS.awards()),
    awardRecord: (id) => api.get<AwardRecord>(PATHS.awardRecord(id)),
    rankings: (query) => api.get<Ranking>(PATHS.rankings(query)),
    clearCache: () => api.clear(),
  };
}

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
const sha256Of = async (bytes: Uint8Array) =>
  hex(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));

/**
 * A dataset file and its ETag, once its bytes hash to the sha256 the list
 * gives; null when it is `held` (that sha256) or a 304 to `etag`. A mismatch
 * may be a list kept from before a new revision: the list is read again, and
 * the file with it, before the mismatch is thrown.
 */
async function checkedFile(
  api: Requester,
  name: string,
  etag: string | null,
  held?: string,
): Promise<{ bytes: Uint8Array; etag: string | null; sha256: string } | null> {
  const path = shown(PATHS.datasetFile(name));
  if (!DATASET_FILE_NAME.test(name)) throw new ApiError(400, OFFLINE_ERRORS.badFileName, path);
  for (let again = false; ; again = true) {
    if (again) api.forget(PATHS.dataset());
    const entry = (await api.get<DatasetList>(PATHS.dataset())).files.find((f) => f.name === name);
    if (!entry) throw new ApiError(404, 'Dataset file not found', path);
    if (entry.sha256 === held) return null;
    const got = await api.file(PATHS.datasetFile(name), etag);
    if (!got) return null;
    const sha256 = await sha256Of(got.bytes);
    if (sha256 === entry.sha256) return { ...got, sha256 };
    if (again) throw new ApiError(0, `The download of ${name} does not match its sha256: try again`, path);
  }
}

/** A file of the dataset as the offline client holds it: its text, ETag and sha256. */
export interface HeldFile {
  text: string;
  etag: string | null;
  sha256: string;
}

/** The dataset as the offline client holds it: the NDJSON, and beside it the search index (`search.ndjson`) once held. */
export interface HeldDataset extends HeldFile {
  search?: HeldFile;
}

/**
 * Where the offline client keeps the dataset between runs (a file, IndexedDB,
 * …); without one, in memory for the process. What `read` gives is trusted
 * only when its text hashes to its sha256: a store that throws, or holds
 * anything else (cut off mid-write, edited), counts as empty. `write` should
 * replace the copy whole (write a temporary file, then rename it).
 */
export interface DatasetStore {
  read(): HeldDataset | null | Promise<HeldDataset | null>;
  write(held: HeldDataset): void | Promise<void>;
}

/**
 * The NDJSON file downloaded by other means (`curl -o oscars.ndjson
 * …`), for an offline client whose store holds no good copy; with the
 * search index (`search.ndjson`) beside it, search too needs no network.
 */
export interface DatasetSeed extends SeedFile {
  search?: SeedFile;
}

/** A file of the dataset downloaded by other means. */
export interface SeedFile {
  /** The file's text (or bytes), as downloaded. */
  text: string | Uint8Array;
  /** The sha256 the service's list gives for it: checked when given. */
  sha256?: string;
}

export interface OfflineClient extends Client {
  /**
   * Asks the service whether the dataset changed (its list, then If-None-Match) and takes the
   * new one; true when it did. Once the dataset is held, the only method that uses the network.
   */
  update(): Promise<boolean>;
}

/** One line of the NDJSON, as the offline client reads it (build/answers/dataset.ts writes it). */
interface Line {
  ceremony: number;
  held_year: number;
  film_year: string;
  category: { api_name: string; award: string; canonical: string; class: string };
  detail?: string;
  note?: string;
  citation?: string;
  won: boolean;
  films: { title: string; role: string; imdb_id?: string; detail?: string }[];
  people: { name: string; role: string; imdb_id?: string; kind: 'person' | 'company' | 'country'; detail?: string }[];
}

/**
 * The dataset's nominations as the record maker takes them, each film and
 * name placed on its thing as the build does (docs/records.md): one a IMDb
 * id (a pseudonym's place: each of its ids); a text without an id, the one
 * id credited with that text if exactly one is; a country by its kind; else
 * a thing of its own by its text (and kind, which the dataset gives).
 */
function recordRows(lines: Line[]): RecordRow[] {
  const idsOf = (text: string | undefined) => (text ? text.split(',') : []);
  const credited = (pairs: [string, string[]][]) => {
    const map = new Map<string, Set<string>>();
    for (const [text, ids] of pairs)
      for (const id of ids) (map.get(text) ?? map.set(text, new Set()).get(text)!).add(id);
    return map;
  };
  const titleIds = credited(lines.flatMap((l) => l.films.map((f): [string, string[]] => [f.title, idsOf(f.imdb_id)])));
  const nameIds = credited(lines.flatMap((l) => l.people.map((p): [string, string[]] => [p.name, idsOf(p.imdb_id)])));
  const things = new Map<string, RecordThing>();
  const thing = (key: string, kind: RecordThing['kind'], id: string | null) =>
    things.get(key) ?? things.set(key, { kind, id }).get(key)!;
  const byId = (id: string) => thing(id, id.startsWith('tt') ? 'film' : id.startsWith('co') ? 'company' : 'person', id);
  const only = (ids: Set<string> | undefined) => (ids?.size === 1 ? [...ids][0] : undefined);
  return lines.map((l) => {
    const films = l.films.map((f) => {
      const id = f.imdb_id ?? only(titleIds.get(f.title));
      return {
        title: f.title,
        thing: id ? byId(id) : thing(`film\u0000${f.title}\u0000${l.film_year}`, 'film', null),
        ...(f.detail === undefined ? {} : { detail: f.detail }),
      };
    });
    const people = l.people.map((p) => {
      const merged = p.imdb_id || p.kind === 'country' ? undefined : only(nameIds.get(p.name));
      const placed = p.imdb_id
        ? idsOf(p.imdb_id).map(byId)
        : merged
          ? [byId(merged)]
          : [thing(`${p.kind}\u0000${p.name}`, p.kind, null)];
      return { name: p.name, things: placed, ...(p.detail === undefined ? {} : { detail: p.detail }) };
    });
    const { api_name: category, canonical, award, class: klass } = l.category;
    return {
      ceremony: l.ceremony,
      year: String(l.held_year),
      filmYear: l.film_year,
      category,
      canonical,
      award,
      klass,
      won: l.won,
      filmsPrimary: l.films.length > 0 && l.films[0].role === 'primary',
      films,
      people,
      notes: l.note ? l.note.split('|') : [],
      citation: l.citation ?? '',
    };
  });
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The archive made from the dataset as the build makes it from the source:
 * the same order and fields, so each answer is the server's, byte for byte.
 */
class OfflineArchive {
  readonly archive: Archive = {};
  readonly byName = new Map<string, PersonMatch[]>();
  readonly byId = new Map<string, PersonMatch[]>();
  readonly awards = new Map<string, string>();
  private readonly lines: Line[] = [];
  private made: Map<string, string> | undefined;

  private table: RankingTable | undefined;

  /** A record's text by its key (an IMDb id, `ceremony {year}`, `award {id}`, `awards` for the list, RANKING_TABLE for the rankings' table), made on first ask. */
  record(key: string): string | undefined {
    if (!this.made) {
      const { records, awards, rankings } = makeRecords(recordRows(this.lines));
      this.made = new Map([
        ...records.map((r): [string, string] => [r.key, r.text]),
        ['awards', awards],
        [RANKING_TABLE, rankings],
      ]);
    }
    return this.made.get(key);
  }

  /** A ranking's text, made as the server makes it; undefined for an unknown award. */
  ranking(ask: RankingAsk): string | undefined {
    this.table ??= parseRankingTable(this.record(RANKING_TABLE)!);
    return rankingText(this.table, ask) ?? undefined;
  }

  constructor(text: string) {
    const ceremonies = new Map<number, { year: string; categories: Map<string, Category> }>();
    const ids = new Map<Nomination, string[]>();
    for (const json of text.split('\n')) {
      if (json === '') continue;
      const line = JSON.parse(json) as Line;
      // A line of another shape (another dataset format) is refused, never read as a wrong answer.
      if (
        !Number.isInteger(line?.held_year) ||
        typeof line.category?.api_name !== 'string' ||
        !Array.isArray(line.films) ||
        !Array.isArray(line.people)
      )
        throw new Error('not a nomination of dataset format 2');
      this.lines.push(line);
      const { api_name: category, award, canonical } = line.category;
      const links = [...line.films.map((f) => ({ ...f, name: f.title })), ...line.people];
      const notes = [
        ...(canonical === 'MUSIC (Original Song)' && line.detail ? [`Song: "${line.detail}"`] : []),
        ...(line.citation ? [line.citation] : []),
        ...(line.note ? line.note.split('|') : []),
      ];
      const nomination: Nomination = {
        primary: links.filter((l) => l.role === 'primary').map((l) => l.name),
        secondary: links.filter((l) => l.role !== 'primary').map((l) => l.name),
        won: line.won,
      };
      if (notes.length) nomination.notes = notes.join('\n');
      ids.set(nomination, [...new Set(links.flatMap((l) => (l.imdb_id ? l.imdb_id.split(',') : [])))]);
      if (!this.awards.has(category)) this.awards.set(category, award);
      let ceremony = ceremonies.get(line.ceremony);
      if (!ceremony)
        ceremonies.set(line.ceremony, (ceremony = { year: String(line.held_year), categories: new Map() }));
      let group = ceremony.categories.get(category);
      if (!group) ceremony.categories.set(category, (group = { category, nominations: [] }));
      group.nominations.push(nomination);
    }
    for (const [, { year, categories }] of [...ceremonies].sort(([a], [b]) => a - b))
      (this.archive[year] ??= []).push(...categories.values());
    for (const [year, categories] of Object.entries(this.archive)) {
      for (const { category, nominations } of categories) {
        for (const nomination of nominations) {
          const match = { year, category, nomination };
          for (const name of new Set([...nomination.primary, ...nomination.secondary!])) push(this.byName, name, match);
          for (const id of ids.get(nomination)!) push(this.byId, id, match);
        }
      }
    }
  }

  /** Categories whose name contains `text` (case-sensitive), across all years (with their year) or at one. */
  categoriesMatching(text: string, at?: string): (CategoryMatch | Category)[] {
    return Object.entries(this.archive).flatMap(([y, list]) =>
      at === undefined || y === at
        ? list
            .filter((c) => c.category.includes(text))
            .map((c) => (at === undefined ? { year: y, category: c.category, nominations: c.nominations } : c))
        : [],
    );
  }

  /** Every full category name in order of first appearance, as the build's category list. */
  categoryList(): CategoryName[] {
    return categoryList(this.archive, this.awards);
  }
}

/**
 * Every full category name in order of first appearance, with its first and
 * last held year and its award (`awards`, by category; the name itself where
 * it has none): the build's `/categories` and the offline client's alike.
 */
export function categoryList(archive: Archive, awards: ReadonlyMap<string, string>): CategoryName[] {
  const out = new Map<string, CategoryName>();
  for (const [year, categories] of Object.entries(archive)) {
    for (const { category } of categories) {
      const entry = out.get(category);
      if (entry) entry.lastYear = year;
      else
        out.set(category, {
          name: category,
          award: awards.get(category) ?? category,
          firstYear: year,
          lastYear: year,
          path: `/award/name=${encodeURIComponent(category)}`,
        });
    }
  }
  return [...out.values()];
}

/**
 * The service's own 400 and 404 messages, which the offline client answers
 * with: the 400s from src/shared/messages.ts; the 404s written out (the route
 * table holds them with far more that client.js need not carry),
 * test/build/client.test.ts holds them equal.
 */
export const OFFLINE_ERRORS = {
  notFound: {
    ceremony: 'Data not found for the specified year',
    person: 'Person not found',
    film: 'Movie not found',
    category: 'Award not found',
    categoryAt: 'Award not found',
    titleById: 'Title not found',
    nameById: 'Name not found',
    filmRecord: 'Film not found',
    peopleRecord: 'Person or company not found',
    ceremonyRecord: 'Ceremony not found',
    awardRecord: 'Award not found',
    rankings: 'Award not found',
  } as Record<string, string>,
  badYear: MESSAGES.badYear,
  badName: MESSAGES.badName,
  badSearch: MESSAGES.badSearch,
  badTitleId: MESSAGES.badTitleId,
  badNameId: MESSAGES.badNameId,
  badAwardId: MESSAGES.badAwardId,
  badFileName: MESSAGES.badFileName,
};

/** A year as the service reads it (digits, leading zeros dropped), or its 400. */
function year(value: number | string, path: string): string {
  const text = String(value);
  if (!/^[0-9]{1,10}$/.test(text)) throw new ApiError(400, OFFLINE_ERRORS.badYear, path);
  return text.replace(/^0+(?=.)/, '');
}

/** A name as the service takes it (1 to MAX_NAME_LENGTH characters), or its 400. */
function name(value: string, path: string): string {
  if (value.length === 0 || [...value].length > MAX_NAME_LENGTH) throw new ApiError(400, OFFLINE_ERRORS.badName, path);
  return value;
}

/** An id of the form its lookup takes (an IMDb title or name id, an award's), or its 400. */
function id(form: 'title' | 'name' | 'award', value: string, path: string): string {
  const [pattern, message] =
    form === 'title'
      ? [ID_FORMS.titleById, OFFLINE_ERRORS.badTitleId]
      : form === 'name'
        ? [ID_FORMS.nameById, OFFLINE_ERRORS.badNameId]
        : [ID_FORMS.awardRecord, OFFLINE_ERRORS.badAwardId];
  if (!pattern.test(value)) throw new ApiError(400, message, path);
  return value;
}

/**
 * Bytes as text that encodes back to the same bytes (a BOM kept,
 * invalid UTF-8 refused), so the text hashes as the file did.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const decoded = (bytes: Uint8Array): string | null => {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
};

const textSha256 = (text: string) => sha256Of(new TextEncoder().encode(text));

/** The archive `text` holds, or null when it is not the dataset (never an error that could show the text). */
function readable(text: string): OfflineArchive | null {
  try {
    return new OfflineArchive(text);
  } catch {
    return null;
  }
}

/** The search over the index `text` holds (`search.ndjson`), the service's own; null when it is not one. */
function searchable(text: string): Finder | null {
  try {
    return searchOver(storedOfDataset(text));
  } catch {
    return null;
  }
}

type Finder = (text: string) => SearchResult[];

/** What the offline client answers from: the archive, and its search index once held. */
interface OfflineCopy {
  archive: OfflineArchive;
  search: Finder | null;
}

/** `file` when it is a HeldFile whose text hashes to its sha256; else null. */
async function intact(file: unknown): Promise<HeldFile | null> {
  const f = file as HeldFile | null | undefined;
  if (typeof f?.text !== 'string' || typeof f.sha256 !== 'string' || (f.etag !== null && typeof f.etag !== 'string'))
    return null;
  return (await textSha256(f.text)) === f.sha256 ? { text: f.text, etag: f.etag, sha256: f.sha256 } : null;
}

/**
 * A copy as held and read: `text` the NDJSON, `search` the search index, or
 * null (the copy is then kept without it); each read afresh unless `known`
 * gives it already read (a file an update left as it was). Null when the
 * NDJSON does not read as the dataset.
 */
function copyOf(
  text: HeldFile,
  search: HeldFile | null,
  known: Partial<OfflineCopy> = {},
): { held: HeldDataset; data: OfflineCopy } | null {
  const archive = known.archive ?? readable(text.text);
  if (!archive) return null;
  const finder = known.search ?? (search && searchable(search.text));
  return { held: finder ? { ...text, search: search! } : text, data: { archive, search: finder } };
}

/** What the store holds, or null when it holds nothing or cannot be read. */
async function readStore(store: DatasetStore | undefined): Promise<unknown> {
  try {
    return (await store?.read()) ?? null;
  } catch {
    return null;
  }
}

/** A seed's file as held (null when its bytes are not UTF-8), or the ApiError that says it is not the file its sha256 names. */
async function seededFile(seed: SeedFile, name: string): Promise<HeldFile | null> {
  const [text, sha256] =
    typeof seed.text === 'string'
      ? [seed.text, await textSha256(seed.text)]
      : [decoded(seed.text), await sha256Of(seed.text)];
  if (seed.sha256 !== undefined && seed.sha256 !== sha256)
    throw new ApiError(0, `The seed does not match its sha256: download ${name} again`, shown(PATHS.datasetFile(name)));
  return text === null ? null : { text, etag: null, sha256 };
}

/** A seed as a held copy, or the ApiError that says it is not the file its sha256 names (or not the dataset, or its index not one). */
async function seeded(seed: DatasetSeed): Promise<{ held: HeldDataset; data: OfflineCopy }> {
  const text = await seededFile(seed, 'oscars.ndjson');
  const search = seed.search ? await seededFile(seed.search, SEARCH_DATASET_FILE) : null;
  const copy = text && copyOf(text, search);
  if (!copy)
    throw new ApiError(
      0,
      'The seed is not the dataset: expected the oscars.ndjson file the service lists',
      shown(PATHS.datasetFile('oscars.ndjson')),
    );
  if (seed.search && !copy.data.search)
    throw new ApiError(
      0,
      `The seed's search index is not one: expected the ${SEARCH_DATASET_FILE} file the service lists`,
      shown(PATHS.datasetFile(SEARCH_DATASET_FILE)),
    );
  return copy;
}

const unreadable = (name: string) =>
  new ApiError(
    0,
    'The dataset the service sent cannot be read by this client: update the client',
    shown(PATHS.datasetFile(name)),
  );

/** A dataset file downloaded afresh, as held; `current` when the service's is the same. */
async function fresh(api: Requester, name: string, current: HeldFile | null): Promise<HeldFile> {
  const got = await checkedFile(api, name, current?.etag ?? null, current?.sha256);
  if (!got) return current!;
  // Its bytes were hashed as they came (checkedFile): read, not hashed again.
  const text = decoded(got.bytes);
  if (text === null) throw unreadable(name);
  return { text, etag: got.etag, sha256: got.sha256 };
}

/**
 * A client that answers every lookup, search included, from its own copy
 * of the dataset (`oscars.ndjson` and the search index, `search.ndjson`),
 * with no key and no network. The copy comes from `store` when its texts
 * hash to the sha256s they were kept with (a copy without a good index is
 * completed from the service); else from `seed` (the files downloaded by
 * other means); else it is downloaded, checked against the sha256s the list
 * gives. `update()` hashes the copy again and takes the service's files
 * that differ. Its answers are the service's, byte for byte once serialised;
 * a 404 or 400 is the same ApiError (status, message, path) the service's
 * answer would give.
 */
export async function createOfflineClient(
  options: ClientOptions & { store?: DatasetStore; seed?: DatasetSeed },
): Promise<OfflineClient> {
  const api = new Requester(options);
  let held: HeldDataset | null = null;
  let data: OfflineCopy | null = null;
  const keep = async (copy: { held: HeldDataset; data: OfflineCopy }) => {
    [held, data] = [copy.held, copy.data];
    await options.store?.write(copy.held);
  };
  const take = async (): Promise<boolean> => {
    api.clear(); // ask the list afresh
    // Each file as held now, hashed again: one that no longer matches its sha256 is asked for whole.
    const [text, search] = [await intact(held), await intact(held?.search)];
    const next = [await fresh(api, 'oscars.ndjson', text), await fresh(api, SEARCH_DATASET_FILE, search)] as const;
    if (next[0] === text && next[1] === search) return false;
    // A file the service still has as held is not read again (the archive's 6 MB take a while).
    const copy = copyOf(next[0], next[1], {
      archive: next[0] === text ? data?.archive : undefined,
      search: next[1] === search ? data?.search : undefined,
    });
    if (!copy?.data.search) throw unreadable(copy ? SEARCH_DATASET_FILE : 'oscars.ndjson');
    await keep(copy);
    return true;
  };
  const stored = await readStore(options.store);
  const text = await intact(stored);
  const fromStore = text && copyOf(text, await intact((stored as HeldDataset).search));
  if (fromStore) [held, data] = [fromStore.held, fromStore.data];
  if (!fromStore && options.seed) await keep(await seeded(options.seed));
  else if (!fromStore?.data.search) await take(); // nothing held, or held without its index

  const online = createClient(options);
  return {
    ...offlineLookups(() => data!.archive),
    search: async (text) => {
      const at = shown(PATHS.search(text));
      if (text.length === 0 || [...text].length > MAX_SEARCH_LENGTH)
        throw new ApiError(400, OFFLINE_ERRORS.badSearch, at);
      if (!data!.search)
        throw new ApiError(0, `search needs the search index, ${SEARCH_DATASET_FILE}: seed it too, or update()`, at);
      return data!.search(text);
    },
    dataset: online.dataset,
    datasetFile: online.datasetFile,
    clearCache: () => api.clear(),
    update: take,
  };
}

/** `answer`, or the service's 404 for `method` at `segments` when there is none or it is an empty list. */
function found<T>(method: string, segments: string[], answer: T | undefined): T {
  if (answer === undefined || (Array.isArray(answer) && answer.length === 0))
    throw new ApiError(404, OFFLINE_ERRORS.notFound[method], shown(segments));
  return answer;
}

/** The lookups the offline client answers from its copy, each ApiError the service's (status, message, path). */
function offlineLookups(data: () => OfflineArchive): Omit<Client, 'search' | 'dataset' | 'datasetFile' | 'clearCache'> {
  return {
    archive: async () => data().archive,
    ceremony: async (y) => {
      const at = PATHS.ceremony(y);
      return found('ceremony', at, data().archive[year(y, shown(at))]);
    },
    person: async (n) => {
      const at = PATHS.person(n);
      return found('person', at, data().byName.get(name(n, shown(at))));
    },
    film: async (n, y) => {
      const at = PATHS.film(n, y);
      const held = year(y, shown(at));
      return found(
        'film',
        at,
        data()
          .byName.get(name(n, shown(at)))
          ?.filter((m) => m.year === held)
          .map(({ category, nomination }) => ({ category, nomination })),
      );
    },
    category: async (n) => {
      const at = PATHS.category(n);
      return found('category', at, data().categoriesMatching(name(n, shown(at))) as CategoryMatch[]);
    },
    categoryAt: async (n, y) => {
      const at = PATHS.categoryAt(n, y);
      return found(
        'categoryAt',
        at,
        data().categoriesMatching(name(n, shown(at)), year(y, shown(at))) as CategoryYearMatch[],
      );
    },
    titleById: async (i) => {
      const at = PATHS.titleById(i);
      return found('titleById', at, data().byId.get(id('title', i, shown(at))));
    },
    nameById: async (i) => {
      const at = PATHS.nameById(i);
      return found('nameById', at, data().byId.get(id('name', i, shown(at))));
    },
    categories: async () => data().categoryList(),
    ...offlineRecords(data),
  };
}

/** The records (docs/records.md) and rankings (docs/rankings.md) the offline client answers from its copy, as the service does. */
function offlineRecords(
  data: () => OfflineArchive,
): Pick<Client, 'filmRecord' | 'peopleRecord' | 'ceremonyRecord' | 'awards' | 'awardRecord' | 'rankings'> {
  const record = <T>(method: string, segments: string[], key: string): T =>
    JSON.parse(found(method, segments, data().record(key)));
  return {
    filmRecord: async (i) => {
      const at = PATHS.filmRecord(i);
      return record('filmRecord', at, id('title', i, shown(at)));
    },
    peopleRecord: async (i) => {
      const at = PATHS.peopleRecord(i);
      return record('peopleRecord', at, id('name', i, shown(at)));
    },
    ceremonyRecord: async (y) => {
      const at = PATHS.ceremonyRecord(y);
      return record('ceremonyRecord', at, `ceremony ${year(y, shown(at))}`);
    },
    awards: async () => JSON.parse(data().record('awards')!),
    awardRecord: async (i) => {
      const at = PATHS.awardRecord(i);
      return record('awardRecord', at, `award ${id('award', i, shown(at))}`);
    },
    rankings: async (query = {}) => JSON.parse(offlineRanking(data(), query)),
  };
}

/** A ranking's text from the copy, or the service's ApiError. */
function offlineRanking(data: OfflineArchive, query: RankingQuery): string {
  const at = shown(PATHS.rankings(query));
  const ask = rankingAsk(
    Object.entries(query).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : [[k, String(v)]])),
  );
  if ('error' in ask) throw new ApiError(400, ask.error, at);
  const text = data.ranking(ask);
  if (text === undefined) throw new ApiError(404, OFFLINE_ERRORS.notFound.rankings, at);
  return text;
}

/**
 * The records (`/film`, `/people`, `/ceremony`, `/awards`): one maker, run
 * by the build over the source (build/answers/records.ts) and by the offline
 * client over the dataset, so the two answer byte for byte alike. Rows come
 * in source order with each film and name placed on its thing (the build's
 * things, docs/records.md); a thing is any object, the same object wherever
 * it is credited.
 *
 * What counts (docs/records.md): a nomination counts once for every thing it
 * names; ranks are among the things of one kind with a record, within a
 * class or an award among those nominated in it, ties sharing a rank.
 */
export interface RecordThing {
  kind: 'film' | 'person' | 'company' | 'country';
  id: string | null;
}

/** One nomination as records are made from it. */
export interface RecordRow {
  ceremony: number;
  /** Held year. */
  year: string;
  filmYear: string;
  /** The category as the spec's answers name it. */
  category: string;
  /** The source's CanonicalCategory (the Category where it is empty). */
  canonical: string;
  /** The award's name: the canonical name cased as category names are. */
  award: string;
  klass: string;
  won: boolean;
  /** Whether the films are what the nomination is for (its people `secondary`). */
  filmsPrimary: boolean;
  /** Each place: its title, its thing, and its own detail where the films carry it (an actor's character in each). */
  films: { title: string; thing: RecordThing; detail?: string }[];
  /** Each place: its name, its things (a pseudonym's several), and the source's detail there. */
  people: { name: string; things: RecordThing[]; detail?: string }[];
  notes: string[];
  citation: string;
}

/**
 * An award's id: its canonical name in lower-case words joined
 * by `-` (`MUSIC (Original Song)` is `music-original-song`).
 */
export const awardIdOf = (canonical: string): string =>
  canonical
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/**
 * Each record's text by its key (an IMDb id, `ceremony {year}`, `award
 * {id}`), in the order they are best stored; and the award list's text.
 */
export interface MadeRecords {
  records: { key: string; text: string; group: 'thing' | 'ceremony' | 'award' | 'ranking' }[];
  awards: string;
  /** The table every ranking is made from (RankingTable's text). */
  rankings: string;
}

interface Tally {
  nominations: number;
  wins: number;
}

/** A thing's credits and rows, as the records count them. */
interface Credited {
  thing: RecordThing;
  rows: number[];
  credits: Map<string, { name: string; first: string; last: string; lastRow: number; nominations: number }>;
  filmYear: string;
}

/** Competition ranks (1, 2, 2, 4) of `values`, highest first. */
function ranker(values: number[]): (value: number) => number {
  const first = new Map<number, number>();
  [...values].sort((a, b) => b - a).forEach((v, i) => first.has(v) || first.set(v, i + 1));
  return (value) => first.get(value)!;
}

function tallyOf(map: Map<string, Tally>, key: string, won: boolean): void {
  const t = map.get(key) ?? { nominations: 0, wins: 0 };
  map.set(key, t);
  t.nominations++;
  if (won) t.wins++;
}

/** The text of a record: its fields, then its entries (each nomination's text, made once). */
const withEntries = (head: object, entries: string[]) =>
  `${JSON.stringify(head).slice(0, -1)},"entries":[${entries.join(',')}]}`;

/** Every nomination's text, as every record gives it; a film's year is its thing's. */
function entryText(row: RecordRow, filmYear: (thing: RecordThing) => string): string {
  const detailKey =
    row.klass === 'Acting' ? 'character' : row.canonical === 'MUSIC (Original Song)' ? 'song' : 'detail';
  const films = row.films.map(({ title, thing, detail }) => ({
    id: thing.id,
    title,
    filmYear: filmYear(thing),
    ...(detail === undefined ? {} : { [detailKey]: detail }),
  }));
  const people = row.people.flatMap(({ name, things, detail }) =>
    things.map((thing) => ({
      id: thing.id,
      name,
      kind: thing.kind,
      role: row.filmsPrimary ? 'secondary' : 'primary',
      ...(detail === undefined ? {} : { [detailKey]: detail }),
    })),
  );
  return JSON.stringify({
    year: row.year,
    ceremony: row.ceremony,
    filmYear: row.filmYear,
    category: row.category,
    award: awardIdOf(row.canonical),
    class: row.klass,
    won: row.won,
    films,
    people,
    ...(row.notes.length > 0 ? { notes: row.notes } : {}),
    ...(row.citation !== '' ? { citation: row.citation } : {}),
  });
}

/** Each thing's rows and credits, in source order. */
function credited(rows: RecordRow[]): Map<RecordThing, Credited> {
  const out = new Map<RecordThing, Credited>();
  const credit = (thing: RecordThing, text: string, r: number) => {
    let c = out.get(thing);
    if (!c) out.set(thing, (c = { thing, rows: [], credits: new Map(), filmYear: rows[r].filmYear }));
    if (c.rows[c.rows.length - 1] !== r) c.rows.push(r);
    const at = c.credits.get(text);
    if (!at) c.credits.set(text, { name: text, first: rows[r].year, last: rows[r].year, lastRow: r, nominations: 1 });
    else if (at.lastRow !== r) Object.assign(at, { last: rows[r].year, lastRow: r, nominations: at.nominations + 1 });
  };
  rows.forEach((row, r) => {
    for (const f of row.films) credit(f.thing, f.title, r);
    for (const p of row.people) for (const thing of p.things) credit(thing, p.name, r);
  });
  return out;
}

/** What the records share: the rows in archive order, each row's award, each thing's credits. */
interface Made {
  rows: RecordRow[];
  /**
   * Row indexes in archive order: ceremony, each ceremony's
   * categories in order of first appearance, rows in source order.
   */
  order: number[];
  position: number[];
  awardOf: string[];
  things: Map<RecordThing, Credited>;
  /** Each nomination's text. */
  entries: string[];
  awards: Map<
    string,
    {
      id: string;
      name: string;
      klass: string;
      rows: number[];
      names: Map<string, { name: string; firstYear: string; lastYear: string }>;
    }
  >;
}

function made(rows: RecordRow[]): Made {
  const placeOf = new Map<string, number>();
  for (const row of rows)
    if (!placeOf.has(`${row.ceremony}\u0000${row.category}`))
      placeOf.set(`${row.ceremony}\u0000${row.category}`, placeOf.size);
  const place = rows.map((row) => placeOf.get(`${row.ceremony}\u0000${row.category}`)!);
  const order = rows
    .map((_, i) => i)
    .sort((a, b) => rows[a].ceremony - rows[b].ceremony || place[a] - place[b] || a - b);
  const position = new Array<number>(rows.length);
  order.forEach((r, i) => (position[r] = i));
  const things = credited(rows);
  // A film's year is its thing's: the Year of its first nomination.
  const entries = rows.map((row) => entryText(row, (thing) => things.get(thing)!.filmYear));
  const awardOf = rows.map((row) => awardIdOf(row.canonical));
  const awards: Made['awards'] = new Map();
  for (const r of order) {
    const row = rows[r];
    let award = awards.get(awardOf[r]);
    if (!award)
      awards.set(
        awardOf[r],
        (award = { id: awardOf[r], name: row.award, klass: row.klass, rows: [], names: new Map() }),
      );
    award.rows.push(r);
    const span = award.names.get(row.category);
    if (!span) award.names.set(row.category, { name: row.category, firstYear: row.year, lastYear: row.year });
    else span.lastYear = row.year;
  }
  return { rows, order, position, awardOf, things, entries, awards };
}

type Rankers = Map<string, { nominations: (v: number) => number; wins: (v: number) => number }>;
type Scope = 'overall' | 'classes' | 'awards';

/**
 * Each recorded thing's ranks: among the things of its kind with a record, overall, within each class and each award.
 */
function ranking(m: Made, recorded: Credited[]): (c: Credited) => object {
  const tallies = new Map<Credited, Record<Scope, Map<string, Tally>>>();
  for (const c of recorded) {
    const t = {
      overall: new Map<string, Tally>(),
      classes: new Map<string, Tally>(),
      awards: new Map<string, Tally>(),
    };
    for (const r of c.rows) {
      tallyOf(t.overall, '', m.rows[r].won);
      tallyOf(t.classes, m.rows[r].klass, m.rows[r].won);
      tallyOf(t.awards, m.awardOf[r], m.rows[r].won);
    }
    tallies.set(c, t);
  }
  const rankers = new Map<string, Record<Scope, Rankers>>();
  for (const kind of ['film', 'person', 'company']) {
    const pool = recorded.filter((c) => c.thing.kind === kind).map((c) => tallies.get(c)!);
    const of = (scope: Scope): Rankers => {
      const values = new Map<string, Tally[]>();
      for (const t of pool) for (const [k, v] of t[scope]) (values.get(k) ?? values.set(k, []).get(k)!).push(v);
      return new Map(
        [...values].map(([k, vs]) => [
          k,
          { nominations: ranker(vs.map((v) => v.nominations)), wins: ranker(vs.map((v) => v.wins)) },
        ]),
      );
    };
    rankers.set(kind, { overall: of('overall'), classes: of('classes'), awards: of('awards') });
  }
  const standing = (r: Rankers, key: string, t: Tally) => ({
    nominations: t.nominations,
    wins: t.wins,
    byNominations: r.get(key)!.nominations(t.nominations),
    byWins: r.get(key)!.wins(t.wins),
  });
  const byCount = <T extends Tally>(list: T[]) => list.sort((a, b) => b.nominations - a.nominations || b.wins - a.wins);
  return (c) => {
    const t = tallies.get(c)!;
    const r = rankers.get(c.thing.kind)!;
    return {
      overall: standing(r.overall, '', t.overall.get('')!),
      classes: byCount([...t.classes].map(([klass, v]) => ({ class: klass, ...standing(r.classes, klass, v) }))),
      awards: byCount(
        [...t.awards].map(([award, v]) => ({
          award,
          name: m.awards.get(award)!.name,
          ...standing(r.awards, award, v),
        })),
      ),
    };
  };
}

/** A thing's credits, the latest first (a thing is known by its latest). */
const latestFirst = (c: Credited) => [...c.credits.values()].sort((a, b) => b.lastRow - a.lastRow);

/** The film, person and company records, in order of their first nomination (records sharing nominations lie near each other where they are stored). */
function thingRecords(m: Made): MadeRecords['records'] {
  const recorded = [...m.things.values()].filter((c) => c.thing.id !== null);
  const ranksOf = ranking(m, recorded);
  const creditList = (c: Credited) =>
    latestFirst(c).map((k) => ({ name: k.name, firstYear: k.first, lastYear: k.last, nominations: k.nominations }));
  const firstAt = (c: Credited) => Math.min(...c.rows.map((r) => m.position[r]));
  return recorded
    .map((c) => [firstAt(c), c] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, c]) => {
      const rs = [...c.rows].sort((a, b) => m.position[a] - m.position[b]);
      const [nominations, wins] = [rs.length, rs.filter((r) => m.rows[r].won).length];
      const [first, last] = [m.rows[rs[0]], m.rows[rs[rs.length - 1]]];
      const head =
        c.thing.kind === 'film'
          ? {
              id: c.thing.id,
              title: latestFirst(c)[0].name,
              titles: creditList(c),
              filmYear: c.filmYear,
              ceremonies: rs.flatMap((r, i) =>
                i > 0 && m.rows[rs[i - 1]].ceremony === m.rows[r].ceremony
                  ? []
                  : [{ year: m.rows[r].year, ceremony: m.rows[r].ceremony }],
              ),
              nominations,
              wins,
              ranks: ranksOf(c),
            }
          : {
              id: c.thing.id,
              kind: c.thing.kind,
              name: latestFirst(c)[0].name,
              names: creditList(c),
              nominations,
              wins,
              first: { year: first.year, ceremony: first.ceremony },
              last: { year: last.year, ceremony: last.ceremony },
              ranks: ranksOf(c),
            };
      return {
        key: c.thing.id!,
        text: withEntries(
          head,
          rs.map((r) => m.entries[r]),
        ),
        group: 'thing' as const,
      };
    });
}

/** The ceremony records, by held year (1930 holds two ceremonies). */
function ceremonyRecords(m: Made): MadeRecords['records'] {
  const years = new Map<string, number[]>();
  for (const r of m.order) (years.get(m.rows[r].year) ?? years.set(m.rows[r].year, []).get(m.rows[r].year)!).push(r);
  return [...years].map(([year, rs]) => {
    const ceremonies: { ceremony: number; filmYear: string }[] = [];
    const categories: {
      ceremony: number;
      category: string;
      award: string;
      class: string;
      nominations: number;
      wins: number;
    }[] = [];
    for (const r of rs) {
      const row = m.rows[r];
      if (ceremonies[ceremonies.length - 1]?.ceremony !== row.ceremony)
        ceremonies.push({ ceremony: row.ceremony, filmYear: row.filmYear });
      let c = categories[categories.length - 1];
      if (!c || c.ceremony !== row.ceremony || c.category !== row.category)
        categories.push(
          (c = {
            ceremony: row.ceremony,
            category: row.category,
            award: m.awardOf[r],
            class: row.klass,
            nominations: 0,
            wins: 0,
          }),
        );
      c.nominations++;
      if (row.won) c.wins++;
    }
    const head = { year, ceremonies, categories, nominations: rs.length, wins: rs.filter((r) => m.rows[r].won).length };
    return {
      key: `ceremony ${year}`,
      text: withEntries(
        head,
        rs.map((r) => m.entries[r]),
      ),
      group: 'ceremony' as const,
    };
  });
}

export function makeRecords(rows: RecordRow[]): MadeRecords {
  const m = made(rows);
  const rankings = rankingTable(m);
  const out = [...thingRecords(m), ...ceremonyRecords(m)];
  const list: object[] = [];
  for (const a of m.awards.values()) {
    const summary = {
      id: a.id,
      name: a.name,
      class: a.klass,
      names: [...a.names.values()],
      nominations: a.rows.length,
      wins: a.rows.filter((r) => rows[r].won).length,
      firstYear: rows[a.rows[0]].year,
      lastYear: rows[a.rows[a.rows.length - 1]].year,
      path: `/awards/id=${a.id}`,
    };
    list.push(summary);
    out.push({
      key: `award ${a.id}`,
      text: withEntries(
        summary,
        a.rows.map((r) => m.entries[r]),
      ),
      group: 'award',
    });
  }
  return { records: out, awards: JSON.stringify(list), rankings };
}

/**
 * Rankings (`/rankings/…`, docs/rankings.md), made from one table the record
 * maker writes, by one maker: the build's stored ones, the server's made at
 * run time and the offline client's answer alike; ranks are the records'.
 */
const RANKING_TABLE = 'rankings table';
const RANKED_KINDS = { people: 'person', companies: 'company', films: 'film' } as const;

/** What a ranking accepts. `competitive`: every class but SciTech and Special. */
export const RANKING = {
  of: Object.keys(RANKED_KINDS) as (keyof typeof RANKED_KINDS)[],
  by: ['nominations', 'wins'],
  classes: ['Title', 'Acting', 'Directing', 'Writing', 'Music', 'Production', 'SciTech', 'Special'],
  competitive: ['Title', 'Acting', 'Directing', 'Writing', 'Music', 'Production'],
  won: ['yes', 'no'],
  limit: 100,
  maxLimit: 1000,
  params: ['of', 'by', 'class', 'award', 'from', 'to', 'won', 'per', 'limit'],
};

const YEAR = 'a whole number, the year the ceremony was held';
/** The 400s, each naming the parameter (the server's too). */
export const RANKING_ERRORS: Record<string, string> = {
  param: `Invalid ranking: expected segments name=value named ${RANKING.params.join(', ')}, each at most once`,
  of: `Invalid of: expected ${RANKING.of.join(', ')}`,
  by: 'Invalid by: expected nominations or wins',
  class: `Invalid class: expected competitive or one of ${RANKING.classes.join(', ')}`,
  award:
    'Invalid award: expected an award id from /awards (lower-case letters and digits in words joined by `-`, such as best-picture)',
  both: 'Invalid award: give a class or an award, not both',
  from: `Invalid from: expected ${YEAR}`,
  to: `Invalid to: expected ${YEAR}, not before from`,
  won: 'Invalid won: expected yes (winners only) or no (without a win)',
  per: 'Invalid per: expected ceremony (each entry one thing at one ceremony)',
  limit: `Invalid limit: expected a whole number from 1 to ${RANKING.maxLimit}`,
};

/** Each segment's values: a list, or a pattern. */
const RANKING_VALUES: Record<string, string[] | RegExp> = {
  of: RANKING.of,
  by: RANKING.by,
  class: ['competitive', ...RANKING.classes],
  award: /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
  from: /^[0-9]{1,10}$/,
  to: /^[0-9]{1,10}$/,
  won: RANKING.won,
  per: ['ceremony'],
  limit: /^[0-9]{1,4}$/,
};

/** The question `pairs` (segment name, decoded value) ask, or the 400 naming what is wrong. */
export function rankingAsk(pairs: [string, string][]): RankingAsk | { error: string } {
  const ask: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const values = RANKING_VALUES[name];
    if (!values || name in ask) return { error: RANKING_ERRORS.param };
    if (Array.isArray(values) ? !values.includes(value) : !values.test(value)) return { error: RANKING_ERRORS[name] };
    ask[name] = name === 'from' || name === 'to' ? value.replace(/^0+(?=.)/, '') : value;
  }
  const limit = Number(ask.limit ?? RANKING.limit);
  if (ask.award && ask.class) return { error: RANKING_ERRORS.both };
  if (ask.from && ask.to && Number(ask.to) < Number(ask.from)) return { error: RANKING_ERRORS.to };
  if (!(limit >= 1 && limit <= RANKING.maxLimit)) return { error: RANKING_ERRORS.limit };
  return {
    ...ask,
    of: (ask.of ?? 'people') as RankingAsk['of'],
    by: (ask.by ?? 'nominations') as RankingAsk['by'],
    limit,
  } as RankingAsk;
}

/** A question's key: its parameters in their order, defaults left out (`of=people/by=wins/class=Acting`); a stored ranking is named `ranking {key}`. */
export function rankingKey(ask: RankingAsk): string {
  const shown = { ...ask, limit: ask.limit === RANKING.limit ? undefined : ask.limit };
  return RANKING.params
    .flatMap((p) => (shown[p as keyof RankingAsk] === undefined ? [] : [`${p}=${shown[p as keyof RankingAsk]}`]))
    .join('/');
}

/**
 * The rankings' table, a JSON head line then text: the head holds the held
 * years, ceremonies, classes and awards in archive order and, of each kind,
 * where each group of its nominations starts (`starts[g]`, group g =
 * ceremony × classes + class, one past the last: their count) and where its
 * three strings lie in the text after the head (`at`: their starts and
 * end). Those are sliced out, never parsed or split (on Node, a JSON
 * table took 1.5 ms to parse and the people's ids and names 1 ms to split):
 * `things`, each recorded thing's `{id}\t{name}\n` (latest credit);
 * `offsets`, where each of those starts (and one past the last), of
 * `offsetWidth` base-36 digits; `entries`, the nominations, grouped, each
 * `width` base-36 digits (award × 2 + won) then `thingWidth` (its thing's
 * place). A span of years in a class reads only its groups' entries (540 of
 * the 16,826 people's for acting since 2000), and a ranking reads only the
 * things it ranks.
 */
export interface RankingTable {
  years: string[];
  ceremonies: number[];
  classes: string[];
  awards: string[];
  width: number;
  thingWidth: number;
  offsetWidth: number;
  kinds: Record<RankedKind, { things: string; offsets: string; entries: string; starts: number[] }>;
}
type RankedKind = 'film' | 'person' | 'company';

/** The table's head line, as stored. */
interface TableHead extends Omit<RankingTable, 'kinds'> {
  kinds: Record<RankedKind, { starts: number[]; at: number[] }>;
}

const base36 = (value: number, width: number) => value.toString(36).padStart(width, '0');

/** A kind's nominations as the table stores them: entries grouped by ceremony and class, and where each group starts. */
function entriesOf(of: Credited[], at: (r: number) => [group: number, key: number], groups: number) {
  const rows = of.flatMap((c, thing) => c.rows.map((r) => [...at(r), thing]));
  rows.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const starts = new Array<number>(groups + 1).fill(0);
  for (const [group] of rows) starts[group + 1]++;
  for (let g = 0; g < groups; g++) starts[g + 1] += starts[g];
  return { rows, starts };
}

function rankingTable(m: Made): string {
  const held = new Map(m.order.map((r) => [m.rows[r].ceremony, m.rows[r].year]));
  const classes = [...new Set(m.order.map((r) => m.rows[r].klass))];
  const awards = [...m.awards.keys()];
  const [ceremonyAt, classAt, awardAt] = [[...held.keys()], classes, awards].map(
    (list: (string | number)[]) => new Map(list.map((v, i) => [v, i])),
  );
  const width = base36(awards.length * 2 - 1, 1).length;
  const at = (r: number): [number, number] => [
    ceremonyAt.get(m.rows[r].ceremony)! * classes.length + classAt.get(m.rows[r].klass)!,
    awardAt.get(m.awardOf[r])! * 2 + (m.rows[r].won ? 1 : 0),
  ];
  const recorded = [...m.things.values()].filter((c) => c.thing.id !== null && c.thing.kind !== 'country');
  const thingWidth = base36(Math.max(1, recorded.length - 1), 1).length;
  const made = Object.values(RANKED_KINDS).map((kind) => {
    const of = recorded.filter((c) => c.thing.kind === kind);
    const lines = of.map((c) => `${c.thing.id}\t${latestFirst(c)[0].name}\n`);
    const offsets = [0];
    for (const line of lines) offsets.push(offsets[offsets.length - 1] + line.length);
    return { kind, text: lines.join(''), offsets, ...entriesOf(of, at, held.size * classes.length) };
  });
  const offsetWidth = base36(Math.max(1, ...made.map((k) => k.text.length)), 1).length;
  let body = '';
  const kinds: Record<string, { starts: number[]; at: number[] }> = {};
  for (const { kind, text, offsets, rows, starts } of made) {
    const parts = [
      text,
      offsets.map((o) => base36(o, offsetWidth)).join(''),
      rows.map(([, key, thing]) => base36(key, width) + base36(thing, thingWidth)).join(''),
    ];
    const from = body.length;
    body += parts.join('');
    kinds[kind] = { starts, at: [from, from + parts[0].length, from + parts[0].length + parts[1].length, body.length] };
  }
  const head = { years: [...held.values()], ceremonies: [...held.keys()], classes, awards, width, thingWidth };
  return `${JSON.stringify({ ...head, offsetWidth, kinds })}\n${body}`;
}

/** A ranking table from its text (its head parsed, its strings sliced out); throws when it is not one. */
export function parseRankingTable(text: string): RankingTable {
  const end = text.indexOf('\n');
  const head = JSON.parse(end === -1 ? text : text.slice(0, end)) as TableHead;
  const groups = head?.ceremonies?.length * head?.classes?.length + 1;
  const size = head.width + head.thingWidth;
  const kinds = Object.fromEntries(
    Object.values(RANKED_KINDS).map((k) => {
      const { starts, at } = head.kinds?.[k] ?? {};
      const [a, b, c, d] = (at ?? []).map((i) => end + 1 + i);
      const kind = { starts, things: text.slice(a, b), offsets: text.slice(b, c), entries: text.slice(c, d) };
      const sound =
        Array.isArray(starts) &&
        starts.length === groups &&
        end !== -1 &&
        end < a &&
        a <= b &&
        b <= c &&
        c <= d &&
        d <= text.length &&
        kind.offsets.length % head.offsetWidth === 0 &&
        kind.entries.length === starts[groups - 1] * size;
      if (!sound) throw new Error('not a ranking table');
      return [k, kind];
    }),
  );
  if (
    ![head.years, head.ceremonies, head.classes, head.awards].every(Array.isArray) ||
    !(size > 0 && head.offsetWidth > 0)
  )
    throw new Error('not a ranking table');
  return { ...head, kinds } as RankingTable;
}

/** The id and name of a kind's thing `k`: its line of `things`, cut at its tab. */
function thingOf(t: RankingTable, kind: RankedKind, k: number): { id: string; name: string } {
  const { things, offsets } = t.kinds[kind];
  const [start, next] = [
    codeAt(offsets, k * t.offsetWidth, t.offsetWidth),
    codeAt(offsets, (k + 1) * t.offsetWidth, t.offsetWidth),
  ];
  const tab = things.indexOf('\t', start);
  return { id: things.slice(start, tab), name: things.slice(tab + 1, next - 1) };
}

/** The span's first and last place in `years`; empty when first > last. */
function spanOf(years: string[], from: string | undefined, to: string | undefined): [number, number] {
  let [first, last] = [0, years.length - 1];
  while (first <= last && from !== undefined && Number(years[first]) < Number(from)) first++;
  while (last >= first && to !== undefined && Number(years[last]) > Number(to)) last--;
  return [first, last];
}

interface Tallied {
  thing: number;
  /** With `per=ceremony`, the ceremony's place; else -1. */
  at: number;
  nominations: number;
  wins: number;
}

/** `width` base-36 digits from `at`. */
function codeAt(codes: string, at: number, width: number): number {
  let value = 0;
  for (let i = at; i < at + width; i++) {
    const c = codes.charCodeAt(i);
    value = value * 36 + (c <= 57 ? c - 48 : c - 87);
  }
  return value;
}

/**
 * Each thing of the kind asked (at each ceremony, `per`) nominated in the
 * span and scope, with its counts, as `won` filters them: the entries of the
 * span's groups of a class in scope, counted by thing (in no set order: the
 * ranking's order is total).
 */
function tallied(t: RankingTable, ask: RankingAsk, inScope: Uint8Array): Tallied[] {
  const [first, last] = spanOf(t.years, ask.from, ask.to);
  const [classes, awards, width, size] = [t.classes.length, t.awards.length, t.width, t.width + t.thingWidth];
  const { entries, starts } = t.kinds[RANKED_KINDS[ask.of]];
  const things = t.kinds[RANKED_KINDS[ask.of]].offsets.length / t.offsetWidth - 1;
  const [nominations, wins, seen] = [new Int32Array(things), new Int32Array(things), [] as number[]];
  const classWanted = Array.from({ length: classes }, (_, k) =>
    inScope.subarray(k * awards, (k + 1) * awards).includes(1),
  );
  const out: Tallied[] = [];
  const flush = (at: number) => {
    for (const thing of seen) {
      const c = { thing, at, nominations: nominations[thing], wins: wins[thing] };
      if (ask.won === undefined || (ask.won === 'yes') === c.wins > 0) out.push(c);
      nominations[thing] = wins[thing] = 0;
    }
    seen.length = 0;
  };
  for (let at = first; at <= last; at++) {
    for (let k = 0; k < classes; k++) {
      if (!classWanted[k]) continue;
      for (let e = starts[at * classes + k] * size; e < starts[at * classes + k + 1] * size; e += size) {
        const key = codeAt(entries, e, width);
        if (inScope[k * awards + (key >> 1)] === 0) continue;
        const thing = codeAt(entries, e + width, t.thingWidth);
        if (nominations[thing]++ === 0) seen.push(thing);
        wins[thing] += key & 1;
      }
    }
    if (ask.per !== undefined) flush(at);
  }
  flush(-1);
  return out;
}

/** Which places class × awards + award are in scope; null for an award the table lacks. */
function scopeOf(t: RankingTable, ask: RankingAsk): Uint8Array | null {
  const [classes, awards] = [t.classes.length, t.awards.length];
  const award = ask.award === undefined ? -1 : t.awards.indexOf(ask.award);
  if (ask.award !== undefined && award < 0) return null;
  const wanted =
    ask.class === undefined
      ? null
      : new Set((ask.class === 'competitive' ? RANKING.competitive : [ask.class]).map((c) => t.classes.indexOf(c)));
  const scope = new Uint8Array(classes * awards);
  for (let c = 0; c < classes; c++)
    for (let a = 0; a < awards; a++)
      scope[c * awards + a] = (!wanted || wanted.has(c)) && (award < 0 || a === award) ? 1 : 0;
  return scope;
}

/** Highest `by` first, then the other count, then the name, the id and the ceremony. */
function rankOrder(by: 'wins' | 'nominations') {
  const other = by === 'wins' ? 'nominations' : 'wins';
  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return (a: Named, b: Named) =>
    b[by] - a[by] || b[other] - a[other] || text(a.name, b.name) || text(a.id, b.id) || a.at - b.at;
}

/** A tallied thing with its id and name, read from the table once it may be ranked. */
type Named = Tallied & { id: string; name: string };

/** Each value's rank (one more than how many have more), and the least value that can be among the first `limit`. */
function ranksOf(all: Tallied[], by: 'wins' | 'nominations', limit: number): { rank: number[]; least: number } {
  const more: number[] = [];
  for (const e of all) more[e[by]] = (more[e[by]] ?? 0) + 1;
  let [least, above] = [more.length, 0];
  while (least > 0 && above < limit) above += more[--least] ?? 0;
  for (let v = more.length - 1, sum = 0; v >= 0; v--) [more[v], sum] = [sum + 1, sum + (more[v] ?? 0)];
  return { rank: more, least };
}

/** A ranking's text, or null for an award the table lacks. Ties share a rank (1, 2, 2, 4), ordered by the other count, then the name. */
export function rankingText(t: RankingTable, ask: RankingAsk): string | null {
  const inScope = scopeOf(t, ask);
  return inScope && textOf(t, ask, tallied(t, ask, inScope));
}

/**
 * Rankings' texts, each as rankingText makes it: those asking alike but for
 * `by` and `limit` share one tally (the build's stored rankings, each scope
 * counted by nominations and by wins, tallied once, not twice).
 */
export function rankingTexts(t: RankingTable, asks: RankingAsk[]): (string | null)[] {
  const tallies = new Map<string, Tallied[] | null>();
  return asks.map((ask) => {
    const key = rankingKey({ ...ask, by: 'nominations', limit: RANKING.limit });
    if (!tallies.has(key)) {
      const inScope = scopeOf(t, ask);
      tallies.set(key, inScope && tallied(t, ask, inScope));
    }
    const all = tallies.get(key)!;
    return all && textOf(t, ask, all);
  });
}

/** The text of the ranking `ask` asks for, from its tally. */
function textOf(t: RankingTable, ask: RankingAsk, all: Tallied[]): string {
  const kind = RANKED_KINDS[ask.of];
  const by = ask.by === 'wins' ? 'wins' : 'nominations';
  // Only those that can be among the first `limit` are named and sorted.
  const { rank: more, least } = ranksOf(all, by, ask.limit);
  const entries = all
    .filter((e) => e[by] >= least)
    .map((e): Named => ({ ...e, ...thingOf(t, kind, e.thing) }))
    .sort(rankOrder(by))
    .slice(0, ask.limit)
    .map((e) => ({
      rank: more[e[by]],
      id: e.id,
      name: e.name,
      kind,
      record: recordPath(e.id),
      ...(e.at < 0 ? {} : { year: t.years[e.at], ceremony: t.ceremonies[e.at] }),
      nominations: e.nominations,
      wins: e.wins,
    }));
  const {
    of,
    by: counted,
    class: klass,
    award,
    from = t.years[0] ?? '',
    to = t.years[t.years.length - 1] ?? '',
    won,
    per,
    limit,
  } = ask;
  return JSON.stringify({
    of,
    by: counted,
    class: klass,
    award,
    from,
    to,
    won,
    per,
    limit,
    total: all.length,
    entries,
  });
}

/** The shapes the lookups answer with, for code that names them (`Nomination`, `PersonMatch`, …). */
export type * from '../shared/types.ts';
