/**
 * The benchmark's naive answers: each lookup the obvious way, a scan of the
 * whole archive in memory and a fresh JSON.stringify on every request, as a
 * first implementation of the spec would do it. It reads the archive as the
 * build's importer gives it, each nomination's IMDb ids as the things model
 * credits them (build/answers/things.ts), and nothing the build stores. Its own code, not the tests' oracle (test/oracle.ts, which
 * nothing outside test/ imports); test/ops/bench-naive.test.ts holds the two
 * to the same answers.
 */
import type { ImportResult, NominationIds } from '../build/archive/import.ts';
import { nominationIds } from '../build/answers/things.ts';
import { ROUTES, type RouteId } from '../src/shared/routes.ts';
import type { Category, Nomination } from '../src/shared/types.ts';

/** What a lookup answers: status and exact body. */
export interface NaiveAnswer {
  status: number;
  text: string;
}

/** The parameters as the route names them, decoded and checked. */
export interface NaiveParams {
  name?: string;
  year?: number;
  id?: string;
}

const NOT_FOUND = new Map(ROUTES.map((r) => [r.id, r.notFound]));

/** Every (year, category) in archive order: years ascending, categories as listed; only `year`'s when given. */
function* categories(archive: ImportResult['archive'], year?: number): Generator<[string, Category]> {
  for (const y of Object.keys(archive).sort((a, b) => Number(a) - Number(b))) {
    if (year === undefined || Number(y) === year) for (const c of archive[y]) yield [y, c];
  }
}

const names = (n: Nomination, name: string) => n.primary.includes(name) || (n.secondary ?? []).includes(name);

/** Each import's ids by nomination, as the things model credits them: worked out on the first id lookup. */
const credited = new WeakMap<ImportResult, NominationIds>();

/** Every nomination crediting `id` (FilmId or NomineeIds, or a name only `id` stands for), as the person lookup shows it. */
function byId(data: ImportResult, id: string) {
  let ids = credited.get(data);
  if (!ids) credited.set(data, (ids = nominationIds(data.rows)));
  const out = [];
  for (const [year, c] of categories(data.archive))
    for (const n of c.nominations)
      if (ids.get(n)?.includes(id)) out.push({ year, category: c.category, nomination: n });
  return out;
}

/**
 * The answer to the lookup `route` with `params`, or null for a
 * route the spec has no rule for (search, the category list).
 */
export function naiveAnswer(
  data: ImportResult,
  route: RouteId,
  { name = '', year, id = '' }: NaiveParams,
): NaiveAnswer | null {
  const { archive } = data;
  const all = [...categories(archive, route === 'allCeremonies' ? undefined : year)];
  const lookups: Partial<Record<RouteId, () => unknown[] | object>> = {
    allCeremonies: () => (all.length ? archive : []),
    ceremonyByYear: () => all.map(([, c]) => c),
    personByName: () =>
      all.flatMap(([y, c]) =>
        c.nominations
          .filter((n) => names(n, name))
          .map((nomination) => ({ year: y, category: c.category, nomination })),
      ),
    filmByNameAndYear: () =>
      all.flatMap(([, c]) =>
        c.nominations.filter((n) => names(n, name)).map((nomination) => ({ category: c.category, nomination })),
      ),
    categoryByName: () => all.filter(([, c]) => c.category.includes(name)).map(([y, c]) => ({ year: y, ...c })),
    categoryByNameAndYear: () => all.filter(([, c]) => c.category.includes(name)).map(([, c]) => c),
    titleById: () => byId(data, id),
    nameById: () => byId(data, id),
  };
  const value = lookups[route]?.();
  if (value === undefined) return null;
  if (Array.isArray(value) && value.length === 0)
    return {
      status: 404,
      text: JSON.stringify({ error: NOT_FOUND.get(route) ?? 'Data not found for the specified year' }),
    };
  return { status: 200, text: JSON.stringify(value) };
}
