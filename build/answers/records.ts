/**
 * The records: everything the archive knows of a film, a person or company,
 * a ceremony and an award, by its id (docs/records.md). The source's rows,
 * each film and name placed on its thing (build/answers/things.ts), go
 * through the one record maker the offline client runs too (makeRecords in
 * src/client/client.ts), so that its records are the service's byte for
 * byte. Each record is an answer like any other, stored by
 * build/answers/artifacts.ts. Pure: the import's rows in, record texts out.
 */
import { heldYear, type SourceRow } from '../archive/import.ts';
import { titleCaseCategory } from '../../src/shared/category-name.ts';
import { makeRecords, type MadeRecords, type RecordRow, type RecordThing } from '../../src/client/client.ts';
import { filmDetailAt, personDetailAt } from './dataset.ts';
import { things as thingsOf, type Thing, type Things } from './things.ts';
import { rankingRecords } from './rankings.ts';
import type { ThingsApart } from './apart.ts';

export interface Records extends MadeRecords {
  /** What the build reports. */
  stats: {
    films: number;
    people: number;
    companies: number;
    countries: number;
    merged: Things['merged'];
    rankings: number;
  };
}

export function records(rows: SourceRow[], model: ThingsApart = thingsOf(rows)): Records {
  // One record thing per thing, the same object wherever it is credited.
  const of = new Map<Thing, RecordThing>(model.all.map((t) => [t, { kind: t.kind, id: t.id }]));
  const recordRows = rows.map((row, r): RecordRow => ({
    ceremony: row.ceremony,
    year: String(heldYear(row.ceremony)),
    filmYear: row.filmYear,
    category: titleCaseCategory(row.category),
    canonical: row.canonical || row.category,
    award: titleCaseCategory(row.canonical || row.category),
    klass: row.klass,
    won: row.nomination.won,
    filmsPrimary: row.films.length > 0 && (row.klass === 'Title' || row.people.length === 0),
    films: row.films.map((title, place) => {
      const detail = filmDetailAt(row, place);
      return { title, thing: of.get(model.rowFilms[r][place])!, ...(detail === null ? {} : { detail }) };
    }),
    people: row.people.map((name, place) => {
      const detail = personDetailAt(row, place);
      return { name, things: model.rowPeople[r][place].map((t) => of.get(t)!), ...(detail === null ? {} : { detail }) };
    }),
    notes: row.note,
    citation: row.citation,
  }));
  const count = (kind: Thing['kind']) => model.all.filter((t) => t.kind === kind && t.id !== null).length;
  const made = makeRecords(recordRows);
  // The rankings over all years are stored with the records, and so read as a record is (their table is a file of its own).
  const rankings = rankingRecords(made.rankings);
  return {
    ...made,
    records: [...made.records, ...rankings],
    stats: {
      films: count('film'),
      people: count('person'),
      companies: count('company'),
      countries: model.all.filter((t) => t.kind === 'country').length,
      merged: model.merged,
      rankings: rankings.length,
    },
  };
}
