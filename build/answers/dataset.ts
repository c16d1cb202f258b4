/**
 * The dataset: the whole source with every field the spec's shapes leave out
 * (IMDb ids, film years, characters and songs, canonical awards, notes and
 * citations), as one SQLite file, one CSV file per table and one NDJSON file
 * with a nomination a line. Made from the same import as the answers, so from
 * the same revision; deterministic (same source, same bytes: the only date in
 * it is the revision's own), so each file's ETag changes only with the data.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { heldYear, type SourceRow } from '../archive/import.ts';
import { titleCaseCategory } from '../../src/shared/category-name.ts';
import { things, type Things } from './things.ts';
import type { DatasetFormat, SourceRevision } from '../../src/shared/types.ts';
import { SEARCH_DATASET_FILE, searchDatasetText } from '../../src/shared/search.ts';

/**
 * The tables, their columns in order (the CSV header) and their
 * SQL types; the first column is the key unless `key` says.
 */
const TABLES = {
  ceremonies: { columns: { ceremony: 'INTEGER', held_year: 'INTEGER NOT NULL', film_year: 'TEXT NOT NULL' } },
  categories: {
    columns: {
      id: 'INTEGER',
      name: 'TEXT NOT NULL UNIQUE',
      api_name: 'TEXT NOT NULL',
      canonical: 'TEXT NOT NULL',
      award: 'TEXT NOT NULL',
      class: 'TEXT NOT NULL',
    },
  },
  nominations: {
    columns: {
      id: 'INTEGER',
      ceremony: 'INTEGER NOT NULL REFERENCES ceremonies',
      held_year: 'INTEGER NOT NULL',
      category_id: 'INTEGER NOT NULL REFERENCES categories',
      film_year: 'TEXT NOT NULL',
      won: 'INTEGER NOT NULL',
      name: 'TEXT',
      detail: 'TEXT',
      note: 'TEXT',
      citation: 'TEXT',
    },
  },
  films: { columns: { id: 'INTEGER', imdb_id: 'TEXT', title: 'TEXT NOT NULL' } },
  people: { columns: { id: 'INTEGER', imdb_id: 'TEXT', name: 'TEXT NOT NULL', kind: 'TEXT NOT NULL' } },
  nomination_films: {
    key: 'nomination_id, position',
    columns: {
      nomination_id: 'INTEGER NOT NULL REFERENCES nominations',
      position: 'INTEGER NOT NULL',
      film_id: 'INTEGER NOT NULL REFERENCES films',
      role: 'TEXT NOT NULL',
      title: 'TEXT NOT NULL',
      detail: 'TEXT',
    },
  },
  nomination_people: {
    key: 'nomination_id, position',
    columns: {
      nomination_id: 'INTEGER NOT NULL REFERENCES nominations',
      position: 'INTEGER NOT NULL',
      person_id: 'INTEGER NOT NULL REFERENCES people',
      role: 'TEXT NOT NULL',
      name: 'TEXT NOT NULL',
      detail: 'TEXT',
    },
  },
  meta: { columns: { key: 'TEXT', value: 'TEXT NOT NULL' } },
} as const;

type Table = keyof typeof TABLES;
type Value = string | number | null;
export type Rows = Record<Table, Value[][]>;

/**
 * Indexes for the joins people make: a film's or person's nominations,
 * by IMDb id, by year and category (by name: the full-text tables).
 */
const INDEXES = [
  'CREATE INDEX nominations_by_category ON nominations (category_id)',
  'CREATE INDEX nominations_by_year ON nominations (held_year)',
  'CREATE INDEX films_by_imdb ON films (imdb_id)',
  'CREATE INDEX people_by_imdb ON people (imdb_id)',
  'CREATE INDEX nomination_films_by_film ON nomination_films (film_id)',
  'CREATE INDEX nomination_people_by_person ON nomination_people (person_id)',
];

