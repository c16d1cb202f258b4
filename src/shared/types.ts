/**
 * Shapes shared by the build, the runtime, the OpenAPI generator and the tests.
 * One source of truth: change a field here and every consumer sees it.
 */

/** One nomination, as the API returns it (spec section 2, "Nomination"). */
export interface Nomination {
  /**
   * Who or what the nomination is for: the people for most
   * categories, the film for Best Picture and other film categories.
   */
  primary: string[];
  /**
   * The film, or the people sharing the award; this service always sends it, empty when there is nobody else to name.
   */
  secondary?: string[];
  /** True when the nomination won. */
  won: boolean;
  /**
   * Optional historical footnote: song title, official citation,
   * the Academy's notes; absent when there is nothing to say.
   */
  notes?: string;
}

/** One category at one ceremony, in archive order (spec section 2, "Category"). */
export interface Category {
  /** Full category name as used that year (names changed over the years): `Actor in a Leading Role`. */
  category: string;
  /** Every nomination in the category, in archive order. */
  nominations: Nomination[];
}

/** One ceremony year's categories in archive order (both 1930 ceremonies, April's first). */
export type Ceremony = Category[];

/** The whole archive: ceremony held year (as a string) to its categories. */
export type Archive = Record<string, Ceremony>;

/** A nomination found by the person lookup (endpoint 3). */
export interface PersonMatch {
  /** Year the ceremony was held. */
  year: string;
  /** Full category name that year. */
  category: string;
  /** The matching nomination. */
  nomination: Nomination;
}

/** A nomination found by the film-at-a-ceremony lookup (endpoint 4). */
export interface FilmMatch {
  /** Full category name at that ceremony. */
  category: string;
  /** The matching nomination. */
  nomination: Nomination;
}

/** A category found by the category lookup across all ceremonies (endpoint 5). */
export interface CategoryMatch {
  /** Year the ceremony was held. */
  year: string;
  /** Full category name that year. */
  category: string;
  /** The full list of nominations in that category. */
  nominations: Nomination[];
}

/** A category found by the category lookup at one ceremony (endpoint 6). */
export interface CategoryYearMatch {
  /** Full category name at that ceremony. */
  category: string;
  /** The full list of nominations in that category. */
  nominations: Nomination[];
}

/** One result of a search by approximate name (`/search/name=…`). */
export interface SearchResult {
  /** The name exactly as the archive serves it. */
  name: string;
  /**
   * `person`, `company`, `country` or `film` (from the source's IMDb ids, else
   * its columns: docs/records.md), or `category` for a full category name.
   */
  kind: 'person' | 'company' | 'country' | 'film' | 'category';
  /**
   * How many nominations `path` answers: for a name, the person lookup's matches;
   * for a category name, the nominations in the category lookup's answer.
   */
  nominations: number;
  /** How many of those nominations won. */
  wins: number;
  /** Held year of the earliest of them. */
  firstYear: string;
  /** Held year of the latest of them. */
  lastYear: string;
  /** The lookup that answers this name, without its key: append `/apikey=...`. */
  path: string;
  /**
   * Its record, without its key: `/film/id=…`, `/people/id=…` for a name with an IMDb id (or written
   * without one where exactly one id is credited with it), `/awards/id=…` for a category (its award's).
   */
  record?: string;
  /**
   * The IMDb id `path` answers (`tt…` a film, `nm…` a person, `co…` a company),
   * when the source gives one: two films of one title are two results.
   */
  id?: string;
  /** For a film: the source's year of the film (its Year column: `1997`, `1927/28`), which is not the ceremony's. */
  filmYear?: string;
  /** For a category: the same award's other full names over the years (the source's canonical category). */
  otherNames?: string[];
  /** For a category: every full name of its award, this one included, each with the held years it was used. */
  awardNames?: AwardName[];
}

/** One full name of an award and the held years it was used (`SearchResult.awardNames`). */
export interface AwardName {
  /** Full category name. */
  name: string;
  /** Held year of the first ceremony that used it. */
  firstYear: string;
  /** Held year of the last ceremony that used it. */
  lastYear: string;
}

/** One full category name, as the category list (`/categories`) answers it. */
export interface CategoryName {
  /** Full category name, as the archive serves it. */
  name: string;
  /** The award it belongs to (the source's canonical category): every name of one award shares it. */
  award: string;
  /** Held year of the first ceremony that used this name. */
  firstYear: string;
  /** Held year of the last ceremony that used this name. */
  lastYear: string;
  /** The category lookup for this name, without its key (it also answers every name containing this one). */
  path: string;
}

