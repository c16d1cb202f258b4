/**
 * The spec (../shared/spec/SPEC.md) walked section by section, against any
 * place the API runs: the same `Target` as the behaviour suite. Every figure
 * and message below is copied from the spec, never from the code under test;
 * the expected answers come from the spec's oracle (test/oracle.ts).
 */
import { describe, expect, it } from 'vitest';
import { decoded, json, type Target } from './behaviour.ts';
import type { RawReply } from '../helpers/http.ts';
import { expected, SPEC_ERRORS, SPEC_LIMIT, type SpecArchive } from '../oracle.ts';

/** Section 4's operation ids, each with a path that finds something in the full archive. */
const OPERATIONS = [
  { id: 'allCeremonies', path: '/archive', keys: null },
  { id: 'ceremonyByYear', path: '/archive/year=1930', keys: ['category', 'nominations'] },
  { id: 'personByName', path: '/person/name=Meryl%20Streep', keys: ['year', 'category', 'nomination'] },
  { id: 'filmByNameAndYear', path: '/movie/name=Sinners/year=2026', keys: ['category', 'nomination'] },
  { id: 'categoryByName', path: '/award/name=Actress', keys: ['year', 'category', 'nominations'] },
  { id: 'categoryByNameAndYear', path: '/award/name=Actor/year=2026', keys: ['category', 'nominations'] },
] as const;

/**
 * Section 2, Nomination: required primary (strings) and won (boolean),
 * optional secondary and notes, in that order, nothing else.
 */
function expectNomination(n: Record<string, unknown>, where: string) {
  const order = ['primary', 'secondary', 'won', 'notes'];
  const keys = Object.keys(n);
  expect([where, keys]).toEqual([where, order.filter((k) => keys.includes(k))]);
  expect([where, Array.isArray(n.primary) && (n.primary as unknown[]).every((x) => typeof x === 'string')]).toEqual([
    where,
    true,
  ]);
  expect([where, typeof n.won]).toEqual([where, 'boolean']);
  if ('secondary' in n)
    expect([
      where,
      Array.isArray(n.secondary) && (n.secondary as unknown[]).every((x) => typeof x === 'string'),
    ]).toEqual([where, true]);
  if ('notes' in n) expect([where, typeof n.notes]).toEqual([where, 'string']);
}

/** Section 2, Category: exactly category (string) and nominations (array of Nomination). */
function expectCategory(c: Record<string, unknown>, where: string) {
  expect([where, Object.keys(c)]).toEqual([where, ['category', 'nominations']]);
  expect([where, typeof c.category]).toEqual([where, 'string']);
  (c.nominations as Record<string, unknown>[]).forEach((n, i) => expectNomination(n, `${where}.nominations[${i}]`));
}

/** Options that only the caller can provide. */
export interface ConformanceOptions {
  /** A lookup path (no key) whose stored answer the setup corrupted: section 7's 500. */
  unreadablePath: string;
}