/** What travels inside every file: where the data comes from, its licence, and the revision. */
export interface DatasetSource {
  sha256: string;
  rows: number;
  sample: boolean;
  revision: SourceRevision | null;
}

export const LICENCE = 'BSD-2-Clause';
export const ATTRIBUTION =
  "Academy Awards nominations dataset compiled by David V. Lu from the Academy's awards database, https://github.com/DLu/oscar_data (oscars.csv), BSD 2-Clause License.";

/** The data's licence as NOTICE publishes it (the part after its rule). */
function licenceText(): string {
  const notice = readFileSync(new URL('../../NOTICE', import.meta.url), 'utf8');
  return notice
    .slice(notice.search(/^-{20,}$/m))
    .replace(/^-+\n+/, '')
    .trim();
}

/**
 * The meta table's rows: no clock is read, so the same revision
 * always gives the same bytes ("built" is the revision's date).
 */
function metaRows(source: DatasetSource): [string, string][] {
  const r = source.revision;
  return [
    ['format', '2'],
    ['source_repository', r?.repository ?? 'unknown'],
    ['source_commit', r?.commit ?? 'unknown'],
    ['source_date', r?.date ?? 'unknown'],
    ['source_sha256', source.sha256],
    ['source_rows', String(source.rows)],
    ['sample', source.sample ? 'true' : 'false'],
    ['built', r?.date ?? 'unknown'],
    ['licence', LICENCE],
    ['attribution', ATTRIBUTION],
    ['licence_text', licenceText()],
  ];
}

/** Numbers things by first appearance, so the same source always numbers them alike. */
class Numbered {
  readonly rows: Value[][] = [];
  private readonly ids = new Map<string, number>();
  id(key: string, row: () => Value[]): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      this.ids.set(key, (id = this.rows.length + 1));
      this.rows.push([id, ...row()]);
    }
    return id;
  }
}

const orNull = (text: string): string | null => (text === '' ? null : text);

/**
 * A link's detail: the value at its place when the values and the
 * links line up; else the only one, or all of them for a lone link.
 */
export function detailAt(detail: string[], count: number, place: number): string | null {
  if (detail.length === count) return detail[place];
  if (detail.length === 1 || (count === 1 && detail.length > 0)) return detail.join('|');
  return null;
}

/** A film's detail: its own where one name (or none) is credited for several films with a detail each (an actor's character in each, 1929). */
export const filmDetailAt = (row: SourceRow, place: number): string | null =>
  row.people.length <= 1 && row.films.length > 1 && row.detail.length === row.films.length ? row.detail[place] : null;

/** A name's detail: none where its films carry theirs (filmDetailAt), else the detail at its place. */
export const personDetailAt = (row: SourceRow, place: number): string | null =>
  filmDetailAt(row, 0) === null ? detailAt(row.detail, row.people.length, place) : null;

/** What the dataset reads of the things (build/answers/things.ts): where each row's films and names are placed. */
export type Placed = Pick<Things, 'rowFilms' | 'rowPeople'>;

