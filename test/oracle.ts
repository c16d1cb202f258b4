/**
 * The spec's six lookups (../shared/spec/SPEC.md, sections 2, 4 and 7),
 * evaluated the obvious way over the whole archive as the service itself
 * serves it (endpoint 1), and written out as JSON in the spec's key order.
 * The two IMDb id lookups added since (title and name ids, answering the
 * person lookup's elements) are evaluated over the same archive, each
 * nomination paired with the ids its row of the source credits (docs/records.md:
 * a title or name without an id is the one id credited under it), read here
 * from the source's format (shared/data/README.md).
 *
 * Written from the spec alone: it imports nothing from build/ or src/ (not
 * even their types) and nothing there imports it, so it cannot share their
 * mistakes. The tests compare every precomputed answer with it byte for byte;
 * the benchmark's naive server is this file behind HTTP.
 */

/** Section 2, Nomination: primary and won required, secondary and notes optional. */
export interface SpecNomination {
  primary: string[];
  secondary?: string[];
  won: boolean;
  notes?: string;
}

/** Section 2, Category. */
export interface SpecCategory {
  category: string;
  nominations: SpecNomination[];
}

/** Endpoint 1: ceremony held year to its categories. */
export type SpecArchive = Record<string, SpecCategory[]>;

/** Section 7: the error bodies, word for word. */
export const SPEC_ERRORS = {
  forbidden: 'Forbidden - Invalid API Key',
  year: 'Data not found for the specified year',
  person: 'Person not found',
  movie: 'Movie not found',
  award: 'Award not found',
  tooMany: 'Too Many Requests',
  fetch: 'Error fetching data',
} as const;

/** The id lookups' 404s. */
export const ID_ERRORS = { title: 'Title not found', name: 'Name not found' } as const;

/** Well-formed ids: IMDb's title ids, and its name ids of people (`nm`) and companies (`co`). */
export const TITLE_ID = /^tt[0-9]+$/;
export const NAME_ID = /^(nm|co)[0-9]+$/;

/** Section 8: the rate limit as the 429 body states it. */
export const SPEC_LIMIT = '60 requests per minute';

/** A nomination rebuilt field by field in the order section 2 lists them, so nothing else rides along. */
function nomination(n: SpecNomination): SpecNomination {
  return {
    primary: n.primary,
    ...(n.secondary === undefined ? {} : { secondary: n.secondary }),
    won: n.won,
    ...(n.notes === undefined ? {} : { notes: n.notes }),
  };
}

const category = (c: SpecCategory): SpecCategory => ({
  category: c.category,
  nominations: c.nominations.map(nomination),
});

/** Matching rule 1: the name equals an entry of primary or of secondary, exactly. */
const names = (n: SpecNomination, name: string) => n.primary.includes(name) || (n.secondary ?? []).includes(name);

/** Every (year, category) of the archive in archive order: years ascending, categories as listed. */
function* categories(archive: SpecArchive, year?: string): Generator<[string, SpecCategory]> {
  const years = Object.keys(archive).sort((a, b) => Number(a) - Number(b));
  for (const y of years) {
    if (year !== undefined && y !== year) continue;
    for (const c of archive[y]) yield [y, c];
  }
}

/** Endpoint 1. */
export function allCeremonies(archive: SpecArchive): SpecArchive {
  const out: SpecArchive = {};
  for (const y of Object.keys(archive).sort((a, b) => Number(a) - Number(b))) out[y] = archive[y].map(category);
  return out;
}

/** Endpoint 2: the ceremony's categories, or null for a year without one. */
export function ceremonyByYear(archive: SpecArchive, year: number): SpecCategory[] | null {
  const key = String(year);
  return Object.hasOwn(archive, key) ? archive[key].map(category) : null;
}

/** Endpoint 3, matching rule 1: every nomination naming `name`, across all ceremonies. */
export function personByName(archive: SpecArchive, name: string) {
  const out: { year: string; category: string; nomination: SpecNomination }[] = [];
  for (const [year, c] of categories(archive)) {
    for (const n of c.nominations)
      if (names(n, name)) out.push({ year, category: c.category, nomination: nomination(n) });
  }
  return out;
}

