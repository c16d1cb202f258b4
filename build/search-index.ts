/**
 * What search and the category list read, made from the archive the build
 * serves: every name in a nomination's `primary` or `secondary` (with the
 * count of nominations and wins the person lookup answers for it, and its
 * first and last year) and every full category name (with what the category
 * lookup across years answers for it: every category whose name contains it),
 * each under its search key (src/store/search.ts). Also the list of every
 * category name with its years and its award. Pure: archive in, JSON out.
 */
import { KIND_CODES, SEARCH_SHARDS, searchKey, searchShard, type SearchKind, type StoredSearchIndex } from '../src/store/search.ts';
import type { Archive, CategoryName } from '../src/shared/types.ts';
import type { NameFacts, NameKind } from './import.ts';

interface Tally {
  nominations: number;
  wins: number;
  first: string;
  last: string;
}

const tallied = (t: Tally | undefined, year: string, won: boolean): Tally =>
  t ? { nominations: t.nominations + 1, wins: t.wins + (won ? 1 : 0), first: t.first, last: year } : { nominations: 1, wins: won ? 1 : 0, first: year, last: year };

/** A name's kind: the kind it stands for most often in the source (a film, then a person, on a tie). */
function kindOf(counts: Record<NameKind, number> | undefined): NameKind {
  if (!counts) return 'person';
  return (['film', 'person', 'company'] as const).reduce((best, kind) => (counts[kind] > counts[best] ? kind : best), 'film');
}

/** Tallies together: counts added, the earliest first year and the latest last year (years are four digits, so they compare as text). */
const combined = (a: Tally, b: Tally): Tally => ({
  nominations: a.nominations + b.nominations,
  wins: a.wins + b.wins,
  first: a.first < b.first ? a.first : b.first,
  last: a.last > b.last ? a.last : b.last,
});

/** The search index of an archive, as stored: SEARCH_SHARDS shards, each entry in the shard of the first letter of each of its words. */
export function searchIndex(archive: Archive, facts: NameFacts): StoredSearchIndex[] {
  const names = new Map<string, Tally>();
  const categories = new Map<string, Tally>();
  for (const [year, ceremony] of Object.entries(archive)) {
    for (const { category, nominations } of ceremony) {
      for (const nomination of nominations) {
        categories.set(category, tallied(categories.get(category), year, nomination.won));
        for (const name of new Set([...nomination.primary, ...(nomination.secondary ?? [])])) names.set(name, tallied(names.get(name), year, nomination.won));
      }
    }
  }
  const shards: StoredSearchIndex[] = Array.from({ length: SEARCH_SHARDS }, () => ({ keys: [], nominations: [], rows: [] }));
  const add = (name: string, kind: SearchKind, t: Tally, others?: string[]) => {
    // The stored index separates with these (src/store/search.ts); the source's TSV format keeps them out of every name.
    if (/[\u0000\t\n|]/.test(name) || others?.some((o) => o.includes('|'))) throw new Error(`search index: the name ${JSON.stringify(name)} holds a NUL, tab, line break or |`);
    const key = searchKey(name);
    if (key === '') return; // nothing a search could ask for
    const row = [name, KIND_CODES[kind], t.nominations, t.wins, t.first, t.last, ...(others ? [others.join('|')] : [])].join('\t');
    for (const shard of new Set(key.split(' ').map(searchShard))) {
      shards[shard].keys.push(key);
      shards[shard].nominations.push(t.nominations);
      shards[shard].rows.push(row);
    }
  };
  for (const [name, t] of names) add(name, kindOf(facts.kinds.get(name)), t);
  const categoryNames = [...categories.keys()];
  for (const name of categoryNames) {
    // What /award/name=<name> answers: every category whose full name contains it, every year.
    const t = categoryNames.filter((n) => n.includes(name)).map((n) => categories.get(n)!).reduce(combined);
    const award = facts.awards.get(name);
    add(name, 'category', t, categoryNames.filter((n) => n !== name && award !== undefined && facts.awards.get(n) === award));
  }
  return shards;
}

/** Every full category name, in order of first appearance, with its first and last held year and its award. */
export function categoryList(archive: Archive, facts: NameFacts): CategoryName[] {
  const out = new Map<string, CategoryName>();
  for (const [year, ceremony] of Object.entries(archive)) {
    for (const { category } of ceremony) {
      const entry = out.get(category);
      if (entry) entry.lastYear = year;
      else out.set(category, { name: category, award: facts.awards.get(category) ?? category, firstYear: year, lastYear: year, path: `/award/name=${encodeURIComponent(category)}` });
    }
  }
  return [...out.values()];
}
