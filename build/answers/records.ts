/**
 * The records: everything the archive knows of a film, a person or company,
 * a ceremony and an award, by its id (docs/records.md), made from the things
 * (build/answers/things.ts). Each is an answer like any other, stored by
 * build/answers/artifacts.ts. Pure: the import's rows in, record texts out.
 *
 * What counts, written once (and in docs/records.md): a nomination counts
 * once for every thing it names (a nomination shared by three producers
 * counts for each of them; a thing named twice in one nomination counts it
 * once), and a win is a nomination that won. Ranks are among the things of
 * the same kind (film, person, company) that have a record; within a class
 * or an award, among those nominated in it; ties share a rank (1, 2, 2, 4).
 */
import { heldYear, type SourceRow } from '../archive/import.ts';
import { titleCaseCategory } from '../../src/shared/category-name.ts';
import type {
  AwardName, AwardRecord, AwardSummary, CeremonyCategory, CeremonyRecord, FilmRecord, PeopleRecord, Ranks, RecordFilm, RecordName, RecordNomination, Standing,
} from '../../src/shared/types.ts';
import { creditsLatestFirst, knownAs, type Kind, type Thing, type Things, things as thingsOf } from './things.ts';

/** CanonicalCategory of the song awards, whose Detail is the song's title. */
const SONG_AWARD = 'MUSIC (Original Song)';

/** An award's id: its canonical name in lower-case words joined by `-` (`MUSIC (Original Song)` is `music-original-song`). */
export const awardId = (canonical: string): string => canonical.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');

/** A credit's detail: the value at its place when the values and the places line up; else the only one, or all of them for a lone place. */
function detailAt(detail: string[], count: number, place: number): string | undefined {
  if (detail.length === count) return detail[place];
  if (detail.length === 1 || (count === 1 && detail.length > 0)) return detail.join('|');
  return undefined;
}

/** Record keys as the record index names them. */
export const recordKey = {
  ceremony: (year: string) => `ceremony ${year}`,
  award: (id: string) => `award ${id}`,
};

export interface Records {
  /** Each record's text by its key (an IMDb id, `ceremony {year}`, `award {id}`), and in which group it is stored. */
  records: { key: string; text: string; group: 'thing' | 'ceremony' | 'award' }[];
  /** The award list's text (AwardSummary[]). */
  awards: string;
  /** What the build reports. */
  stats: { films: number; people: number; companies: number; countries: number; merged: Things['merged'] };
}

/** Competition ranks (1, 2, 2, 4) of `values`, highest first: the rank of a value. */
function ranker(values: number[]): (value: number) => number {
  const sorted = [...values].sort((a, b) => b - a);
  const first = new Map<number, number>();
  sorted.forEach((v, i) => {
    if (!first.has(v)) first.set(v, i + 1);
  });
  return (value) => first.get(value)!;
}

interface Tally {
  nominations: number;
  wins: number;
}

const add = (map: Map<string, Tally>, key: string, won: boolean) => {
  let t = map.get(key);
  if (!t) map.set(key, (t = { nominations: 0, wins: 0 }));
  t.nominations++;
  if (won) t.wins++;
};

/** The text of a record: its fields, then its entries (the nominations' texts, made once each). */
const withEntries = (head: object, entries: string[]) => `${JSON.stringify(head).slice(0, -1)},"entries":[${entries.join(',')}]}`;

