/**
 * The API's routes: one table shared by the router, the service description
 * at `/`, the OpenAPI document, the reference page and its examples. A new
 * lookup is a row here, its case in the archive reader (src/store/archive.ts),
 * its method in the client, and, when it needs answers of its own, what
 * stores them (build/answers/artifacts.ts, and their place in the Manifest).
 */

/** The groups of operations in the OpenAPI document and the reference page. */
export type Tag = 'ceremonies' | 'people and films' | 'categories' | 'search' | 'IMDb ids' | 'records' | 'dataset';

import type { RankingAsk } from './types.ts';

export type Param = 'name' | 'year' | 'id' | 'file';
export type RouteId =
  | 'allCeremonies'
  | 'ceremonyByYear'
  | 'personByName'
  | 'filmByNameAndYear'
  | 'categoryByName'
  | 'categoryByNameAndYear'
  | 'titleById'
  | 'nameById'
  | 'search'
  | 'categories'
  | 'datasetList'
  | 'datasetFile'
  | 'filmRecord'
  | 'peopleRecord'
  | 'ceremonyRecord'
  | 'awardList'
  | 'awardRecord'
  | 'rankings';

export interface Route {
  /** OpenAPI operation id. */
  id: RouteId;
  /** Its heading on the reference page, in words people read. */
  title: string;
  tag: Tag;
  /** The client's method that asks it, called with the parameters in order (src/client/client.ts). */
  client: string;
  /** First path segment(s) accepted. */
  roots: string[];
  /** Parameter segments between the root and `apikey=`, in order. */
  params: Param[];
  /** Segments `name=value` that may follow them instead, any of these names in any order, each once (a ranking's; the route's own code reads them). */
  options?: string[];
  /** One-line summary. */
  summary: string;
  /** Body of the 404 when nothing matches; null where the spec lists no 404 (the whole archive). */
  notFound: string | null;
  /** What a 200 answers, named by the shapes of src/shared/types.ts: `PersonMatch[]` is an array of PersonMatch; `file`, a dataset file's own bytes. */
  answer:
    | 'Archive'
    | 'Ceremony'
    | 'PersonMatch[]'
    | 'FilmMatch[]'
    | 'CategoryMatch[]'
    | 'CategoryYearMatch[]'
    | 'SearchResult[]'
    | 'CategoryName[]'
    | 'DatasetList'
    | 'file'
    | 'FilmRecord'
    | 'PeopleRecord'
    | 'CeremonyRecord'
    | 'AwardSummary[]'
    | 'AwardRecord'
    | 'Ranking';
  /** Example parameters for documentation. */
  example: Partial<Record<Param, string>>;
}

