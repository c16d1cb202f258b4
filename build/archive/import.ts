/**
 * Reads the Academy Awards source (tab-separated, see shared/data/README.md)
 * into the API's archive shape. Pure: text in, archive out, or an ImportError
 * that names the line and the reason. Nothing here touches the file system.
 */
import heldYears from '../../data/held-years.json' with { type: 'json' };
import { titleCaseCategory } from '../../src/shared/category-name.ts';
import type { Archive, Category, Nomination } from '../../src/shared/types.ts';
import { ID_FORMS } from '../../src/shared/routes.ts';

export const COLUMNS = [
  'Ceremony',
  'Year',
  'Class',
  'CanonicalCategory',
  'Category',
  'Film',
  'FilmId',
  'Name',
  'Nominees',
  'NomineeIds',
  'Winner',
  'Detail',
  'Note',
  'Citation',
] as const;
type Column = (typeof COLUMNS)[number];

/** Fewest fields a line may have: trailing empty columns after Name are often omitted. */
export const MIN_FIELDS = 8;

export const CLASSES = new Set([
  'Title',
  'Acting',
  'Directing',
  'Writing',
  'Music',
  'Production',
  'SciTech',
  'Special',
]);

/** Classes whose nominations honour a film: primary is the film, secondary the people. */
const FILM_CLASSES = new Set(['Title']);

/** CanonicalCategory of the song categories, whose Detail is the song title. */
const SONG_CANONICAL = 'MUSIC (Original Song)';

export class ImportError extends Error {
  readonly line: number;
  readonly reason: string;

  constructor(line: number, reason: string) {
    super(line > 0 ? `source line ${line}: ${reason}` : `source: ${reason}`);
    this.name = 'ImportError';
    this.line = line;
    this.reason = reason;
  }
}

/** The year a ceremony was held, from data/held-years.json. */
export function heldYear(ceremony: number): number {
  const exception = (heldYears.exceptions as Record<string, number>)[String(ceremony)];
  return exception ?? ceremony + heldYears.offset;
}

export interface ImportStats {
  /** Source rows read (one nomination each). */
  rows: number;
  /** Ceremonies seen. */
  ceremonies: number;
  /** Fields read from the source that the API shape does not carry, with how many rows held one. */
  notCarried: Record<string, number>;
}

/**
 * The IMDb ids each nomination's source row carries (FilmId, then NomineeIds), each once; absent when it carries none.
 */
export type NominationIds = Map<Nomination, string[]>;

/** What kind of name a served name is, by the source's IMDb ids and its columns (see `NameFacts`). */
export type NameKind = 'person' | 'company' | 'country' | 'film';

/**
 * The canonical category whose nominations without Nominees name a
 * country (International Feature Film, once Foreign Language Film).
 */
export const COUNTRY_AWARD = 'INTERNATIONAL FEATURE FILM';

/** Words that make a name without an id an organisation's rather than a person's (docs/records.md). */
const ORGANISATION =
  /\b(?:studios?|inc|incorporated|corp|corporation|company|co|ltd|limited|laborator(?:y|ies)|labs?|pictures|department|society|productions?|association|institute|llc|gmbh|manufacturing|engineering|research|technolog(?:y|ies)|systems|electric|products|films|industries|division|bureau|ministry|government|governments|agency|office|unit|army|navy|corps|centre|center|committee|cooperative|foundation|fund|guild|service|information)\b/i;

/** Whether a name without an id reads as an organisation's. */
export const looksLikeOrganisation = (name: string): boolean => ORGANISATION.test(name);

/**
 * What the source says of the names the archive serves, beyond the archive:
 * for each name, how often it stands beside each kind of IMDb id (`nm` a
 * person, `co` a company, `tt` a film) or, with no id, in which column (the
 * Film column: a film; Nominees: a person; the Name column standing alone,
 * such as a country for International Feature Film: a company); the
 * canonical category (the award) of each full category name; and what search
 * tells apart by IMDb id (a film, person or company that shares its name
 * with another is a result of its own).
 */
