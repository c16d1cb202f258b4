/**
 * The records (`/film`, `/people`, `/ceremony`, `/awards`) of the full
 * archive's build, held against the tests' own reading of the source
 * (test/oracle.ts, readSource) and the rules docs/records.md writes: every
 * award and every ceremony in full, a sample of films, people and companies,
 * their ranks, and the things told apart (no country a company, no name
 * without an id where exactly one thing of its name has one).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../src/api/handler.ts';
import { Keys } from '../../src/keys/rules.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { DiskData } from '../../adapters/_node/disk-data.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';
import { sharedBuild } from '../helpers/temp.ts';
import { readSource, sourceThings, type SourceLine } from '../oracle.ts';

let api: Api;
let key: string;

async function get(pathname: string): Promise<{ status: number; body: any }> {
  const out = await api.reply({ method: 'GET', url: `${pathname}/apikey=${key}`, header: () => null });
  return { status: out.status, body: JSON.parse(new TextDecoder().decode(out.body ?? new Uint8Array(0))) };
}

const lines = readSource(readFileSync(FULL_SOURCE, 'utf8'));
/**
 * The award id rule docs/records.md gives: the canonical name's letters and digits, lower case, in words joined by `-`.
 */
const awardIdOf = (canonical: string) =>
  canonical
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** Archive order: ceremony, each ceremony's categories in order of first appearance, rows in source order. */
const firstOfCategory = new Map<string, number>();
for (const l of lines)
  if (!firstOfCategory.has(`${l.ceremony}\t${l.category}`))
    firstOfCategory.set(`${l.ceremony}\t${l.category}`, l.index);
const ordered = [...lines].sort(
  (a, b) =>
    a.ceremony - b.ceremony ||
    firstOfCategory.get(`${a.ceremony}\t${a.category}`)! - firstOfCategory.get(`${b.ceremony}\t${b.category}`)! ||
    a.index - b.index,
);

/** The issue's merge rule (docs/records.md), read by the oracle from the source. */
const { titleIds, nameIds, isCountry, filmIdAt, peopleIdsAt } = sourceThings(lines);

/** Every id's nominations, in archive order, each once. */
const rowsOf = new Map<string, SourceLine[]>();
for (const l of ordered) {
  const ids = new Set(
    [...l.films.map(filmIdAt), ...l.people.flatMap((p) => peopleIdsAt(l, p))].filter((id): id is string => id !== null),
  );
  for (const id of ids) rowsOf.set(id, [...(rowsOf.get(id) ?? []), l]);
}

/** A credit's character, song or other detail, under whichever of the three names docs/records.md gives it. */
const detailOf = (credit: any) => credit.character ?? credit.song ?? credit.detail ?? null;
/** Where the source's Detail values sit (docs/records.md): on each film where one name (or none) is nominated for several films with one value each; else on the names, one a place when they line up, the only one, or all of them for a lone name. */
const filmDetail = (l: SourceLine, place: number) =>
  l.people.length <= 1 && l.films.length > 1 && l.detail.length === l.films.length ? l.detail[place] : null;
const personDetail = (l: SourceLine, place: number) => {
  if (filmDetail(l, 0) !== null || l.detail.length === 0) return null;
  if (l.detail.length === l.people.length) return l.detail[place];
  return l.detail.length === 1 || l.people.length === 1 ? l.detail.join('|') : null;
};

/** A served nomination as compared; and the same from a source line. */
const served = (e: any) => ({
  year: e.year,
  ceremony: e.ceremony,
  filmYear: e.filmYear,
  category: e.category.toUpperCase(),
  award: e.award,
  class: e.class,
  won: e.won,
  films: e.films.map((f: any) => [f.id, f.title, detailOf(f)]),
  people: e.people.map((p: any) => [p.id, p.name, detailOf(p)]),
  notes: e.notes ?? [],
  citation: e.citation ?? '',
});
const fromSource = (l: SourceLine) => ({
  year: String(l.held),
  ceremony: l.ceremony,
  filmYear: l.filmYear,
  category: l.category.toUpperCase(),
  award: awardIdOf(l.canonical),
  class: l.klass,
  won: l.won,
  films: l.films.map((f, place) => [filmIdAt(f), f.title, filmDetail(l, place)]),
  people: l.people.flatMap((p, place) => {
    const ids = peopleIdsAt(l, p);
    return (ids.length > 0 ? ids : [null]).map((id) => [id, p.name, personDetail(l, place)]);
  }),
  notes: l.note,
  citation: l.citation,
});

