import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { heldYear, importArchive, ImportError } from '../../build/archive/import.ts';
import { titleCaseCategory } from '../../src/shared/category-name.ts';
import type { Archive, Nomination } from '../../src/shared/types.ts';
import { FULL_SOURCE, ROOT } from '../helpers/paths.ts';

const MINI = readFileSync(path.join(ROOT, 'test/fixtures/mini.tsv'), 'utf8');
const HEADER = MINI.split('\n')[0];
const find = (archive: Archive, year: string, category: string) => archive[year].find((c) => c.category === category)!;
const refusal = (text: string) => {
  try {
    importArchive(text);
  } catch (error) {
    if (error instanceof ImportError) return { line: error.line, message: error.message };
    throw error;
  }
  throw new Error('expected the import to be refused');
};

describe('category names', () => {
  it.each([
    ['ACTOR IN A LEADING ROLE', 'Actor in a Leading Role'],
    ['MUSIC (Original Song)', 'Music (Original Song)'],
    ['BEST PICTURE', 'Best Picture'],
    ['IRVING G. THALBERG MEMORIAL AWARD', 'Irving G. Thalberg Memorial Award'],
    ['SCIENTIFIC OR TECHNICAL AWARD (Class I)', 'Scientific or Technical Award (Class I)'],
    ['SHORT SUBJECT (One-reel)', 'Short Subject (One-reel)'],
    ['A STAR OF THE SHOW', 'A Star of the Show'],
  ])('title-cases %s as %s', (raw, expected) => {
    expect(titleCaseCategory(raw)).toBe(expected);
  });
});

describe('held years', () => {
  it('maps ceremonies to the year they were held, with two in 1930 and none in 1933', () => {
    expect([1, 2, 3, 4, 5, 6, 98].map(heldYear)).toEqual([1929, 1930, 1930, 1931, 1932, 1934, 2026]);
  });
});

describe('importing a small fixture', () => {
  const { archive, stats } = importArchive(MINI);

  it('turns every row into exactly one nomination', () => {
    const count = Object.values(archive)
      .flat()
      .reduce((n, c) => n + c.nominations.length, 0);
    expect(count).toBe(MINI.trim().split('\n').length - 1);
    expect(stats.rows).toBe(count);
  });

  it('keeps both 1930 ceremonies under one key, April first', () => {
    expect(archive['1930'].map((c) => c.category)).toEqual([
      'Outstanding Picture',
      'Outstanding Production',
      'Special Award',
    ]);
  });

  it('puts people first for acting and films first for title classes', () => {
    expect(find(archive, '1929', 'Actor').nominations[0]).toEqual({
      primary: ['Actor One'],
      secondary: ['Film A', 'Film B'],
      won: false,
    });
    expect(find(archive, '1930', 'Outstanding Production').nominations[0]).toEqual({
      primary: ['Film E'],
      secondary: ['Studio E'],
      won: true,
    });
  });

  it('uses the country in Name when a title row has no individual nominees', () => {
    expect(find(archive, '1938', 'Foreign Language Film').nominations[0]).toMatchObject({
      primary: ['Film G'],
      secondary: ['Ruritania'],
    });
  });

  it('puts the film in primary when a row names no one, and leaves primary empty when it names nothing', () => {
    expect(find(archive, '1938', 'Art Direction').nominations[0]).toEqual({
      primary: ['Film H'],
      secondary: [],
      won: false,
    });
    const merit = find(archive, '1938', 'Scientific and Technical Award (Academy Award of Merit)').nominations[0];
    expect(merit.primary).toEqual([]);
    expect(merit.notes).toBe('To everyone.');
  });

  it('writes the song title, citation and notes, with \\" turned into "', () => {
    const song = find(archive, '1938', 'Music (Song)').nominations[0];
    expect(song.notes).toBe('Song: "Song "Title""\ncame in 1st\nNOTE: a note.');
    expect(find(archive, '1930', 'Special Award').nominations[0].notes).toBe('To Someone, for "everything".');
  });

  it('treats a missing or empty Winner as a loss', () => {
    expect(find(archive, '1930', 'Outstanding Picture').nominations[0].won).toBe(false);
    expect(find(archive, '1938', 'Actor').nominations[0].won).toBe(false);
  });

  it('leaves out notes when there is nothing to say', () => {
    expect('notes' in find(archive, '1929', 'Actor').nominations[0]).toBe(false);
  });
});