export function records(rows: SourceRow[]): Records {
  const model = thingsOf(rows);
  const held = rows.map((row) => String(heldYear(row.ceremony)));
  const awardOf = rows.map((row) => awardId(row.canonical || row.category));

  // Archive order: held year, ceremony, each ceremony's categories in order of first appearance, rows in source order.
  const categoryPlace = new Map<string, number>();
  rows.forEach((row) => {
    const key = `${row.ceremony}\u0000${row.category}`;
    if (!categoryPlace.has(key)) categoryPlace.set(key, categoryPlace.size);
  });
  const placeOf = rows.map((row) => categoryPlace.get(`${row.ceremony}\u0000${row.category}`)!);
  const order = rows.map((_, i) => i).sort((a, b) => rows[a].ceremony - rows[b].ceremony || placeOf[a] - placeOf[b] || a - b);
  const position = new Array<number>(rows.length);
  order.forEach((r, i) => (position[r] = i));

  // Every nomination's text, once.
  const entry = rows.map((row, r): string => {
    const filmsPrimary = row.films.length > 0 && (row.klass === 'Title' || row.people.length === 0);
    const detailKey = row.klass === 'Acting' ? 'character' : row.canonical === SONG_AWARD ? 'song' : 'detail';
    const films: RecordFilm[] = row.films.map((title, place) => {
      const thing = model.rowFilms[r][place];
      return { id: thing.id, title, filmYear: thing.filmYear };
    });
    const people: RecordName[] = [];
    row.people.forEach((name, place) => {
      const detail = detailAt(row.detail, row.people.length, place);
      for (const thing of model.rowPeople[r][place]) {
        people.push({ id: thing.id, name, kind: thing.kind as RecordName['kind'], role: filmsPrimary ? 'secondary' : 'primary', ...(detail === undefined ? {} : { [detailKey]: detail }) });
      }
    });
    const nomination: RecordNomination = {
      year: held[r], ceremony: row.ceremony, filmYear: row.filmYear, category: titleCaseCategory(row.category), award: awardOf[r], class: row.klass,
      won: row.nomination.won, films, people,
      ...(row.note.length > 0 ? { notes: row.note } : {}),
      ...(row.citation !== '' ? { citation: row.citation } : {}),
    };
    return JSON.stringify(nomination);
  });
  const entriesOf = (rs: number[]) => [...rs].sort((a, b) => position[a] - position[b]).map((r) => entry[r]);

  // Awards: names, spans, classes.
  interface Award { id: string; name: string; klass: string; rows: number[]; names: Map<string, AwardName> }
  const awards = new Map<string, Award>();
  for (const r of order) {
    const row = rows[r];
    let award = awards.get(awardOf[r]);
    if (!award) awards.set(awardOf[r], (award = { id: awardOf[r], name: titleCaseCategory(row.canonical || row.category), klass: row.klass, rows: [], names: new Map() }));
    award.rows.push(r);
    const name = titleCaseCategory(row.category);
    const span = award.names.get(name);
    if (!span) award.names.set(name, { name, firstYear: held[r], lastYear: held[r] });
    else span.lastYear = held[r];
  }
  const awardName = (id: string) => awards.get(id)!.name;

  // Ranks, among the things with a record, by kind.
  const recorded = model.all.filter((t) => t.id !== null);
  const tallies = new Map<Thing, { overall: Tally; classes: Map<string, Tally>; awards: Map<string, Tally> }>();
  for (const thing of recorded) {
    const t = { overall: { nominations: 0, wins: 0 }, classes: new Map<string, Tally>(), awards: new Map<string, Tally>() };
    for (const r of thing.rows) {
      const won = rows[r].nomination.won;
      t.overall.nominations++;
      if (won) t.overall.wins++;
      add(t.classes, rows[r].klass, won);
      add(t.awards, awardOf[r], won);
    }
    tallies.set(thing, t);
  }
  type Rankers = Map<string, { nominations: (v: number) => number; wins: (v: number) => number }>;
  const rankers = new Map<Kind, { overall: Rankers; classes: Rankers; awards: Rankers }>();
  for (const kind of ['film', 'person', 'company'] as const) {
    const pool = recorded.filter((t) => t.kind === kind).map((t) => tallies.get(t)!);
    const of = (pick: (t: (typeof pool)[number]) => Map<string, Tally>): Rankers => {
      const values = new Map<string, Tally[]>();
      for (const t of pool) {
        for (const [k, v] of pick(t)) {
          const list = values.get(k);
          if (list) list.push(v);
          else values.set(k, [v]);
        }
      }
      return new Map([...values].map(([k, vs]) => [k, { nominations: ranker(vs.map((v) => v.nominations)), wins: ranker(vs.map((v) => v.wins)) }]));
    };
    rankers.set(kind, { overall: of((t) => new Map([['', t.overall]])), classes: of((t) => t.classes), awards: of((t) => t.awards) });
  }
  const standing = (r: Rankers, key: string, t: Tally): Standing => ({ nominations: t.nominations, wins: t.wins, byNominations: r.get(key)!.nominations(t.nominations), byWins: r.get(key)!.wins(t.wins) });
  const byCount = <T extends Standing>(list: T[]) => list.sort((a, b) => b.nominations - a.nominations || b.wins - a.wins);
  const ranksOf = (thing: Thing): Ranks => {
    const t = tallies.get(thing)!;
    const r = rankers.get(thing.kind)!;
    return {
      overall: standing(r.overall, '', t.overall),
      classes: byCount([...t.classes].map(([klass, v]) => ({ class: klass, ...standing(r.classes, klass, v) }))),
      awards: byCount([...t.awards].map(([award, v]) => ({ award, name: awardName(award), ...standing(r.awards, award, v) }))),
    };
  };
  const credits = (thing: Thing) => creditsLatestFirst(thing).map((c) => ({ name: c.name, firstYear: String(c.first), lastYear: String(c.last), nominations: c.nominations }));

  const out: Records['records'] = [];
  // In order of their first nomination, so that records sharing nominations lie near each other where they are stored (their packs compress about a third better).
  const firstAt = (thing: Thing) => Math.min(...thing.rows.map((r) => position[r]));
  const byFirst = recorded.map((thing) => [firstAt(thing), thing] as const).sort((a, b) => a[0] - b[0]).map(([, thing]) => thing);
  for (const thing of byFirst) {
    const rs = [...thing.rows].sort((a, b) => position[a] - position[b]);
    const t = tallies.get(thing)!.overall;
    if (thing.kind === 'film') {
      const ceremonies: FilmRecord['ceremonies'] = [];
      for (const r of rs) if (ceremonies[ceremonies.length - 1]?.ceremony !== rows[r].ceremony) ceremonies.push({ year: held[r], ceremony: rows[r].ceremony });
      const head: Omit<FilmRecord, 'entries'> = { id: thing.id!, title: knownAs(thing).name, titles: credits(thing), filmYear: thing.filmYear, ceremonies, nominations: t.nominations, wins: t.wins, ranks: ranksOf(thing) };
      out.push({ key: thing.id!, text: withEntries(head, entriesOf(rs)), group: 'thing' });
    } else {
      const [first, last] = [rs[0], rs[rs.length - 1]];
      const head: Omit<PeopleRecord, 'entries'> = {
        id: thing.id!, kind: thing.kind as PeopleRecord['kind'], name: knownAs(thing).name, names: credits(thing), nominations: t.nominations, wins: t.wins,
        first: { year: held[first], ceremony: rows[first].ceremony }, last: { year: held[last], ceremony: rows[last].ceremony }, ranks: ranksOf(thing),
      };
      out.push({ key: thing.id!, text: withEntries(head, entriesOf(rs)), group: 'thing' });
    }
  }

  // Ceremonies, by held year.
  const years = new Map<string, number[]>();
  for (const r of order) {
    const list = years.get(held[r]);
    if (list) list.push(r);
    else years.set(held[r], [r]);
  }
  for (const [year, rs] of years) {
    const ceremonies: CeremonyRecord['ceremonies'] = [];
    const categories: CeremonyCategory[] = [];
    for (const r of rs) {
      const row = rows[r];
      if (ceremonies[ceremonies.length - 1]?.ceremony !== row.ceremony) ceremonies.push({ ceremony: row.ceremony, filmYear: row.filmYear });
      const name = titleCaseCategory(row.category);
      let c = categories[categories.length - 1];
      if (!c || c.ceremony !== row.ceremony || c.category !== name) categories.push((c = { ceremony: row.ceremony, category: name, award: awardOf[r], class: row.klass, nominations: 0, wins: 0 }));
      c.nominations++;
      if (row.nomination.won) c.wins++;
    }
    const head: Omit<CeremonyRecord, 'entries'> = { year, ceremonies, categories, nominations: rs.length, wins: rs.filter((r) => rows[r].nomination.won).length };
    out.push({ key: recordKey.ceremony(year), text: withEntries(head, rs.map((r) => entry[r])), group: 'ceremony' });
  }

  // Awards, and their list.
  const list: AwardSummary[] = [];
  for (const award of awards.values()) {
    const summary: AwardSummary = {
      id: award.id, name: award.name, class: award.klass, names: [...award.names.values()],
      nominations: award.rows.length, wins: award.rows.filter((r) => rows[r].nomination.won).length,
      firstYear: held[award.rows[0]], lastYear: held[award.rows[award.rows.length - 1]], path: `/awards/id=${award.id}`,
    };
    list.push(summary);
    out.push({ key: recordKey.award(award.id), text: withEntries(summary satisfies Omit<AwardRecord, 'entries'>, award.rows.map((r) => entry[r])), group: 'award' });
  }

  const count = (kind: Kind) => recorded.filter((t) => t.kind === kind).length;
  return {
    records: out,
    awards: JSON.stringify(list),
    stats: { films: count('film'), people: count('person'), companies: count('company'), countries: model.all.filter((t) => t.kind === 'country').length, merged: model.merged },
  };
}
