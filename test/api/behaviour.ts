/**
 * One behaviour suite for every place the API runs: the core in-process, the
 * Node server over HTTP, and the edge function under Deno. Each target gives a
 * way to send a request and to issue and revoke keys; the suite checks every
 * status, body and header the contract promises, against the full archive.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/shared/routes.ts';
import { validateResponse } from './contract.ts';
import { decodedBody, type RawReply } from '../helpers/http.ts';
import { FULL_SOURCE, ROOT } from '../helpers/paths.ts';
import { expected, expectedById, type Expected, type SpecArchive, type SpecIds } from '../oracle.ts';

/** The revision data/source.json pins, as the repository has it. */
const PIN = JSON.parse(readFileSync(path.join(ROOT, 'data/source.json'), 'utf8')) as { commit: string; date: string };

export interface Target {
  /** Sends one request; the path goes out exactly as given. */
  request(method: string, path: string, headers?: Record<string, string>): Promise<RawReply>;
  issueKey(): Promise<string>;
  revokeKey(key: string): Promise<unknown>;
  /** Rotates the current key `key`, leaving it `grace` to live (the portal's or the CLI's choice): the new key. */
  rotateKey(key: string, grace: 'now' | '1h'): Promise<string>;
  /** Stops now the old key `old`, in its grace period ("Stop the old key now", or revoke of the old key). */
  endGrace(old: string): Promise<unknown>;
  /** Whether this runtime compresses answers itself (the Node server, adapters/_node/encoding.ts). */
  compression: boolean;
  /** Every reply the suite saw, for the contract check. */
  seen?: { path: string; reply: RawReply }[];
}

const JSON_TYPE = 'application/json; charset=utf-8';
const FORBIDDEN = { error: 'Forbidden - Invalid API Key' };
const BAD_YEAR = { error: 'Invalid year: expected a whole number, the year the ceremony was held' };
/** What a malformed id's 400 must name: the form its route expects. */
const ID_FORM = {
  titleById: /^Invalid title id: expected `tt` followed by digits/,
  nameById: /^Invalid name id: expected `nm` or `co` followed by digits/,
};

export const decoded = (reply: RawReply): Buffer => decodedBody(reply.body, reply.headers['content-encoding']);
export const json = (reply: RawReply) => JSON.parse(decoded(reply).toString('utf8'));

/** The path of each route with sample parameters and a key. */
const routePath = (id: string, key: string | null, params: Record<string, string> = {}) => {
  const route = ROUTES.find((r) => r.id === id)!;
  const values: Record<string, string> = {
    name: 'Meryl Streep',
    year: '2026',
    id: id === 'titleById' ? 'tt0120338' : 'nm0000658',
    ...params,
  };
  const segments = [route.roots[0], ...route.params.map((p) => `${p}=${encodeURIComponent(values[p])}`)];
  if (key !== null) segments.push(`apikey=${key}`);
  return `/${segments.join('/')}`;
};

/** Each record's and ranking's text as the first runtime answered it, by path: every later one must answer the same bytes. */
const RECORD_TEXTS = new Map<string, string>();

/** The parts of the suite, each a describe block below. */
export type Part = 'lookups' | 'search' | 'dataset' | 'errors' | 'headers';

/**
 * `archive()` is the whole archive as the service serves it (endpoint 1); every
 * expected answer is the spec's oracle (test/oracle.ts) evaluated over it, and
 * over `ids()`, its nominations paired with the source's IMDb ids.
 */