/** Every table's rows, from the import's source rows. */
export function datasetRows(rows: SourceRow[], source: DatasetSource, model: Placed = things(rows)): Rows {
  const ceremonies = new Map<number, Value[]>();
  const categories = new Numbered();
  const films = new Numbered();
  const people = new Numbered();
  const out: Rows = {
    ceremonies: [],
    categories: [],
    nominations: [],
    films: [],
    people: [],
    nomination_films: [],
    nomination_people: [],
    meta: metaRows(source),
  };
  rows.forEach((row, i) => {
    const id = i + 1;
    const held = heldYear(row.ceremony);
    if (!ceremonies.has(row.ceremony)) ceremonies.set(row.ceremony, [row.ceremony, held, row.filmYear]);
    const canonical = row.canonical || row.category;
    const category = categories.id(row.category, () => [
      row.category,
      titleCaseCategory(row.category),
      canonical,
      titleCaseCategory(canonical),
      row.klass,
    ]);
    const n = row.nomination;
    out.nominations.push([
      id,
      row.ceremony,
      held,
      category,
      row.filmYear,
      n.won ? 1 : 0,
      orNull(row.name),
      orNull(row.detail.join('|')),
      orNull(row.note.join('|')),
      orNull(row.citation),
    ]);
    // Role in the API's sense: films are primary in film categories (and wherever nobody is named), people otherwise.
    const filmsPrimary = row.films.length > 0 && (row.klass === 'Title' || row.people.length === 0);
    // Films and names on their things (build/answers/things.ts): a name written without an id is the thing with one it was merged into.
    row.films.forEach((title, place) => {
      const imdb = model.rowFilms[i][place].id;
      const film = films.id(imdb ?? `${title}\u0000${row.filmYear}`, () => [imdb, title]);
      out.nomination_films.push([
        id,
        place + 1,
        film,
        filmsPrimary ? 'primary' : 'secondary',
        title,
        filmDetailAt(row, place),
      ]);
    });
    row.people.forEach((name, place) => {
      const placed = model.rowPeople[i][place];
      const imdb = placed.flatMap((t) => t.id ?? []).join(','); // a pseudonym's place: each of its ids
      const kind = placed[0].kind;
      const person = people.id(imdb || `${name}\u0000${kind}`, () => [orNull(imdb), name, kind]);
      out.nomination_people.push([
        id,
        place + 1,
        person,
        filmsPrimary ? 'secondary' : 'primary',
        name,
        personDetailAt(row, place),
      ]);
    });
  });
  out.ceremonies = [...ceremonies.values()];
  out.categories = categories.rows;
  out.films = films.rows;
  out.people = people.rows;
  return out;
}