/** What `GET /health` answers (200): the archive this instance serves, as the build recorded it; no archive data. */
export interface HealthBody {
  /** Always "ok" in a 200. */
  status: string;
  /** The archive this instance can read. */
  archive: ArchiveHealth;
}

/** The build's record of the archive: its source's revision and its counts. */
export interface ArchiveHealth {
  /** sha256 of the source file the archive was built from. */
  revision: string;
  /** The upstream commit of that file, when the build knew it (the revision data/source.json pins). */
  commit?: string;
  /** That revision's date (ISO 8601), when the build knew it. */
  date?: string;
  /** True when the build used the small built-in sample instead of the full archive. */
  sample: boolean;
  /** Lowest held year. */
  firstYear: number;
  /** Highest held year. */
  lastYear: number;
  /** Ceremony years held (1930, with two ceremonies, counts once). */
  years: number;
  /** Full category names, every renamed variant counted. */
  categories: number;
  /** Nominations in the archive. */
  nominations: number;
}

/** Error body of every non-2xx answer. */
export interface ErrorBody {
  /** What went wrong, in one sentence. */
  error: string;
}

/** Error body of a 429. */
export interface RateLimitErrorBody extends ErrorBody {
  /** The limit, e.g. "60 requests per minute". */
  limit: string;
  /** Whole seconds until the key's window resets (also in Retry-After). */
  retryAfter: number;
}

/** Per-year figures committed in data/archive-summary.json (the yearly-update guard). */
export interface YearSummary {
  /** Number of categories (both 1930 ceremonies counted). */
  categories: number;
  /** Number of nominations. */
  nominations: number;
  /** Number of winning nominations. */
  wins: number;
  /** sha256 of the year's canonical JSON. */
  hash: string;
  /** Nomination fingerprints (sha256 prefix of category + primary + secondary), sorted, to name what changed. */
  fingerprints: string[];
  /** Fingerprints of the winning nominations, sorted. */
  winners: string[];
}

export type ArchiveSummary = Record<string, YearSummary>;

/**
 * Reference to a stored response, kept in one form (as sent): `<id>` (a file
 * of its own) or `<id>@<pack id>:<start>-<end>` (bytes start to end of a
 * pack file, inflated), each id
 * the first 20 hex digits of the sha256 of those bytes: an answer's id, and
 * so its ETag, is that of its own bytes wherever they are kept. Files live at
 * `_data/r/<first two digits>/<id>` under dist/, so no file name is ever
 * derived from user input.
 */
export type FileRef = string;

/**
 * What every category lookup reads first. A text matching one full name is
 * answered by that name's stored answer; one matching several, by their
 * elements (the categories of a year's answer, or of `joined` across all
 * years) cut out in runs when asked, in archive order. Stored as a line of
 * this JSON, then one line per name (by place) of its answers at each year
 * it was used (`Record<string, FileRef>`), so a lookup parses only the line
 * it needs: the year lines are three quarters of the file.
 */
export interface CategoryIndex {
  /** Full category names (title-cased), in order of first appearance: a name's place is its index here. */
  names: string[];
  /** Each name's answer across all years, by place. */
  all: FileRef[];
  /**
   * Every element of every year as a CategoryMatch, in archive order: the
   * answer to a text matching every name, what a join across all years is
   * cut from. Each element is its year's element opened with its year
   * (`{"year":"1929",` and then the element past its `{`), so
   * `8 + JSON.stringify(year).length` bytes longer.
   */
  joined: FileRef;
  /**
   * Each held year's elements: where its first element starts within
   * `joined`, and for each element (a category, in order) three numbers: its
   * name's place in `names` and its byte range [start, end) within the
   * year's answer (one flat array: it parses a few times faster than an
   * array per element).
   */
  elements: Record<string, { at: number; parts: number[] }>;
}

/** Person and film index shard: exact name to [PersonMatch[] across all years, FilmMatch[] per held year]. */
export type Shard = Record<string, [FileRef, Record<string, FileRef>]>;

/** IMDb id index shard: a title id (`tt…`) or name id (`nm…`, `co…`) to its PersonMatch[] across all years. */
export type IdShard = Record<string, FileRef>;

/** The upstream revision of the source a build read, as data/source.json pinned it. */
export interface SourceRevision {
  /** The upstream repository, `owner/name`. */
  repository: string;
  /** The upstream commit; null when it was pinned from a file of unknown origin. */
  commit: string | null;
  /** The commit's date (ISO 8601), or the day it was pinned when the commit is unknown. */
  date: string | null;
}

