/**
 * The rankings (`/rankings/…`) of the full archive's build, held against the
 * tests' own reading of the source (test/oracle.ts, readSource) and the
 * counting rules docs/records.md writes: every class (and the competitive
 * ones, and all) over all years, of each kind, by nominations and by wins;
 * spans of years, winners only, without a win, one ceremony at a time; a
 * rank over all years the thing's record's; the 400s naming the parameter.
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

async function get(pathname: string): Promise<{ status: number; text: string; body: any }> {
  const out = await api.reply({ method: 'GET', url: `${pathname}/apikey=${key}`, header: () => null });
  const text = new TextDecoder().decode(out.body ?? new Uint8Array(0));
  return { status: out.status, text, body: JSON.parse(text) };
}

const lines = readSource(readFileSync(FULL_SOURCE, 'utf8'));
const awardIdOf = (canonical: string) =>
  canonical
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** docs/records.md's things, read by the oracle from the source. */
const { filmIdAt, peopleIdsAt } = sourceThings(lines);

/** Each id's nominations, each once (a thing named twice in one counts it once), with the text it was last credited by. */
const rowsOf = new Map<string, SourceLine[]>();
const nameOf = new Map<string, string>();
for (const l of lines) {
  const credits: [string, string][] = [
    ...l.films.flatMap((f): [string, string][] => [filmIdAt(f)].filter((id) => id !== null).map((id) => [id, f.title])),
    ...l.people.flatMap((p): [string, string][] => peopleIdsAt(l, p).map((id) => [id, p.name])),
  ];
  for (const [id, text] of credits) if (!nameOf.has(`${id} ${l.index}`)) nameOf.set(`${id} ${l.index}`, text);
  for (const id of new Set(credits.map(([id]) => id))) {
    rowsOf.set(id, [...(rowsOf.get(id) ?? []), l]);
    nameOf.set(id, nameOf.get(`${id} ${l.index}`)!);
  }
}
const kindOf = (id: string) => (id.startsWith('tt') ? 'film' : id.startsWith('co') ? 'company' : 'person');
const KINDS = { people: 'person', companies: 'company', films: 'film' } as const;
const CLASSES = ['Title', 'Acting', 'Directing', 'Writing', 'Music', 'Production', 'SciTech', 'Special'];
const COMPETITIVE = CLASSES.filter((c) => c !== 'SciTech' && c !== 'Special');

interface Ask {
  of: keyof typeof KINDS;
  by: 'nominations' | 'wins';
  class?: string;
  award?: string;
  from?: number;
  to?: number;
  won?: 'yes' | 'no';
  per?: 'ceremony';
}

/** A ranking worked out here from the source: every qualifying [id, nominations, wins] (with the ceremony, per ceremony), the most first, and its ranks. */
function expectedRanking(ask: Ask) {
  const inScope = (l: SourceLine) =>
    (ask.class === undefined ||
      (ask.class === 'competitive' ? COMPETITIVE.includes(l.klass) : l.klass === ask.class)) &&
    (ask.award === undefined || awardIdOf(l.canonical) === ask.award) &&
    (ask.from === undefined || l.held >= ask.from) &&
    (ask.to === undefined || l.held <= ask.to);
  const out: { id: string; ceremony?: number; nominations: number; wins: number }[] = [];
  for (const [id, rows] of rowsOf) {
    if (kindOf(id) !== KINDS[ask.of]) continue;
    const groups = new Map<number, SourceLine[]>();
    for (const l of rows.filter(inScope))
      groups.set(ask.per ? l.ceremony : 0, [...(groups.get(ask.per ? l.ceremony : 0) ?? []), l]);
    for (const [ceremony, ls] of groups) {
      const wins = ls.filter((l) => l.won).length;
      if (ask.won === 'yes' && wins === 0) continue;
      if (ask.won === 'no' && wins > 0) continue;
      out.push({ id, ...(ask.per ? { ceremony } : {}), nominations: ls.length, wins });
    }
  }
  // Competition ranks: one more than how many have a higher count.
  const counts = out.map((e) => e[ask.by]).sort((a, b) => b - a);
  const rank = (value: number) => 1 + counts.findIndex((c) => c <= value);
  return out.map((e) => ({ rank: rank(e[ask.by]), ...e })).sort((a, b) => a.rank - b.rank);
}

const pathOf = (ask: Ask & { limit?: number }) =>
  `/rankings/${Object.entries(ask)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('/')}`;