export const ROUTES: Route[] = [
  {
    id: 'allCeremonies',
    title: 'The whole archive',
    tag: 'ceremonies',
    client: 'archive',
    roots: ['archive', 'oscars'],
    params: [],
    summary: 'The whole archive: every ceremony year and its categories.',
    notFound: null,
    answer: 'Archive',
    example: {},
  },
  {
    id: 'ceremonyByYear',
    title: 'One ceremony, by the year it was held',
    tag: 'ceremonies',
    client: 'ceremony',
    roots: ['archive', 'oscars'],
    params: ['year'],
    summary: 'One ceremony year (the year it was held).',
    notFound: 'Data not found for the specified year',
    answer: 'Ceremony',
    example: { year: '1930' },
  },
  {
    id: 'personByName',
    title: 'A person, company or film across all ceremonies',
    tag: 'people and films',
    client: 'person',
    roots: ['person'],
    params: ['name'],
    summary: 'Every nomination naming this person, company or film, across all ceremonies.',
    notFound: 'Person not found',
    answer: 'PersonMatch[]',
    example: { name: 'Emma Stone' },
  },
  {
    id: 'filmByNameAndYear',
    title: 'A film at one ceremony',
    tag: 'people and films',
    client: 'film',
    roots: ['movie'],
    params: ['name', 'year'],
    summary: 'Every nomination naming this film (or person) at one ceremony.',
    notFound: 'Movie not found',
    answer: 'FilmMatch[]',
    example: { name: 'Sinners', year: '2026' },
  },
  {
    id: 'categoryByName',
    title: 'A category across all ceremonies',
    tag: 'categories',
    client: 'category',
    roots: ['award'],
    params: ['name'],
    summary: 'Every category whose name contains this text (case-sensitive), across all ceremonies.',
    notFound: 'Award not found',
    answer: 'CategoryMatch[]',
    example: { name: 'Actor' },
  },
  {
    id: 'categoryByNameAndYear',
    title: 'A category at one ceremony',
    tag: 'categories',
    client: 'categoryAt',
    roots: ['award'],
    params: ['name', 'year'],
    summary: 'Every category whose name contains this text (case-sensitive), at one ceremony.',
    notFound: 'Award not found',
    answer: 'CategoryYearMatch[]',
    example: { name: 'Best Picture', year: '2026' },
  },
  {
    id: 'titleById',
    title: 'A film by its IMDb id',
    tag: 'IMDb ids',
    client: 'titleById',
    roots: ['title'],
    params: ['id'],
    summary: 'Every nomination of the film with this IMDb title id, across all ceremonies.',
    notFound: 'Title not found',
    answer: 'PersonMatch[]',
    example: { id: 'tt31193180' },
  },
  {
    id: 'nameById',
    title: 'A person or company by its IMDb id',
    tag: 'IMDb ids',
    client: 'nameById',
    roots: ['name'],
    params: ['id'],
    summary: 'Every nomination of the person or company with this IMDb name id, across all ceremonies.',
    notFound: 'Name not found',
    answer: 'PersonMatch[]',
    example: { id: 'nm1297015' },
  },
  {
    id: 'search',
    title: 'Search by approximate name',
    tag: 'search',
    client: 'search',
    roots: ['search'],
    params: ['name'],
    summary:
      'Films, people, companies and categories close to this text (any case, marks, punctuation, typos, word order, joined or split words; an award as people name it), best first, at most 10.',
    notFound: null,
    answer: 'SearchResult[]',
    example: { name: 'emma st' },
  },
  {
    id: 'datasetList',
    title: 'The dataset: its files',
    tag: 'dataset',
    client: 'dataset',
    roots: ['dataset'],
    params: [],
    summary:
      'The whole source to keep (every field, IMDb ids, characters and songs): its files, SQLite, NDJSON and a CSV per table, each with its size, sha256, revision and licence.',
    notFound: null,
    answer: 'DatasetList',
    example: {},
  },
  {
    id: 'datasetFile',
    title: 'One file of the dataset',
    tag: 'dataset',
    client: 'datasetFile',
    roots: ['dataset'],
    params: ['file'],
    summary:
      'One file of the dataset, by its name in the list; a Range resumes a download, and the whole download counts as one request.',
    notFound: 'Dataset file not found',
    answer: 'file',
    example: { file: 'oscars.sqlite' },
  },
  {
    id: 'categories',
    title: 'Every category name',
    tag: 'categories',
    client: 'categories',
    roots: ['categories'],
    params: [],
    summary: 'Every full category name, in order of first appearance, with its years and its award.',
    notFound: null,
    answer: 'CategoryName[]',
    example: {},
  },
  {
    id: 'filmRecord',
    title: 'A film’s record',
    tag: 'records',
    client: 'filmRecord',
    roots: ['film'],
    params: ['id'],
    summary:
      'Everything the archive knows of the film with this IMDb title id: its titles, film year, ceremonies, totals, ranks and every nomination with every id.',
    notFound: 'Film not found',
    answer: 'FilmRecord',
    example: { id: 'tt31193180' },
  },
  {
    id: 'peopleRecord',
    title: 'A person’s or company’s record',
    tag: 'records',
    client: 'peopleRecord',
    roots: ['people'],
    params: ['id'],
    summary:
      'Everything the archive knows of the person (`nm…`) or company (`co…`) with this IMDb id: its names, totals, first and last ceremony, ranks and every nomination with every id.',
    notFound: 'Person or company not found',
    answer: 'PeopleRecord',
    example: { id: 'nm1297015' },
  },
  {
    id: 'ceremonyRecord',
    title: 'A ceremony’s record',
    tag: 'records',
    client: 'ceremonyRecord',
    roots: ['ceremony'],
    params: ['year'],
    summary:
      'The ceremony held in this year (1930: both): its number, film year, every category with its award and class, and every nomination with every id.',
    notFound: 'Ceremony not found',
    answer: 'CeremonyRecord',
    example: { year: '2026' },
  },
  {
    id: 'awardList',
    title: 'Every award',
    tag: 'records',
    client: 'awards',
    roots: ['awards'],
    params: [],
    summary:
      'Every award (the source’s canonical category), with its names over the years, its class, its totals and the path of its record.',
    notFound: null,
    answer: 'AwardSummary[]',
    example: {},
  },
  {
    id: 'awardRecord',
    title: 'An award’s record',
    tag: 'records',
    client: 'awardRecord',
    roots: ['awards'],
    params: ['id'],
    summary:
      'One award across all its names (Best Picture since 1929 in one call): its names with their spans, its class, totals and every nomination with every id.',
    notFound: 'Award not found',
    answer: 'AwardRecord',
    example: { id: 'best-picture' },
  },
  {
    id: 'rankings',
    title: 'Who has the most',
    tag: 'records',
    client: 'rankings',
    roots: ['rankings'],
    params: [],
    options: ['of', 'by', 'class', 'award', 'from', 'to', 'won', 'per', 'limit'],
    summary:
      'The people, companies or films with the most nominations or wins, within a class or an award, over a span of held years, winners only or without a win; ties share a rank.',
    notFound: 'Award not found',
    answer: 'Ranking',
    example: {},
  },
];