/** The stored layout's version: the build writes it, and the reader refuses any other. */
export const LAYOUT_FORMAT = 19;

export interface Manifest {
  /** Layout version; the runtime refuses other versions. */
  format: typeof LAYOUT_FORMAT;
  /**
   * Where the archive came from; `revision` when the build read
   * the revision data/source.json pins (absent in older builds).
   */
  source: { sha256: string; rows: number; sample: boolean; revision?: SourceRevision | null };
  /** Lowest and highest held year. */
  yearRange: [number, number];
  /** The whole archive. */
  archive: FileRef;
  /** One ceremony year: its Category[]. */
  years: Record<string, FileRef>;
  /**
   * The stored CategoryIndex (its line, then a line of each name's answers at each
   * year): the full category names, each one's answers, and each year's elements.
   */
  categories: FileRef;
  /** How many full category names there are (for /health, which reads no other file). */
  categoryCount: number;
  /** Person/film index shards, by shard number (see shardOf); the answers a shard names are in one pack. */
  shards: FileRef[];
  /** IMDb id index shards, by shard number of the id (see shardOf); the answers a shard names are in one pack. */
  ids: FileRef[];
  /**
   * The stored search index (src/shared/search.ts: storedFiles): its core (vocabulary, postings and
   * keys), then its files of rows, in the order the core counts them; read by searches, never sent.
   */
  search: FileRef[];
  /** The category list's answer (CategoryName[]). */
  categoryList: FileRef;
  /** The dataset (`/dataset`): its list's answer (DatasetList) and each file by name; absent in builds without one. */
  dataset?: { list: FileRef; files: Record<string, FileRef> };
  /**
   * The records (`/film`, `/people`, `/ceremony`, `/awards`): the award
   * list's answer, and shards (as the IMDb id index's, by shardOf of the
   * key) naming each record's answer by its key: the IMDb id of a film,
   * person or company, `ceremony {held year}`, `award {award id}`. Absent in
   * builds without records.
   */
  records?: { awards: FileRef; shards: FileRef[] };
  /** The rankings' table (docs/rankings.md), read whole by a ranking made at run time, never sent; absent in builds without records. */
  rankings?: FileRef;
}

/** One file of the dataset, as the dataset list (`/dataset`) names it. */
export interface DatasetEntry {
  /** Its name: `/dataset/file={name}` downloads it. */
  name: string;
  /**
   * `sqlite`, `ndjson` or `csv`: the tables (docs/dataset.md); `search`: the
   * search index the offline client searches (`search.ndjson`: a line saying
   * what it is, then the index's stored files, a JSON string each).
   */
  format: 'sqlite' | 'ndjson' | 'csv' | 'search';
  /** Its size in bytes, as stored (uncompressed). */
  bytes: number;
  /** Lower-case hex sha256 of its bytes: check a download against it. */
  sha256: string;
  /** sha256 of the source file the dataset was built from (what /health calls the revision). */
  revision: string;
  /** The data's licence (SPDX id); its text and attribution travel inside every file. */
  licence: string;
}

/** What `/dataset` answers: the source revision, its licence and attribution, and every file. */
export interface DatasetList {
  /** sha256 of the source file the dataset was built from. */
  revision: string;
  /** The upstream commit of that file, when the build knew it. */
  commit?: string;
  /** That revision's date (ISO 8601), when the build knew it. */
  date?: string;
  /** The data's licence (SPDX id). */
  licence: string;
  /** Who made the data, and where it comes from. */
  attribution: string;
  /** Every file, the SQLite file first. */
  files: DatasetEntry[];
}

/** The forms the dataset comes in (`/dataset`). */
export type DatasetFormat = DatasetEntry['format'];

/**
 * Records (`/film/id=…`, `/people/id=…`, `/ceremony/year=…`, `/awards`,
 * `/awards/id=…`): everything the archive knows of one thing, with its ids.
 * Things are told apart as the source allows (docs/records.md): one thing a
 * IMDb id; a name written without one belongs to the thing of its kind and
 * name that has one, where exactly one does; countries (the International
 * Feature Film nominations' Name) are a kind of their own.
 */