/** The served ranking held against the one worked out here: all of it where it fits in `limit`, else every entry above the last rank served and the last rank's from the expected ones. */
async function holds(ask: Ask, limit = 1000) {
  const { status, body } = await get(pathOf({ ...ask, limit }));
  expect([pathOf(ask), status]).toEqual([pathOf(ask), 200]);
  const want = expectedRanking(ask);
  const got = body.entries.map((e: any) => ({
    rank: e.rank,
    id: e.id,
    ...(ask.per ? { ceremony: e.ceremony } : {}),
    nominations: e.nominations,
    wins: e.wins,
  }));
  expect([pathOf(ask), body.total]).toEqual([pathOf(ask), want.length]);
  expect(got).toHaveLength(Math.min(limit, want.length));
  const last = got.length > 0 ? got[got.length - 1].rank : 0;
  const key = (e: { id: string; ceremony?: number }) => `${e.id} ${e.ceremony ?? ''}`;
  const sorted = <T extends { id: string; ceremony?: number }>(list: T[]) =>
    [...list].sort((a, b) => (key(a) < key(b) ? -1 : 1));
  expect([pathOf(ask), sorted(got.filter((e: any) => e.rank < last))]).toEqual([
    pathOf(ask),
    sorted(want.filter((e) => e.rank < last)),
  ]);
  const wanted = new Map(want.map((e) => [key(e), e]));
  for (const e of got.filter((e: any) => e.rank === last))
    expect([pathOf(ask), e]).toEqual([pathOf(ask), wanted.get(key(e))]);
  // The order: by the count, then the other count, then the name.
  const other = ask.by === 'wins' ? 'nominations' : 'wins';
  for (let i = 1; i < body.entries.length; i++) {
    const [a, b] = [body.entries[i - 1], body.entries[i]];
    expect([
      pathOf(ask),
      i,
      a[ask.by] > b[ask.by] ||
        (a[ask.by] === b[ask.by] && (a[other] > b[other] || (a[other] === b[other] && a.name <= b.name))),
    ]).toEqual([pathOf(ask), i, true]);
  }
  for (const e of body.entries)
    expect([e.id, e.name, e.kind, e.record]).toEqual([
      e.id,
      nameOf.get(e.id),
      KINDS[ask.of],
      `/${e.id.startsWith('tt') ? 'film' : 'people'}/id=${e.id}`,
    ]);
  return body;
}

beforeAll(async () => {
  const dist = await sharedBuild(FULL_SOURCE);
  const keys = new Keys(new SqliteKeyBackend(':memory:'));
  key = await keys.issue('rankings@example.org');
  api = createApi({ data: new DiskData(dist), keys, rateLimitPerMinute: 1e9 });
}, 300_000);