export function behaviourSuite(
  name: string,
  target: () => Target,
  archive: () => SpecArchive,
  ids: () => SpecIds,
  parts?: Part[],
) {
  /** Only the parts a target has: a client answering from its own copy has lookups but no keys, limits or headers. */
  const part = (p: Part) => describe.skipIf(parts !== undefined && !parts.includes(p));
  /** Whether the target checks keys (a client answering from its own copy has none to check). */
  const keyed = parts === undefined || parts.includes('errors');
  const get = async (path: string, headers?: Record<string, string>) => {
    const t = target();
    const reply = await t.request('GET', path, headers);
    t.seen?.push({ path, reply });
    return reply;
  };
  /** A fresh key, so that no test eats into another's rate limit. */
  const key = () => target().issueKey();
  /** A 200's JSON, its text byte for byte what the first runtime answered for `path` (the core, in-process, runs first). */
  const answeredAlike = async (path: string, k: string) => {
    const reply = await get(`${path}/apikey=${k}`);
    expect([path, reply.status]).toEqual([path, 200]);
    const text = decoded(reply).toString('utf8');
    expect([path, text]).toEqual([path, RECORD_TEXTS.get(path) ?? text]);
    RECORD_TEXTS.set(path, text);
    return JSON.parse(text);
  };
  const same = (reply: RawReply, want: Expected) => {
    expect(want.status).toBe(200); // each lookup below is chosen to find something
    expect(reply.status).toBe(200);
    expect(decoded(reply).toString('utf8')).toBe(want.text);
  };

  part('lookups')(`${name}: lookups`, () => {
    it('serves the whole archive, on archive and on oscars', async () => {
      const k = await key();
      same(await get(`/archive/apikey=${k}`), expected.allCeremonies(archive()));
      same(await get(`/oscars/apikey=${k}`), expected.allCeremonies(archive()));
    });

    it('serves one ceremony year with both 1930 ceremonies under one key', async () => {
      const reply = await get(`/archive/year=1930/apikey=${await key()}`);
      same(reply, expected.ceremonyByYear(archive(), 1930));
      const names = json(reply).map((c: { category: string }) => c.category);
      expect(names).toContain('Outstanding Picture');
      expect(names).toContain('Outstanding Production');
    });

    it('finds a person by a Unicode name', async () => {
      same(
        await get(`/person/name=Timoth%C3%A9e%20Chalamet/apikey=${await key()}`),
        expected.personByName(archive(), 'Timothée Chalamet'),
      );
    });

    it('keeps %2F inside a name', async () => {
      const k = await key();
      const faceOff = await get(`/person/name=Face%2FOff/apikey=${k}`);
      same(faceOff, expected.personByName(archive(), 'Face/Off'));
      expect(json(faceOff).length).toBeGreaterThan(0);
      same(
        await get(`/movie/name=Victor%2FVictoria/year=1983/apikey=${k}`),
        expected.filmByNameAndYear(archive(), 'Victor/Victoria', 1983),
      );
    });

    it('finds a film through the person route, across all years', async () => {
      const reply = await get(`/person/name=Sinners/apikey=${await key()}`);
      same(reply, expected.personByName(archive(), 'Sinners'));
      expect(json(reply).length).toBeGreaterThan(10);
    });

    it('finds a film at one ceremony', async () => {
      same(
        await get(`/movie/name=Sinners/year=2026/apikey=${await key()}`),
        expected.filmByNameAndYear(archive(), 'Sinners', 2026),
      );
    });

    it('matches a category substring across renamed categories, in archive order', async () => {
      const reply = await get(`/award/name=Actor/apikey=${await key()}`);
      same(reply, expected.categoryByName(archive(), 'Actor'));
      const names = new Set(json(reply).map((c: { category: string }) => c.category));
      expect(names).toContain('Actor');
      expect(names).toContain('Actor in a Leading Role');
      expect(names).toContain('Actor in a Supporting Role');
    });

    it('matches a category at one ceremony', async () => {
      const k = await key();
      same(
        await get(`/award/name=Best%20Picture/year=2026/apikey=${k}`),
        expected.categoryByNameAndYear(archive(), 'Best Picture', 2026),
      );
      same(
        await get(`/award/name=Writing/year=1930/apikey=${k}`),
        expected.categoryByNameAndYear(archive(), 'Writing', 1930),
      );
    });

    it('finds every nomination of a film by its IMDb title id, and only that film’s', async () => {
      const reply = await get(`/title/id=tt0120338/apikey=${await key()}`);
      same(reply, expectedById.titleById(ids(), 'tt0120338'));
      const titanic = json(reply) as { year: string; nomination: { won: boolean } }[];
      expect([
        titanic.length,
        titanic.filter((m) => m.nomination.won).length,
        new Set(titanic.map((m) => m.year)),
      ]).toEqual([14, 11, new Set(['1998'])]);
    });

    it('finds a person’s and a company’s nominations by IMDb name id, a pseudonym’s included', async () => {
      const k = await key();
      const streep = await get(`/name/id=nm0000658/apikey=${k}`);
      same(streep, expectedById.nameById(ids(), 'nm0000658'));
      expect(json(streep)).toHaveLength(21);
      same(await get(`/name/id=co0007143/apikey=${k}`), expectedById.nameById(ids(), 'co0007143'));
      const coen = await get(`/name/id=nm0001054/apikey=${k}`);
      same(coen, expectedById.nameById(ids(), 'nm0001054'));
      expect(
        json(coen).filter((m: { nomination: { primary: string[] } }) =>
          m.nomination.primary.includes('Roderick Jaynes'),
        ),
      ).toHaveLength(2);
    });

    it('answers the records, every runtime alike, each as the served archive and the source’s ids say', async () => {
      const k = await key();
      const record = (path: string) => answeredAlike(path, k);
      type Entry = { year: string; category: string; won: boolean };
      const fields = (e: Entry) => [e.year, e.category, e.won];
      const byId = (list: { year: string; category: string; nomination: { won: boolean } }[]) =>
        list.map((m) => [m.year, m.category, m.nomination.won]);
      const titanic = await record('/film/id=tt0120338');
      expect([titanic.nominations, titanic.wins, titanic.filmYear, titanic.ceremonies]).toEqual([
        14,
        11,
        '1997',
        [{ year: '1998', ceremony: 70 }],
      ]);
      expect(titanic.entries.map(fields)).toEqual(byId(JSON.parse(expectedById.titleById(ids(), 'tt0120338').text)));
      for (const id of ['nm0000658', 'nm0001054']) {
        const person = await record(`/people/id=${id}`);
        expect([id, person.kind, person.entries.map(fields)]).toEqual([
          id,
          'person',
          byId(JSON.parse(expectedById.nameById(ids(), id).text)),
        ]);
      }
      expect((await record('/people/id=co0007143')).kind).toBe('company');
      const flat = (years: string[], keep: (name: string) => boolean) => {
        const held = archive();
        return years.flatMap((y) =>
          held[y].filter((c) => keep(c.category)).flatMap((c) => c.nominations.map((n) => [y, c.category, n.won])),
        );
      };
      for (const year of ['1930', '1998']) {
        const ceremony = await record(`/ceremony/year=${year}`);
        expect([year, ceremony.entries.map(fields)]).toEqual([year, flat([year], () => true)]);
        expect(ceremony.categories.map((c: { category: string }) => c.category)).toEqual(
          archive()[year].map((c) => c.category),
        );
      }
      const picture = await record('/awards/id=best-picture');
      const names = picture.names.map((n: { name: string }) => n.name);
      expect(names).toEqual([
        'Outstanding Picture',
        'Outstanding Production',
        'Outstanding Motion Picture',
        'Best Motion Picture',
        'Best Picture',
      ]);
      expect([picture.nominations, picture.wins, picture.entries.map(fields)]).toEqual([
        621,
        98,
        flat(Object.keys(archive()), (name) => names.includes(name)),
      ]);
      const awards = await record('/awards');
      const total = Object.values(archive()).flatMap((cs) => cs.flatMap((c) => c.nominations)).length;
      expect(awards.reduce((sum: number, a: { nominations: number }) => sum + a.nominations, 0)).toBe(total);
      expect(awards.flatMap((a: { names: { name: string }[] }) => a.names.map((n) => n.name)).sort()).toEqual(
        [...new Set(Object.values(archive()).flatMap((cs) => cs.map((c) => c.category)))].sort(),
      );
      const error = async (path: string) => {
        const reply = await get(`${path}/apikey=${k}`);
        return [reply.status, json(reply).error];
      };
      expect(await error('/film/id=nm0000658')).toEqual([400, expect.stringMatching(ID_FORM.titleById)]);
      expect(await error('/people/id=tt0120338')).toEqual([400, expect.stringMatching(ID_FORM.nameById)]);
      expect(await error('/awards/id=Best%20Picture')).toEqual([
        400,
        expect.stringMatching(/^Invalid award id: expected lower-case letters/),
      ]);
      expect(await error('/film/id=tt0000001')).toEqual([404, 'Film not found']);
      expect(await error('/people/id=nm000000000')).toEqual([404, 'Person or company not found']);
      expect(await error('/ceremony/year=1933')).toEqual([404, 'Ceremony not found']);
      expect(await error('/awards/id=best-pictures')).toEqual([404, 'Award not found']);
    }, 60_000);

    it('answers rankings, every runtime alike, each film’s counts at a ceremony as its id’s nominations there', async () => {
      const k = await key();
      const ranking = (path: string) => answeredAlike(path, k);
      // The issue's questions, one call each: stored (all years) and made at run time (a span, winners only, without a win, per ceremony).
      const acting = await ranking('/rankings/of=people/by=wins/class=Acting/from=2000');
      expect([acting.from, acting.to, acting.entries[0].rank, acting.entries.length]).toEqual(['2000', '2026', 1, 100]);
      expect(
        (await ranking('/rankings/of=people/class=Acting/won=no')).entries
          .slice(0, 2)
          .map((e: { name: string }) => e.name)
          .sort(),
      ).toEqual(['Glenn Close', "Peter O'Toole"]);
      expect((await ranking('/rankings/of=films/class=competitive')).entries[0]).toMatchObject({
        rank: 1,
        id: 'tt31193180',
        name: 'Sinners',
        nominations: 16,
      });
      expect((await ranking('/rankings/of=people/by=wins/per=ceremony/limit=5')).entries[0]).toMatchObject({
        name: 'Walt Disney',
        year: '1954',
        wins: 4,
      });
      for (const year of ['1998', '2026']) {
        const winners = await ranking(`/rankings/of=films/by=wins/from=${year}/to=${year}/won=yes/limit=1000`);
        const won = new Set(
          ids()
            .rows.filter((r) => r.year === year && r.nomination.won)
            .flatMap((r) => [...r.titles]),
        );
        expect([year, winners.entries.map((e: { id: string }) => e.id).sort()]).toEqual([year, [...won].sort()]);
        for (const e of winners.entries) {
          const there = ids()
            .titles.get(e.id)!
            .filter((r) => r.year === year);
          expect([e.id, e.nominations, e.wins]).toEqual([
            e.id,
            there.length,
            there.filter((r) => r.nomination.won).length,
          ]);
        }
      }
      const error = async (path: string) => {
        const reply = await get(`${path}/apikey=${k}`);
        return [reply.status, json(reply).error];
      };
      expect(await error('/rankings/of=persons')).toEqual([400, expect.stringMatching(/^Invalid of: expected people/)]);
      expect(await error('/rankings/limit=1001')).toEqual([
        400,
        expect.stringMatching(/^Invalid limit: expected a whole number from 1 to 1000/),
      ]);
      expect(await error('/rankings/award=best-pictures')).toEqual([404, 'Award not found']);
    }, 60_000);

    it('reads a year with leading zeros as the same year', async () => {
      same(await get(`/archive/year=02026/apikey=${await key()}`), expected.ceremonyByYear(archive(), 2026));
    });
  });

  part('search')(`${name}: search and the category list`, () => {
    type Result = {
      name: string;
      kind: string;
      nominations: number;
      wins: number;
      firstYear: string;
      lastYear: string;
      path: string;
      record?: string;
      id?: string;
      filmYear?: string;
      otherNames?: string[];
      awardNames?: unknown[];
    };
    const search = async (text: string, k: string) => {
      const reply = await get(`/search/name=${encodeURIComponent(text)}/apikey=${k}`);
      expect([text, reply.status]).toEqual([text, 200]);
      const results = json(reply) as Result[];
      expect(results.length).toBeLessThanOrEqual(10);
      return results;
    };
    /**
     * What a result's path answers, counted as the issue defines
     * it: a name's matches, or the nominations in a category's.
     */
    const counted = async (path: string, k: string) => {
      const reply = await get(`${path}/apikey=${k}`);
      expect([path, reply.status]).toEqual([path, 200]);
      const answer = json(reply) as { year: string; nomination?: { won: boolean }; nominations?: { won: boolean }[] }[];
      const nominations = answer.flatMap((m) => m.nominations ?? [m.nomination!]);
      const years = answer.map((m) => m.year).sort();
      return {
        nominations: nominations.length,
        wins: nominations.filter((n) => n.won).length,
        firstYear: years[0],
        lastYear: years[years.length - 1],
      };
    };

    it('finds a name in any case, without its marks or punctuation, by the start of its words, or with typos, best first', async () => {
      const k = await key();
      const cases: [string, string, string][] = [
        ['meryl streep', 'Meryl Streep', 'person'],
        ['sirat', 'Sirāt', 'film'],
        ['metro goldwyn', 'Metro-Goldwyn-Mayer', 'company'],
        ['meryl strep', 'Meryl Streep', 'person'],
        ['oppenhiemer', 'Oppenheimer', 'film'],
        ['emma st', 'Emma Stone', 'person'],
      ];
      for (const [text, wanted, kind] of cases) {
        const [top] = await search(text, k);
        expect([text, top?.name, top?.kind]).toEqual([text, wanted, kind]);
        // By its IMDb id where the source gives one (/title/id=…, /name/id=…): what the oracle credits that id with; else by name: the person lookup's nominations.
        const want =
          top.id === undefined
            ? expected.personByName(archive(), wanted)
            : expectedById[top.id.startsWith('tt') ? 'titleById' : 'nameById'](ids(), top.id);
        const { nominations } = await counted(top.path, k);
        const credited = (JSON.parse(want.text) as unknown[]).length;
        expect([text, top.nominations, nominations]).toEqual([text, credited, credited]);
      }
    });

    it('counts in each result exactly what its path answers, for names and for category names', async () => {
      const k = await key();
      for (const text of ['meryl streep', 'best picture', 'actor']) {
        for (const result of (await search(text, k)).slice(0, 5)) {
          const {
            name: _,
            kind: __,
            path,
            otherNames: ___,
            id: ____,
            filmYear: _____,
            awardNames: ______,
            record,
            ...counts
          } = result;
          expect([text, result.name, counts]).toEqual([text, result.name, await counted(path, k)]);
          // Its record answers too; a name's counts at least what its path does
          // (it also holds what the same thing was credited without its id).
          if (record !== undefined) {
            const held = json(await get(`${record}/apikey=${k}`)).nominations;
            expect([record, result.kind === 'category' ? held > 0 : held >= counts.nominations]).toEqual([
              record,
              true,
            ]);
          }
        }
      }
    });

    it('answers each search byte for byte as every other place does', async () => {
      const k = await key();
      // Names from the archive every 401st nomination, each with a typo (its second letter dropped), beside texts of each kind.
      const names = Object.values(archive())
        .flat()
        .flatMap((c) => c.nominations)
        .filter((_, i) => i % 401 === 0)
        .map((n) => [...n.primary, ...(n.secondary ?? [])][0])
        .filter((n) => n && n.length > 5)
        .map((n) => n[0] + n.slice(2));
      const texts = ['meryl strep', 'leo dicaprio', 'mgm', 'lotr', 'best actress', 'the', 'birds an', 'otoole', '1917'];
      for (const text of [...texts, ...names]) await answeredAlike(`/search/name=${encodeURIComponent(text)}`, k);
    });

    it('names a category’s other names over the years: Best Picture was called something else before 1963', async () => {
      const k = await key();
      const [top] = await search('best picture', k);
      expect([top.name, top.kind, top.path]).toEqual(['Best Picture', 'category', '/award/name=Best%20Picture']);
      const since = Number(top.firstYear);
      const earlier = [];
      for (const other of top.otherNames ?? [])
        if (Number((await counted(`/award/name=${encodeURIComponent(other)}`, k)).firstYear) < since)
          earlier.push(other);
      expect(earlier).toContain('Outstanding Picture');
    });

    it('answers 400 for an empty, overlong or badly encoded text, 403 for a bad key before anything else, and [] for nonsense', async () => {
      const k = await key();
      for (const text of ['', 'x'.repeat(201), '%zz'])
        expect([text.slice(0, 5), (await get(`/search/name=${text}/apikey=${k}`)).status]).toEqual([
          text.slice(0, 5),
          400,
        ]);
      expect(json(await get(`/search/name=/apikey=${k}`)).error).toMatch(/^Invalid name: expected 1 to 200 characters/);
      if (keyed) {
        expect((await get(`/search/name=x/apikey=${'x'.repeat(10)}`)).status).toBe(403);
        expect((await get('/search/name=/apikey=')).status).toBe(403);
      }
      expect(await search('zzqxjvwk qqzzpx', k)).toEqual([]);
      expect((await search('x'.repeat(200), k)).length).toBeLessThanOrEqual(10);
    });

    it('lists every category name once, in order of first appearance, with its first and last year and its award', async () => {
      const k = await key();
      const reply = await get(`/categories/apikey=${k}`);
      expect(reply.status).toBe(200);
      const list = json(reply) as { name: string; award: string; firstYear: string; lastYear: string; path: string }[];
      const order: string[] = [];
      const years = new Map<string, string[]>();
      for (const [year, categories] of Object.entries(archive())) {
        for (const { category } of categories) {
          if (!years.has(category)) order.push(category);
          years.set(category, [...(years.get(category) ?? []), year]);
        }
      }
      expect(list.map((c) => c.name)).toEqual(order);
      for (const c of list) {
        const used = years.get(c.name)!;
        expect([c.name, c.firstYear, c.lastYear, c.path]).toEqual([
          c.name,
          used[0],
          used[used.length - 1],
          `/award/name=${encodeURIComponent(c.name)}`,
        ]);
      }
      const award = (n: string) => list.find((c) => c.name === n)!.award;
      expect(award('Outstanding Picture')).toBe(award('Best Picture'));
      expect(award('Actor')).not.toBe(award('Actress'));
    });
  });

  part('dataset')(`${name}: the dataset`, () => {
    const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    const TYPES = {
      sqlite: 'application/vnd.sqlite3',
      ndjson: 'application/x-ndjson; charset=utf-8',
      csv: 'text/csv; charset=utf-8; header=present',
      search: 'application/x-ndjson; charset=utf-8',
    };

    it('lists every file of the dataset of this revision, and serves each with the size and sha256 the list gives', async () => {
      const k = await key();
      const list = json(await get(`/dataset/apikey=${k}`));
      expect([list.revision, list.licence, list.attribution]).toEqual([
        createHash('sha256').update(readFileSync(FULL_SOURCE)).digest('hex'),
        'BSD-2-Clause',
        expect.stringContaining('David V. Lu'),
      ]);
      expect(list.files.map((f: { name: string }) => f.name)).toEqual(
        expect.arrayContaining([
          'oscars.sqlite',
          'oscars.ndjson',
          'nominations.csv',
          'nomination_people.csv',
          'meta.csv',
          'search.ndjson',
        ]),
      );
      for (const f of list.files as { name: string; format: keyof typeof TYPES; bytes: number; sha256: string }[]) {
        const reply = await get(`/dataset/file=${f.name}/apikey=${k}`, { 'accept-encoding': 'gzip, br' });
        const bytes = decoded(reply);
        expect([f.name, reply.status, reply.headers['content-type'], bytes.length, sha256(bytes)]).toEqual([
          f.name,
          200,
          TYPES[f.format],
          f.bytes,
          f.sha256,
        ]);
        // Stored in one form: sent as stored on every runtime (a CDN in front may compress it on its way).
        expect([f.name, reply.headers['content-encoding']]).toEqual([f.name, undefined]);
      }
    });

    it('answers If-None-Match with 304, a Range with 206 of the file as stored, a range past its end with 416, and a Range for an older ETag with the whole file', async () => {
      const k = await key();
      const path = `/dataset/file=nominations.csv/apikey=${k}`;
      const whole = await get(path);
      expect([whole.status, whole.headers['accept-ranges']]).toEqual([200, 'bytes']);
      expect((await get(path, { 'if-none-match': whole.headers.etag })).status).toBe(304);
      const size = whole.body.length;
      const part = await get(path, { range: 'bytes=100-199', 'accept-encoding': 'gzip, br' });
      expect([
        part.status,
        part.headers['content-range'],
        part.headers['content-encoding'],
        part.body.equals(whole.body.subarray(100, 200)),
      ]).toEqual([206, `bytes 100-199/${size}`, undefined, true]);
      const rest = await get(path, { range: `bytes=${size - 10}-`, 'if-range': whole.headers.etag });
      expect([rest.status, rest.body.equals(whole.body.subarray(size - 10))]).toEqual([206, true]);
      const past = await get(path, { range: `bytes=${size}-` });
      expect([past.status, past.headers['content-range'], past.body.length]).toEqual([416, `bytes */${size}`, 0]);
      const older = await get(path, { range: 'bytes=100-199', 'if-range': '"0123456789abcdef0123"' });
      expect([older.status, older.body.equals(whole.body)]).toEqual([200, true]);
    });

    it('answers 404 for a file the list does not name and 400 for a name no file can have', async () => {
      const k = await key();
      const missing = await get(`/dataset/file=nope.csv/apikey=${k}`);
      expect([missing.status, json(missing)]).toEqual([404, { error: 'Dataset file not found' }]);
      for (const name of [
        '..%2F_data%2Fmanifest.json',
        'OSCARS.sqlite',
        'manifest.json',
        '%2E%2E',
        'a.csv%00',
        '%E0%A4%A',
      ]) {
        const bad = await get(`/dataset/file=${name}/apikey=${k}`);
        expect([name, bad.status, json(bad).error]).toEqual([name, 400, expect.stringMatching(/^Invalid (file|path)/)]);
      }
    });
  });

  part('errors')(`${name}: errors`, () => {
    it('answers 404 for a year with no ceremony', async () => {
      const k = await key();
      for (const year of ['1933', '1928', '2027', '0']) {
        const reply = await get(`/archive/year=${year}/apikey=${k}`);
        expect(reply.status).toBe(404);
        expect(json(reply)).toEqual({ error: 'Data not found for the specified year' });
      }
    });

    it('answers 404 with the route’s message when nothing matches', async () => {
      const k = await key();
      const cases: [string, string][] = [
        [`/person/name=Nobody%20At%20All/apikey=${k}`, 'Person not found'],
        [`/person/name=meryl%20streep/apikey=${k}`, 'Person not found'],
        [`/movie/name=Sinners/year=1999/apikey=${k}`, 'Movie not found'],
        [`/movie/name=No%20Such%20Film/year=2026/apikey=${k}`, 'Movie not found'],
        [`/award/name=Zzz/apikey=${k}`, 'Award not found'],
        [`/award/name=actor/apikey=${k}`, 'Award not found'],
        [`/award/name=Actor/year=1933/apikey=${k}`, 'Award not found'],
        [`/title/id=tt0000000/apikey=${k}`, 'Title not found'],
        [`/title/id=tt120338/apikey=${k}`, 'Title not found'],
        [`/name/id=nm0000000/apikey=${k}`, 'Name not found'],
        [`/name/id=co0000000/apikey=${k}`, 'Name not found'],
      ];
      for (const [path, error] of cases) {
        const reply = await get(path);
        expect([path, reply.status, json(reply)]).toEqual([path, 404, { error }]);
      }
    });

    it('answers 400 for a year that is not a plain integer, on every route with a year', async () => {
      const k = await key();
      for (const id of ['ceremonyByYear', 'filmByNameAndYear', 'categoryByNameAndYear', 'ceremonyRecord']) {
        for (const year of ['abc', '2024.5', '-1', '+2024', ' 2024', '']) {
          const reply = await get(routePath(id, k, { year, name: 'Sinners' }));
          expect([id, year, reply.status, json(reply)]).toEqual([id, year, 400, BAD_YEAR]);
        }
      }
    });

    it('answers 400 for malformed percent-encoding and for an overlong or empty name', async () => {
      const k = await key();
      for (const id of ['personByName', 'filmByNameAndYear', 'categoryByName', 'categoryByNameAndYear']) {
        const bad = await get(routePath(id, k).replace(/name=[^/]*/, 'name=%E0%A4%A'));
        expect(bad.status).toBe(400);
        expect(json(bad).error).toMatch(/malformed percent-encoding/);
        const long = await get(routePath(id, k, { name: 'x'.repeat(513) }));
        expect([long.status, json(long)]).toEqual([400, { error: 'Invalid name: expected 1 to 512 characters' }]);
        const empty = await get(routePath(id, k, { name: '' }));
        expect(empty.status).toBe(400);
      }
      const longest = await get(routePath('personByName', k, { name: 'é'.repeat(512) }));
      expect(longest.status).toBe(404);
    });

    it('answers 400 naming the form expected for a malformed IMDb id, or for one of the other route’s kind', async () => {
      const k = await key();
      const cases: [keyof typeof ID_FORM, string][] = [
        ['titleById', 'nm0000658'],
        ['titleById', 'TT0120338'],
        ['titleById', 'tt'],
        ['titleById', '%3F'],
        ['titleById', 'tt0120338%20'],
        ['nameById', 'tt0120338'],
        ['nameById', 'nm0001053%2Cnm0001054'],
        ['nameById', 'Meryl%20Streep'],
        ['nameById', 'co'],
      ];
      for (const [id, value] of cases) {
        const reply = await get(`${routePath(id, k).replace(/id=[^/]*/, `id=${value}`)}`);
        expect([id, value, reply.status, json(reply).error]).toEqual([
          id,
          value,
          400,
          expect.stringMatching(ID_FORM[id]),
        ]);
      }
      const bad = await get(routePath('nameById', k).replace(/id=[^/]*/, 'id=%E0%A4%A'));
      expect([bad.status, json(bad).error]).toEqual([400, expect.stringMatching(/malformed percent-encoding/)]);
    });

    it('answers 403 for a missing, empty or unknown key on every route, before checking parameters', async () => {
      for (const route of ROUTES) {
        for (const k of [null, '', 'faa_notarealkeynotarealkeynotarealk', 'x']) {
          const reply = await get(routePath(route.id, k, { year: 'abc', id: 'abc' }));
          expect([route.id, k, reply.status, json(reply)]).toEqual([route.id, k, 403, FORBIDDEN]);
        }
      }
    });

    it('answers 404 Not Found for unknown paths and for the data folder', async () => {
      const k = await key();
      for (const path of [
        '/nope',
        `/Archive/apikey=${k}`,
        `/person/apikey=${k}`,
        `/person/name=a/name=b/apikey=${k}`,
        '/_data/manifest.json',
        `/_data/manifest.json/apikey=${k}`,
        '/_data/',
      ]) {
        const reply = await get(path);
        expect([path, reply.status, json(reply)]).toEqual([path, 404, { error: 'Not Found' }]);
      }
    });

    it('answers 405 with Allow for methods other than GET, HEAD and OPTIONS', async () => {
      const k = await key();
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        for (const route of ROUTES) {
          const reply = await target().request(method, routePath(route.id, k));
          expect([method, reply.status]).toEqual([method, 405]);
          expect(reply.headers.allow).toBe('GET, HEAD, OPTIONS');
          expect(json(reply)).toEqual({ error: 'Method Not Allowed' });
        }
      }
    });

    it('allows 60 requests a minute per key and refuses the 61st with a sensible Retry-After', async () => {
      const t = target();
      const k = await t.issueKey();
      for (let i = 0; i < 60; i++) {
        const reply = await t.request('GET', `/archive/year=1929/apikey=${k}`);
        expect([i, reply.status]).toEqual([i, 200]);
      }
      const refused = await get(`/archive/year=abc/apikey=${k}`);
      expect(refused.status).toBe(429);
      expect((await get(`/title/id=abc/apikey=${k}`)).status).toBe(429); // the rate is checked before the id
      const retry = Number(refused.headers['retry-after']);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect(json(refused)).toEqual({ error: 'Too Many Requests', limit: '60 requests per minute', retryAfter: retry });
      const other = await get(`/archive/year=1929/apikey=${await t.issueKey()}`);
      expect(other.status).toBe(200);
    });

    it('refuses a key within 2 s of its revocation', async () => {
      const t = target();
      const k = await t.issueKey();
      expect((await t.request('GET', `/archive/year=1929/apikey=${k}`)).status).toBe(200);
      await t.revokeKey(k);
      const revoked = Date.now();
      // Asked every 100 ms: the first request sent 2 s or more after the revocation no longer counts.
      let refusedAfter = Infinity;
      while (Date.now() - revoked < 2_000) {
        const sent = Date.now() - revoked;
        if ((await t.request('GET', `/archive/year=1929/apikey=${k}`)).status === 403) {
          refusedAfter = sent;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(refusedAfter).toBeLessThan(2_000);
      // And it stays refused.
      expect((await t.request('GET', `/archive/year=1929/apikey=${k}`)).status).toBe(403);
    });

    /** How long after `since` a key is first refused, asked every 100 ms for at most 2 s (Infinity: never). */
    const refusedWithin2s = async (t: Target, k: string, since: number) => {
      while (Date.now() - since < 2_000) {
        const sent = Date.now() - since;
        if ((await t.request('GET', `/archive/year=1929/apikey=${k}`)).status === 403) return sent;
        await new Promise((r) => setTimeout(r, 100));
      }
      return Infinity;
    };

    it('rotates with a 1-hour grace: both keys answer, the old one’s answers are kept no longer than it lives, and stopping it refuses it within 2 s', async () => {
      const t = target();
      const old = await t.issueKey();
      expect((await t.request('GET', `/archive/year=1929/apikey=${old}`)).status).toBe(200);
      const next = await t.rotateKey(old, '1h');
      const rotated = Date.now();
      const after = await t.request('GET', `/archive/year=1929/apikey=${next}`);
      expect([after.status, after.headers['cache-control']]).toEqual([200, 'private, max-age=86400']);
      // Within 2 s (an isolate's key cache may hold "current" that long, as it may
      // hold a revoked key) the old key's answers are kept only while it lives.
      let maxAge = Infinity;
      while (Date.now() - rotated < 2_000) {
        const before = await t.request('GET', `/archive/year=1929/apikey=${old}`);
        expect(before.status).toBe(200);
        maxAge = Number(/^private, max-age=(\d+)$/.exec(before.headers['cache-control'] as string)?.[1]);
        if (maxAge <= 3_600) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(maxAge).toBeGreaterThan(3_500);
      expect(maxAge).toBeLessThanOrEqual(3_600);
      await t.endGrace(old);
      expect(await refusedWithin2s(t, old, Date.now())).toBeLessThan(2_000);
      expect((await t.request('GET', `/archive/year=1929/apikey=${old}`)).status).toBe(403);
      expect((await t.request('GET', `/archive/year=1929/apikey=${next}`)).status).toBe(200);
      // A rotation with "now" refuses the old key within 2 s.
      const third = await t.rotateKey(next, 'now');
      expect(await refusedWithin2s(t, next, Date.now())).toBeLessThan(2_000);
      expect((await t.request('GET', `/archive/year=1929/apikey=${third}`)).status).toBe(200);
    });
  });

  part('headers')(`${name}: headers`, () => {
    it('sends JSON with CORS open and a strong ETag that caches for the client only', async () => {
      const reply = await get(`/archive/year=2026/apikey=${await key()}`);
      expect(reply.headers['content-type']).toBe(JSON_TYPE);
      expect(reply.headers['access-control-allow-origin']).toBe('*');
      expect(reply.headers.etag).toMatch(/^"[0-9a-f]{20}"$/);
      expect(reply.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    });

    it('sends CORS and no-store on errors', async () => {
      const reply = await get('/archive/apikey=bad');
      expect(reply.headers['access-control-allow-origin']).toBe('*');
      expect(reply.headers['content-type']).toBe(JSON_TYPE);
      expect(reply.headers['cache-control']).toBe('no-store');
    });

    it('answers If-None-Match with 304, for stored and joined answers', async () => {
      const k = await key();
      for (const path of [
        `/archive/year=1999/apikey=${k}`,
        `/award/name=Actor/apikey=${k}`,
        `/person/name=Meryl%20Streep/apikey=${k}`,
        `/title/id=tt0120338/apikey=${k}`,
      ]) {
        const first = await get(path);
        const again = await get(path, { 'if-none-match': first.headers.etag });
        expect([path, again.status, again.body.length]).toEqual([path, 304, 0]);
        expect(again.headers.etag).toBe(first.headers.etag);
      }
    });

    it('answers HEAD with the headers of GET and no body', async () => {
      const k = await key();
      const path = `/person/name=Meryl%20Streep/apikey=${k}`;
      const full = await get(path);
      const head = await target().request('HEAD', path);
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      for (const h of ['content-type', 'etag', 'cache-control', 'access-control-allow-origin'])
        expect(head.headers[h]).toBe(full.headers[h]);
    });

    it('answers a CORS preflight', async () => {
      const reply = await target().request('OPTIONS', `/archive/apikey=x`, {
        origin: 'https://example.org',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match',
      });
      expect(reply.status).toBe(204);
      expect(reply.headers['access-control-allow-origin']).toBe('*');
      expect(reply.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
      expect(reply.headers['access-control-allow-headers']).toBe('if-none-match');
    });

    it('sends the compressed copy the client accepts, or identity', async () => {
      const k = await key();
      const path = `/archive/apikey=${k}`;
      const identity = await get(path);
      expect(identity.headers['content-encoding']).toBeUndefined();
      if (!target().compression) return;
      const br = await get(path, { 'accept-encoding': 'gzip, deflate, br' });
      const gzip = await get(path, { 'accept-encoding': 'gzip' });
      const none = await get(path, { 'accept-encoding': 'br;q=0, gzip;q=0' });
      expect([
        br.headers['content-encoding'],
        gzip.headers['content-encoding'],
        none.headers['content-encoding'],
      ]).toEqual(['br', 'gzip', undefined]);
      for (const r of [br, gzip, identity]) expect(r.headers.vary).toBe('Accept-Encoding');
      expect(br.body.length).toBeLessThan(identity.body.length / 4);
      expect(decoded(br).equals(identity.body)).toBe(true);
      expect(decoded(gzip).equals(identity.body)).toBe(true);
      expect(new Set([br.headers.etag, gzip.headers.etag, identity.headers.etag]).size).toBe(3);
    });

    it('answers GET /health without a key: the source’s revision and the archive’s counts, no archive data, never cached', async () => {
      const reply = await target().request('GET', '/health');
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe(JSON_TYPE);
      expect(reply.headers['cache-control']).toBe('no-store');
      const body = json(reply);
      const categories = Object.values(archive()).flat();
      expect(body).toEqual({
        status: 'ok',
        archive: {
          revision: createHash('sha256').update(readFileSync(FULL_SOURCE)).digest('hex'),
          // The suite builds from the pinned file, so the build knows its upstream commit and date.
          commit: PIN.commit,
          date: PIN.date,
          sample: false,
          firstYear: Math.min(...Object.keys(archive()).map(Number)),
          lastYear: Math.max(...Object.keys(archive()).map(Number)),
          years: Object.keys(archive()).length,
          categories: new Set(categories.map((c) => c.category)).size,
          nominations: categories.reduce((n, c) => n + c.nominations.length, 0),
        },
      });
      expect(validateResponse('health', 200, body)).toEqual([]);
      const head = await target().request('HEAD', '/health');
      expect([head.status, head.body.length, head.headers['content-type']]).toEqual([200, 0, JSON_TYPE]);
    });

    it('answers GET / with a JSON description of the service', async () => {
      const reply = await get('/', { accept: 'application/json' });
      expect(reply.status).toBe(200);
      const body = json(reply);
      expect(body.openapi).toBe('/openapi.json');
      expect(body.endpoints.map((e: { operationId: string }) => e.operationId)).toEqual(ROUTES.map((r) => r.id));
    });

    it('marks / and the page named by other paths as varying by Accept, since Accept chooses the page or the description', async () => {
      // Not through `get`: the contract check reads every reply it saw as JSON, and a page is not.
      const ask = (path: string, accept: string) => target().request('GET', path, { accept });
      const page = await ask('/', 'text/html');
      const description = await ask('/', 'application/json');
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(description.headers['content-type']).toBe(JSON_TYPE);
      for (const [asked, reply] of [
        ['page', page],
        ['description', description],
      ] as const)
        expect([asked, reply.headers.vary]).toEqual([asked, 'Accept']);
      // Where the front door answers /index.html (not Netlify's CDN, which
      // serves the file to everyone), a JSON client gets a 404 there.
      const named = await Promise.all(['text/html', 'application/json'].map((accept) => ask('/index.html', accept)));
      if (named[0].status !== named[1].status)
        expect(named.map((r) => [r.status, r.headers.vary])).toEqual([
          [200, 'Accept'],
          [404, 'Accept'],
        ]);
    });
  });
}