/** The form of an IMDb id a route accepts: a pattern (also the OpenAPI one) and how a 400 names it. */
export interface IdForm {
  pattern: string;
  expected: string;
  test(id: string): boolean;
}

function idForm(pattern: string, expected: string): IdForm {
  const regex = new RegExp(pattern);
  return { pattern, expected, test: (id) => regex.test(id) };
}

/** The ids the id lookups accept, as the source's FilmId and NomineeIds columns write them. */
export const ID_FORMS = {
  titleById: idForm('^tt[0-9]+$', '`tt` followed by digits (an IMDb title id such as tt0120338)'),
  nameById: idForm(
    '^(?:nm|co)[0-9]+$',
    '`nm` or `co` followed by digits (an IMDb name id such as nm0000658, or a company id such as co0028775)',
  ),
  awardRecord: idForm(
    '^[a-z0-9]+(?:-[a-z0-9]+)*$',
    'lower-case letters and digits in words joined by `-` (an award id from /awards, such as best-picture)',
  ),
} as const;

/** The path of the record of the film (`tt…`), person or company (`nm…`, `co…`) with this IMDb id. */
export const recordPath = (id: string) => `/${id.startsWith('tt') ? 'film' : 'people'}/id=${id}`;

/**
 * A dataset file's name, as the list names them: lower-case
 * letters, digits and `_`, then `.sqlite`, `.ndjson` or `.csv`.
 */
export const DATASET_FILE_NAME = /^[a-z0-9_]{1,64}\.(?:sqlite|ndjson|csv)$/;

/** The path template of a route, as documented: `/person/name={name}/apikey={apikey}`. */
export function template(route: Route, root = route.roots[0]): string {
  return `/${[root, ...route.params.map((p) => `${p}={${p}}`), 'apikey={apikey}'].join('/')}`;
}

/** A concrete example path with a given key. */
export function examplePath(route: Route, key: string): string {
  const params = route.params.map((p) => `${p}=${encodeURIComponent(route.example[p] ?? '')}`);
  return `/${[route.roots[0], ...params, `apikey=${key}`].join('/')}`;
}

/** Longest name accepted, in characters. */
export const MAX_NAME_LENGTH = 512;
/** Longest text a search accepts, in characters. */
export const MAX_SEARCH_LENGTH = 200;

/**
 * The answer shapes in the spec's own notation (section 2), for people and
 * JSON clients reading the service description and the reference page. A test
 * holds each one against the OpenAPI schema generated from src/shared/types.ts.
 */
