/**
 * Shapes shared by the build, the runtime, the OpenAPI generator and the tests.
 * One source of truth: change a field here and every consumer sees it.
 */

/** One nomination, as the API returns it. */
export interface Nomination {
  /** Who or what is honoured: people for most classes, the film(s) for Title classes. */
  primary: string[];
  /** The other side: the film(s) for most classes, the people or country for Title classes. */
  secondary: string[];
  /** True when this nomination won. */
  won: boolean;
  /** Song title, official citation and the Academy's historical notes; absent when there is nothing to say. */
  notes?: string;
}

/** One category at one ceremony, in the order the Academy lists it. */
export interface Category {
  /** The Academy's name for the category that year, title-cased (`Actor in a Leading Role`). */
  category: string;
  /** Every nomination in the category, in the Academy's order. */
  nominations: Nomination[];
}

/** Every category of one ceremony year (both 1930 ceremonies share "1930"). */
export type Ceremony = Category[];

/** The whole archive: ceremony held year (as a string) to its categories. */
export type Archive = Record<string, Ceremony>;

/** A nomination found by the person route: where it was and what it was. */
export interface PersonMatch extends Nomination {
  /** Held year of the ceremony. */
  year: string;
  /** Category name that year. */
  category: string;
}

/** A nomination found by the film-at-a-ceremony route. */
export interface FilmMatch extends Nomination {
  /** Held year of the ceremony (the one asked for). */
  year: string;
  /** Category name that year. */
  category: string;
}

/** A category found by the award route across all ceremonies. */
export interface CategoryMatch {
  /** Held year of the ceremony. */
  year: string;
  /** Full category name that year. */
  category: string;
  /** Every nomination in it. */
  nominations: Nomination[];
}

/** A category found by the award route at one ceremony. */
export type CategoryYearMatch = CategoryMatch;

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
 * Reference to a stored response: `<id>` or `<id>/<gzip id>/<brotli id>`,
 * each id the first 20 hex digits of the sha256 of the file's bytes. Files
 * live at `_data/r/<first two digits>/<id>` under dist/, so no file name is
 * ever derived from user input.
 */
export type FileRef = string;

/** One full category name with where its answers are stored. */
export interface ManifestCategory {
  /** Full category name (title-cased). */
  name: string;
  /** CategoryMatch[] of every ceremony that used this name. */
  all: FileRef;
  /** [held year, position within that year's categories, start byte, end byte] of each element of `all`, in archive order. */
  units: [number, number, number, number][];
  /** CategoryMatch[] at one held year. */
  years: Record<string, FileRef>;
}

/** Person and film index shard: exact name to [all-years answer, per-year answers]. */
export type Shard = Record<string, [FileRef, Record<string, FileRef>]>;

/** What the runtime loads first: `_data/manifest.json`. */
export interface Manifest {
  /** Layout version; the runtime refuses other versions. */
  format: 1;
  /** Where the archive came from. */
  source: { sha256: string; rows: number; sample: boolean };
  /** Lowest and highest held year. */
  yearRange: [number, number];
  /** The whole archive. */
  archive: FileRef;
  /** One ceremony year: `{ "<year>": Category[] }`. */
  years: Record<string, FileRef>;
  /** Every full category name, in order of first appearance. */
  categories: ManifestCategory[];
  /** Person/film index shards, by shard number (see shardOf). */
  shards: FileRef[];
}
