/**
 * The spec's matching rules, evaluated the obvious way: scan the whole
 * archive on every call. The build's precomputed answers must equal these
 * byte for byte (test/equivalence.test.ts), and the benchmark's naive server
 * uses them as the baseline. Never used on the request path of the real API.
 */
import type { Archive, CategoryMatch, FilmMatch, Nomination, PersonMatch } from './types.ts';

const mentions = (n: Nomination, name: string) => n.primary.includes(name) || n.secondary.includes(name);

/** A match object's fields in the order the API writes them. */
export const nominationMatch = (year: string, category: string, n: Nomination): PersonMatch => ({
  year,
  category,
  primary: n.primary,
  secondary: n.secondary,
  won: n.won,
  ...(n.notes === undefined ? {} : { notes: n.notes }),
});

export function naiveYear(archive: Archive, year: string) {
  return Object.hasOwn(archive, year) ? { [year]: archive[year] } : null;
}

export function naivePerson(archive: Archive, name: string): PersonMatch[] {
  const out: PersonMatch[] = [];
  for (const [year, categories] of Object.entries(archive)) {
    for (const c of categories) for (const n of c.nominations) if (mentions(n, name)) out.push(nominationMatch(year, c.category, n));
  }
  return out;
}

export function naiveFilm(archive: Archive, name: string, year: string): FilmMatch[] {
  return naivePerson(archive, name).filter((m) => m.year === year);
}

export function naiveAward(archive: Archive, query: string, year?: string): CategoryMatch[] {
  const out: CategoryMatch[] = [];
  for (const [y, categories] of Object.entries(archive)) {
    if (year !== undefined && y !== year) continue;
    for (const c of categories) if (c.category.includes(query)) out.push({ year: y, category: c.category, nominations: c.nominations });
  }
  return out;
}