/** One field as RFC 4180 writes it: quoted when it holds a quote, a comma or a line break. */
const csvField = (value: Value): string => {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** A table as RFC 4180 CSV: UTF-8, a header row, CRLF after every record. */
export function csv(table: Table, rows: Value[][]): string {
  const lines = [Object.keys(TABLES[table].columns), ...rows].map((row) => row.map(csvField).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** The SQLite file: every table, its indexes, a full-text table over names and titles, and the meta table. */
export function sqlite(rows: Rows): Uint8Array {
  const file = path.join(
    os.tmpdir(),
    `dataset-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}.sqlite`,
  );
  try {
    const db = new DatabaseSync(file);
    db.exec('PRAGMA page_size = 4096; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
    db.exec('BEGIN');
    for (const [table, { columns, ...rest }] of Object.entries(TABLES)) {
      const names = Object.keys(columns);
      const key = 'key' in rest ? rest.key : names[0];
      db.exec(
        `CREATE TABLE ${table} (${Object.entries(columns)
          .map(([c, type]) => `${c} ${type}`)
          .join(', ')}, PRIMARY KEY (${key}))${'key' in rest ? ' WITHOUT ROWID' : ''}`,
      );
      const insert = db.prepare(`INSERT INTO ${table} VALUES (${names.map(() => '?').join(', ')})`);
      for (const row of rows[table as Table]) insert.run(...row);
    }
    for (const index of INDEXES) db.exec(index);
    // Titles and names, searchable by word whatever their marks (`sirat`
    // finds Sirāt): films_fts and people_fts, rowid the row's id.
    for (const [table, column] of [
      ['films', 'title'],
      ['people', 'name'],
    ]) {
      // External content: the index only, the text stays in its table (rowid is the row's id).
      db.exec(
        `CREATE VIRTUAL TABLE ${table}_fts USING fts5(${column}, content = '${table}', content_rowid = 'id', columnsize = 0, tokenize = 'unicode61 remove_diacritics 2')`,
      );
      db.exec(`INSERT INTO ${table}_fts (${table}_fts) VALUES ('rebuild')`);
      db.exec(`INSERT INTO ${table}_fts (${table}_fts) VALUES ('optimize')`);
    }
    db.exec('COMMIT');
    db.exec('VACUUM');
    db.close();
    return readFileSync(file);
  } finally {
    rmSync(file, { force: true });
  }
}

/** An object without its null fields (most nominations have no note, detail or citation; many names no id). */
function withoutNulls<T extends Record<string, unknown>>(value: T): T {
  // Copied, not deleted from: an object something was deleted from is one V8 keeps as a dictionary, slower to stringify.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) if (value[key] !== null) out[key] = value[key];
  return out as T;
}

/**
 * One nomination a line and nothing else, in source order: its columns as the
 * nominations table names them, its category as the categories table's row,
 * its films and people as their link rows joined to their film or person
 * (`id` the film's or person's, `imdb_id`, `kind`). Fields the source leaves
 * empty are left out. The revision and licence are in the list, `meta.csv` and
 * the SQLite file's `meta` table, so every line has one shape (`wc -l` counts
 * the nominations).
 */
export function ndjson(rows: Rows): string {
  const byNomination = <T>(links: Value[][], make: (link: Value[]) => T) => {
    const map = new Map<number, T[]>();
    for (const link of links) {
      const list = map.get(link[0] as number) ?? [];
      list.push(make(link));
      map.set(link[0] as number, list);
    }
    return map;
  };
  const films = new Map(rows.films.map((f) => [f[0], f]));
  const people = new Map(rows.people.map((p) => [p[0], p]));
  const categories = new Map(
    rows.categories.map(([id, name, api_name, canonical, award, klass]) => [
      id,
      { id, name, api_name, canonical, award, class: klass },
    ]),
  );
  const filmLinks = byNomination(rows.nomination_films, ([, , film, role, title, detail]) =>
    withoutNulls({ id: film, imdb_id: films.get(film)![1], title, role, detail }),
  );
  const personLinks = byNomination(rows.nomination_people, ([, , person, role, name, detail]) =>
    withoutNulls({ id: person, imdb_id: people.get(person)![1], name, kind: people.get(person)![3], role, detail }),
  );
  const lines: string[] = [];
  for (const [id, ceremony, held_year, categoryId, film_year, won, name, detail, note, citation] of rows.nominations) {
    lines.push(
      JSON.stringify(
        withoutNulls({
          id,
          ceremony,
          held_year,
          film_year,
          category: categories.get(categoryId)!,
          won: won === 1,
          name,
          detail,
          note,
          citation,
          films: filmLinks.get(id as number) ?? [],
          people: personLinks.get(id as number) ?? [],
        }),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** One file of the dataset: its name (what `/dataset/file=` asks for), format and bytes. */
export interface DatasetFile {
  name: string;
  format: DatasetFormat;
  bytes: Uint8Array;
}

/** Every file of the dataset, in the order the list names them: the SQLite file, the NDJSON, then a CSV per table. */
export function datasetFiles(rows: SourceRow[], source: DatasetSource, model: Placed = things(rows)): DatasetFile[] {
  const tables = datasetRows(rows, source, model);
  const text = (s: string) => new TextEncoder().encode(s);
  return [
    { name: 'oscars.sqlite', format: 'sqlite', bytes: sqlite(tables) },
    { name: 'oscars.ndjson', format: 'ndjson', bytes: text(ndjson(tables)) },
    ...(Object.keys(TABLES) as Table[]).map((table) => ({
      name: `${table}.csv`,
      format: 'csv' as const,
      bytes: text(csv(table, tables[table])),
    })),
  ];
}

/**
 * The search index's stored files (src/shared/search.ts: storedFiles) as the
 * file of the dataset the offline client searches, listed last; its first line
 * the meta table's rows, as each file of the dataset carries them.
 */
export function searchFile(stored: string[], source: DatasetSource): DatasetFile {
  const about = { file: 'the search index (src/shared/search.ts)', ...Object.fromEntries(metaRows(source)) };
  return {
    name: SEARCH_DATASET_FILE,
    format: 'search',
    bytes: new TextEncoder().encode(searchDatasetText(stored, about)),
  };
}