describe('reading the IMDb ids', () => {
  /** The ids importing `text` pairs with the nomination of its first row. */
  const idsOfFirstRow = (text: string) => {
    const { archive, ids } = importArchive(text);
    return ids.get(Object.values(archive)[0][0].nominations[0]);
  };
  const firstRowWith = (filmIds: string, nomineeIds: string) => {
    const fields = MINI.split('\n')[1].split('\t');
    fields[6] = filmIds;
    fields[9] = nomineeIds;
    return `${HEADER}\n${fields.join('\t')}\n`;
  };

  it('pairs a nomination with the ids of its row, film ids first', () => {
    expect(idsOfFirstRow(MINI)).toEqual(['tt1', 'tt2', 'nm1']);
  });

  it('reads every id of a comma-separated value (a pseudonym for several people), and skips the ? placeholder', () => {
    expect(idsOfFirstRow(firstRowWith('?|tt2', 'nm0001053,nm0001054|?|co7'))).toEqual([
      'tt2',
      'nm0001053',
      'nm0001054',
      'co7',
    ]);
  });

  it('pairs nothing with a row that carries no id', () => {
    expect(idsOfFirstRow(firstRowWith('?', ''))).toBeUndefined();
  });

  it('refuses a value that is neither an id of its column nor a placeholder, naming the line', () => {
    expect(refusal(firstRowWith('nm1', 'nm2'))).toMatchObject({
      line: 2,
      message: expect.stringContaining('FilmId holds "nm1"'),
    });
    expect(refusal(firstRowWith('tt1', 'nm 2'))).toMatchObject({
      line: 2,
      message: expect.stringContaining('NomineeIds holds "nm 2"'),
    });
  });
});

describe('refusing a malformed source', () => {
  const rows = MINI.split('\n');
  it('names the line of a non-numeric ceremony', () => {
    const bad = [...rows];
    bad[3] = bad[3].replace(/^2/, 'two');
    expect(refusal(bad.join('\n'))).toMatchObject({ line: 4, message: expect.stringContaining('Ceremony') });
  });
  it('names the line of an unknown class', () => {
    const bad = [...rows];
    bad[2] = bad[2].replace('Acting', 'Dancing');
    expect(refusal(bad.join('\n'))).toMatchObject({
      line: 3,
      message: expect.stringContaining('unknown Class "Dancing"'),
    });
  });
  it('names the line of an empty category', () => {
    const bad = [...rows];
    const fields = bad[5].split('\t');
    fields[4] = '';
    bad[5] = fields.join('\t');
    expect(refusal(bad.join('\n'))).toMatchObject({ line: 6, message: expect.stringContaining('Category is empty') });
  });
  it('refuses a file truncated mid-line', () => {
    expect(refusal(MINI.slice(0, MINI.length - 20)).message).toContain('truncated');
  });
  it('refuses a line with too few fields', () => {
    expect(refusal(`${HEADER}\n1\t1927/28\tActing\n`)).toMatchObject({
      line: 2,
      message: expect.stringContaining('found 3'),
    });
  });
  it('refuses a wrong header', () => {
    expect(refusal(`Foo\tBar\n`).line).toBe(1);
  });
  it('refuses a Winner that is neither True nor empty', () => {
    const bad = MINI.replace('nm2\tTrue', 'nm2\tyes');
    expect(refusal(bad).message).toContain('Winner');
  });
});

