/**
 * Search by approximate name (`/search/name=…`): every name the archive
 * serves (people, companies, films: each entry of `primary` and `secondary`)
 * and every full category name, found whatever the case, marks, punctuation
 * and spacing, by the start of its words, or with a typo or two. The build
 * writes the index (build/search-index.ts) in shards: each name's normalised
 * key, and beside it what a result shows. A search scans one shard's keys
 * once; nothing here reads a file or knows a runtime.
 *
 * Ranking, best first: the name exactly as asked; the same name ignoring
 * case, marks, punctuation and spacing; the asked words starting the name's
 * words, from its first; the asked words starting some of its words, in
 * order; then a name within one or two edits (the fewer the better); ties by
 * more nominations, then by name.
 */

import type { SearchResult } from '../shared/types.ts';

/** Most results a search answers. */
export const SEARCH_LIMIT = 10;

/**
 * Index shards. An entry is in the shard of the first two letters of each of
 * its words, and a search reads only the shard of its longest word (a cold
 * Worker then scans a few hundred names, not every one). So a typo is found
 * anywhere but in the first two letters of the longest word asked, and a
 * one-letter word is found only as a whole word.
 */
export const SEARCH_SHARDS = 128;

/** The shard holding the names with a word that starts as `word` does (its first two letters). */
export function searchShard(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < Math.min(2, word.length); i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
  return h % SEARCH_SHARDS;
}

/** The word of a search key whose shard a search reads: its longest (the first of the longest). */
export function routingWord(key: string): string {
  return key.split(' ').reduce((longest, word) => (word.length > longest.length ? word : longest), '');
}

/** Letters NFKD does not take apart, as their plain spellings. */
const FOLDED: Record<string, string> = { ø: 'o', ł: 'l', đ: 'd', ð: 'd', ß: 'ss', æ: 'ae', œ: 'oe', þ: 'th', ı: 'i', ħ: 'h' };
const FOLDABLE = /[øłđðßæœþıħ]/g;

/** A name as search compares it: lower case, without marks, every run of other characters than letters and digits one space. */
export function searchKey(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(FOLDABLE, (c) => FOLDED[c])
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** What a result is: from the source's IMDb ids and columns; a category name is `category`. */
export type SearchKind = SearchResult['kind'];
const KINDS: Record<string, SearchKind> = { p: 'person', c: 'company', f: 'film', a: 'category' };
export const KIND_CODES: Record<SearchKind, string> = { person: 'p', company: 'c', film: 'f', category: 'a' };

/**
 * The index as stored, three blocks of text with a NUL after each of the
 * first two, one entry a line in each, so that reading it is one decode and
 * three splits, no JSON: every entry's key; each entry's count of
 * nominations (ties are broken by it); each entry's result, tab-separated:
 * name, kind code, nominations, wins, first year, last year, and for a
 * category its other names, `|` between them (no served name holds a NUL, a
 * tab, a line break or `|`).
 */
export interface StoredSearchIndex {
  keys: string[];
  nominations: number[];
  rows: string[];
}

/** The stored text of an index. */
export const storedText = (index: StoredSearchIndex) => `${index.keys.join('\n')}\u0000${index.nominations.join('\n')}\u0000${index.rows.join('\n')}`;

/** Rows of the edit table, kept between calls: a scan makes no garbage per name. */
const ROWS = { before: new Int32Array(256), previous: new Int32Array(256), current: new Int32Array(256) };

/** Edits (insertions, deletions, substitutions, swaps of neighbours) between `a` and `b`, or `max + 1` once more than `max`. */
function editsWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (b.length >= ROWS.previous.length) return max + 1; // longer than any text a search accepts
  let { before, previous, current } = ROWS;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let best = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const bj = b.charCodeAt(j - 1);
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ai === bj ? 0 : 1));
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj && before[j - 2] + 1 < d) d = before[j - 2] + 1;
      current[j] = d;
      if (d < best) best = d;
    }
    if (best > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length];
}

