/**
 * Search by approximate name (`/search/name=…`): every film, person and
 * company the archive names (one result per IMDb id where the source gives
 * one, else per name) and every full category name, found however it is
 * typed. The build writes one index (build/search-index.ts): a sorted
 * vocabulary of the words of every name, each word's postings (the entries
 * holding it), each entry's keys (its names, and for a category the names
 * people give its award: "best actress"), a weight (nominations) and what a
 * result shows. A search finds the entries holding its most telling word
 * (its longest: as written, as the start of a word, within one or two edits
 * anywhere in it, or as two words of a name written as one, or the other way
 * round), then ranks each of them against every word asked. Nothing here
 * reads a file or knows a runtime.
 *
 * What is forgiven: case, marks, punctuation and spacing; one typo in a word
 * of 4 letters or more, two in one of 8 or more (a letter wrong, missing,
 * added, or two swapped, the first letters too); `&` for "and" and a
 * leading article (such small words are optional on either side); digits,
 * number words and roman numerals (1 to 20); words in any order; words the
 * name does not have, when they are small words or a year (a year ranks the
 * film of that year, or a name nominated then, first); words of the name
 * not asked; and words joined or split ("otoole", "god father").
 *
 * Ranking, best first: the name exactly as asked; the same name ignoring
 * case, marks, punctuation, spacing, small words and how numbers are
 * written; every word asked a whole word of the name (those naming all of
 * its words first); the last word asked the start of one; a typo or two (the
 * fewer the better). Within one class: the year asked, then more
 * nominations, then a name starting as asked, then the name.
 */

import type { SearchResult } from '../shared/types.ts';

/** Most results a search answers. */
export const SEARCH_LIMIT = 10;

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

const NUMBER_WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];
/** Roman numerals 2 to 20 (I, V and X alone are too often a letter or a word). */
const ROMAN = ['', '', 'ii', 'iii', 'iv', '', 'vi', 'vii', 'viii', 'ix', '', 'xi', 'xii', 'xiii', 'xiv', 'xv', 'xvi', 'xvii', 'xviii', 'xix', 'xx'];
const NUMBERS = new Map<string, string>([...NUMBER_WORDS.map((w, n) => [w, String(n)] as const), ...ROMAN.flatMap((w, n) => (w ? [[w, String(n)] as const] : []))]);
/** Small words a name or a search may leave out ("&" is no word once punctuation is set aside, so "and" is one of them). */
const SMALL = new Set(['the', 'a', 'an', 'and', 'of']);
const ARTICLE = /^(?:the|a|an) /;

/** A search key with each number word and roman numeral written in digits: how both sides are compared. */
export function indexKey(key: string): string {
  return key === '' ? '' : key.split(' ').map((w) => NUMBERS.get(w) ?? w).join(' ');
}

/** A year someone might add to a title. */
const isYear = (word: string) => word.length === 4 && word >= '1900' && word <= '2099' && /^\d{4}$/.test(word);

/** What a result is: from the source's IMDb ids and columns; a category name is `category`. */
export type SearchKind = SearchResult['kind'];
const KINDS: Record<string, SearchKind> = { p: 'person', c: 'company', f: 'film', a: 'category' };
export const KIND_CODES: Record<SearchKind, string> = { person: 'p', company: 'c', film: 'f', category: 'a' };

/**
 * The index as stored: five blocks of text, a NUL after each of the first
 * four, one line per item in each, so reading it is one decode and five
 * splits, no JSON. `words`: every word of every key, sorted; `postings`: per
 * word, the entries holding it (base 36, ascending, `,` between); `keys`: per
 * entry, its keys (`indexKey` of each name, then of each other name people
 * give it), `|` between; `weights`: per entry, what breaks ties (its
 * nominations); `rows`: per entry, what a result shows, tab-separated (see
 * `resultOf`). No served name holds a NUL, a tab, a line break, `|` or `~`.
 */
export interface StoredSearchIndex {
  words: string[];
  postings: string[];
  keys: string[];
  weights: number[];
  rows: string[];
}

/** The stored text of an index. */
export const storedText = (index: StoredSearchIndex) => [index.words, index.postings, index.keys, index.weights, index.rows].map((block) => block.join('\n')).join('\u0000');

/** Edits allowed in a word asked: none under 4 letters, one under 8, two from 8. */
const typosFor = (length: number) => (length < 4 ? 0 : length < 8 ? 1 : 2);