describe('importing the full archive', () => {
  let text: string;
  let archive: Archive;
  let rows: string[][];
  beforeAll(() => {
    text = readFileSync(FULL_SOURCE, 'utf8');
    archive = importArchive(text).archive;
    rows = text
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => l.split('\t'));
  });
  const all = () => Object.values(archive).flat();
  const nominationsIn = (year: string, category: string): Nomination[] => find(archive, year, category).nominations;

  it('has 97 ceremony years from 1929 to 2026 and no 1933', () => {
    const years = Object.keys(archive);
    expect(years).toHaveLength(97);
    expect(years[0]).toBe('1929');
    expect(years.at(-1)).toBe('2026');
    expect(years).not.toContain('1933');
  });

  it('holds every one of the 12,137 rows as a nomination', () => {
    expect(rows).toHaveLength(12137);
    expect(all().reduce((n, c) => n + c.nominations.length, 0)).toBe(12137);
  });

  it('has per-year nomination and win counts equal to a direct count of the source', () => {
    const expected: Record<string, { n: number; w: number }> = {};
    for (const r of rows) {
      const y = String(heldYear(Number(r[0])));
      expected[y] ??= { n: 0, w: 0 };
      expected[y].n++;
      if (r[10] === 'True') expected[y].w++;
    }
    for (const [year, cats] of Object.entries(archive)) {
      const ns = cats.flatMap((c) => c.nominations);
      expect({ year, n: ns.length, w: ns.filter((x) => x.won).length }).toEqual({
        year,
        n: expected[year].n,
        w: expected[year].w,
      });
    }
  });

  it('keeps both 1930 ceremonies, April categories first', () => {
    const names = archive['1930'].map((c) => c.category);
    expect(names.indexOf('Outstanding Picture')).toBeLessThan(names.indexOf('Outstanding Production'));
    const april = rows.filter((r) => r[0] === '2').length;
    const november = rows.filter((r) => r[0] === '3').length;
    expect(archive['1930'].reduce((n, c) => n + c.nominations.length, 0)).toBe(april + november);
  });

  it('has no category name left in capitals outside parentheses', () => {
    for (const c of all()) expect(c.category.replace(/\(.*\)/, '')).not.toMatch(/\b[A-Z]{2,}\b/);
    expect(new Set(all().map((c) => c.category)).size).toBe(new Set(rows.map((r) => r[4])).size);
  });

  it('lists Best Picture 2026 with films first and producers second', () => {
    const winner = nominationsIn('2026', 'Best Picture').find((n) => n.won)!;
    expect(winner.primary).toEqual(['One Battle after Another']);
    expect(winner.secondary).toEqual(['Adam Somner', 'Sara Murphy', 'Paul Thomas Anderson']);
  });

  it('lists an acting nomination with the actor first and the film second', () => {
    expect(nominationsIn('2026', 'Actor in a Leading Role')).toContainEqual({
      primary: ['Michael B. Jordan'],
      secondary: ['Sinners'],
      won: true,
    });
  });

  it('puts a song title in notes', () => {
    const golden = nominationsIn('2026', 'Music (Original Song)').find((n) =>
      n.secondary?.includes('KPop Demon Hunters'),
    )!;
    expect(golden.notes).toBe('Song: "Golden"');
    expect(golden.primary).toContain('EJAE');
  });

  it('names the country of an International Feature nomination', () => {
    expect(nominationsIn('2026', 'International Feature Film')).toContainEqual({
      primary: ['Sentimental Value'],
      secondary: ['Norway'],
      won: true,
    });
  });

  it('keeps the citation of an honorary award', () => {
    const cruise = nominationsIn('2026', 'Honorary Award').find((n) => n.primary[0] === 'Tom Cruise')!;
    expect(cruise.notes).toMatch(/^To Tom Cruise, for his unwavering commitment/);
  });

  it('unescapes every \\" of the source', () => {
    const json = JSON.stringify(archive);
    expect(json).not.toContain('\\\\"');
    const chaplin = nominationsIn('1929', 'Special Award').find((n) => n.primary[0] === 'Charles Chaplin')!;
    expect(chaplin.notes).toContain('NOTE: "The Academy Board of Judges');
    const escaped = rows.filter((r) => r.join('\t').includes('\\"')).length;
    expect(escaped).toBe(67);
  });

  it('carries every id of the FilmId and NomineeIds columns, each with the rows that hold it', () => {
    const { archive: again, ids } = importArchive(text);
    const carried = new Map<string, number>();
    for (const list of ids.values()) for (const id of list) carried.set(id, (carried.get(id) ?? 0) + 1);
    const inSource = new Map<string, number>();
    for (const r of rows) {
      const tokens = new Set(`${r[6] ?? ''}|${r[9] ?? ''}`.split(/[|,]/).filter((t) => /^(tt|nm|co)[0-9]+$/.test(t)));
      for (const t of tokens) inSource.set(t, (inSource.get(t) ?? 0) + 1);
    }
    expect(carried).toEqual(inSource);
    expect([...carried.keys()].filter((id) => id.startsWith('tt'))).toHaveLength(5264);
    const titanic = [...ids].filter(([, list]) => list.includes('tt0120338')).map(([n]) => n);
    expect([titanic.length, titanic.filter((n) => n.won).length]).toEqual([14, 11]);
    expect(Object.keys(again)).toEqual(Object.keys(archive));
  });

  it('always sends secondary, and never puts an empty string in primary or secondary', () => {
    for (const n of all().flatMap((c) => c.nominations))
      expect([...n.primary, ...(n.secondary ?? ['missing'])]).not.toContain('');
    expect(
      all()
        .flatMap((c) => c.nominations)
        .filter((n) => n.secondary === undefined),
    ).toEqual([]);
  });
});