/** Whether each asked word starts the key's word at the same place, from `first` on. */
function wordsStart(keyWords: string[], asked: string[], first: number): boolean {
  for (let i = 0; i < asked.length; i++) if (!keyWords[first + i]?.startsWith(asked[i])) return false;
  return true;
}

/** Typos allowed for a text of this length: none under 4 characters, one under 8, two from 8. */
const typosFor = (length: number) => (length < 4 ? 0 : length < 8 ? 1 : 2);

export class SearchIndex {
  private readonly keys: string[];
  private readonly nominations: Int32Array;
  private readonly rowText: string;
  private rows: string[] | null = null;

  private constructor(keys: string[], nominations: Int32Array, rowText: string) {
    this.keys = keys;
    this.nominations = nominations;
    this.rowText = rowText;
  }

  /** An index from its stored text (`storedText`); its rows are split only when a search first finds something. */
  static parse(text: string): SearchIndex {
    const first = text.indexOf('\u0000');
    const second = text.indexOf('\u0000', first + 1);
    if (first < 0 || second < 0) throw new Error('not a search index');
    const keys = text.slice(0, first).split('\n');
    const counts = text.slice(first + 1, second).split('\n');
    if (counts.length !== keys.length) throw new Error('a search index whose blocks disagree');
    const nominations = new Int32Array(counts.length);
    for (let i = 0; i < counts.length; i++) nominations[i] = Number(counts[i]);
    return new SearchIndex(keys, nominations, text.slice(second + 1));
  }

  /** Entries found for `text` (whose search key is `asked`, when the caller has it), best first, at most SEARCH_LIMIT; none for a text with no letter or digit. */
  search(text: string, asked = searchKey(text)): SearchResult[] {
    if (asked === '') return [];
    const compact = asked.replaceAll(' ', '');
    const words = asked.split(' ');
    const inside = ` ${words[0]}`;
    const typos = typosFor(asked.length);
    const { keys } = this;
    // Per entry, its rank: 1 the same key, 2 the words start the name's, 3 they start some of its words, 4 + edits a typo (0, the name exactly as asked, is told apart below).
    const hits: number[] = [];
    const ranks: number[] = [];
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      let rank = -1;
      if (key === asked || (key.length > compact.length && key.charCodeAt(0) === compact.charCodeAt(0) && key.replaceAll(' ', '') === compact)) rank = 1;
      else if (key.startsWith(words[0]) && (words.length === 1 || wordsStart(key.split(' '), words, 0))) rank = 2;
      else if (key.includes(inside)) {
        const keyWords = key.split(' ');
        for (let first = 1; first + words.length <= keyWords.length && rank < 0; first++) if (wordsStart(keyWords, words, first)) rank = 3;
      }
      if (rank < 0 && typos > 0) {
        const edits = editsWithin(asked, key, typos);
        if (edits <= typos) rank = 4 + edits;
      }
      if (rank >= 0) {
        hits.push(i);
        ranks[i] = rank;
      }
    }
    const rows = (this.rows ??= this.rowText.split('\n'));
    for (const i of hits) if (ranks[i] === 1 && rows[i].startsWith(`${text}\t`)) ranks[i] = 0;
    const { nominations } = this;
    hits.sort((a, b) => ranks[a] - ranks[b] || nominations[b] - nominations[a] || (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : a - b));
    return hits.slice(0, SEARCH_LIMIT).map((i) => resultOf(rows[i]));
  }
}

/** A row of the index as a result, with the lookup that answers it. */
function resultOf(row: string): SearchResult {
  const [name, code, nominations, wins, firstYear, lastYear, others] = row.split('\t');
  const kind = KINDS[code];
  const path = `/${kind === 'category' ? 'award' : 'person'}/name=${encodeURIComponent(name)}`;
  const found: SearchResult = { name, kind, nominations: Number(nominations), wins: Number(wins), firstYear, lastYear, path };
  if (kind === 'category') found.otherNames = others ? others.split('|') : [];
  return found;
}