/** Endpoint 4, matching rule 2: the same, limited to the ceremony held in `year`. */
export function filmByNameAndYear(archive: SpecArchive, name: string, year: number) {
  const out: { category: string; nomination: SpecNomination }[] = [];
  for (const [, c] of categories(archive, String(year))) {
    for (const n of c.nominations) if (names(n, name)) out.push({ category: c.category, nomination: nomination(n) });
  }
  return out;
}

/** Endpoint 5, matching rule 3: every category whose full name contains `text`, case-sensitively. */
export function categoryByName(archive: SpecArchive, text: string) {
  const out: { year: string; category: string; nominations: SpecNomination[] }[] = [];
  for (const [year, c] of categories(archive)) if (c.category.includes(text)) out.push({ year, ...category(c) });
  return out;
}

/** Endpoint 6: the same at the ceremony held in `year`. */
export function categoryByNameAndYear(archive: SpecArchive, text: string, year: number) {
  const out: SpecCategory[] = [];
  for (const [, c] of categories(archive, String(year))) if (c.category.includes(text)) out.push(category(c));
  return out;
}

/** What the service must answer for a lookup: status and exact body (JSON without whitespace). */
export interface Expected {
  status: number;
  text: string;
}

const found = (value: unknown[] | object | null, error: string): Expected =>
  value === null || (Array.isArray(value) && value.length === 0)
    ? { status: 404, text: JSON.stringify({ error }) }
    : { status: 200, text: JSON.stringify(value) };

/** The expected answer of each endpoint, with section 7's 404 where nothing matches. */
export const expected = {
  allCeremonies: (a: SpecArchive): Expected => found(allCeremonies(a), SPEC_ERRORS.year),
  ceremonyByYear: (a: SpecArchive, year: number): Expected => found(ceremonyByYear(a, year), SPEC_ERRORS.year),
  personByName: (a: SpecArchive, name: string): Expected => found(personByName(a, name), SPEC_ERRORS.person),
  filmByNameAndYear: (a: SpecArchive, name: string, year: number): Expected =>
    found(filmByNameAndYear(a, name, year), SPEC_ERRORS.movie),
  categoryByName: (a: SpecArchive, text: string): Expected => found(categoryByName(a, text), SPEC_ERRORS.award),
  categoryByNameAndYear: (a: SpecArchive, text: string, year: number): Expected =>
    found(categoryByNameAndYear(a, text, year), SPEC_ERRORS.award),
};

/** One nomination of the served archive, with the ids its source row carries. */
export interface SpecIdRow {
  year: string;
  category: string;
  nomination: SpecNomination;
  /** FilmId's ids. */
  titles: Set<string>;
  /** NomineeIds' ids. */
  names: Set<string>;
}

/**
 * Where the data's README says each ceremony was held: 1 in 1929,
 * 2 and 3 in 1930, 4 in 1931, 5 in 1932, then ceremony + 1928.
 */
const heldIn = (ceremony: number) =>
  ceremony <= 1 ? 1929 : ceremony <= 3 ? 1930 : ceremony <= 5 ? ceremony + 1927 : ceremony + 1928;

/** A `|`-separated id column's ids: a value may hold several, comma-separated; `?` keeps a place without an id. */
const idsIn = (text: string) =>
  new Set(
    text
      .split('|')
      .flatMap((v) => v.split(','))
      .filter((id) => id !== '' && id !== '?'),
  );

/**
 * Pairs every source row with its nomination in the served archive. The
 * archive lists, per held year, each ceremony's categories in order of first
 * appearance with their rows in source order; the rows are grouped the same
 * way here, and each pairing is checked (same category name but for case,
 * every Film value of the row in the nomination), so a misalignment fails
 * loudly instead of pairing ids with the wrong nomination.
 */