export const SHAPES = {
  Nomination: '{"primary": string[], "secondary"?: string[], "won": boolean, "notes"?: string}',
  Category: '{"category": string, "nominations": Nomination[]}',
  Archive: '{"<held year>": Category[], …}',
  Ceremony: 'Category[]',
  PersonMatch: '{"year": string, "category": string, "nomination": Nomination}',
  FilmMatch: '{"category": string, "nomination": Nomination}',
  CategoryMatch: '{"year": string, "category": string, "nominations": Nomination[]}',
  CategoryYearMatch: '{"category": string, "nominations": Nomination[]}',
  SearchResult:
    '{"name": string, "kind": "person" | "company" | "country" | "film" | "category", "nominations": number, "wins": number, "firstYear": string, "lastYear": string, "path": string, "record"?: string, "id"?: string, "filmYear"?: string, "otherNames"?: string[], "awardNames"?: AwardName[]}',
  AwardName: '{"name": string, "firstYear": string, "lastYear": string}',
  CategoryName: '{"name": string, "award": string, "firstYear": string, "lastYear": string, "path": string}',
  DatasetList:
    '{"revision": string, "commit"?: string, "date"?: string, "licence": string, "attribution": string, "files": DatasetEntry[]}',
  DatasetEntry:
    '{"name": string, "format": "sqlite" | "ndjson" | "csv", "bytes": number, "sha256": string, "revision": string, "licence": string}',
  FilmRecord:
    '{"id": string, "title": string, "titles": Credit[], "filmYear": string, "ceremonies": CeremonyRef[], "nominations": number, "wins": number, "ranks": Ranks, "entries": RecordNomination[]}',
  PeopleRecord:
    '{"id": string, "kind": "person" | "company", "name": string, "names": Credit[], "nominations": number, "wins": number, "first": CeremonyRef, "last": CeremonyRef, "ranks": Ranks, "entries": RecordNomination[]}',
  CeremonyRecord:
    '{"year": string, "ceremonies": CeremonyHeld[], "categories": CeremonyCategory[], "nominations": number, "wins": number, "entries": RecordNomination[]}',
  AwardSummary:
    '{"id": string, "name": string, "class": string, "names": AwardName[], "nominations": number, "wins": number, "firstYear": string, "lastYear": string, "path": string}',
  Ranking:
    '{"of": "people" | "companies" | "films", "by": "nominations" | "wins", "class"?: string, "award"?: string, "from": string, "to": string, "won"?: "yes" | "no", "per"?: "ceremony", "limit": number, "total": number, "entries": RankingEntry[]}',
  RankingEntry:
    '{"rank": number, "id": string, "name": string, "kind": "film" | "person" | "company", "record": string, "year"?: string, "ceremony"?: number, "nominations": number, "wins": number}',
  AwardRecord:
    '{"id": string, "name": string, "class": string, "names": AwardName[], "nominations": number, "wins": number, "firstYear": string, "lastYear": string, "path": string, "entries": RecordNomination[]}',
  RecordNomination:
    '{"year": string, "ceremony": number, "filmYear": string, "category": string, "award": string, "class": string, "won": boolean, "films": RecordFilm[], "people": RecordName[], "notes"?: string[], "citation"?: string}',
  RecordFilm:
    '{"id": string | null, "title": string, "filmYear": string, "character"?: string, "song"?: string, "detail"?: string}',
  RecordName:
    '{"id": string | null, "name": string, "kind": "person" | "company" | "country", "role": "primary" | "secondary", "character"?: string, "song"?: string, "detail"?: string}',
  Credit: '{"name": string, "firstYear": string, "lastYear": string, "nominations": number}',
  Ranks: '{"overall": Standing, "classes": ClassStanding[], "awards": AwardStanding[]}',
  Standing: '{"nominations": number, "wins": number, "byNominations": number, "byWins": number}',
  ClassStanding: '{"nominations": number, "wins": number, "byNominations": number, "byWins": number, "class": string}',
  AwardStanding:
    '{"nominations": number, "wins": number, "byNominations": number, "byWins": number, "award": string, "name": string}',
  CeremonyRef: '{"year": string, "ceremony": number}',
  CeremonyHeld: '{"ceremony": number, "filmYear": string}',
  CeremonyCategory:
    '{"ceremony": number, "category": string, "award": string, "class": string, "nominations": number, "wins": number}',
} as const;

/** A lookup with its parameters decoded and checked. */
export interface Lookup {
  route: RouteId;
  name?: string;
  /** The held year, without leading zeros. */
  year?: string;
  /** An IMDb id of the form its route accepts. */
  id?: string;
  /** A dataset file's name, of the form DATASET_FILE_NAME. */
  file?: string;
  /** A ranking's segments, decoded, as sent checked (rankingAsk in src/client/client.ts). */
  ranking?: RankingAsk;
}