export function conformanceSuite(
  name: string,
  target: () => Target,
  archive: () => SpecArchive,
  options: ConformanceOptions,
) {
  const send = async (method: string, path: string, headers?: Record<string, string>): Promise<RawReply> => {
    const t = target();
    const reply = await t.request(method, path, headers);
    if (method === 'GET') t.seen?.push({ path, reply });
    return reply;
  };
  const key = () => target().issueKey();
  const errorOf = (reply: RawReply) => [reply.status, json(reply)];

  describe(`${name}: the spec, section by section`, () => {
    it('§1: holds 97 ceremony years from 1929 to 2026, every route a GET answering JSON', async () => {
      const years = Object.keys(archive()).map(Number);
      expect([years.length, years[0], years.at(-1), years.includes(1933)]).toEqual([97, 1929, 2026, false]);
      const k = await key();
      for (const op of OPERATIONS) {
        const reply = await send('GET', `${op.path}/apikey=${k}`);
        expect([op.id, reply.status, reply.headers['content-type']]).toEqual([
          op.id,
          200,
          expect.stringMatching(/^application\/json/),
        ]);
        expect([op.id, (await send('DELETE', `${op.path}/apikey=${k}`)).status]).toEqual([op.id, 405]);
      }
    });

    it('§2 and §4: each of the six answers has exactly the spec’s shape, element by element', async () => {
      const k = await key();
      for (const op of OPERATIONS) {
        const body = json(await send('GET', `${op.path}/apikey=${k}`));
        if (op.keys === null) {
          expect(Array.isArray(body)).toBe(false);
          for (const [year, categories] of Object.entries(body as Record<string, Record<string, unknown>[]>)) {
            expect(year).toMatch(/^\d{4}$/);
            categories.forEach((c, i) => expectCategory(c, `${op.id}[${year}][${i}]`));
          }
          continue;
        }
        expect([op.id, Array.isArray(body), body.length > 0]).toEqual([op.id, true, true]);
        (body as Record<string, unknown>[]).forEach((element, i) => {
          const where = `${op.id}[${i}]`;
          expect([where, Object.keys(element)]).toEqual([where, op.keys]);
          if ('year' in element) expect([where, element.year]).toEqual([where, expect.stringMatching(/^\d{4}$/)]);
          if ('nomination' in element)
            expectNomination(element.nomination as Record<string, unknown>, `${where}.nomination`);
          if ('nominations' in element)
            expectCategory({ category: element.category, nominations: element.nominations }, where);
        });
      }
    });

    it('§4: answers each operation exactly as the spec’s rules evaluated over the whole archive', async () => {
      const k = await key();
      const a = archive();
      const cases: [string, ReturnType<(typeof expected)['personByName']>][] = [
        ['/archive/year=1930', expected.ceremonyByYear(a, 1930)],
        ['/person/name=Meryl%20Streep', expected.personByName(a, 'Meryl Streep')],
        ['/person/name=Sinners', expected.personByName(a, 'Sinners')],
        ['/movie/name=Sinners/year=2026', expected.filmByNameAndYear(a, 'Sinners', 2026)],
        ['/award/name=Actress', expected.categoryByName(a, 'Actress')],
        ['/award/name=Actor/year=2026', expected.categoryByNameAndYear(a, 'Actor', 2026)],
      ];
      for (const [path, want] of cases) {
        const reply = await send('GET', `${path}/apikey=${k}`);
        expect([path, reply.status, decoded(reply).toString('utf8')]).toEqual([path, want.status, want.text]);
      }
    });

    it('§4 rules 1 to 4: exact and case-sensitive names, film titles through the person route, substrings across renamed categories, held years', async () => {
      const k = await key();
      expect(errorOf(await send('GET', `/person/name=meryl%20streep/apikey=${k}`))).toEqual([
        404,
        { error: SPEC_ERRORS.person },
      ]);
      expect(errorOf(await send('GET', `/person/name=Meryl/apikey=${k}`))).toEqual([
        404,
        { error: SPEC_ERRORS.person },
      ]);
      const films = json(await send('GET', `/person/name=Sinners/apikey=${k}`)) as { year: string }[];
      expect(new Set(films.map((m) => m.year)).size).toBeGreaterThan(0);
      const picture = json(await send('GET', `/award/name=Picture/apikey=${k}`)) as { category: string }[];
      expect(new Set(picture.map((c) => c.category)).size).toBeGreaterThan(1); // renamed variants of one award
      expect(errorOf(await send('GET', `/award/name=actress/apikey=${k}`))).toEqual([
        404,
        { error: SPEC_ERRORS.award },
      ]);
      const held1930 = json(await send('GET', `/archive/year=1930/apikey=${k}`)) as { category: string }[];
      expect(held1930.length).toBeGreaterThan(json(await send('GET', `/archive/year=1931/apikey=${k}`)).length);
    });

    it('§5: takes the key only as the last path segment; missing, unknown or revoked keys get 403', async () => {
      const k = await key();
      const forbidden = [403, { error: SPEC_ERRORS.forbidden }];
      expect(errorOf(await send('GET', '/archive'))).toEqual(forbidden);
      expect(errorOf(await send('GET', `/archive?apikey=${k}`))).toEqual(forbidden);
      expect(
        errorOf(await send('GET', '/archive', { apikey: k, 'x-api-key': k, authorization: `Bearer ${k}` })),
      ).toEqual(forbidden);
      expect(errorOf(await send('GET', '/archive/apikey=faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'))).toEqual(forbidden);
      const revoked = await key();
      expect((await send('GET', `/archive/year=2026/apikey=${revoked}`)).status).toBe(200);
      await target().revokeKey(revoked);
      await expect
        .poll(async () => (await send('GET', `/archive/year=2026/apikey=${revoked}`)).status, {
          timeout: 15_000,
          interval: 250,
        })
        .toBe(403);
      expect(errorOf(await send('GET', `/archive/year=2026/apikey=${revoked}`))).toEqual(forbidden);
    });

    it('§7: answers every 404 body of the table, and no 404 for the whole archive', async () => {
      const k = await key();
      const cases: [string, string][] = [
        ['/archive/year=1933', SPEC_ERRORS.year],
        ['/archive/year=1900', SPEC_ERRORS.year],
        ['/archive/year=2027', SPEC_ERRORS.year],
        ['/person/name=Nobody%20At%20All', SPEC_ERRORS.person],
        ['/movie/name=Sinners/year=1999', SPEC_ERRORS.movie],
        ['/award/name=Zzz', SPEC_ERRORS.award],
        ['/award/name=Actor/year=1933', SPEC_ERRORS.award],
      ];
      for (const [path, error] of cases)
        expect([path, ...errorOf(await send('GET', `${path}/apikey=${k}`))]).toEqual([path, 404, { error }]);
      expect((await send('GET', `/archive/apikey=${k}`)).status).toBe(200);
    });

    it('§7 and §8: the 61st request in a minute gets 429 with limit, retryAfter and a matching Retry-After', async () => {
      const t = target();
      const k = await t.issueKey();
      for (let i = 0; i < 60; i++)
        expect([i, (await t.request('GET', `/archive/year=2026/apikey=${k}`)).status]).toEqual([i, 200]);
      const refused = await send('GET', `/person/name=Meryl%20Streep/apikey=${k}`);
      const body = json(refused);
      expect(refused.status).toBe(429);
      expect(Object.keys(body)).toEqual(['error', 'limit', 'retryAfter']);
      expect(body).toEqual({
        error: SPEC_ERRORS.tooMany,
        limit: SPEC_LIMIT,
        retryAfter: Number(refused.headers['retry-after']),
      });
      expect(Number.isInteger(body.retryAfter) && body.retryAfter >= 1 && body.retryAfter <= 60).toBe(true);
      expect((await send('GET', `/archive/year=2026/apikey=${await t.issueKey()}`)).status).toBe(200); // per key
    });

    it('§7: answers 500 with its body when the archive cannot be read, and only there', async () => {
      const k = await key();
      expect(errorOf(await send('GET', `${options.unreadablePath}/apikey=${k}`))).toEqual([
        500,
        { error: SPEC_ERRORS.fetch },
      ]);
      expect((await send('GET', `/archive/year=2026/apikey=${k}`)).status).toBe(200);
    });

    it('§9: publishes OpenAPI 3.1, version 1.0.0, with the six operation ids (and beside them only the two lookups by IMDb id, search, the category list, the dataset, the records and the rankings) and no version segment in the paths', async () => {
      const reply = await send('GET', '/openapi.json');
      expect(reply.status).toBe(200);
      const doc = json(reply) as {
        openapi: string;
        info: { version: string };
        paths: Record<string, Record<string, { operationId: string }>>;
      };
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(doc.info.version).toBe('1.0.0');
      const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
      // The spec's six, the two id lookups, search, the category list, the dataset,
      // the records and the rankings, each once; beside them the keyless /health.
      const lookups = [
        'allCeremonies',
        'categoryByName',
        'categoryByNameAndYear',
        'ceremonyByYear',
        'filmByNameAndYear',
        'personByName',
        'nameById',
        'titleById',
        'search',
        'categories',
        'datasetList',
        'datasetFile',
      ];
      lookups.push('filmRecord', 'peopleRecord', 'ceremonyRecord', 'awardList', 'awardRecord', 'rankings');
      expect([...ids].sort()).toEqual([...lookups, 'health'].sort());
      for (const path of Object.keys(doc.paths)) expect(path).not.toMatch(/\/v\d+\//);
    });
  });
}
