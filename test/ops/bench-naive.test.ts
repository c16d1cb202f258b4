/**
 * The benchmark's naive server answers as the spec does: bench/naive.ts (its
 * own code, so that no benchmark imports a test) beside the tests' oracle,
 * body for body, on the full archive: the whole archive, every year held and
 * one that is not, a spread of names, films at their years, category texts
 * and IMDb ids, and texts that match nothing.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { naiveAnswer } from '../../bench/naive.ts';
import { importArchive, type ImportResult } from '../../build/archive/import.ts';
import { expected, expectedById, idRows, type SpecArchive, type SpecIds } from '../oracle.ts';
import { FULL_SOURCE } from '../helpers/paths.ts';

let data: ImportResult;
let archive: SpecArchive;
let ids: SpecIds;
beforeAll(() => {
  const text = readFileSync(FULL_SOURCE, 'utf8');
  data = importArchive(text);
  archive = data.archive as SpecArchive;
  ids = idRows(archive, text);
});

/** Every `step`-th of `values`, so a spread of the archive is asked, not all of it. */
const every = <T>(values: T[], step: number) => values.filter((_, i) => i % step === 0);

describe('the naive server’s answers', () => {
  it('are the oracle’s for the whole archive and each ceremony', () => {
    expect(naiveAnswer(data, 'allCeremonies', {})).toEqual(expected.allCeremonies(archive));
    for (const year of [...Object.keys(archive).map(Number), 1900])
      expect(naiveAnswer(data, 'ceremonyByYear', { year }), `${year}`).toEqual(expected.ceremonyByYear(archive, year));
  });

  it('are the oracle’s for names across all years and films at a year', () => {
    const asked = new Map<string, number>();
    for (const [year, categories] of Object.entries(archive))
      for (const c of categories)
        for (const n of c.nominations)
          for (const name of [...n.primary, ...(n.secondary ?? [])]) asked.set(name, Number(year));
    const names = [...every([...asked], 200), ['Nobody At All', 2000] as [string, number]];
    expect(names.length).toBeGreaterThan(50);
    for (const [name, year] of names) {
      expect(naiveAnswer(data, 'personByName', { name }), name).toEqual(expected.personByName(archive, name));
      expect(naiveAnswer(data, 'filmByNameAndYear', { name, year }), `${name} ${year}`).toEqual(
        expected.filmByNameAndYear(archive, name, year),
      );
    }
  });

  it('are the oracle’s for category texts, across all years and at a year', () => {
    const texts = [...new Set(Object.values(archive).flatMap((cs) => cs.map((c) => c.category)))];
    for (const text of [...every(texts, 5), 'Actor', 'e', 'Best', 'No Such Award']) {
      expect(naiveAnswer(data, 'categoryByName', { name: text }), text).toEqual(expected.categoryByName(archive, text));
      for (const year of [1930, 2000])
        expect(naiveAnswer(data, 'categoryByNameAndYear', { name: text, year }), `${text} ${year}`).toEqual(
          expected.categoryByNameAndYear(archive, text, year),
        );
    }
  });

  it('are the oracle’s for title and name ids', () => {
    const titles = [...every([...ids.titles.keys()], 100), 'tt0000000'];
    const names = [...every([...ids.names.keys()], 100), 'nm0000000'];
    expect(titles.length + names.length).toBeGreaterThan(100);
    for (const id of titles)
      expect(naiveAnswer(data, 'titleById', { id }), id).toEqual(expectedById.titleById(ids, id));
    for (const id of names) expect(naiveAnswer(data, 'nameById', { id }), id).toEqual(expectedById.nameById(ids, id));
  });

  it('leave out what the spec has no rule for', () => {
    expect(naiveAnswer(data, 'search', { name: 'meryl' })).toBeNull();
  });
});