export function idRows(archive: SpecArchive, source: string): SpecIds {
  const [header, ...lines] = source
    .replace(/^\uFEFF/, '')
    .split('\n')
    .filter((line) => line !== '');
  const column = Object.fromEntries(header.split('\t').map((name, i) => [name, i]));
  // The same lines as readSource reads them, for the ids docs/records.md credits each with.
  const read = readSource(source);
  const { filmIdAt, peopleIdsAt } = sourceThings(read);
  const groups = new Map<string, { ceremony: number; category: string; rows: [string[], SourceLine][] }>();
  lines.forEach((line, index) => {
    const f = line.split('\t').map((v) => v.replaceAll('\\"', '"'));
    const ceremony = Number(f[column.Ceremony]);
    const key = `${ceremony}\t${f[column.Category]}`;
    if (!groups.has(key)) groups.set(key, { ceremony, category: f[column.Category], rows: [] });
    groups.get(key)!.rows.push([f, read[index]]);
  });
  // stable: first appearance within a ceremony
  const ordered = [...groups.values()].sort((a, b) => a.ceremony - b.ceremony);
  const out: SpecIdRow[] = [];
  for (const [year, categories] of Object.entries(archive).sort(([a], [b]) => Number(a) - Number(b))) {
    const held = ordered.filter((g) => String(heldIn(g.ceremony)) === year);
    if (held.length !== categories.length)
      throw new Error(`oracle: ${year} has ${categories.length} categories served, ${held.length} in the source`);
    categories.forEach((c, i) => {
      const g = held[i];
      if (g.category.toUpperCase() !== c.category.toUpperCase() || g.rows.length !== c.nominations.length) {
        throw new Error(
          `oracle: ${year} category ${i} is ${c.category} (${c.nominations.length}) served, ${g.category} (${g.rows.length}) in the source`,
        );
      }
      g.rows.forEach(([f, l], j) => {
        const n = c.nominations[j];
        const films = (f[column.Film] ?? '').split('|').filter((v) => v !== '');
        if (!films.every((film) => names(n, film)))
          throw new Error(`oracle: ${year} ${c.category} row ${j} names ${films.join('|')}, not in its nomination`);
        // The ids its columns carry, and those of a title or name written without one (docs/records.md).
        const titles = new Set([...idsIn(f[column.FilmId] ?? ''), ...l.films.flatMap((film) => filmIdAt(film) ?? [])]);
        const people = new Set([...idsIn(f[column.NomineeIds] ?? ''), ...l.people.flatMap((p) => peopleIdsAt(l, p))]);
        out.push({ year, category: c.category, nomination: n, titles, names: people });
      });
    });
  }
  const titles = new Map<string, SpecIdRow[]>();
  const people = new Map<string, SpecIdRow[]>();
  for (const row of out) {
    for (const id of row.titles) titles.set(id, [...(titles.get(id) ?? []), row]);
    for (const id of row.names) people.set(id, [...(people.get(id) ?? []), row]);
  }
  return { rows: out, titles, names: people };
}

/**
 * Every nomination with its ids, in archive order, and the
 * nominations of each id (so that asking every id stays quick).
 */
export interface SpecIds {
  rows: SpecIdRow[];
  titles: Map<string, SpecIdRow[]>;
  names: Map<string, SpecIdRow[]>;
}

const personMatch = (r: SpecIdRow) => ({ year: r.year, category: r.category, nomination: nomination(r.nomination) });

/** Title id lookup: every nomination whose row credits `id` (FilmId, or a title only `id` is credited under), in archive order. */
export const titleById = (ids: SpecIds, id: string) => (ids.titles.get(id) ?? []).map(personMatch);

/** Name id lookup: every nomination whose row credits `id` (NomineeIds, or a name only `id` is credited under), in archive order. */
export const nameById = (ids: SpecIds, id: string) => (ids.names.get(id) ?? []).map(personMatch);

/** The expected answer of a well-formed id (malformed ones answer 400, with a message the tests check on their own). */
export const expectedById = {
  titleById: (ids: SpecIds, id: string): Expected => found(titleById(ids, id), ID_ERRORS.title),
  nameById: (ids: SpecIds, id: string): Expected => found(nameById(ids, id), ID_ERRORS.name),
};

