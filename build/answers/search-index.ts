/**
 * What search and the category list read, made from the archive the build
 * serves: every film, person and company (one entry per IMDb id the source
 * gives, named as it is most often beside it; a name standing somewhere
 * without an id is an entry of its own, as the person lookup answers it)
 * with the count of nominations and wins its lookup answers and its first
 * and last year, and every full category name (with what the category lookup
 * across years answers for it: every category whose name contains it, and
 * the names people give its award). Also the list of every category name
 * with its years and its award. Pure: archive in, JSON out.
 */
import {
  COMMON_CANDIDATES,
  indexKey,
  KIND_CODES,
  Lines,
  SEARCH_KEY_CHARACTERS,
  SearchIndex,
  searchKey,
  type SearchKind,
  SMALL,
  type StoredSearchIndex,
  storedFiles,
} from '../../src/shared/search.ts';
import type { Archive } from '../../src/shared/types.ts';
import type { NameFacts, NameKind, NominationIds } from '../archive/import.ts';
import { awardIdOf } from '../../src/client/client.ts';
import { recordPath } from '../../src/shared/routes.ts';
import { kindOfId } from './things.ts';
import { shortForms } from './search-aliases.ts';

interface Tally {
  nominations: number;
  wins: number;
  first: string;
  last: string;
}

const tallied = (t: Tally | undefined, year: string, won: boolean): Tally =>
  t
    ? { nominations: t.nominations + 1, wins: t.wins + (won ? 1 : 0), first: t.first, last: year }
    : { nominations: 1, wins: won ? 1 : 0, first: year, last: year };

/** A name's kind: the kind it stands for most often in the source (a film, then a person, on a tie). */
function kindOf(counts: Record<NameKind, number> | undefined): NameKind {
  if (!counts) return 'person';
  return (['film', 'person', 'company', 'country'] as const).reduce(
    (best, kind) => (counts[kind] > counts[best] ? kind : best),
    'film',
  );
}

/** Tallies together: counts added, the earliest first year and the latest last year (years are four digits, so they compare as text). */
const combined = (a: Tally, b: Tally): Tally => ({
  nominations: a.nominations + b.nominations,
  wins: a.wins + b.wins,
  first: a.first < b.first ? a.first : b.first,
  last: a.last > b.last ? a.last : b.last,
});

/**
 * The names people give an award, from each of its full names: the name
 * with its parenthesis read both ways ("Music (Original Song)": "original
 * song music", "music original song"), without "in a Leading Role", with
 * "supporting" first for "in a Supporting Role", "director" for Directing,
 * "film" for "feature film",
 * and each of these after "best" ("best original song", "best actress").
 */
export function awardAliases(names: string[]): string[] {
  const forms = new Set<string>();
  for (const name of names) {
    const key = searchKey(name);
    const parts = /^(.*?) \((.*)\)$/.exec(name);
    const plain = [key];
    if (parts) {
      const [base, inner] = [searchKey(parts[1]), searchKey(parts[2])];
      plain.push(`${inner} ${base}`, `${base} ${inner}`);
      forms.add(`best ${inner}`);
    }
    for (const form of plain) {
      const leading = / in a leading role$/.exec(form);
      const supporting = / in a supporting role$/.exec(form);
      const spoken = leading
        ? form.slice(0, leading.index)
        : supporting
          ? `supporting ${form.slice(0, supporting.index)}`
          : form === 'directing'
            ? 'director'
            : form.replace(/ feature film$/, ' film');
      for (const f of new Set([form, spoken])) {
        forms.add(f);
        forms.add(f.startsWith('best ') ? f : `best ${f}`);
      }
    }
  }
  return [...forms];
}

interface Entry {
  /** Names shown, the most used first. */
  names: string[];
  /** Other texts it is found by (an award's names as people say them). */
  aliases: string[];
  kind: SearchKind;
  tally: Tally;
  weight: number;
  id?: string;
  filmYear?: string;
  others?: string[];
  awardNames?: string[];
  /** Its record's path where its id does not give it: a category's award's, or the one id's a name without one stands for. */
  record?: string;
}

/** What a row may not hold: the stored index separates with these (src/shared/search.ts); the source's TSV format keeps them out of every name. */
// eslint-disable-next-line no-control-regex -- NUL is one of the separators it looks for
const SEPARATORS = /[\u0000\t\n|~]/;