/** Competition ranks (1, 2, 2, 4), highest first. */
const rankOf = (values: number[], value: number) => 1 + values.filter((v) => v > value).length;

const awards = new Map<string, SourceLine[]>();
for (const l of ordered) awards.set(awardIdOf(l.canonical), [...(awards.get(awardIdOf(l.canonical)) ?? []), l]);

beforeAll(async () => {
  const dist = await sharedBuild(FULL_SOURCE);
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  key = await keys.issue('records@example.org');
  api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
}, 300_000);

describe('records, held against the source', () => {
  it('gives an actor nominated for several films at once his character in each film', async () => {
    const several = lines.filter((l) => l.klass === 'Acting' && filmDetail(l, 0) !== null);
    expect(several.length).toBeGreaterThan(0);
    for (const l of several) {
      const entry = (await get(`/ceremony/year=${l.held}`)).body.entries.find(
        (e: any) =>
          e.category.toUpperCase() === l.category.toUpperCase() &&
          e.people[0]?.name === l.people[0]?.name &&
          e.films.length === l.films.length,
      );
      expect(entry.films.map((f: any) => f.character)).toEqual(l.detail);
      expect(entry.people.every((p: any) => !('character' in p))).toBe(true);
    }
  });

  it('answers the issue’s figures, which the source gives too', async () => {
    const titanic = (await get('/film/id=tt0120338')).body;
    const mine = rowsOf.get('tt0120338')!;
    expect([mine.length, mine.filter((l) => l.won).length, mine[0].ceremony, mine[0].held, mine[0].filmYear]).toEqual([
      14,
      11,
      70,
      1998,
      '1997',
    ]);
    expect([titanic.nominations, titanic.wins, titanic.ceremonies, titanic.filmYear, titanic.title]).toEqual([
      14,
      11,
      [{ year: '1998', ceremony: 70 }],
      '1997',
      'Titanic',
    ]);
    const kate = titanic.entries.flatMap((e: any) => e.people).find((p: any) => p.id === 'nm0000701');
    expect(kate).toEqual({
      id: 'nm0000701',
      name: 'Kate Winslet',
      kind: 'person',
      role: 'primary',
      character: 'Rose DeWitt Bukater',
    });
    expect(
      mine.some((l) => l.people.some((p) => p.ids.includes('nm0000701')) && l.detail.includes('Rose DeWitt Bukater')),
    ).toBe(true);

    const picture = (await get('/awards/id=best-picture')).body;
    const pictures = awards.get('best-picture')!;
    expect([
      pictures.length,
      pictures.filter((l) => l.won).length,
      pictures[0].held,
      pictures[pictures.length - 1].held,
    ]).toEqual([621, 98, 1929, 2026]);
    expect([picture.nominations, picture.wins, picture.firstYear, picture.lastYear, picture.entries.length]).toEqual([
      621,
      98,
      '1929',
      '2026',
      621,
    ]);
    expect(picture.names.map((n: any) => n.name)).toEqual([
      'Outstanding Picture',
      'Outstanding Production',
      'Outstanding Motion Picture',
      'Best Motion Picture',
      'Best Picture',
    ]);

    const streep = (await get('/people/id=nm0000658')).body;
    const hers = rowsOf.get('nm0000658')!;
    expect([hers.length, hers.filter((l) => l.won).length]).toEqual([21, 3]);
    expect([streep.kind, streep.name, streep.nominations, streep.wins]).toEqual(['person', 'Meryl Streep', 21, 3]);
    expect(streep.ranks.classes.find((c: any) => c.class === 'Acting')).toMatchObject({
      nominations: 21,
      byNominations: 1,
    });
  });

  it('gives every award in the list, each record in full', async () => {
    const list = (await get('/awards')).body;
    expect(list.map((a: any) => a.id)).toEqual([...awards.keys()]);
    for (const [id, rows] of awards) {
      const { status, body } = await get(`/awards/id=${id}`);
      expect([id, status]).toEqual([id, 200]);
      const names = [...new Set(rows.map((l) => l.category.toUpperCase()))];
      expect([id, body.nominations, body.wins, body.firstYear, body.lastYear, body.class]).toEqual([
        id,
        rows.length,
        rows.filter((l) => l.won).length,
        String(rows[0].held),
        String(rows[rows.length - 1].held),
        rows[0].klass,
      ]);
      expect([id, body.names.map((n: any) => n.name.toUpperCase())]).toEqual([id, names]);
      for (const n of body.names) {
        const used = rows.filter((l) => l.category.toUpperCase() === n.name.toUpperCase());
        expect([id, n.firstYear, n.lastYear]).toEqual([id, String(used[0].held), String(used[used.length - 1].held)]);
      }
      expect(body.entries.map(served)).toEqual(rows.map(fromSource));
      expect(list.find((a: any) => a.id === id)).toEqual(
        Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'entries')),
      );
      expect(body.path).toBe(`/awards/id=${id}`);
    }
  });

  it('gives every ceremony year in full, and 404 for a year without one', async () => {
    const years = [...new Set(ordered.map((l) => l.held))];
    expect(years).toHaveLength(97);
    for (const year of years) {
      const rows = ordered.filter((l) => l.held === year);
      const { body } = await get(`/ceremony/year=${year}`);
      const ceremonies = [...new Set(rows.map((l) => l.ceremony))];
      expect([year, body.year, body.ceremonies]).toEqual([
        year,
        String(year),
        ceremonies.map((c) => ({ ceremony: c, filmYear: rows.find((l) => l.ceremony === c)!.filmYear })),
      ]);
      expect([year, body.nominations, body.wins]).toEqual([year, rows.length, rows.filter((l) => l.won).length]);
      expect(body.categories.map((c: any) => [c.ceremony, c.category.toUpperCase(), c.award, c.class])).toEqual([
        ...new Map(
          rows.map((l) => [
            `${l.ceremony}\t${l.category}`,
            [l.ceremony, l.category.toUpperCase(), awardIdOf(l.canonical), l.klass],
          ]),
        ).values(),
      ]);
      expect(body.entries.map(served)).toEqual(rows.map(fromSource));
    }
    expect(await get('/ceremony/year=1933')).toEqual({ status: 404, body: { error: 'Ceremony not found' } });
  });

  it('gives a sample of films, people and companies, with their totals, names and nominations', async () => {
    const ids = [...rowsOf.keys()];
    const sample = [
      ...new Set([
        ...ids.filter((_, i) => i % 37 === 0),
        'tt0120338',
        'nm0000658',
        'co0007143',
        'co0023400',
        'nm0001053',
        'nm0001054',
      ]),
    ];
    expect(sample.filter((id) => id.startsWith('tt')).length).toBeGreaterThan(50);
    expect(sample.filter((id) => id.startsWith('nm')).length).toBeGreaterThan(50);
    for (const id of sample) {
      const rows = rowsOf.get(id)!;
      const { status, body } = await get(id.startsWith('tt') ? `/film/id=${id}` : `/people/id=${id}`);
      expect([id, status]).toEqual([id, 200]);
      expect([id, body.id, body.nominations, body.wins]).toEqual([
        id,
        id,
        rows.length,
        rows.filter((l) => l.won).length,
      ]);
      expect([id, body.entries.map(served)]).toEqual([id, rows.map(fromSource)]);
      // The name it is known by: its latest credit.
      const credits = rows.flatMap((l) =>
        id.startsWith('tt')
          ? l.films.filter((f) => filmIdAt(f) === id).map((f) => f.title)
          : l.people.filter((p) => peopleIdsAt(l, p).includes(id)).map((p) => p.name),
      );
      expect([id, body.title ?? body.name, new Set((body.titles ?? body.names).map((c: any) => c.name))]).toEqual([
        id,
        credits[credits.length - 1],
        new Set(credits),
      ]);
      if (id.startsWith('tt')) expect([id, body.filmYear]).toEqual([id, rows[0].filmYear]);
      else {
        expect([id, body.kind, body.first, body.last]).toEqual([
          id,
          id.startsWith('co') ? 'company' : 'person',
          { year: String(rows[0].held), ceremony: rows[0].ceremony },
          { year: String(rows[rows.length - 1].held), ceremony: rows[rows.length - 1].ceremony },
        ]);
      }
    }
    expect((await get('/film/id=tt0000001')).body).toEqual({ error: 'Film not found' });
    expect((await get('/people/id=nm000000000')).body).toEqual({ error: 'Person or company not found' });
    expect((await get('/awards/id=best-pictures')).body).toEqual({ error: 'Award not found' });
  });

  it('ranks by nominations and by wins overall, within each class and each award, ties sharing a rank', async () => {
    const kindOf = (id: string) => id.slice(0, 2);
    const tally = (id: string, keep: (l: SourceLine) => boolean = () => true) => {
      const rows = rowsOf.get(id)!.filter(keep);
      return { nominations: rows.length, wins: rows.filter((l) => l.won).length };
    };
    const sample = [
      'nm0000658',
      'tt0120338',
      'co0007143',
      'nm0000701',
      ...[...rowsOf.keys()].filter((_, i) => i % 211 === 0),
    ];
    for (const id of sample) {
      const pool = [...rowsOf.keys()].filter((other) => kindOf(other) === kindOf(id));
      const { body } = await get(id.startsWith('tt') ? `/film/id=${id}` : `/people/id=${id}`);
      const standing = (keep?: (l: SourceLine) => boolean) => {
        const all = pool.map((other) => tally(other, keep)).filter((t) => t.nominations > 0);
        const mine = tally(id, keep);
        return {
          ...mine,
          byNominations: rankOf(
            all.map((t) => t.nominations),
            mine.nominations,
          ),
          byWins: rankOf(
            all.map((t) => t.wins),
            mine.wins,
          ),
        };
      };
      expect([id, body.ranks.overall]).toEqual([id, standing()]);
      for (const c of body.ranks.classes)
        expect([id, c]).toEqual([id, { class: c.class, ...standing((l) => l.klass === c.class) }]);
      for (const a of body.ranks.awards)
        expect([id, a.award, a.nominations, a.wins, a.byNominations, a.byWins]).toEqual([
          id,
          a.award,
          ...Object.values(standing((l) => awardIdOf(l.canonical) === a.award)),
        ]);
      expect(body.ranks.classes.map((c: any) => c.class).sort()).toEqual(
        [...new Set(rowsOf.get(id)!.map((l) => l.klass))].sort(),
      );
    }
  }, 120_000);

  it('tells things apart: a country is never a company, and no name goes without an id where one thing of its name has one', async () => {
    const list = (await get('/awards')).body;
    const countryNames = new Set(lines.filter(isCountry).map((l) => l.people[0].name));
    expect(countryNames.has('France')).toBe(true);
    let countries = 0;
    for (const { id } of list) {
      for (const e of (await get(`/awards/id=${id}`)).body.entries) {
        for (const p of e.people) {
          if (p.kind === 'country') {
            countries++;
            expect([p.name, p.id]).toEqual([p.name, null]);
            expect(countryNames.has(p.name)).toBe(true);
          } else if (p.id === null) {
            // Kept without an id only where no one thing of its name has one.
            expect([p.name, nameIds.get(p.name)?.size === 1]).toEqual([p.name, false]);
          }
          if (p.id?.startsWith('co')) expect([p.id, p.kind]).toEqual([p.id, 'company']);
          if (p.id?.startsWith('nm')) expect([p.id, p.kind]).toEqual([p.id, 'person']);
        }
        for (const f of e.films)
          if (f.id === null) expect([f.title, titleIds.get(f.title)?.size === 1]).toEqual([f.title, false]);
      }
    }
    expect(countries).toBe(lines.filter(isCountry).length);
    expect((await get('/people/id=co0007143')).body.names.map((n: any) => n.name)).toContain('Metro-Goldwyn-Mayer');
    expect((await get('/people/id=co0023400')).body.name).not.toBe('Paramount Famous Lasky');
  });

  it('answers 400 naming the expected form for a malformed id', async () => {
    expect(await get('/film/id=nm0000658')).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^Invalid title id: expected `tt` followed by digits/) },
    });
    expect(await get('/people/id=tt0120338')).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^Invalid name id: expected `nm` or `co` followed by digits/) },
    });
    expect(await get('/awards/id=Best%20Picture')).toEqual({
      status: 400,
      body: {
        error: expect.stringMatching(
          /^Invalid award id: expected lower-case letters and digits in words joined by `-`/,
        ),
      },
    });
    expect(await get('/ceremony/year=nineteen')).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^Invalid year/) },
    });
  });
});