/** A film as one nomination credits it. */
export interface RecordFilm {
  /** Its IMDb title id; null when the source gives none (then it has no record of its own). */
  id: string | null;
  /** The title as this nomination credits it. */
  title: string;
  /** The film's year (the source's Year column of its first nomination: `1997`, `1927/28`), not the ceremony's. */
  filmYear: string;
  /** The character played in this film, where one actor's nomination names several films with a character each (the first years); the name then has none. */
  character?: string;
  /** The same for a song, where one nomination names several films with a song each. */
  song?: string;
  /** The same for any other detail the source gives per film. */
  detail?: string;
}

/** A person, company or country as one nomination credits it. */
export interface RecordName {
  /** Its IMDb name id (`nm…` a person, `co…` a company); null when the source gives none (a country never has one). */
  id: string | null;
  /** The name as this nomination credits it. */
  name: string;
  /**
   * `country` is the country of an International Feature Film (or Foreign Language Film) nomination, never a company.
   */
  kind: 'person' | 'company' | 'country';
  /**
   * `primary` when the nomination is for them (most categories), `secondary`
   * when it is for the film and they share it (Best Picture's producers).
   */
  role: 'primary' | 'secondary';
  /** The character played, for an acting nomination (several, joined by `|`, only where the source does not say which film each is in). */
  character?: string;
  /** The song's title, for a song nomination. */
  song?: string;
  /** What else the source says of this credit (a scientific award's subject, say). */
  detail?: string;
}

/** One nomination, as every record gives it. */
export interface RecordNomination {
  /** Held year of its ceremony (what the spec's lookups call the year). */
  year: string;
  /** The ceremony's number (1 to 98). */
  ceremony: number;
  /** The source's Year column: the films' year, not the ceremony's. */
  filmYear: string;
  /** The category as the spec's answers name it that year (`Actress in a Leading Role`). */
  category: string;
  /** The award's id (`/awards/id={award}`), the same under all its names. */
  award: string;
  /** Title, Acting, Directing, Writing, Music, Production, SciTech or Special. */
  class: string;
  won: boolean;
  /** Every film it names, in the source's order. */
  films: RecordFilm[];
  /** Every person, company or country it names, in the source's order. */
  people: RecordName[];
  /** The Academy's historical footnotes. */
  notes?: string[];
  /** The official award text (honorary, special, scientific and technical awards). */
  citation?: string;
}

/**
 * A thing's standing among the things of its kind that have a record: 1 is the most; ties share a rank (1, 2, 2, 4).
 */
export interface Standing {
  nominations: number;
  wins: number;
  /** Rank by nominations. */
  byNominations: number;
  /** Rank by wins. */
  byWins: number;
}

/** A thing's standing within one class, among the things of its kind nominated in it. */
export interface ClassStanding extends Standing {
  class: string;
}

/** A thing's standing within one award, among the things of its kind nominated for it. */
export interface AwardStanding extends Standing {
  /** The award's id. */
  award: string;
  /** The award's name. */
  name: string;
}

/**
 * A thing's standing overall, within each class and within each
 * award it was nominated for (docs/records.md says what counts).
 */
export interface Ranks {
  overall: Standing;
  /** Within each class it was nominated in, most nominations first. */
  classes: ClassStanding[];
  /** Within each award it was nominated for, most nominations first. */
  awards: AwardStanding[];
}

/** A ceremony by its held year and its number. */
export interface CeremonyRef {
  /** Held year. */
  year: string;
  /** Its number (1 to 98). */
  ceremony: number;
}

/** A ceremony of a held year: its number and the films' year it honoured. */
export interface CeremonyHeld {
  ceremony: number;
  /** The source's Year column (`1928/29`, `1997`). */
  filmYear: string;
}

/** A credit's text and how often the source writes it. */
export interface Credit {
  name: string;
  /** Held year of the first and last nomination credited so. */
  firstYear: string;
  lastYear: string;
  nominations: number;
}

/** What `/film/id={tt…}` answers. */
export interface FilmRecord {
  id: string;
  /** The title of its latest credit. */
  title: string;
  /** Every title it was credited under, the latest first. */
  titles: Credit[];
  /** The film's year (its first nomination's Year column). */
  filmYear: string;
  /** The ceremonies it was nominated at. */
  ceremonies: CeremonyRef[];
  nominations: number;
  wins: number;
  ranks: Ranks;
  /** Every nomination, in archive order. */
  entries: RecordNomination[];
}