/** The search index of an archive (src/shared/search.ts: StoredSearchIndex; `storedFiles` cuts it into the files stored). */
export function searchIndex(archive: Archive, facts: NameFacts, ids: NominationIds = new Map()): StoredSearchIndex {
  const names = new Map<string, Tally>();
  const byId = new Map<string, Tally>();
  const categories = new Map<string, Tally>();
  const onIds = new Map<string, boolean>();
  for (const [year, ceremony] of Object.entries(archive)) {
    for (const { category, nominations } of ceremony) {
      for (const nomination of nominations) {
        categories.set(category, tallied(categories.get(category), year, nomination.won));
        const carried = ids.get(nomination) ?? [];
        for (const name of new Set([...nomination.primary, ...(nomination.secondary ?? [])])) {
          names.set(name, tallied(names.get(name), year, nomination.won));
          // Whether the things model (build/answers/things.ts, through `ids`) placed it here on a thing with an id credited so.
          const placed = carried.some((id) => facts.idNames.get(id)?.has(name));
          onIds.set(name, (onIds.get(name) ?? true) && placed);
        }
        for (const id of new Set(ids.get(nomination) ?? [])) byId.set(id, tallied(byId.get(id), year, nomination.won));
      }
    }
  }
  const entries: Entry[] = [];
  const identified = new Set<string>();
  for (const [id, beside] of facts.idNames) {
    const tally = byId.get(id);
    if (!tally) continue; // an id no nomination carries: no lookup answers it
    const shown = [...beside].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name]) => name);
    for (const name of shown) identified.add(name);
    const kind: SearchKind = kindOfId(id);
    entries.push({
      names: shown,
      aliases: [],
      kind,
      tally,
      weight: tally.nominations,
      id,
      filmYear: kind === 'film' ? facts.filmYears.get(id) : undefined,
    });
  }
  // Names credited with one id: where they stand without it, they are that id's thing (docs/records.md), and their result gives its record.
  const idsOfName = new Map<string, string[]>();
  for (const [id, beside] of facts.idNames)
    for (const name of beside.keys()) idsOfName.set(name, [...(idsOfName.get(name) ?? []), id]);
  for (const [name, tally] of names) {
    if (identified.has(name) && onIds.get(name)) continue; // every place of it is on a thing with an id: its ids' entries stand for it
    // Its kind where it stands without an id: its places beside an id are that id's thing ("Georgia" the country beside the film).
    const counts = { ...(facts.kinds.get(name) ?? { person: 0, company: 0, country: 0, film: 0 }) };
    for (const id of idsOfName.get(name) ?? []) counts[kindOfId(id)] -= facts.idNames.get(id)!.get(name)!;
    const kind = kindOf(Object.values(counts).some((n) => n > 0) ? counts : facts.kinds.get(name));
    const one = idsOfName.get(name)?.length === 1 ? idsOfName.get(name)![0] : undefined;
    entries.push({
      names: [name],
      aliases: [],
      kind,
      tally,
      weight: tally.nominations,
      filmYear: kind === 'film' ? facts.filmYears.get(name) : undefined,
      ...(one ? { record: recordPath(one) } : {}),
    });
  }
  const categoryNames = [...categories.keys()];
  const awardOf = (name: string) => facts.awards.get(name) ?? name;
  for (const name of categoryNames) {
    // What /award/name=<name> answers: every category whose full name contains it, every year.
    const tally = categoryNames
      .filter((n) => n.includes(name))
      .map((n) => categories.get(n)!)
      .reduce(combined);
    const award = categoryNames.filter((n) => awardOf(n) === awardOf(name));
    const others = facts.awards.has(name) ? award.filter((n) => n !== name) : [];
    entries.push({
      names: [name],
      aliases: awardAliases([name, awardOf(name)]),
      kind: 'category',
      tally,
      weight: categories.get(name)!.nominations,
      others,
      awardNames: award.map((n) => `${n}~${categories.get(n)!.first}~${categories.get(n)!.last}`),
      record: `/awards/id=${awardIdOf(awardOf(name))}`,
    });
  }
  // Short forms ("mgm", "lotr"), never a word some name has.
  const words = new Set(entries.flatMap((e) => e.names.flatMap((n) => searchKey(n).split(' '))));
  for (const entry of entries)
    if (entry.kind !== 'category')
      entry.aliases.push(
        ...new Set(entry.names.flatMap((n) => shortForms(n, entry.kind, entry.tally.nominations, words))),
      );
  entries.sort((a, b) => b.weight - a.weight || (a.names[0] < b.names[0] ? -1 : a.names[0] > b.names[0] ? 1 : 0));
  return answered(stored(entries));
}

/** Every order of every set of distinct words of `words`. */
function runsOf(words: string[]): string[][] {
  return words.flatMap((w) => [[w], ...runsOf(words.filter((o) => o !== w)).map((run) => [w, ...run])]);
}

/**
 * The texts the build answers (src/shared/search.ts, `COMMON_CANDIDATES`):
 * every run of distinct small words, and every word or start of one (3
 * letters or more, so a search looks for names starting so) held by that many
 * entries, counted over the words it is and starts; not a number written out.
 */