export interface NameFacts {
  kinds: Map<string, Record<NameKind, number>>;
  /** Full category name (as served) to its award's name (CanonicalCategory, cased as served names are). */
  awards: Map<string, string>;
  /** Each IMDb id: the served names standing at its place, with how often. */
  idNames: Map<string, Map<string, number>>;
  /**
   * The source's Year column (the film's year) of the first nomination
   * of each film id, and of each film name served without an id.
   */
  filmYears: Map<string, string>;
  /** Served names that stand at least once where the source gives no id: search keeps them as names. */
  unidentified: Set<string>;
}

/** Facts of an archive the source said nothing more about. */
export const noFacts = (): NameFacts => ({
  kinds: new Map(),
  awards: new Map(),
  idNames: new Map(),
  filmYears: new Map(),
  unidentified: new Set(),
});

export interface ImportResult {
  archive: Archive;
  stats: ImportStats;
  ids: NominationIds;
  facts: NameFacts;
  /** Every source row with all its fields, in source order: what the dataset (build/answers/dataset.ts) is made of. */
  rows: SourceRow[];
}

/** One source row, every field read (quotes unescaped), beside the nomination the API serves for it. */
export interface SourceRow {
  ceremony: number;
  /** The Year column: the film year as the source writes it (`1927/28`, `2025`). */
  filmYear: string;
  klass: string;
  /** CanonicalCategory and Category as the source writes them. */
  canonical: string;
  category: string;
  /** Film values and, at each place, its id (`tt…`), or '' where the source has none. */
  films: string[];
  filmIds: string[];
  /** The Academy's display text (the Name column). */
  name: string;
  /**
   * The people (Nominees, else Name standing alone) and, at each place,
   * their id text ('' for none; a pseudonym's several ids comma-separated).
   */
  people: string[];
  peopleIds: string[];
  /** Whether `people` is the Name column standing alone (no Nominees): a company, a country. */
  nameAlone: boolean;
  detail: string[];
  note: string[];
  citation: string;
  nomination: Nomination;
}

/** `\"` is the source's escape for a plain double quote. */
const unescape = (value: string): string => value.replaceAll('\\"', '"');

/** Splits a `|`-separated multi-value, dropping empty parts (they hold nothing). */
const values = (value: string): string[] => (value === '' ? [] : value.split('|').filter((v) => v !== ''));

/** The source's stand-in for a film or nominee it has no IMDb id for: a place kept, not an id. */
const NO_ID = '?';

/**
 * The ids of one id column. A value is usually one id, aligned with the
 * Film or Nominees value at its place; a pseudonym standing for several
 * people holds several, comma-separated (`Roderick Jaynes` is
 * `nm0001053,nm0001054`, the Coen brothers). Anything that is neither an id of
 * the column's form nor a placeholder stops the build, naming it.
 */
function idsOf(column: 'FilmId' | 'NomineeIds', text: string, line: number): string[] {
  const form = ID_FORMS[column === 'FilmId' ? 'titleById' : 'nameById'];
  const ids: string[] = [];
  for (const id of values(text).flatMap((v) => v.split(','))) {
    if (id === NO_ID) continue;
    if (!form.test(id))
      throw new ImportError(
        line,
        `${column} holds ${JSON.stringify(id)}, which is neither ${form.expected} nor the placeholder "?"`,
      );
    ids.push(id);
  }
  return ids;
}

/**
 * The source's lines (ending in \n, or \r\n), each cut at its tabs. No field
 * is quoted (`"` is written \" and handled below) and none holds a tab or a
 * line break, so that is the whole format. A CSV parser did this before, in
 * 0.27 s rather than 0.01: told to take lines of 8 to 14 fields, it still
 * made an error object, with a deep copy of the line, for each of the 10,674
 * lines shorter than the header.
 */