describe('rankings, held against the source', () => {
  it('answers the issue’s questions in one call each', async () => {
    const top = async (path: string, n: number) =>
      (await get(path)).body.entries.slice(0, n).map((e: any) => [e.rank, e.name, e.nominations, e.wins]);
    expect(await top('/rankings/of=people/class=Acting/won=no', 4)).toEqual([
      [1, 'Glenn Close', 8, 0],
      [1, "Peter O'Toole", 8, 0],
      [3, 'Richard Burton', 7, 0],
      [4, 'Amy Adams', 6, 0],
    ]);
    expect(await top('/rankings/of=films/class=competitive', 4)).toEqual([
      [1, 'Sinners', 16, 4],
      [2, 'Titanic', 14, 11],
      [2, 'All about Eve', 14, 6],
      [2, 'La La Land', 14, 6],
    ]);
    expect(await top('/rankings/of=companies', 1)).toEqual([[1, 'Metro-Goldwyn-Mayer', 106, 31]]);
    expect(await top('/rankings/of=people', 2)).toEqual([
      [1, 'Walt Disney', 64, 26],
      [2, 'John Williams', 54, 5],
    ]);
    const winners = (await get('/rankings/of=films/by=wins/from=2026/to=2026/won=yes')).body;
    expect(winners.entries.map((e: any) => e.id).sort()).toEqual(
      [
        ...new Set(
          lines
            .filter((l) => l.held === 2026 && l.won)
            .flatMap((l) => l.films.map((f) => f.id))
            .filter((id) => id !== null),
        ),
      ].sort(),
    );
  });

  it('ranks every class, the competitive ones and all over all years, each kind by each count, as the source counts', async () => {
    for (const of of ['people', 'companies', 'films'] as const) {
      for (const by of ['nominations', 'wins'] as const) {
        for (const scope of [{}, { class: 'competitive' }, ...CLASSES.map((c) => ({ class: c }))])
          await holds({ of, by, ...scope });
      }
    }
  }, 120_000);

  it('ranks within an award, over spans of years, winners only, without a win and per ceremony', async () => {
    await holds({ of: 'people', by: 'wins', class: 'Acting', from: 2000 });
    await holds({ of: 'films', by: 'nominations', from: 1930, to: 1939 });
    await holds({ of: 'companies', by: 'wins', to: 1950 });
    await holds({ of: 'people', by: 'nominations', award: 'best-picture', won: 'yes' });
    await holds({ of: 'people', by: 'nominations', class: 'Directing', won: 'no' });
    await holds({ of: 'people', by: 'wins', per: 'ceremony' });
    await holds({ of: 'films', by: 'wins', class: 'competitive', per: 'ceremony', from: 1990, to: 2010 });
  }, 60_000);

  it('gives each thing over all years the rank its record gives', async () => {
    for (const [of, scope, rankOf] of [
      ['people', '', (r: any) => r.overall],
      ['films', '/class=Title', (r: any) => r.classes.find((c: any) => c.class === 'Title')],
      [
        'people',
        '/award=actor-in-a-leading-role',
        (r: any) => r.awards.find((a: any) => a.award === 'actor-in-a-leading-role'),
      ],
      ['companies', '/class=Special', (r: any) => r.classes.find((c: any) => c.class === 'Special')],
    ] as const) {
      for (const by of ['nominations', 'wins']) {
        const ranking = (await get(`/rankings/of=${of}/by=${by}${scope}`)).body;
        for (const e of ranking.entries.filter(
          (_: unknown, i: number) => i % 10 === 0 || i === ranking.entries.length - 1,
        )) {
          const standing = rankOf((await get(e.record)).body.ranks);
          expect([e.id, scope, e.nominations, e.wins, e.rank]).toEqual([
            e.id,
            scope,
            standing.nominations,
            standing.wins,
            by === 'wins' ? standing.byWins : standing.byNominations,
          ]);
        }
      }
    }
  }, 60_000);

  it('answers a stored ranking and one made at run time byte for byte alike', async () => {
    const stored = await get('/rankings/of=films/class=Acting');
    const made = await get('/rankings/of=films/from=1929/class=Acting/limit=100');
    expect([made.status, made.text]).toEqual([200, stored.text]);
    // Segments in any order, defaults left out or given, ask the same.
    expect((await get('/rankings/by=nominations/class=Acting/of=films')).text).toBe(stored.text);
    expect((await get('/rankings/of=people/by=wins/limit=3')).body.entries).toHaveLength(3);
  });

  it('answers 400 naming the parameter, and 404 for an award the archive does not have', async () => {
    const error = async (path: string) => {
      const { status, body } = await get(path);
      return [status, body.error];
    };
    expect(await error('/rankings/of=persons')).toEqual([400, 'Invalid of: expected people, companies, films']);
    expect(await error('/rankings/by=oscars')).toEqual([400, 'Invalid by: expected nominations or wins']);
    expect(await error('/rankings/class=acting')).toEqual([
      400,
      expect.stringMatching(/^Invalid class: expected competitive or one of Title, Acting/),
    ]);
    expect(await error('/rankings/award=Best%20Picture')).toEqual([
      400,
      expect.stringMatching(/^Invalid award: expected an award id/),
    ]);
    expect(await error('/rankings/class=Acting/award=best-picture')).toEqual([
      400,
      'Invalid award: give a class or an award, not both',
    ]);
    expect(await error('/rankings/from=2000s')).toEqual([400, expect.stringMatching(/^Invalid from:/)]);
    expect(await error('/rankings/from=2000/to=1999')).toEqual([
      400,
      expect.stringMatching(/^Invalid to:.*not before from/),
    ]);
    expect(await error('/rankings/won=maybe')).toEqual([400, expect.stringMatching(/^Invalid won:/)]);
    expect(await error('/rankings/per=year')).toEqual([400, expect.stringMatching(/^Invalid per:/)]);
    for (const limit of ['0', '1001', 'ten', ''])
      expect(await error(`/rankings/limit=${limit}`)).toEqual([
        400,
        'Invalid limit: expected a whole number from 1 to 1000',
      ]);
    expect(await error('/rankings/of=people/of=films')).toEqual([
      400,
      expect.stringMatching(/^Invalid ranking: expected segments name=value/),
    ]);
    expect(await error('/rankings/sort=name')).toEqual([400, expect.stringMatching(/^Invalid ranking:/)]);
    expect(await error('/rankings/of=%E0')).toEqual([
      400,
      expect.stringMatching(/^Invalid path: malformed percent-encoding/),
    ]);
    expect(await error('/rankings/award=best-pictures')).toEqual([404, 'Award not found']);
    // A span without a ceremony ranks nobody.
    expect((await get('/rankings/from=1933/to=1933')).body).toMatchObject({
      from: '1933',
      to: '1933',
      total: 0,
      entries: [],
    });
  });
});