/** Rows of the edit table, kept between calls: a comparison makes no garbage. */
const ROWS = { before: new Int32Array(64), previous: new Int32Array(64), current: new Int32Array(64) };

/** Edits (insertions, deletions, substitutions, swaps of neighbours) between `a` and `b`, or `max + 1` once more than `max`. */
export function editsWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a.length >= ROWS.previous.length || b.length >= ROWS.previous.length) return max + 1; // longer than any word of a name
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

/** The letters of a word as bits (a to z, digits on one): one edit changes at most two, so words further apart are skipped unread. */
function letterBits(word: string): number {
  let bits = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i) - 97;
    bits |= 1 << (c >= 0 && c < 26 ? c : 26 + (c & 3));
  }
  return bits;
}

function bitCount(n: number): number {
  n -= (n >>> 1) & 0x55555555;
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
  return (Math.imul((n + (n >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** A search's text, taken apart once. */
interface Asked {
  text: string;
  words: string[];
  /** The words run together, and without the years asked (a year may be no part of the name). */
  compact: string;
  compactNoYear: string;
  /** The same without a leading article. */
  bare: string;
  bareNoYear: string;
  years: string[];
}

function asked(text: string, key: string): Asked {
  const words = indexKey(key).split(' ');
  const kept = words.filter((w) => !isYear(w));
  const join = (list: string[]) => list.join('');
  const strip = (list: string[]) => (list.length > 1 && ARTICLE.test(`${list[0]} `) ? list.slice(1) : list);
  return { text, words, compact: join(words), compactNoYear: join(kept), bare: join(strip(words)), bareNoYear: join(strip(kept)), years: words.filter(isYear) };
}

/** How well one key answers the words asked: its class (lower is better; -1 no match), whether all its words were named, whether it starts as asked, whether a year asked is no part of it. */
interface Fit {
  rank: number;
  starts: boolean;
  yearAside: boolean;
}

const NO_FIT: Fit = { rank: -1, starts: false, yearAside: false };

/** Ranks: 1 the same key; 2 every word asked a whole word, naming all of the key's words but small ones; 3 some of them; 4 the last word asked the start of one; 4 + edits a typo or two. (0, the name exactly as asked, is told apart by the caller.) */
function fit(q: Asked, key: string): Fit {
  const compact = key.replaceAll(' ', '');
  const keyBare = ARTICLE.test(key) ? compact.slice(key.indexOf(' ')) : compact;
  if (compact === q.compact || keyBare === q.bare) return { rank: 1, starts: true, yearAside: false };
  if (q.years.length > 0 && (compact === q.compactNoYear || keyBare === q.bareNoYear)) return { rank: 1, starts: true, yearAside: true };
  const k = key.split(' ');
  if (k.length > 30) return NO_FIT;
  const words = q.words;
  let used = 0;
  let prefix = false;
  let edits = 0;
  let yearAside = false;
  let lead = -1; // where the first word asked that is not a small word was found
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    // Two words asked that are one word of the name ("god father").
    if (i + 1 < words.length) {
      const j = k.indexOf(w + words[i + 1]);
      if (j >= 0 && !(used & (1 << j))) {
        used |= 1 << j;
        if (lead < 0) lead = j;
        i++;
        continue;
      }
    }
    let found = -1;
    let cost = 0;
    let width = 1;
    for (let j = 0; j < k.length && found < 0; j++) if (!(used & (1 << j)) && k[j] === w) found = j;
    // One word asked that is two or three of the name ("otoole", "lalaland").
    for (let j = 0; j + 1 < k.length && found < 0; j++) {
      if (used & (3 << j) || !w.startsWith(k[j])) continue;
      const two = k[j] + k[j + 1];
      if (two === w) [found, width] = [j, 2];
      else if (j + 2 < k.length && !(used & (4 << j)) && two + k[j + 2] === w) [found, width] = [j, 3];
    }
    if (found < 0 && i === words.length - 1 && w.length >= (words.length > 1 ? 1 : 3)) {
      for (let j = 0; j < k.length && found < 0; j++) if (!(used & (1 << j)) && k[j].startsWith(w)) [found, prefix] = [j, true];
    }
    const typos = typosFor(w.length);
    if (found < 0 && typos > 0) {
      for (let j = 0; j < k.length; j++) {
        if (used & (1 << j)) continue;
        const d = editsWithin(w, k[j], typos);
        if (d <= typos && (found < 0 || d < cost)) [found, cost] = [j, d];
      }
    }
    if (found < 0) {
      if (SMALL.has(w)) continue;
      if (isYear(w)) {
        yearAside = true;
        continue;
      }
      return NO_FIT;
    }
    used |= ((1 << width) - 1) << found;
    edits += cost;
    if (lead < 0 && !SMALL.has(w)) lead = found;
  }
  if (used === 0) return NO_FIT;
  let all = true;
  for (let j = 0; j < k.length && all; j++) if (!(used & (1 << j)) && !SMALL.has(k[j])) all = false;
  const starts = lead === (ARTICLE.test(key) ? 1 : 0);
  return { rank: edits > 0 ? 4 + edits : prefix ? 4 : all ? 2 : 3, starts, yearAside };
}

export class SearchIndex {
  private readonly words: string[];
  private readonly postingText: string[];
  private readonly postingCache: (Int32Array | undefined)[];
  private readonly keys: string[];
  private readonly weightText: string[];
  private readonly rowText: string;
  private rows: string[] | null = null;
  /** Words by length, and the letters of each, made on the first search with a typo. */
  private byLength: Int32Array[] | null = null;
  private bits: Int32Array | null = null;

  private constructor(blocks: string[]) {
    this.words = blocks[0].split('\n');
    this.postingText = blocks[1].split('\n');
    this.keys = blocks[2].split('\n');
    this.weightText = blocks[3].split('\n');
    this.rowText = blocks[4];
    this.postingCache = new Array(this.words.length);
    if (this.postingText.length !== this.words.length || this.weightText.length !== this.keys.length) throw new Error('a search index whose blocks disagree');
  }

  /** An index from its stored text (`storedText`); postings, weights and rows are read only as searches need them. */
  static parse(text: string): SearchIndex {
    const blocks = text.split('\u0000');
    if (blocks.length !== 5) throw new Error('not a search index');
    return new SearchIndex(blocks);
  }

  /** Entries found for `text` (whose search key is `key`, when the caller has it), best first, at most SEARCH_LIMIT; none for a text with no letter or digit. */
  search(text: string, key = searchKey(text)): SearchResult[] {
    if (key === '') return [];
    const q = asked(text, key);
    // The most telling words first: the longest that are neither small words nor years; then any.
    const order = q.words
      .map((w, i) => i)
      .sort((a, b) => Number(SMALL.has(q.words[a]) || isYear(q.words[a])) - Number(SMALL.has(q.words[b]) || isYear(q.words[b])) || q.words[b].length - q.words[a].length || a - b);
    for (const i of order.slice(0, 2)) {
      const found = this.ranked(q, this.candidates(q, i));
      if (found.length > 0) return found;
    }
    return [];
  }

  /** Entries holding the `i`th word asked: as written, as a start (the last word), within its typos, joined with its neighbour, or split in two. */
  private candidates(q: Asked, i: number): Set<number> {
    const w = q.words[i];
    const out = new Set<number>();
    const add = (word: number) => {
      for (const entry of this.postings(word)) out.add(entry);
    };
    const exact = (word: string) => {
      const at = this.lowerBound(word);
      if (this.words[at] === word) add(at);
      return this.words[at] === word;
    };
    exact(w);
    if (i === q.words.length - 1 && w.length >= 3) for (let at = this.lowerBound(w); at < this.words.length && this.words[at].startsWith(w) && out.size < 4000; at++) add(at);
    if (i + 1 < q.words.length) this.near(w + q.words[i + 1], add);
    if (i > 0) this.near(q.words[i - 1] + w, add);
    for (let cut = 1; cut < w.length; cut++) if (this.has(w.slice(0, cut)) && this.has(w.slice(cut))) exact(w.slice(cut));
    this.near(w, add);
    return out;
  }

  /** Every word within `word`'s typos (and the word itself). */
  private near(word: string, add: (word: number) => void) {
    const typos = typosFor(word.length);
    if (typos === 0) {
      const at = this.lowerBound(word);
      if (this.words[at] === word) add(at);
      return;
    }
    const { byLength, bits } = this.lengths();
    const mine = letterBits(word);
    for (let length = word.length - typos; length <= word.length + typos; length++) {
      for (const at of byLength[length] ?? []) {
        if (bitCount(bits[at] ^ mine) > 2 * typos) continue;
        if (editsWithin(word, this.words[at], typos) <= typos) add(at);
      }
    }
  }

  private lengths(): { byLength: Int32Array[]; bits: Int32Array } {
    if (!this.byLength || !this.bits) {
      const counts: number[] = [];
      for (const w of this.words) counts[w.length] = (counts[w.length] ?? 0) + 1;
      const byLength = counts.map((n) => new Int32Array(n ?? 0));
      const filled = counts.map(() => 0);
      const bits = new Int32Array(this.words.length);
      this.words.forEach((w, at) => {
        byLength[w.length][filled[w.length]++] = at;
        bits[at] = letterBits(w);
      });
      [this.byLength, this.bits] = [byLength, bits];
    }
    return { byLength: this.byLength, bits: this.bits };
  }

  private has(word: string): boolean {
    return this.words[this.lowerBound(word)] === word;
  }

  /** The first place in the sorted vocabulary at or after `word`. */
  private lowerBound(word: string): number {
    let [low, high] = [0, this.words.length];
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.words[mid] < word) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private postings(word: number): Int32Array {
    let list = this.postingCache[word];
    if (!list) {
      const parts = this.postingText[word].split(',');
      list = new Int32Array(parts.length);
      for (let i = 0; i < parts.length; i++) list[i] = parseInt(parts[i], 36);
      this.postingCache[word] = list;
    }
    return list;
  }

  /** The candidates that answer every word asked, best first, as results. */
  private ranked(q: Asked, candidates: Set<number>): SearchResult[] {
    const hits: { entry: number; rank: number; year: number; weight: number; starts: boolean; key: number }[] = [];
    for (const entry of candidates) {
      const keys = this.keys[entry].split('|');
      let best = NO_FIT;
      let which = 0;
      for (let n = 0; n < keys.length; n++) {
        const f = fit(q, keys[n]);
        if (f.rank >= 0 && (best.rank < 0 || f.rank < best.rank || (f.rank === best.rank && f.starts && !best.starts))) [best, which] = [f, n];
      }
      if (best.rank < 0) continue;
      hits.push({ entry, rank: best.rank, year: 0, weight: Number(this.weightText[entry]), starts: best.starts, key: which });
    }
    if (hits.length === 0) return [];
    const rows = (this.rows ??= this.rowText.split('\n'));
    for (const hit of hits) {
      const row = rows[hit.entry];
      if (hit.rank === 1 && row.split('\t')[0].split('|').includes(q.text)) hit.rank = 0;
      if (q.years.length > 0) hit.year = q.years.some((y) => yearFits(row, y)) ? 0 : 1;
    }
    hits.sort((a, b) => a.rank - b.rank || a.year - b.year || b.weight - a.weight || Number(b.starts) - Number(a.starts) || a.entry - b.entry);
    return hits.slice(0, SEARCH_LIMIT).map((hit) => resultOf(rows[hit.entry], hit.key));
  }
}

/** Whether a result's row is of the year asked: a film of that year, or a name nominated at the ceremony of that year or the next. */
function yearFits(row: string, year: string): boolean {
  const [, , , , firstYear, lastYear, , filmYear] = row.split('\t');
  if (filmYear) return filmYear.startsWith(year);
  return Number(firstYear) <= Number(year) + 1 && Number(year) <= Number(lastYear);
}

/**
 * A row of the index as a result. A row holds: the entry's names (`|`
 * between, the most used first), kind code, nominations, wins, first and
 * last held year, IMDb id, film year, and for a category its other names
 * (`|` between) and every name of its award with its years (`name~first~last`,
 * `|` between). The name shown is the one whose key matched, when it is one
 * of the names.
 */
function resultOf(row: string, key: number): SearchResult {
  const [names, code, nominations, wins, firstYear, lastYear, id, filmYear, others, awardNames] = row.split('\t');
  const all = names.split('|');
  const name = all[key < all.length ? key : 0];
  const kind = KINDS[code];
  const path = id ? `/${id.startsWith('tt') ? 'title' : 'name'}/id=${id}` : `/${kind === 'category' ? 'award' : 'person'}/name=${encodeURIComponent(name)}`;
  const found: SearchResult = { name, kind, nominations: Number(nominations), wins: Number(wins), firstYear, lastYear, path };
  if (id) found.id = id;
  if (filmYear) found.filmYear = filmYear;
  if (kind === 'category') {
    found.otherNames = others ? others.split('|') : [];
    found.awardNames = awardNames
      ? awardNames.split('|').map((n) => {
          const [award, first, last] = n.split('~');
          return { name: award, firstYear: first, lastYear: last };
        })
      : [];
  }
  return found;
}