function fieldsOf(text: string): string[][] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop(); // the break ending the last line
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line).split('\t'));
}

export function importArchive(text: string): ImportResult {
  if (text.length === 0) throw new ImportError(0, 'the source is empty');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);

  const records = fieldsOf(text);
  const header = records[0] ?? [];
  if (header.join('\t') !== COLUMNS.join('\t')) {
    throw new ImportError(
      1,
      `header must be the ${COLUMNS.length} columns ${COLUMNS.join(', ')}; found ${header.join(', ') || 'nothing'}`,
    );
  }
  const lastLine = text.split('\n').length; // a complete file ends in \n, so its last "line" is empty
  if (!text.endsWith('\n')) {
    throw new ImportError(
      lastLine,
      'truncated: the file does not end with a line break, so its last row may be cut off',
    );
  }

  // Groups keyed by ceremony then category, in order of first appearance.
  const ceremonies = new Map<number, Map<string, Category>>();
  const notCarried: Record<string, number> = {};
  const ids: NominationIds = new Map();
  const facts = noFacts();
  const seen = (name: string, kind: NameKind) => {
    let counts = facts.kinds.get(name);
    if (!counts) facts.kinds.set(name, (counts = { person: 0, company: 0, country: 0, film: 0 }));
    counts[kind]++;
  };
  /** A served name at a place with these ids (none: the source gives it no id there). */
  const placed = (name: string, placeIds: string[], filmYear?: string) => {
    const known = placeIds.filter((id) => id !== '' && id !== NO_ID);
    if (known.length === 0) facts.unidentified.add(name);
    for (const id of known) {
      let names = facts.idNames.get(id);
      if (!names) facts.idNames.set(id, (names = new Map()));
      names.set(name, (names.get(name) ?? 0) + 1);
    }
    if (filmYear !== undefined)
      for (const key of known.length > 0 ? known : [name])
        if (!facts.filmYears.has(key)) facts.filmYears.set(key, filmYear);
  };
  let rows = 0;
  const sourceRows: SourceRow[] = [];

  for (let i = 1; i < records.length; i++) {
    const record = records[i];
    const line = i + 1;
    if (record.length === 1 && record[0] === '') {
      throw new ImportError(line, 'empty line inside the data');
    }
    if (record.length < MIN_FIELDS || record.length > COLUMNS.length) {
      throw new ImportError(
        line,
        `expected ${MIN_FIELDS} to ${COLUMNS.length} tab-separated fields, found ${record.length}`,
      );
    }
    const field = (name: Column): string => unescape(record[COLUMNS.indexOf(name)] ?? '');

    const ceremonyText = field('Ceremony');
    if (!/^[1-9][0-9]{0,3}$/.test(ceremonyText)) {
      throw new ImportError(line, `Ceremony must be a positive whole number, found ${JSON.stringify(ceremonyText)}`);
    }
    const ceremony = Number(ceremonyText);
    const klass = field('Class');
    if (!CLASSES.has(klass)) {
      throw new ImportError(
        line,
        `unknown Class ${JSON.stringify(klass)} (expected one of ${[...CLASSES].join(', ')})`,
      );
    }
    const rawCategory = field('Category');
    if (rawCategory.trim() === '') throw new ImportError(line, 'Category is empty');
    const winner = field('Winner');
    if (winner !== '' && winner !== 'True') {
      throw new ImportError(line, `Winner must be "True" or empty, found ${JSON.stringify(winner)}`);
    }

    const films = values(field('Film'));
    const name = field('Name');
    const individuals = values(field('Nominees'));
    const people = individuals.length > 0 ? individuals : name !== '' ? [name] : [];
    let primary = FILM_CLASSES.has(klass) ? films : people;
    let secondary = FILM_CLASSES.has(klass) ? people : films;
    if (primary.length === 0) [primary, secondary] = [secondary, []];

    const notes: string[] = [];
    const detail = field('Detail');
    if (field('CanonicalCategory') === SONG_CANONICAL && detail !== '') notes.push(`Song: "${detail}"`);
    else if (detail !== '') notCarried.Detail = (notCarried.Detail ?? 0) + 1;
    const citation = field('Citation');
    if (citation !== '') notes.push(citation);
    notes.push(...values(field('Note')));

    const nomination: Nomination = { primary, secondary, won: winner === 'True' };
    if (notes.length > 0) nomination.notes = notes.join('\n');
    const carried = new Set([
      ...idsOf('FilmId', field('FilmId'), line),
      ...idsOf('NomineeIds', field('NomineeIds'), line),
    ]);
    const filmIds = field('FilmId').split('|');
    films.forEach((film, i) => {
      seen(film, 'film');
      placed(film, (filmIds[i] ?? '').split(','), field('Year'));
    });
    // Nominees and their ids share places (a pseudonym's place holds
    // several ids, all of one kind); the Name column alone takes a lone id.
    const nomineeIds = values(field('NomineeIds'));
    people.forEach((person, i) => {
      const place = individuals.length > 0 || nomineeIds.length === 1 ? (nomineeIds[i] ?? '') : '';
      const id = place.split(',')[0];
      // Without an id, as build/answers/things.ts tells them apart:
      // a country, an organisation by its words, else a person.
      const loose =
        individuals.length === 0
          ? field('CanonicalCategory') === COUNTRY_AWARD
            ? 'country'
            : 'company'
          : looksLikeOrganisation(person)
            ? 'company'
            : 'person';
      seen(person, id.startsWith('nm') ? 'person' : id.startsWith('co') ? 'company' : loose);
      placed(person, place.split(','));
    });
    if (carried.size > 0) ids.set(nomination, [...carried]);
    const placeId = (id: string | undefined) => (id === undefined || id === NO_ID ? '' : id);
    const sourceFilmIds = values(field('FilmId'));
    sourceRows.push({
      ceremony,
      filmYear: field('Year'),
      klass,
      canonical: field('CanonicalCategory'),
      category: rawCategory,
      films,
      filmIds: films.map((_, i) => placeId(sourceFilmIds[i])),
      name,
      people,
      peopleIds: people.map((_, i) =>
        placeId(individuals.length > 0 || nomineeIds.length === 1 ? nomineeIds[i] : undefined),
      ),
      nameAlone: individuals.length === 0 && people.length > 0,
      detail: values(detail),
      note: values(field('Note')),
      citation,
      nomination,
    });

    let categories = ceremonies.get(ceremony);
    if (!categories) ceremonies.set(ceremony, (categories = new Map()));
    const category = titleCaseCategory(rawCategory);
    if (!facts.awards.has(category))
      facts.awards.set(category, titleCaseCategory(field('CanonicalCategory') || rawCategory));
    let group = categories.get(category);
    if (!group) categories.set(category, (group = { category, nominations: [] }));
    group.nominations.push(nomination);
    rows++;
  }
  if (rows === 0) throw new ImportError(0, 'the source has a header but no rows');

  const archive: Archive = {};
  for (const ceremony of [...ceremonies.keys()].sort((a, b) => a - b)) {
    const year = String(heldYear(ceremony));
    (archive[year] ??= []).push(...ceremonies.get(ceremony)!.values());
  }
  return {
    archive: sortedByYear(archive),
    stats: { rows, ceremonies: ceremonies.size, notCarried },
    ids,
    facts,
    rows: sourceRows,
  };
}

/** Object keys that look like integers are ordered numerically by JS anyway; this makes it explicit. */
function sortedByYear(archive: Archive): Archive {
  const sorted: Archive = {};
  for (const year of Object.keys(archive).sort((a, b) => Number(a) - Number(b))) sorted[year] = archive[year];
  return sorted;
}
