/**
 * The spec's six lookups (../shared/spec/SPEC.md, sections 2, 4 and 7),
 * evaluated the obvious way over the whole archive as the service itself
 * serves it (endpoint 1), and written out as JSON in the spec's key order.
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

const category = (c: SpecCategory): SpecCategory => ({ category: c.category, nominations: c.nominations.map(nomination) });

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
    for (const n of c.nominations) if (names(n, name)) out.push({ year, category: c.category, nomination: nomination(n) });
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
  filmByNameAndYear: (a: SpecArchive, name: string, year: number): Expected => found(filmByNameAndYear(a, name, year), SPEC_ERRORS.movie),
  categoryByName: (a: SpecArchive, text: string): Expected => found(categoryByName(a, text), SPEC_ERRORS.award),
  categoryByNameAndYear: (a: SpecArchive, text: string, year: number): Expected => found(categoryByNameAndYear(a, text, year), SPEC_ERRORS.award),
};