function commonTexts(index: StoredSearchIndex): string[] {
  const held = new Map<string, number>();
  index.words.forEach((word, at) => {
    const n = index.postings[at].split(',').length;
    held.set(word, (held.get(word) ?? 0) + n);
    for (let length = 3; length < word.length; length++)
      held.set(word.slice(0, length), (held.get(word.slice(0, length)) ?? 0) + n);
  });
  const common = [...held].filter(([text, n]) => n >= COMMON_CANDIDATES && indexKey(text) === text && !SMALL.has(text));
  return [...runsOf([...SMALL]).map((run) => run.join(' ')), ...common.map(([text]) => text)];
}

/**
 * The index with the build's answers (`commonTexts`), each found as a search
 * finds it over the index without them; none for a text whose words some
 * name is, run together (its answer depends on how the text writes them).
 */
function answered(index: StoredSearchIndex): StoredSearchIndex {
  const files = storedFiles(index);
  const search = SearchIndex.parse(files[0]);
  const rows = new Map(files.slice(1).map((text, n) => [n + 1, Lines.parse(text)]));
  const wholes = new Set<string>();
  for (const line of index.keys)
    for (const key of line.split('|')) {
      wholes.add(key.replaceAll(' ', ''));
      const article = /^(?:the|a|an) /.exec(key);
      if (article) wholes.add(key.slice(article[0].length).replaceAll(' ', ''));
    }
  // Sorted, so the names starting with a word are one run of them, found by halving.
  const named = [...wholes].sort();
  const startingWith = (word: string) => {
    let low = 0;
    for (let high = named.length; low < high;) {
      const middle = (low + high) >>> 1;
      if (named[middle] < word) low = middle + 1;
      else high = middle;
    }
    const run: string[] = [];
    for (let at = low; at < named.length && named[at].startsWith(word); at++) run.push(named[at]);
    return run;
  };
  // A text of small words only is whole only in names made of small words: the few of them, not every name starting "a".
  const madeOfSmall = new RegExp(`^(?:${[...SMALL].join('|')})+$`);
  const smallOnly = named.filter((w) => madeOfSmall.test(w));
  const answers: string[] = [];
  for (const text of commonTexts(index)) {
    const words = text.split(' ');
    const whole = new RegExp(`^(?:${words.join('|')})+$`);
    const names = words.every((word) => SMALL.has(word)) ? smallOnly : words.flatMap(startingWith);
    if (names.some((w) => whole.test(w))) continue;
    const found = search.found(text, text, rows);
    answers.push(
      `${text}\t${found.map(({ entry, key }) => entry.toString(36) + (key ? `.${key.toString(36)}` : '')).join(',')}`,
    );
  }
  return { ...index, answers };
}

/** Entries as the stored index: the vocabulary, its postings, and per entry its keys, weight and row. */
function stored(entries: Entry[]): StoredSearchIndex {
  const postings = new Map<string, number[]>();
  const keys: string[] = [];
  const weights: number[] = [];
  const rows: string[] = [];
  for (const entry of entries) {
    const { names, tally: t } = entry;
    for (const text of [...names, ...(entry.others ?? [])])
      if (SEPARATORS.test(text))
        throw new Error(`search index: the name ${JSON.stringify(text)} holds a NUL, tab, line break, | or ~`);
    // A search keys only the first SEARCH_KEY_CHARACTERS of a text: a longer name could not be asked whole.
    for (const text of [...names, ...entry.aliases])
      if (text.normalize('NFKD').length > SEARCH_KEY_CHARACTERS)
        throw new Error(`search index: the name ${JSON.stringify(text)} is longer than a search reads`);
    const own = names.map((n) => indexKey(searchKey(n)));
    if (own.every((k) => k === '')) continue; // nothing a search could ask for
    const entryKeys = [
      ...own,
      ...entry.aliases.map((a) => indexKey(searchKey(a))).filter((k) => k !== '' && !own.includes(k)),
    ];
    const at = keys.length;
    for (const word of new Set(entryKeys.join(' ').split(' '))) {
      if (word === '') continue;
      const list = postings.get(word);
      if (list) list.push(at);
      else postings.set(word, [at]);
    }
    keys.push(entryKeys.join('|'));
    weights.push(entry.weight);
    rows.push(
      [
        names.join('|'),
        KIND_CODES[entry.kind],
        t.nominations,
        t.wins,
        t.first,
        t.last,
        entry.id ?? '',
        entry.filmYear ?? '',
        entry.others?.join('|') ?? '',
        entry.awardNames?.join('|') ?? '',
        entry.record ?? '',
      ].join('\t'),
    );
  }
  const words = [...postings.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    words,
    postings: words.map((w) =>
      postings
        .get(w)!
        .map((n) => n.toString(36))
        .join(','),
    ),
    keys,
    weights,
    rows,
    answers: [],
  };
}