/** What `/people/id={nm…|co…}` answers: a person or a company. */
export interface PeopleRecord {
  id: string;
  kind: 'person' | 'company';
  /** The name of its latest credit. */
  name: string;
  /** Every name it was credited under, the latest first. */
  names: Credit[];
  nominations: number;
  wins: number;
  /** Its first ceremony. */
  first: CeremonyRef;
  /** Its last ceremony. */
  last: CeremonyRef;
  ranks: Ranks;
  /** Every nomination, in archive order. */
  entries: RecordNomination[];
}

/** One category of a ceremony record, in archive order. */
export interface CeremonyCategory {
  ceremony: number;
  category: string;
  award: string;
  class: string;
  nominations: number;
  wins: number;
}

/** What `/ceremony/year={held year}` answers: the ceremony (1930: both) held that year. */
export interface CeremonyRecord {
  year: string;
  /** The ceremonies held that year, each with its number and film year. */
  ceremonies: CeremonyHeld[];
  categories: CeremonyCategory[];
  nominations: number;
  wins: number;
  /** Every nomination, in archive order. */
  entries: RecordNomination[];
}

/** One award (the source's canonical category), as the award list (`/awards`) gives it. */
export interface AwardSummary {
  /** `/awards/id={id}` answers its record. */
  id: string;
  /** The source's canonical name, cased as the category names are. */
  name: string;
  class: string;
  /** Every full category name it was given, with the held years of each. */
  names: AwardName[];
  nominations: number;
  wins: number;
  firstYear: string;
  lastYear: string;
  /** Its record, without the key. */
  path: string;
}

/** What `/awards/id={award}` answers: the award across all its names. */
export interface AwardRecord extends AwardSummary {
  /** Every nomination under every name, in archive order. */
  entries: RecordNomination[];
}

/**
 * A ranking's question (`/rankings/…`, docs/rankings.md), as the client takes
 * it: each field a path segment `name=value`, any of them left out.
 */
export interface RankingQuery {
  /** What is ranked: `people` (the default), `companies` or `films`. */
  of?: 'people' | 'companies' | 'films';
  /** `nominations` (the default) or `wins`. */
  by?: 'nominations' | 'wins';
  /** Only nominations in this class (Title, Acting, Directing, Writing, Music, Production, SciTech, Special), or `competitive` (all but SciTech and Special). */
  class?: string;
  /** Only nominations for this award (its id, as `/awards` gives it); not with a class. */
  award?: string;
  /** First held year counted; default the archive's first. */
  from?: number | string;
  /** Last held year counted; default the archive's last. */
  to?: number | string;
  /** `yes`: only those with a win there; `no`: only those without. */
  won?: 'yes' | 'no';
  /** `ceremony`: each entry is one film, person or company at one ceremony (the most wins at one ceremony). */
  per?: 'ceremony';
  /** Entries at most, 1 to 1000; default 100. */
  limit?: number;
}

/** One film, person or company in a ranking. */
export interface RankingEntry {
  /** Its rank by the ranking's count, the most first; ties share a rank and the next skips (1, 2, 2, 4). */
  rank: number;
  /** Its IMDb id. */
  id: string;
  /** Its name (a film's title) as last credited. */
  name: string;
  kind: 'film' | 'person' | 'company';
  /** Its record's path, without the key. */
  record: string;
  /** With `per=ceremony`: the ceremony's held year. */
  year?: string;
  /** With `per=ceremony`: the ceremony's number. */
  ceremony?: number;
  /** Nominations in the ranking's span, class or award. */
  nominations: number;
  /** Wins in the same. */
  wins: number;
}

/** What `/rankings/…` answers: the question as understood, how many qualify, and the first `limit` of them. */
export interface Ranking {
  of: 'people' | 'companies' | 'films';
  by: 'nominations' | 'wins';
  class?: string;
  /** The award's id. */
  award?: string;
  /** First held year counted. */
  from: string;
  /** Last held year counted. */
  to: string;
  /** `yes`: winners only; `no`: those without a win. */
  won?: 'yes' | 'no';
  /** `ceremony`: each entry one thing at one ceremony. */
  per?: string;
  limit: number;
  /** How many films, people or companies qualify (the entries are the first `limit`). */
  total: number;
  entries: RankingEntry[];
}

/** A ranking's question once checked (rankingAsk in src/client/client.ts): what was left out is left out, but for its defaults; years without leading zeros. */
export interface RankingAsk {
  of: 'people' | 'companies' | 'films';
  by: 'nominations' | 'wins';
  class?: string;
  award?: string;
  from?: string;
  to?: string;
  won?: 'yes' | 'no';
  per?: 'ceremony';
  limit: number;
}
