/**
 * The things the archive speaks of, told apart as the source allows: films,
 * people, companies and countries, each nomination's films and names placed
 * on them. Records (build/answers/records.ts) are made from it. Pure: the
 * import's rows in, things out.
 *
 * - One thing per IMDb id: `tt…` a film, `nm…` a person, `co…` a company,
 *   whatever column the id sits in.
 * - A name written without an id belongs to the thing of its kind and name
 *   that has one, where exactly one does (a film title to the one film id
 *   credited so; a Nominees name to the one person or company id credited
 *   so: the column is shared by people and companies, so the id says which).
 *   What was so merged is counted for the build's report.
 * - Countries are a kind of their own: the Name of an International Feature
 *   Film (or Foreign Language Film) nomination with no Nominees.
 * - Any other name without an id is a thing of its own, by its text: a film
 *   by its title and film year, a company where the Name column stands alone
 *   or its words name an organisation (`Inc.`, `Studio`, `Corporation`, ...),
 *   else a person.
 */
import { COUNTRY_AWARD, looksLikeOrganisation, type NominationIds, type SourceRow } from '../archive/import.ts';

export type Kind = 'film' | 'person' | 'company' | 'country';

/** A thing: the same object wherever it is credited (its credits, rows and counts are the records' to make). */
export interface Thing {
  kind: Kind;
  /** The IMDb id, or null when the source gives none. */
  id: string | null;
}

export interface Things {
  /** Every thing: those with an IMDb id in order of first appearance, then the others in theirs. */
  all: Thing[];
  /** Things with an IMDb id, by it. */
  byId: Map<string, Thing>;
  /** Per source row: the film at each place of its Film column. */
  rowFilms: Thing[][];
  /** Per source row: the things at each place of its people (a pseudonym's place holds several). */
  rowPeople: Thing[][][];
  /** Names without an id merged into the thing with one: distinct texts and the credits they carried. */
  merged: { films: number; names: number; credits: number };
}

/** The kind an IMDb id names: `tt…` a film, `co…` a company, any other a person. */
export const kindOfId = (id: string): Kind =>
  id.startsWith('tt') ? 'film' : id.startsWith('co') ? 'company' : 'person';

/** The ids at a place: one, or a pseudonym's several, comma-separated; none for ''. */
const idsAt = (place: string): string[] =>
  place === '' ? [] : place.split(',').filter((id) => id !== '' && id !== '?');

export function things(rows: SourceRow[]): Things {
  const all: Thing[] = [];
  const byId = new Map<string, Thing>();
  const byText = new Map<string, Thing>();
  const make = (kind: Kind, id: string | null): Thing => {
    const thing: Thing = { kind, id };
    all.push(thing);
    return thing;
  };
  // Pass 1: the things with ids, and which ids each text is credited with.
  const titleIds = new Map<string, Set<string>>();
  const nameIds = new Map<string, Set<string>>();
  const note = (map: Map<string, Set<string>>, text: string, id: string) => {
    let ids = map.get(text);
    if (!ids) map.set(text, (ids = new Set()));
    ids.add(id);
  };
  for (const row of rows) {
    row.films.forEach((title, place) => {
      const id = row.filmIds[place];
      if (!id) return;
      if (!byId.has(id)) byId.set(id, make('film', id));
      note(titleIds, title, id);
    });
    row.people.forEach((name, place) => {
      for (const id of idsAt(row.peopleIds[place])) {
        if (!byId.has(id)) byId.set(id, make(kindOfId(id), id));
        note(nameIds, name, id);
      }
    });
  }
  // Pass 2: every place on its thing.
  const merged = { films: new Set<string>(), names: new Set<string>(), credits: 0 };
  const unnamed = (key: string, kind: Kind) => {
    let thing = byText.get(key);
    if (!thing) byText.set(key, (thing = make(kind, null)));
    return thing;
  };
  const rowFilms: Thing[][] = [];
  const rowPeople: Thing[][][] = [];
  for (const row of rows) {
    rowFilms.push(
      row.films.map((title, place) => {
        const id = row.filmIds[place];
        let thing: Thing;
        if (id) thing = byId.get(id)!;
        else {
          const ids = titleIds.get(title);
          if (ids?.size === 1) {
            thing = byId.get([...ids][0])!;
            merged.films.add(title);
            merged.credits++;
          } else thing = unnamed(`film\u0000${title}\u0000${row.filmYear}`, 'film');
        }
        return thing;
      }),
    );
    rowPeople.push(
      row.people.map((name, place) => {
        const ids = idsAt(row.peopleIds[place]);
        let placed: Thing[];
        if (ids.length > 0) placed = ids.map((id) => byId.get(id)!);
        else if (row.nameAlone && row.canonical === COUNTRY_AWARD)
          placed = [unnamed(`country\u0000${name}`, 'country')];
        else {
          const known = nameIds.get(name);
          if (known?.size === 1) {
            placed = [byId.get([...known][0])!];
            merged.names.add(name);
            merged.credits++;
          } else {
            const kind: Kind = row.nameAlone || looksLikeOrganisation(name) ? 'company' : 'person';
            placed = [unnamed(`${kind}\u0000${name}`, kind)];
          }
        }
        return placed;
      }),
    );
  }
  return {
    all,
    byId,
    rowFilms,
    rowPeople,
    merged: { films: merged.films.size, names: merged.names.size, credits: merged.credits },
  };
}

/** Each nomination's IMDb ids as its things give them (a name written without an id, once merged, gives its thing's): what the lookups by id, search and the dataset count alike. */
export function nominationIds(rows: SourceRow[], model: Things = things(rows)): NominationIds {
  const out: NominationIds = new Map();
  rows.forEach((row, r) => {
    const ids = new Set<string>();
    for (const thing of [...model.rowFilms[r], ...model.rowPeople[r].flat()]) if (thing.id !== null) ids.add(thing.id);
    if (ids.size > 0) out.set(row.nomination, [...ids]);
  });
  return out;
}