/**
 * The source read on its own terms (shared/data/README.md), for the
 * records' tests: every row with its fields, `\"` unescaped, multi-values
 * split on `|` (an id place may hold a pseudonym's several ids, split on
 * `,`; `?` and '' hold none), the held year from the README's table. Nothing
 * here is the build's: the tests hold the records against it.
 */
export interface SourceLine {
  /** 0-based, in source order. */
  index: number;
  ceremony: number;
  held: number;
  filmYear: string;
  klass: string;
  canonical: string;
  category: string;
  films: { title: string; id: string | null }[];
  /** Nominees, or the Name standing alone when Nominees is empty; each with its ids. */
  people: { name: string; ids: string[] }[];
  /** Whether `people` is the Name column standing alone. */
  nameAlone: boolean;
  won: boolean;
  detail: string[];
  note: string[];
  citation: string;
}

export const heldYearOf = heldIn;

export function readSource(text: string): SourceLine[] {
  const [header, ...lines] = text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .filter((line) => line !== '');
  const column = Object.fromEntries(header.split('\t').map((name, i) => [name, i]));
  const multi = (v: string) => v.split('|').filter((x) => x !== '');
  return lines.map((line, index) => {
    const f = line
      .replace(/\r$/, '')
      .split('\t')
      .map((v) => v.replaceAll('\\"', '"'));
    const get = (name: string) => f[column[name]] ?? '';
    const filmIds = get('FilmId').split('|');
    const nominees = multi(get('Nominees'));
    const nomineeIds = multi(get('NomineeIds'));
    const placeIds = (place: string | undefined) => (place ?? '').split(',').filter((id) => id !== '' && id !== '?');
    const people =
      nominees.length > 0
        ? nominees.map((name, i) => ({ name, ids: placeIds(nomineeIds[i]) }))
        : get('Name') !== ''
          ? [{ name: get('Name'), ids: nomineeIds.length === 1 ? placeIds(nomineeIds[0]) : [] }]
          : [];
    const ceremony = Number(get('Ceremony'));
    return {
      index,
      ceremony,
      held: heldIn(ceremony),
      filmYear: get('Year'),
      klass: get('Class'),
      canonical: get('CanonicalCategory') || get('Category'),
      category: get('Category'),
      films: multi(get('Film')).map((title, i) => ({ title, id: placeIds(filmIds[i])[0] ?? null })),
      people,
      nameAlone: nominees.length === 0 && people.length > 0,
      won: get('Winner') === 'True',
      detail: multi(get('Detail')),
      note: multi(get('Note')),
      citation: get('Citation'),
    };
  });
}

/**
 * docs/records.md's things over the source as readSource reads it: each
 * film's id and each place's ids, a text without one belonging to the one
 * id credited with that text, if exactly one is; a country has none.
 */
export function sourceThings(lines: SourceLine[]) {
  const idsOfText = (pick: (l: SourceLine) => [string, string[]][]) => {
    const map = new Map<string, Set<string>>();
    for (const l of lines)
      for (const [text, ids] of pick(l)) for (const id of ids) map.set(text, (map.get(text) ?? new Set()).add(id));
    return map;
  };
  const titleIds = idsOfText((l) => l.films.map((f) => [f.title, f.id ? [f.id] : []]));
  const nameIds = idsOfText((l) => l.people.map((p) => [p.name, p.ids]));
  const only = (ids: Set<string> | undefined) => (ids?.size === 1 ? [...ids][0] : null);
  const isCountry = (l: SourceLine) => l.nameAlone && l.canonical === 'INTERNATIONAL FEATURE FILM';
  return {
    titleIds,
    nameIds,
    isCountry,
    filmIdAt: (f: SourceLine['films'][number]) => f.id ?? only(titleIds.get(f.title)),
    peopleIdsAt: (l: SourceLine, p: SourceLine['people'][number]): string[] =>
      p.ids.length > 0 ? p.ids : isCountry(l) ? [] : [only(nameIds.get(p.name))].filter((id) => id !== null),
  };
}
